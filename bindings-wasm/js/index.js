// captcha-dlq-web: solve CAPTCHAs from a page, a worker or an extension's service worker without losing a task.
// A thin wrapper over the native module (the one Rust orchestration, compiled to wasm): it loads the module,
// turns method calls into the native surface of docs/bindings.md, native errors into error classes, and
// streams into async iterators. It decides nothing. (Until the wrapper shared with the Node package lands,
// this file is the package's own minimal copy of it.)
import init, { open } from './wasm/captcha_dlq_wasm.js';
import { Aborted, fromNative } from './errors.js';

export * from './errors.js';

let loading = null;

/**
 * Loads the wasm module (once). Optional: every client waits for it. Pass a URL, Response or
 * WebAssembly.Module to load it from elsewhere than next to this file.
 */
export function ready(moduleOrPath) {
  loading ??= init(moduleOrPath === undefined ? undefined : { module_or_path: moduleOrPath }).then(() => {});
  return loading;
}

/** A native call, its rejection or throw as an error class. */
async function call(fn) {
  try {
    return await fn();
  } catch (e) {
    throw fromNative(e);
  }
}

/** An options object without its `undefined` properties (left out, as JSON.stringify leaves them out). */
function defined(o) {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return o;
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

const aborted = () => new Aborted("aborted by the caller's signal", 'ABORTED');

/** Async iteration over a native stream (`next()` resolving to an item or null). */
async function* iterate(stream, each = (x) => x) {
  for (;;) {
    const item = await call(() => stream.next());
    if (item === null) return;
    yield each(item);
  }
}

/** A batch result with its error as an error class. */
const result = (r) => (r.ok ? r : { ...r, error: fromNative(r.error) });

export class Client {
  #native;

  /**
   * Options: { apiKey, provider, baseUrl, dlq: 'indexeddb:NAME' | 'memory' | store object, retry, polling, rate,
   * circuit, replayPolicy, store, concurrency, onEvent, allowInsecureHttp, … }. A bad option rejects the first call
   * (or `Client.create`).
   */
  constructor(options) {
    let store;
    let onEvent;
    if (options !== null && typeof options === 'object') {
      ({ onEvent, ...options } = options);
      if (options.dlq !== null && typeof options.dlq === 'object') ({ dlq: store, ...options } = options);
    }
    this.#native = call(async () => {
      await ready();
      return open(defined(options), store, onEvent);
    });
    this.#native.catch(() => {}); // reported by the first call instead of as an unhandled rejection
  }

  /** Like the constructor, but resolves once the DLQ is open (and rejects on a bad option). */
  static async create(options) {
    const client = new Client(options);
    await client.#native;
    return client;
  }

  /** Resolves to the solution `{ text, fields, providerTaskId }`; rejects with SolveFailed (`.record`) etc. */
  async solve(task, { signal, labels } = {}) {
    const native = await this.#native;
    if (signal?.aborted) throw aborted();
    const job = await call(() => native.submit(task, labels, undefined));
    const onAbort = () => job.cancel();
    signal?.addEventListener('abort', onAbort);
    if (signal?.aborted) onAbort(); // aborted while the task was being accepted
    try {
      return await call(() => job.wait());
    } catch (e) {
      throw signal?.aborted ? Object.assign(aborted(), { cause: e }) : e;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Results as tasks end: `{ index, id, key, labels, ok, solution | error }`. */
  async *solveStream(tasks, { signal, ...options } = {}) {
    const native = await this.#native;
    const stream = await call(() => native.solveStream(tasks, defined(options)));
    const onAbort = () => stream.close();
    signal?.addEventListener('abort', onAbort);
    try {
      yield* iterate(stream, result);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stream.close();
    }
  }

  /** Every result, in input order; `onResult(r)` as each ends. */
  async solveMany(tasks, { onResult, ...options } = {}) {
    const results = [];
    for await (const r of this.solveStream(tasks, options)) {
      results[r.index] = r;
      onResult?.(r);
    }
    return results;
  }

  /** Replayed records as they end: `{ id, labels, outcome, solution?, record?, parked?, reason?, why?, error? }`. */
  async *replayStream(options) {
    const native = await this.#native;
    const stream = await call(() => native.replayStream(defined(options)));
    try {
      yield* iterate(stream);
    } finally {
      stream.cancel();
    }
  }

  /** Replays DLQ records: `{ report, solved: [{ id, labels, solution }] }`. */
  async replay(options) {
    const native = await this.#native;
    const stream = await call(() => native.replayStream(defined(options)));
    const solved = [];
    for await (const item of iterate(stream)) {
      if (item.outcome === 'recovered') solved.push({ id: item.id, labels: item.labels, solution: item.solution });
    }
    return { report: stream.report(), solved };
  }

  /** Recovered tasks as they end: `{ id, key, labels, ok, solution | error }`. */
  async *recoverStream(options) {
    const native = await this.#native;
    yield* iterate(await call(() => native.recoverStream(defined(options))), result);
  }

  /** Resumes what a reloaded page or stopped worker left in flight: `{ found, skippedLive, solved, deadLettered }`. */
  async recover(options) {
    const native = await this.#native;
    const stream = await call(() => native.recoverStream(defined(options)));
    const solved = [];
    for await (const item of iterate(stream)) {
      if (item.ok) solved.push({ id: item.id, labels: item.labels, solution: item.solution });
    }
    return { ...stream.summary(), solved };
  }

  /** The DLQ operations. */
  get dlq() {
    const op = async (name, args) => {
      const native = await this.#native;
      return call(() => native.dlq(name, defined(args)));
    };
    return {
      count: (filter) => op('count', { filter }),
      peek: (filter, page) => op('peek', { filter, ...page }),
      stats: () => op('stats'),
      analysis: (filter) => op('analysis', { filter }),
      export: (filter, format) => op('export', { filter, format }),
      import: (text) => op('import', { text }),
      purge: (filter) => op('purge', { filter }),
      park: (id, reason) => op('park', { id, reason }),
      unpark: (id) => op('unpark', { id }),
      journal: () => op('journal'),
      settled: (prefix) => op('settled', { prefix }),
      clearSettled: (prefix) => op('clear_settled', { prefix }),
    };
  }

  async balance() {
    const native = await this.#native;
    return call(() => native.balance());
  }

  /** Tells the provider whether the answer of `providerTaskId` was right. */
  async report(providerTaskId, good) {
    const native = await this.#native;
    return call(() => native.report(providerTaskId, good));
  }

  /** Lets submissions flow again after an account error was fixed (new key, top-up). */
  async resetCircuit() {
    const native = await this.#native;
    return call(() => native.resetCircuit());
  }

  async status() {
    const native = await this.#native;
    return call(() => native.status());
  }

  async storeHealth() {
    const native = await this.#native;
    return native.storeHealth();
  }

  /** Stops the client; tasks in flight stay in the journal for `recover()`. */
  async close() {
    const native = await this.#native;
    return call(() => native.close());
  }
}
