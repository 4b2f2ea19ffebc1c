// captcha-dlq for Node.js: solve CAPTCHAs without ever losing a task.
// CommonJS entry; index.mjs re-exports it for ESM, index.d.ts types it.
'use strict';

const native = require('./native.js');
const errors = require('./lib/errors');
const { Client, Dlq } = require('./lib/client');

/** Runs one case of the shared wire vectors (tests/vectors) and returns its actual output. */
function evaluateVector(caseJson) {
  const text = typeof caseJson === 'string' ? caseJson : JSON.stringify(caseJson);
  try {
    return JSON.parse(native.evaluateVector(text));
  } catch (e) {
    throw errors.fromNative(e);
  }
}

/** Validates a task object; returns its canonical (snake_case) form or throws InvalidTask. */
function parseTask(task) {
  let text;
  try {
    text = JSON.stringify(task);
  } catch (e) {
    throw errors.invalidTask('task', `cannot be serialized: ${e.message}`);
  }
  try {
    return JSON.parse(native.parseTask(text ?? 'null'));
  } catch (e) {
    throw errors.fromNative(e);
  }
}

/** Whether a store's `filter` selects `record` in `state`: the rule custom stores must apply. */
function filterMatches(filter, record, state) {
  try {
    return native.filterMatches(JSON.stringify(filter ?? {}), JSON.stringify(record), String(state ?? record.state));
  } catch (e) {
    throw errors.fromNative(e);
  }
}

module.exports = {
  Client,
  Dlq,
  CaptchaDlqError: errors.CaptchaDlqError,
  SolveFailed: errors.SolveFailed,
  AccountError: errors.AccountError,
  InvalidTask: errors.InvalidTask,
  ConfigError: errors.ConfigError,
  StoreError: errors.StoreError,
  TransportError: errors.TransportError,
  IoError: errors.IoError,
  ClientClosed: errors.ClientClosed,
  AbortError: errors.AbortError,
  evaluateVector,
  parseTask,
  filterMatches,
};
