// The public Client: validates arguments, talks to the addon (all I/O is async on
// tokio, off the event loop), parses its JSON answers and maps its errors
// (lib/errors.js). Values that mirror the language-neutral schema (records, stats,
// analysis, reports, events) keep their schema field names (snake_case), exactly
// as export files and the CLI show them.
'use strict';

const util = require('node:util');
const native = require('../native.js');
const errors = require('./errors');
const { makeDispatcher } = require('./store');

const { fromNative, fromPayload, configError, invalidTask, abortError } = errors;

const FILTER_KEYS = new Set([
  'ids',
  'reasons',
  'classes',
  'states',
  'sitekey',
  'pageHost',
  'page_host',
  'labels',
  'deadLetteredBefore',
  'dead_lettered_before',
  'deadLetteredAfter',
  'dead_lettered_after',
]);

function call(promise) {
  return promise.then(undefined, (e) => {
    throw fromNative(e);
  });
}

function sync(fn) {
  try {
    return fn();
  } catch (e) {
    throw fromNative(e);
  }
}

function taskJson(task) {
  if (task === null || typeof task !== 'object' || Array.isArray(task)) {
    throw invalidTask('task', `expected an object like { type: 'recaptcha_v2', sitekey, pageUrl }, got ${task === null ? 'null' : Array.isArray(task) ? 'an array' : typeof task}`);
  }
  try {
    return JSON.stringify(task);
  } catch (e) {
    throw invalidTask('task', `cannot be serialized: ${e.message}`);
  }
}

function labelsJson(labels) {
  if (labels === undefined || labels === null) return null;
  if (typeof labels !== 'object' || Array.isArray(labels)) throw invalidTask('labels', 'must be an object of string values');
  for (const [k, v] of Object.entries(labels)) {
    if (typeof v !== 'string') throw invalidTask(`labels.${k}`, `must be a string, got ${typeof v}`);
  }
  return JSON.stringify(labels);
}

function time(field, t) {
  if (t === undefined || t === null) return undefined;
  const d = t instanceof Date ? t : new Date(t);
  if (Number.isNaN(d.getTime())) throw configError(`filter.${field}`, 'must be a Date, a unix-ms number or an ISO 8601 string');
  return d.toISOString();
}

function filterJson(filter) {
  if (filter === undefined || filter === null) return null;
  if (typeof filter !== 'object' || Array.isArray(filter)) throw configError('filter', 'must be an object');
  const out = {};
  for (const [k, v] of Object.entries(filter)) {
    if (!FILTER_KEYS.has(k)) throw configError(`filter.${k}`, `unknown filter field; expected one of ${[...FILTER_KEYS].filter((x) => !x.includes('_')).join(', ')}`);
    if (v === undefined) continue;
    out[k] = /dead_?[lL]ettered_?(Before|After|before|after)/.test(k) ? time(k, v) : v;
  }
  return JSON.stringify(out);
}

function solution(text) {
  const s = JSON.parse(text);
  return { text: s.text, fields: s.fields ?? {}, providerTaskId: s.provider_task_id ?? null };
}

/** The dead-letter queue of a client: inspect it, export it, manage records. */
class Dlq {
  #client;

  constructor(client) {
    this.#client = client;
  }

  /** How many records match `filter` (all if omitted). */
  async count(filter) {
    const f = filterJson(filter);
    return call((await this.#client._native()).dlqCount(f));
  }

  /** Matching records, oldest first. */
  async peek(filter, { offset = 0, limit = 100 } = {}) {
    const f = filterJson(filter);
    if (!Number.isInteger(offset) || offset < 0) throw configError('offset', 'must be a non-negative integer');
    if (!Number.isInteger(limit) || limit < 1) throw configError('limit', 'must be a positive integer');
    return JSON.parse(await call((await this.#client._native()).dlqPeek(f, offset, limit)));
  }

  async stats() {
    return JSON.parse(await call((await this.#client._native()).dlqStats()));
  }

  /** Counts by reason, class, sitekey, page host, hour and provider; oldest age; repeat-failure rate. */
  async analysis(filter) {
    const f = filterJson(filter);
    return JSON.parse(await call((await this.#client._native()).dlqAnalysis(f)));
  }

  /** Writes matching records to `path` (`json` array, or `jsonl` — the default for *.jsonl). Returns how many. */
  async export(path, format, filter) {
    if (typeof path !== 'string' || path === '') throw configError('path', 'must be a non-empty string');
    const fmt = format ?? (path.endsWith('.jsonl') ? 'jsonl' : 'json');
    const f = filterJson(filter);
    return call((await this.#client._native()).dlqExport(path, fmt, f));
  }

  /** Upserts the records of an export file or a seed's captcha-dlq.json. Returns how many. */
  async import(path) {
    if (typeof path !== 'string' || path === '') throw configError('path', 'must be a non-empty string');
    return call((await this.#client._native()).dlqImport(path));
  }

  /** Removes matching records not under a lease. `{}` removes every record; the filter is required. */
  async purge(filter) {
    if (filter === undefined || filter === null) throw configError('filter', 'required: pass {} to purge every record');
    const f = filterJson(filter);
    return call((await this.#client._native()).dlqPurge(f));
  }

  /** Sets a record aside for review; false if there is no such record. */
  async park(id, reason = 'parked by operator') {
    if (typeof id !== 'string') throw configError('id', 'must be a string');
    return call((await this.#client._native()).dlqPark(id, String(reason)));
  }

  /** Returns a parked record to ready; false if it was not parked. */
  async unpark(id) {
    if (typeof id !== 'string') throw configError('id', 'must be a string');
    return call((await this.#client._native()).dlqUnpark(id));
  }

  [util.inspect.custom]() {
    return 'Dlq {}';
  }
}

/** A solving client. All methods are async and never block the event loop. */
class Client {
  #ready;
  #native = null;
  #closed = false;
  #shown;

  constructor(options) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw configError('options', 'pass an object like { apiKey, provider, dlq }');
    }
    const { onEvent, dlq = 'captcha-dlq.sqlite', ...rest } = options;
    if (onEvent !== undefined && typeof onEvent !== 'function') throw configError('onEvent', 'must be a function');
    let dispatch = null;
    const plain = { ...rest };
    if (dlq !== null && typeof dlq === 'object') {
      dispatch = makeDispatcher(dlq);
    } else if (typeof dlq === 'string') {
      plain.dlq = dlq;
    } else {
      throw configError('dlq', "must be a SQLite path, 'memory', a redis:// URL or a store object");
    }
    let text;
    try {
      text = JSON.stringify(plain);
    } catch (e) {
      throw configError('options', `cannot be serialized: ${e.message}`);
    }
    sync(() => native.checkOptions(text));
    this.#shown = {
      provider: plain.provider ?? 'captchaai',
      baseUrl: plain.baseUrl ?? plain.base_url,
      dlq: dispatch ? '[store object]' : redactUrl(plain.dlq),
    };
    const events = onEvent ? eventBridge(onEvent) : null;
    this.#ready = call(native.openClient(text, events, dispatch)).then((n) => {
      this.#native = n;
      return n;
    });
    // A failed open surfaces on the first call (or `ready()`); never as an unhandled rejection.
    this.#ready.catch(() => {});
    this.dlq = new Dlq(this);
  }

  /** Resolves once the store is open; rejects with the open error. Optional: every call waits for it. */
  async ready() {
    await this.#ready;
  }

  /** @internal */
  async _native() {
    if (this.#closed) throw new errors.ClientClosed('the client is closed', 'CLOSED');
    return this.#ready;
  }

  /** Solves one task. Rejects with SolveFailed (`.record`), AccountError, InvalidTask, or AbortError. */
  async solve(task, { signal, labels } = {}) {
    const t = taskJson(task);
    const l = labelsJson(labels);
    if (signal !== undefined && !(signal && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function')) {
      throw configError('signal', 'must be an AbortSignal');
    }
    if (signal?.aborted) throw abortError(undefined, signal.reason);
    const n = await this._native();
    const job = await call(n.submit(t, l));
    const onAbort = () => job.cancel();
    if (signal) {
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) job.cancel();
    }
    try {
      return solution(await call(job.wait()));
    } catch (e) {
      if (signal?.aborted && e.record && e.record.reason === 'Cancelled') throw abortError(e.record, signal.reason);
      throw e;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Solves many tasks, at most `concurrency` at once. Resolves to one settled result per task,
   * in input order, shaped like Promise.allSettled: {status: 'fulfilled', value} or
   * {status: 'rejected', reason}. An item may be a task or {task, labels}.
   */
  async solveMany(tasks, { concurrency = 100, onProgress } = {}) {
    if (!Array.isArray(tasks)) throw configError('tasks', 'must be an array');
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 100000) {
      throw configError('concurrency', 'must be an integer from 1 to 100000');
    }
    if (onProgress !== undefined && typeof onProgress !== 'function') throw configError('onProgress', 'must be a function');
    const items = tasks.map((item, i) => {
      const wrapped = item && typeof item === 'object' && !('type' in item) && 'task' in item;
      const task = wrapped ? item.task : item;
      const labels = wrapped ? item.labels : undefined;
      taskJson(task);
      labelsJson(labels);
      return { task: task ?? null, labels: labels ?? null, i };
    });
    let text;
    try {
      text = JSON.stringify(items.map(({ task, labels }) => ({ task, labels })));
    } catch (e) {
      throw invalidTask('tasks', `cannot be serialized: ${e.message}`);
    }
    const progress = onProgress ? progressBridge(onProgress) : null;
    const n = await this._native();
    const out = JSON.parse(await call(n.solveMany(text, concurrency, progress)));
    return out.map((r) =>
      r && r.ok !== undefined
        ? { status: 'fulfilled', value: solution(JSON.stringify(r.ok)) }
        : { status: 'rejected', reason: fromPayload(r ? r.error : { code: 'CLOSED', message: 'no result' }) },
    );
  }

  /**
   * Tries dead-lettered records again. Without reasons/ids, the classes the replay policy
   * replays automatically; with them, exactly those (review classes too).
   */
  async replay({ reasons, ids, limit, filter } = {}) {
    const opts = {};
    if (reasons !== undefined) opts.reasons = reasons;
    if (ids !== undefined) opts.ids = ids;
    if (limit !== undefined) {
      if (!Number.isInteger(limit) || limit < 1) throw configError('limit', 'must be a positive integer');
      opts.limit = limit;
    }
    if (filter !== undefined) opts.filter = JSON.parse(filterJson(filter) ?? 'null');
    const n = await this._native();
    return JSON.parse(await call(n.replay(JSON.stringify(opts))));
  }

  /** Resumes the tasks a dead process left in flight (or dead-letters them with resume: false). */
  async recover({ resume = true } = {}) {
    if (typeof resume !== 'boolean') throw configError('resume', 'must be a boolean');
    const n = await this._native();
    const r = JSON.parse(await call(n.recover(resume)));
    r.solved = r.solved.map((s) => ({ ...s, solution: solution(JSON.stringify(s.solution)) }));
    return r;
  }

  async balance() {
    const n = await this._native();
    return call(n.balance());
  }

  /** Tells the provider whether the answer of `providerTaskId` was right. */
  async report(providerTaskId, good) {
    if (typeof providerTaskId !== 'string' || providerTaskId === '') throw configError('providerTaskId', 'must be a non-empty string');
    if (typeof good !== 'boolean') throw configError('good', 'must be a boolean');
    const n = await this._native();
    await call(n.report(providerTaskId, good));
  }

  /** Lets submissions flow again after an account error was fixed. */
  async resetCircuit() {
    const n = await this._native();
    sync(() => n.resetCircuit());
  }

  /** Stops the client; tasks in flight stay in the journal for `recover`. Idempotent. */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    let n;
    try {
      n = await this.#ready;
    } catch {
      return; // never opened
    }
    await n.close();
  }

  #describe() {
    // Once open, the provider's resolved name and base URL (a preset's real host).
    const resolved = this.#native ? JSON.parse(this.#native.describe()) : {};
    return { ...this.#shown, ...resolved, apiKey: '***' };
  }

  [util.inspect.custom](depth, options, inspect) {
    const shown = { ...this.#describe(), closed: this.#closed };
    return `Client ${(inspect || util.inspect)(shown, options)}`;
  }

  toJSON() {
    return this.#describe();
  }
}

function redactUrl(location) {
  // A redis URL may carry a password.
  return typeof location === 'string' ? location.replace(/\/\/([^@/]*)@/, '//***@') : location;
}

function eventBridge(onEvent) {
  return (text) => {
    let event;
    try {
      event = JSON.parse(text);
    } catch {
      return;
    }
    try {
      onEvent(event);
    } catch (e) {
      process.emitWarning(`captcha-dlq: the onEvent callback threw: ${e && e.message}`);
    }
  };
}

function progressBridge(onProgress) {
  return (text) => {
    try {
      const [done, total] = JSON.parse(text);
      onProgress(done, total);
    } catch (e) {
      process.emitWarning(`captcha-dlq: the onProgress callback threw: ${e && e.message}`);
    }
  };
}

module.exports = { Client, Dlq };
