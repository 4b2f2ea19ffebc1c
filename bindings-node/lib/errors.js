// The one place where the addon's coded errors become JS errors. The addon throws
// errors whose message is `captcha-dlq:` + a JSON payload ({code, message, field,
// record, ...}); `fromNative` turns each into the matching subclass below.
'use strict';

const PREFIX = 'captcha-dlq:';

/** Base of every error this package throws; `code` is stable across versions and bindings. */
class CaptchaDlqError extends Error {
  constructor(message, code, details = {}, options) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    for (const [k, v] of Object.entries(details)) {
      if (v !== undefined && k !== 'message' && k !== 'code') this[k] = v;
    }
  }
}

/** The task could not be solved; it is in the dead-letter queue as `record`. */
class SolveFailed extends CaptchaDlqError {}
/** The account (key, balance, IP) is the problem, not the task. Has `record` when a solve failed. */
class AccountError extends CaptchaDlqError {}
/** A task that can never be sent; `field` names the offending field. */
class InvalidTask extends CaptchaDlqError {}
/** A bad option or argument; `field` names it. */
class ConfigError extends CaptchaDlqError {}
/** The DLQ store failed; `kind` is lease_lost, not_found, corrupt, newer_schema, decode or backend. */
class StoreError extends CaptchaDlqError {}
/** A direct request to the provider (balance, report) failed; `reason` and `class` say how. */
class TransportError extends CaptchaDlqError {}
/** Reading or writing a file (export, import) failed. */
class IoError extends CaptchaDlqError {}
/** The client was closed; tasks in flight stay in the journal for `recover`. */
class ClientClosed extends CaptchaDlqError {}
/** An AbortSignal stopped the solve; the task was dead-lettered as `Cancelled` (`record`). */
class AbortError extends CaptchaDlqError {}

const BY_CODE = {
  SOLVE_FAILED: SolveFailed,
  ACCOUNT_ERROR: AccountError,
  INVALID_TASK: InvalidTask,
  INVALID_CONFIG: ConfigError,
  STORE_ERROR: StoreError,
  PROVIDER_ERROR: TransportError,
  IO_ERROR: IoError,
  CLOSED: ClientClosed,
  ABORTED: AbortError,
};

/** Builds the error for a payload object ({code, message, ...details}). */
function fromPayload(payload) {
  const Class = BY_CODE[payload.code] || CaptchaDlqError;
  return new Class(String(payload.message ?? payload.code), String(payload.code), payload);
}

/** Converts an error thrown by the addon; anything not coded is returned unchanged. */
function fromNative(err) {
  const message = err && typeof err.message === 'string' ? err.message : '';
  if (!message.startsWith(PREFIX)) return err;
  let payload;
  try {
    payload = JSON.parse(message.slice(PREFIX.length));
  } catch {
    return err;
  }
  return fromPayload(payload);
}

function configError(field, problem) {
  return new ConfigError(`invalid configuration: ${field}: ${problem}`, 'INVALID_CONFIG', { field, problem });
}

function invalidTask(field, problem) {
  return new InvalidTask(`invalid task: ${field}: ${problem}`, 'INVALID_TASK', { field, problem });
}

function abortError(record, reason) {
  const id = record ? ` (task ${record.id} dead-lettered as Cancelled)` : '';
  return new AbortError(`the solve was aborted${id}`, 'ABORTED', { record }, reason === undefined ? undefined : { cause: reason });
}

module.exports = {
  CaptchaDlqError,
  SolveFailed,
  AccountError,
  InvalidTask,
  ConfigError,
  StoreError,
  TransportError,
  IoError,
  ClientClosed,
  AbortError,
  fromNative,
  fromPayload,
  configError,
  invalidTask,
  abortError,
};
