// Types of captcha-dlq-web. Records, reports and stats are plain objects in their JSON shape (snake_case,
// RFC 3339 times), the same as the DLQ export and the Python/Node packages.

export type TaskType =
  | 'image' | 'recaptcha_v2' | 'recaptcha_v3' | 'turnstile' | 'geetest_v3' | 'geetest_v4' | 'funcaptcha'
  | 'hcaptcha' | 'raw';

/** A task; fields may be camelCase (`pageUrl`) or snake_case (`page_url`). */
export interface Task {
  type: TaskType | string;
  [field: string]: unknown;
}

export interface Solution {
  text: string;
  fields?: Record<string, unknown>;
  provider_task_id?: string;
}

export type ErrorClass =
  | 'not_ready' | 'transient' | 'retry_after' | 'task_terminal' | 'account_terminal' | 'fix_input'
  | 'cancelled' | 'application';
export type RecordState = 'ready' | 'leased' | 'parked';

export interface HistoryEntry {
  at: string;
  phase: 'submit' | 'poll' | 'deadline' | 'recover' | 'cancel' | 'application' | 'import';
  error: string;
  provider_task_id?: string;
  http_status?: number;
}

/** A dead-letter record, schema 1. Never holds the API key. */
export interface DeadLetterRecord {
  schema: 1;
  id: string;
  task: Record<string, unknown> & { type: string };
  provider: string;
  reason: string;
  description: string;
  class: ErrorClass;
  attempts: number;
  replays: number;
  history: HistoryEntry[];
  first_failed_at: string;
  dead_lettered_at: string;
  labels: Record<string, string>;
  state: RecordState;
  deliveries: number;
  parked_reason?: string;
}

export interface Filter {
  ids?: string[];
  reasons?: string[];
  classes?: ErrorClass[];
  states?: RecordState[];
  sitekey?: string;
  pageHost?: string;
  labels?: Record<string, string>;
  deadLetteredBefore?: string;
  deadLetteredAfter?: string;
}

export interface Page {
  offset?: number;
  limit?: number;
}

export interface StoreStats {
  total: number;
  ready: number;
  leased: number;
  parked: number;
  dropped: number;
  completed: number;
  abandoned: number;
  oldest_dead_lettered_at: string | null;
  in_flight: number;
}

export interface ReplayReport {
  received: number;
  retried: number;
  recovered: number;
  failed_again: number;
  parked: number;
  skipped: number;
}

export interface RecoverReport {
  found: number;
  skipped_live: number;
  solved: { id: string; labels: Record<string, string>; solution: Solution }[];
  dead_lettered: number;
}

export interface Bucket {
  key: string;
  count: number;
}

export interface Analysis {
  computed_at: string;
  records: number;
  stats: StoreStats;
  by_reason: Bucket[];
  by_class: Bucket[];
  by_sitekey: Bucket[];
  by_page_host: Bucket[];
  by_hour: Bucket[];
  by_provider: Bucket[];
  oldest_age_seconds: number | null;
  repeat_failure_rate: number | null;
  replay: { completed: number; abandoned: number; recovered_ratio: number | null };
}

export interface EngineEvent {
  name: string;
  warning: boolean;
  message: string;
  detail: unknown;
}

/**
 * A store implemented in JS (e.g. over chrome.storage). Values use the JSON shapes above; `now` is an RFC 3339
 * string, `leaseMs` milliseconds. Throw an error with `code: 'LEASE_LOST'` (and `id`) for a stale token.
 */
export interface HostStore {
  push(record: DeadLetterRecord): unknown;
  receive(filter: unknown, max: number, leaseMs: number, now: string): Promise<unknown[]> | unknown[];
  complete(token: { id: string; nonce: string }, now: string): unknown;
  abandon(token: { id: string; nonce: string }, update: DeadLetterRecord | null, now: string): Promise<RecordState> | RecordState;
  park(id: string, reason: string, now: string): Promise<boolean> | boolean;
  unpark(id: string, now: string): Promise<boolean> | boolean;
  peek(filter: unknown, page: { offset: number; limit: number }, now: string): Promise<DeadLetterRecord[]> | DeadLetterRecord[];
  count(filter: unknown, now: string): Promise<number> | number;
  purge(filter: unknown, now: string): Promise<number> | number;
  stats(now: string): Promise<StoreStats> | StoreStats;
  journalUpsert(entry: unknown): unknown;
  journalForget(id: string): unknown;
  journalEntries(): Promise<unknown[]> | unknown[];
}

/** Engine settings; keys camelCase or snake_case, durations in milliseconds (`intervalMs`). */
export type Settings = Record<string, unknown>;

export interface ClientOptions {
  apiKey: string;
  /** A preset (`captchaai`, `2captcha`, `anti-captcha`, `capsolver`, `capmonster`…) or a v1 base URL. */
  provider?: string;
  baseUrl?: string;
  /** Default `indexeddb:captcha-dlq`. */
  dlq?: `indexeddb:${string}` | 'memory' | HostStore;
  retry?: Settings;
  polling?: Settings;
  rate?: Settings;
  circuit?: Settings;
  replay?: Settings;
  seed?: number;
  allowInsecureHttp?: boolean;
  onEvent?: (event: EngineEvent) => void;
}

export type Settled = { status: 'fulfilled'; value: Solution } | { status: 'rejected'; reason: CaptchaDlqError };

export interface DlqView {
  count(filter?: Filter): Promise<number>;
  peek(filter?: Filter, page?: Page): Promise<DeadLetterRecord[]>;
  stats(): Promise<StoreStats>;
  analysis(): Promise<Analysis>;
  exportJson(filter?: Filter): Promise<string>;
  importJson(text: string): Promise<number>;
  purge(filter?: Filter): Promise<number>;
  park(id: string, reason?: string): Promise<boolean>;
  unpark(id: string): Promise<boolean>;
}

export class Client implements DlqView {
  constructor(options: ClientOptions);
  static create(options: ClientOptions): Promise<Client>;
  solve(task: Task, options?: { signal?: AbortSignal; labels?: Record<string, string> }): Promise<Solution>;
  solveMany(
    tasks: Task[],
    options?: { concurrency?: number; onProgress?: (done: number, total: number) => void; labels?: Record<string, string> },
  ): Promise<Settled[]>;
  replay(options?: { reasons?: string[]; ids?: string[]; classes?: ErrorClass[]; limit?: number; explicit?: boolean }): Promise<ReplayReport>;
  recover(): Promise<RecoverReport>;
  count(filter?: Filter): Promise<number>;
  peek(filter?: Filter, page?: Page): Promise<DeadLetterRecord[]>;
  stats(): Promise<StoreStats>;
  analysis(): Promise<Analysis>;
  exportJson(filter?: Filter): Promise<string>;
  importJson(text: string): Promise<number>;
  purge(filter?: Filter): Promise<number>;
  park(id: string, reason?: string): Promise<boolean>;
  unpark(id: string): Promise<boolean>;
  readonly dlq: DlqView;
  /** The account balance; rejects with code PROVIDER_ERROR (`reason`, `class`) or ACCOUNT_ERROR. */
  balance(): Promise<number>;
  /** Reports a solution's `provider_task_id` as right or wrong; InvalidConfig (`field: 'report'`) when the provider has no such report. */
  report(providerTaskId: string, good: boolean): Promise<void>;
  /** Lets submissions flow again after an account error was fixed. */
  resetCircuit(): Promise<void>;
  close(): Promise<void>;
}

export function ready(moduleOrPath?: string | URL | Response | BufferSource | WebAssembly.Module): Promise<void>;

export type ErrorCode =
  | 'SOLVE_FAILED' | 'ACCOUNT_ERROR' | 'INVALID_TASK' | 'INVALID_CONFIG' | 'STORE_ERROR' | 'PROVIDER_ERROR' | 'CLOSED'
  | 'ABORTED';

export class CaptchaDlqError extends Error {
  code: ErrorCode;
}
export class SolveFailed extends CaptchaDlqError {
  code: 'SOLVE_FAILED';
  record: DeadLetterRecord;
  stored: boolean;
}
export class AccountError extends CaptchaDlqError {
  code: 'ACCOUNT_ERROR';
  /** Absent when `balance()` or `report()` failed (then `reason` and `class` are set). */
  record?: DeadLetterRecord;
  stored?: boolean;
  reason?: string;
  class?: ErrorClass;
}
/** A direct request to the provider (`balance`, `report`) failed; `reason` and `class` say how. */
export class ProviderError extends CaptchaDlqError {
  code: 'PROVIDER_ERROR';
  reason: string;
  class: ErrorClass;
}
export class InvalidTask extends CaptchaDlqError {
  code: 'INVALID_TASK';
  field: string;
}
export class InvalidConfig extends CaptchaDlqError {
  code: 'INVALID_CONFIG';
  field: string;
}
export class StoreError extends CaptchaDlqError {
  code: 'STORE_ERROR';
}
export class Closed extends CaptchaDlqError {
  code: 'CLOSED';
}
export class Aborted extends CaptchaDlqError {
  code: 'ABORTED';
}
export function fromWasm(e: unknown): unknown;
