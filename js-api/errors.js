// The error classes of captcha-dlq's JS API, and the one mapping from the native
// client's error codes to them. Shared, unchanged, by the Node package (`captcha-dlq`)
// and the browser package (`captcha-dlq-web`): the native side (napi addon or wasm)
// rejects with Errors carrying `code`, `message` and, when they apply, `field`,
// `record`, `stored`, `id` and `runsOn`; `fromNative` picks the class for `code`.

/** Base of every error the package throws; `code` is stable across versions and languages. */
export class CaptchaDlqError extends Error {
  /**
   * @param {string} message
   * @param {{code: string} & Record<string, unknown>} properties copied onto the error
   * @param {{cause?: unknown}} [options]
   */
  constructor(message, properties, options) {
    super(message, options);
    this.name = new.target.name;
    for (const [name, value] of Object.entries(properties)) {
      if (value !== undefined && name !== 'message' && name !== 'stack' && name !== 'name') this[name] = value;
    }
  }
}

/** The task could not be solved: `record` is its dead-letter record (`stored`: it is in the DLQ). */
export class SolveFailed extends CaptchaDlqError {}
/** The account (key, balance, IP) is the problem, not the task; `record` when a solve failed. */
export class AccountError extends CaptchaDlqError {}
/** A task that can never be sent; `field` names the offending field. */
export class InvalidTask extends CaptchaDlqError {}
/** A bad option or argument; `field` names it as you wrote it. */
export class InvalidConfig extends CaptchaDlqError {}
/** The DLQ store failed or did not answer. */
export class StoreError extends CaptchaDlqError {}
/** A direct request to the provider (balance, report) failed. */
export class ProviderError extends CaptchaDlqError {}
/** The task was cancelled; `runsOn`: the provider already had it, its answer goes to the journal for `recover()`. */
export class Cancelled extends CaptchaDlqError {}
/** The client is closed; tasks still in flight are in the journal for `recover()`. */
export class Closed extends CaptchaDlqError {}
/** An `AbortSignal` stopped the call (`cause` is the signal's reason); `runsOn` and `record` as for `Cancelled`. */
export class Aborted extends CaptchaDlqError {}

const CLASS_OF_CODE = {
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

/** An error payload `{code, message, ...}` (a batch item's `error`) as an instance of its class. */
export function fromPayload(payload) {
  const Class = CLASS_OF_CODE[payload.code] ?? CaptchaDlqError;
  return new Class(String(payload.message ?? payload.code), { ...payload, code: String(payload.code) });
}

/**
 * An error thrown by the native side, as the package's class for its code. Codes the client
 * does not have come from the boundary itself (napi's `InvalidArg`, a value that is not plain
 * data such as a function inside an options object): they are bad arguments.
 */
export function fromNative(error) {
  if (error instanceof CaptchaDlqError || error === null || typeof error !== 'object') return error;
  const code = error.code;
  if (typeof code === 'string' && (CLASS_OF_CODE[code] || code === 'IO_ERROR')) {
    return fromPayload({ ...ownProperties(error), code, message: error.message });
  }
  if (code === 'InvalidArg') {
    return new InvalidConfig(`invalid argument: ${error.message}`, { code: 'INVALID_CONFIG', field: 'arguments' });
  }
  return error;
}

function ownProperties(error) {
  const out = {};
  for (const name of Object.keys(error)) out[name] = error[name];
  return out;
}

/** A bad argument that only the JS side sees (a callback, an AbortSignal). */
export function invalidArgument(field, problem) {
  return new InvalidConfig(`${field}: ${problem}`, { code: 'INVALID_CONFIG', field });
}

/** The error of a call stopped by `signal`: what the native side said about the task, if anything. */
export function aborted(signal, cancelled) {
  const what = cancelled ? `: ${cancelled.message}` : ' before anything was submitted';
  const properties = cancelled
    ? { ...ownProperties(cancelled), code: 'ABORTED', runsOn: cancelled.runsOn ?? false }
    : { code: 'ABORTED', runsOn: false };
  return new Aborted(`aborted${what}`, properties, { cause: signal.reason });
}
