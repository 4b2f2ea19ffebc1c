// Public types of the `captcha-dlq` package (the wrapper's API, not the raw addon).

/** Task kinds, as `type`. Fields may be camelCase (`pageUrl`) or snake_case (`page_url`). */
export type TaskType =
  | 'image'
  | 'recaptcha_v2'
  | 'recaptcha_v3'
  | 'turnstile'
  | 'geetest_v3'
  | 'geetest_v4'
  | 'funcaptcha'
  | 'hcaptcha'
  | 'raw';

export interface ProxySpec {
  type: 'http' | 'https' | 'socks4' | 'socks5';
  host: string;
  port: number;
  login?: string;
  password?: string;
}

/**
 * A task as a plain object; the addon validates it and names the bad field
 * (InvalidTask.field). Extra fields depend on the type (see the README).
 */
export interface Task {
  type: TaskType;
  sitekey?: string;
  pageUrl?: string;
  [field: string]: unknown;
}

export interface RecaptchaV2Task extends Task {
  type: 'recaptcha_v2';
  sitekey: string;
  pageUrl: string;
  invisible?: boolean;
  enterprise?: boolean;
  dataS?: string;
  userAgent?: string;
  cookies?: string;
  proxy?: ProxySpec;
  /** `google.com` or `recaptcha.net`. */
  domain?: string;
}

/** The answer. `text` is the token or the recognised text. */
export interface Solution {
  text: string;
  /** Every other value the provider returned (GeeTest validate/seccode, userAgent, ...). */
  fields: Record<string, unknown>;
  /** The provider's task id, for `client.report`. */
  providerTaskId: string | null;
}

export type ErrorClass =
  | 'transient'
  | 'retry_after'
  | 'task_terminal'
  | 'fix_input'
  | 'account_terminal'
  | 'cancelled'
  | 'application'
  | (string & {});

export type RecordState = 'ready' | 'leased' | 'parked';

export interface HistoryEntry {
  at: string;
  phase: 'submit' | 'poll' | 'deadline' | 'recover' | 'cancel' | 'application' | 'import';
  error: string;
  provider_task_id?: string;
  http_status?: number;
}

/** A dead-letter record, schema 1 (the same JSON as export files). Never holds the API key. */
export interface DeadLetterRecord {
  schema: number;
  id: string;
  task: Record<string, unknown> & { type: TaskType };
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

export interface JournalEntry {
  id: string;
  task: Record<string, unknown> & { type: TaskType };
  provider: string;
  labels: Record<string, string>;
  provider_task_id?: string;
  attempts: number;
  replays: number;
  history: HistoryEntry[];
  accepted_at: string;
  updated_at: string;
  replay_of?: string;
  owner?: string;
}

/** Which records an operation applies to; omitted fields match everything. */
export interface Filter {
  ids?: string[];
  reasons?: string[];
  classes?: ErrorClass[];
  states?: RecordState[];
  sitekey?: string;
  pageHost?: string;
  labels?: Record<string, string>;
  deadLetteredBefore?: Date | number | string;
  deadLetteredAfter?: Date | number | string;
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
  solved: Array<{ id: string; labels: Record<string, string>; solution: Solution }>;
  dead_lettered: number;
}

/** Engine events, as `{ event: name, ...fields }` (field names as in the Rust `Event`). */
export type CaptchaEvent =
  | { event: 'accepted'; job: number; id: string }
  | { event: 'submitted'; job: number; attempt: number; provider_task_id: string }
  | { event: 'polled'; tasks: number }
  | { event: 'retrying'; job: number; code: string; class: ErrorClass; delay_ms: number; attempt: number }
  | { event: 'solved'; job: number; attempts: number; elapsed_ms: number }
  | { event: 'dead_lettered'; job: number; id: string; reason: string; class: ErrorClass; attempts: number }
  | { event: 'recovered'; job: number; id: string; resumed_polling: boolean }
  | { event: 'circuit_opened'; cause: string; until: string | null }
  | { event: 'circuit_half_open' }
  | { event: 'circuit_closed' }
  | { event: 'concurrency_changed'; limit: number }
  | { event: 'paused'; scope: 'submits' | 'polls'; code: string; until: string }
  | { event: 'batch_polling_disabled'; reason: string };

export interface LeaseToken {
  id: string;
  nonce: string;
}

/** The filter as stores receive it (schema names; times as ISO strings). */
export interface StoreFilter {
  ids: string[];
  reasons: string[];
  classes: ErrorClass[];
  states: RecordState[];
  sitekey: string | null;
  page_host: string | null;
  labels: Record<string, string>;
  dead_lettered_before: string | null;
  dead_lettered_after: string | null;
}

/**
 * Your own DLQ backend: implement these (async) methods and pass the object as `dlq`.
 * Times are unix milliseconds. Throw an error with `code: 'LEASE_LOST'` or `'NOT_FOUND'`
 * (and `id`) for those outcomes. Use `filterMatches` to apply a filter. The contract is
 * the Rust `DlqStore` trait's: push upserts by id and forgets the journal entry with the
 * same id; receive leases ready (or lease-expired) records oldest first, counting a
 * delivery and issuing a fresh token; complete/abandon fail on a stale token; parked
 * records are never received.
 */
export interface DlqStoreObject {
  push(record: DeadLetterRecord): Promise<{ replaced?: boolean; evicted?: string[] } | void>;
  receive(
    filter: StoreFilter,
    max: number,
    leaseMs: number,
    now: number,
  ): Promise<Array<{ token: LeaseToken; record: DeadLetterRecord; leaseUntil: number | Date }>>;
  complete(token: LeaseToken, now: number): Promise<void>;
  abandon(token: LeaseToken, update: DeadLetterRecord | null, now: number): Promise<RecordState>;
  park(id: string, reason: string, now: number): Promise<boolean>;
  unpark(id: string, now: number): Promise<boolean>;
  peek(filter: StoreFilter, page: { offset: number; limit: number }, now: number): Promise<DeadLetterRecord[]>;
  count(filter: StoreFilter, now: number): Promise<number>;
  purge(filter: StoreFilter, now: number): Promise<number>;
  stats(now: number): Promise<Omit<StoreStats, 'oldest_dead_lettered_at'> & { oldest_dead_lettered_at: string | number | Date | null }>;
  journalUpsert(entry: JournalEntry): Promise<void>;
  journalForget(id: string): Promise<void>;
  journalEntries(): Promise<JournalEntry[]>;
}

/** Engine settings; keys may be camelCase or snake_case; durations in milliseconds. */
export interface RetryOptions {
  maxAttempts?: number;
  maxRequestRetries?: number;
  maxRetryAfterRetries?: number;
  backoff?:
    | { kind: 'full_jitter'; base_ms: number; cap_ms: number }
    | { kind: 'decorrelated'; base_ms: number; cap_ms: number }
    | { kind: 'fixed'; delay_ms: number };
  transientMinDelayMs?: number;
  taskDeadlineMs?: number;
  requestTimeoutMs?: number;
  recoverMaxAgeMs?: number;
}

export interface PollingOptions {
  firstPollMs?: Partial<Record<'image' | 'recaptchaV2' | 'recaptchaV3' | 'turnstile' | 'geetestV3' | 'geetestV4' | 'funcaptcha' | 'hcaptcha' | 'raw', number>>;
  intervalMs?: number;
  maxPolls?: number;
  batch?: boolean;
  coalesceMs?: number;
}

export interface RateOptions {
  submitsPerSecond?: number;
  maxInFlight?: number;
}

export interface CircuitOptions {
  window?: number;
  minCalls?: number;
  failureRatio?: number;
  breakMs?: number;
}

export interface ReplayPolicyOptions {
  autoClasses?: ErrorClass[];
  parkAfterAttempts?: number;
  replayAttempts?: number;
  leaseSeconds?: number;
}

export interface ClientOptions {
  apiKey: string;
  /** A preset (`captchaai`, `2captcha`, `anti-captcha`, `capsolver`, `capmonster`) or a v1 base URL. */
  provider?: string;
  /** Send the provider's protocol to another host (a proxy of yours, a mock). */
  baseUrl?: string;
  /** A SQLite path (default `captcha-dlq.sqlite`), `'memory'`, a `redis://` URL, or a store object. */
  dlq?: string | DlqStoreObject;
  retry?: RetryOptions;
  polling?: PollingOptions;
  rate?: RateOptions;
  circuit?: CircuitOptions;
  /** Seed of jitter and ids (0: random). */
  seed?: number;
  replayPolicy?: ReplayPolicyOptions;
  /** Allow `http://` to a non-loopback host (the key then travels in clear text). */
  allowInsecureHttp?: boolean;
  /** HTTP or SOCKS5 proxy for the client's own traffic. */
  proxy?: string;
  /** Called (never blocking the engine) for every engine event. */
  onEvent?: (event: CaptchaEvent) => void;
}

export interface SolveOptions {
  /** Aborting cancels the task: it is dead-lettered as `Cancelled` and solve rejects with AbortError. */
  signal?: AbortSignal;
  /** Copied into the task's DLQ record if it fails. */
  labels?: Record<string, string>;
}

export type SolveManyItem = Task | { task: Task; labels?: Record<string, string> };

export type SolveResult =
  | { status: 'fulfilled'; value: Solution }
  | { status: 'rejected'; reason: CaptchaDlqError };

export interface SolveManyOptions {
  /** Tasks in flight at once (default 100). */
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface ReplayOptions {
  reasons?: string[];
  ids?: string[];
  /** At most this many records (default 100). */
  limit?: number;
  filter?: Filter;
}

export declare class Dlq {
  private constructor();
  count(filter?: Filter): Promise<number>;
  peek(filter?: Filter, page?: { offset?: number; limit?: number }): Promise<DeadLetterRecord[]>;
  stats(): Promise<StoreStats>;
  analysis(filter?: Filter): Promise<Analysis>;
  export(path: string, format?: 'json' | 'jsonl', filter?: Filter): Promise<number>;
  import(path: string): Promise<number>;
  /** `{}` removes every record not under a lease. */
  purge(filter: Filter): Promise<number>;
  park(id: string, reason?: string): Promise<boolean>;
  unpark(id: string): Promise<boolean>;
}

export declare class Client {
  /** Throws ConfigError at once for a bad option; store errors surface on the first call. */
  constructor(options: ClientOptions);
  readonly dlq: Dlq;
  ready(): Promise<void>;
  solve(task: Task, options?: SolveOptions): Promise<Solution>;
  /** One settled result per task, in input order; the promise itself rejects only on bad arguments or a closed client. */
  solveMany(tasks: SolveManyItem[], options?: SolveManyOptions): Promise<SolveResult[]>;
  replay(options?: ReplayOptions): Promise<ReplayReport>;
  recover(options?: { resume?: boolean }): Promise<RecoverReport>;
  balance(): Promise<number>;
  report(providerTaskId: string, good: boolean): Promise<void>;
  resetCircuit(): Promise<void>;
  close(): Promise<void>;
  toJSON(): { provider: string; baseUrl?: string; dlq: string; apiKey: '***' };
}

export type ErrorCode =
  | 'SOLVE_FAILED'
  | 'ACCOUNT_ERROR'
  | 'INVALID_TASK'
  | 'INVALID_CONFIG'
  | 'STORE_ERROR'
  | 'PROVIDER_ERROR'
  | 'IO_ERROR'
  | 'CLOSED'
  | 'ABORTED';

export declare class CaptchaDlqError extends Error {
  readonly code: ErrorCode;
}
export declare class SolveFailed extends CaptchaDlqError {
  readonly code: 'SOLVE_FAILED';
  readonly record: DeadLetterRecord;
  /** False when writing the record to the store failed (the record is still here). */
  readonly stored: boolean;
  readonly reason: string;
  readonly class: ErrorClass;
}
export declare class AccountError extends CaptchaDlqError {
  readonly code: 'ACCOUNT_ERROR';
  /** Present when a solve failed because of the account. */
  readonly record?: DeadLetterRecord;
  readonly reason: string;
  readonly class: ErrorClass;
}
export declare class InvalidTask extends CaptchaDlqError {
  readonly code: 'INVALID_TASK';
  readonly field: string;
  readonly problem: string;
}
export declare class ConfigError extends CaptchaDlqError {
  readonly code: 'INVALID_CONFIG';
  readonly field: string;
  readonly problem: string;
}
export declare class StoreError extends CaptchaDlqError {
  readonly code: 'STORE_ERROR';
  readonly kind: 'lease_lost' | 'not_found' | 'corrupt' | 'newer_schema' | 'decode' | 'backend';
}
export declare class TransportError extends CaptchaDlqError {
  readonly code: 'PROVIDER_ERROR';
  readonly reason: string;
  readonly class: ErrorClass;
}
export declare class IoError extends CaptchaDlqError {
  readonly code: 'IO_ERROR';
}
export declare class ClientClosed extends CaptchaDlqError {
  readonly code: 'CLOSED';
}
export declare class AbortError extends CaptchaDlqError {
  readonly code: 'ABORTED';
  /** The Cancelled record, unless the signal was aborted before submission. */
  readonly record?: DeadLetterRecord;
}

/** Runs one case of the shared wire vectors and returns the actual output (compare with `expected`). */
export declare function evaluateVector(caseJson: string | object): unknown;
/** Validates a task; its canonical snake_case form, or throws InvalidTask naming the field. */
export declare function parseTask(task: unknown): Record<string, unknown> & { type: TaskType };
/** Whether `filter` (as a store receives it) selects `record` in `state` (default: record.state). */
export declare function filterMatches(filter: Partial<StoreFilter>, record: DeadLetterRecord, state?: RecordState): boolean;
