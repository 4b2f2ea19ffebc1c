// The one place where the errors thrown by the wasm module become Error subclasses.
// Every error has a stable `code`, shared with the Python and Node packages.

export class CaptchaDlqError extends Error {
  constructor(message, code) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The task failed for good; `record` is its dead-letter record (in the DLQ unless `stored` is false). */
export class SolveFailed extends CaptchaDlqError {}
/** The account (key, balance, IP) is the problem; `record` as for SolveFailed. */
export class AccountError extends CaptchaDlqError {}
/** A task that can never be sent; `field` names the offending field as the caller spelt it. */
export class InvalidTask extends CaptchaDlqError {}
/** A bad option; `field` names it. */
export class InvalidConfig extends CaptchaDlqError {}
export class StoreError extends CaptchaDlqError {}
/** A direct request to the provider (`balance`, `report`) failed; `reason` and `class` say how. */
export class ProviderError extends CaptchaDlqError {}
export class Closed extends CaptchaDlqError {}
export class Aborted extends CaptchaDlqError {}

const CLASSES = {
  SOLVE_FAILED: SolveFailed,
  ACCOUNT_ERROR: AccountError,
  INVALID_TASK: InvalidTask,
  INVALID_CONFIG: InvalidConfig,
  STORE_ERROR: StoreError,
  PROVIDER_ERROR: ProviderError,
  CLOSED: Closed,
  ABORTED: Aborted,
};

/** Turns an error thrown by the wasm module into its subclass; anything else is returned as is. */
export function fromWasm(e) {
  if (e instanceof CaptchaDlqError || e === null || typeof e !== 'object' || typeof e.code !== 'string') return e;
  const Class = CLASSES[e.code] ?? CaptchaDlqError;
  const out = new Class(e.message, e.code);
  for (const key of ['field', 'record', 'stored', 'reason', 'class']) if (key in e) out[key] = e[key];
  return out;
}
