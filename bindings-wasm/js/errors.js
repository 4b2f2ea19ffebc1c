// The error classes of the JS API (docs/bindings.md), chosen by the stable `code` the native module
// puts on every error it throws. Nothing is decided here: message, field, record, stored and runsOn
// come from the module (captcha_dlq_client::host::error).

export class CaptchaDlqError extends Error {
  constructor(message, code, properties = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    Object.assign(this, properties);
  }
}

/** The task failed for good; `record` is its dead-letter record (in the DLQ unless `stored` is false). */
export class SolveFailed extends CaptchaDlqError {}
/** The account (key, balance, IP) is the problem; `record` as for SolveFailed when a task failed. */
export class AccountError extends CaptchaDlqError {}
/** A task that can never be sent; `field` names the offending field as the caller spelt it. */
export class InvalidTask extends CaptchaDlqError {}
/** A bad option or argument; `field` names it. */
export class InvalidConfig extends CaptchaDlqError {}
export class StoreError extends CaptchaDlqError {}
/** A direct request to the provider (`balance`, `report`) failed. */
export class ProviderError extends CaptchaDlqError {}
/** The task was cancelled; `runsOn`: the provider already had it (its answer waits for `recover()`). */
export class Cancelled extends CaptchaDlqError {}
export class Closed extends CaptchaDlqError {}
/** The caller's AbortSignal fired. */
export class Aborted extends CaptchaDlqError {}

const CLASSES = {
  SOLVE_FAILED: SolveFailed,
  ACCOUNT_ERROR: AccountError,
  INVALID_TASK: InvalidTask,
  INVALID_CONFIG: InvalidConfig,
  STORE_ERROR: StoreError,
  PROVIDER_ERROR: ProviderError,
  CANCELLED: Cancelled,
  CLOSED: Closed,
  ABORTED: Aborted,
};

/** An error of the native module (an Error, or a plain `{code, message, …}` in a batch result) as its class. */
export function fromNative(e) {
  if (e instanceof CaptchaDlqError || e === null || typeof e !== 'object' || typeof e.code !== 'string') return e;
  const { code, message, ...properties } = e;
  delete properties.stack;
  return new (CLASSES[code] ?? CaptchaDlqError)(message, code, properties);
}
