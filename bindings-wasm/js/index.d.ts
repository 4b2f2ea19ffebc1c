// Types of captcha-dlq-web: the JS API of docs/bindings.md, the same as the Node package's. Values are plain
// objects with camelCase field names; map keys (labels, a solution's `fields`) are data and keep their spelling.
// (The package's own minimal copy until the index.d.ts shared with the Node package lands.)

/** A task; fields may be camelCase (`pageUrl`) or snake_case (`page_url`). */
export interface Task {
  type: string;
  [field: string]: unknown;
}

export interface Solution {
  text: string;
  fields?: Record<string, unknown>;
  providerTaskId?: string;
}

export type ErrorClass =
  | 'not_ready' | 'transient' | 'retry_after' | 'task_terminal' | 'account_terminal' | 'fix_input'
  | 'cancelled' | 'application';

/** A dead-letter record (schema 1). Never holds the API key. */
export interface DeadLetterRecord {
  schema: 1;
  id: string;
  task: Task;
  provider: string;
  reason: string;
  description: string;
  class: ErrorClass;
  attempts: number;
  state: 'ready' | 'leased' | 'parked';
  labels: Record<string, string>;
  deadLetteredAt: string;
  [field: string]: unknown;
}

export interface Filter {
  ids?: string[];
  reasons?: string[];
  classes?: ErrorClass[];
  states?: Array<'ready' | 'leased' | 'parked'>;
  sitekey?: string;
  pageHost?: string;
  labels?: Record<string, string>;
  deadLetteredBefore?: string;
  deadLetteredAfter?: string;
}

/** A store written in JS (docs/custom-store.md): rows kept as given; every method may return a promise. */
export interface HostStore {
  get(table: string, key: string): unknown;
  scan(table: string): unknown[] | Promise<unknown[]>;
  write(ops: Array<{ op: 'put'; table: string; key: string; row: unknown } | { op: 'delete'; table: string; key: string }>): unknown;
  lock?(): unknown;
  unlock?(): unknown;
}

export interface ClientOptions {
  apiKey: string;
  provider?: string;
  baseUrl?: string;
  /** 'indexeddb:NAME' (default 'indexeddb:captcha-dlq'), 'memory', or a store object. */
  dlq?: string | HostStore;
  onEvent?: (event: { event: string; [field: string]: unknown }) => void;
  allowInsecureHttp?: boolean;
  concurrency?: number;
  retry?: Record<string, unknown>;
  polling?: Record<string, unknown>;
  rate?: Record<string, unknown>;
  circuit?: Record<string, unknown>;
  replayPolicy?: Record<string, unknown>;
  store?: { timeoutMs?: number; retryForMs?: number; concurrency?: number };
  seed?: number;
  softId?: string;
  pingback?: string;
}

export type SolveResult =
  | { index: number; id: string | null; key: string | null; labels: Record<string, string>; ok: true; solution: Solution }
  | { index: number; id: string | null; key: string | null; labels: Record<string, string>; ok: false; error: CaptchaDlqError };

export type BatchItem = Task | { task: Task; labels?: Record<string, string>; key?: string };

export interface ReplayItem {
  id: string;
  labels: Record<string, string>;
  outcome: 'recovered' | 'failed_again' | 'parked' | 'skipped' | 'error';
  solution?: Solution;
  record?: DeadLetterRecord;
  parked?: boolean;
  reason?: string;
  why?: string;
  error?: { code: string; message: string };
}

export interface ReplayOptions {
  reasons?: string[];
  ids?: string[];
  filter?: Filter;
  limit?: number;
  perSecond?: number;
}

export interface ReplayReport {
  received: number;
  retried: number;
  recovered: number;
  failedAgain: number;
  parked: number;
  skipped: number;
}

export interface Recovered {
  id: string;
  labels: Record<string, string>;
  solution: Solution;
}

export declare function ready(moduleOrPath?: string | URL | Response | WebAssembly.Module): Promise<void>;

export declare class Client {
  constructor(options: ClientOptions);
  static create(options: ClientOptions): Promise<Client>;
  solve(task: Task, options?: { labels?: Record<string, string>; signal?: AbortSignal }): Promise<Solution>;
  solveStream(tasks: BatchItem[], options?: { concurrency?: number; labels?: Record<string, string>; signal?: AbortSignal }): AsyncGenerator<SolveResult>;
  solveMany(tasks: BatchItem[], options?: { concurrency?: number; labels?: Record<string, string>; signal?: AbortSignal; onResult?: (r: SolveResult) => void }): Promise<SolveResult[]>;
  replayStream(options?: ReplayOptions): AsyncGenerator<ReplayItem>;
  replay(options?: ReplayOptions): Promise<{ report: ReplayReport; solved: Recovered[] }>;
  recoverStream(options?: { resume?: boolean }): AsyncGenerator<{ id: string; key: string | null; labels: Record<string, string>; ok: boolean; solution?: Solution; error?: CaptchaDlqError }>;
  recover(options?: { resume?: boolean }): Promise<{ found: number; skippedLive: number; solved: Recovered[]; deadLettered: number }>;
  readonly dlq: {
    count(filter?: Filter): Promise<number>;
    peek(filter?: Filter, page?: { offset?: number; limit?: number }): Promise<DeadLetterRecord[]>;
    stats(): Promise<Record<string, unknown>>;
    analysis(filter?: Filter): Promise<Record<string, unknown>>;
    export(filter?: Filter, format?: 'json' | 'jsonl'): Promise<{ text: string; count: number }>;
    import(text: string): Promise<number>;
    purge(filter: Filter): Promise<number>;
    park(id: string, reason?: string): Promise<boolean>;
    unpark(id: string): Promise<boolean>;
    journal(): Promise<Array<Record<string, unknown>>>;
    settled(prefix?: string): Promise<Array<Record<string, unknown>>>;
    clearSettled(prefix?: string): Promise<number>;
  };
  balance(): Promise<number>;
  report(providerTaskId: string, good: boolean): Promise<void>;
  resetCircuit(): Promise<void>;
  status(): Promise<Record<string, unknown>>;
  storeHealth(): Promise<{ available: boolean; failures: number; lastError: string | null }>;
  close(): Promise<void>;
}

export declare class CaptchaDlqError extends Error {
  code: string;
  field?: string;
}
export declare class SolveFailed extends CaptchaDlqError {
  record: DeadLetterRecord;
  stored: boolean;
}
export declare class AccountError extends CaptchaDlqError {
  record?: DeadLetterRecord;
  stored?: boolean;
}
export declare class InvalidTask extends CaptchaDlqError {}
export declare class InvalidConfig extends CaptchaDlqError {}
export declare class StoreError extends CaptchaDlqError {}
export declare class ProviderError extends CaptchaDlqError {}
export declare class Cancelled extends CaptchaDlqError {
  runsOn: boolean;
}
export declare class Closed extends CaptchaDlqError {}
export declare class Aborted extends CaptchaDlqError {}
