// captcha-dlq-web: solve CAPTCHAs from a page, a worker or an extension's service worker without losing a task.
// A thin layer over the wasm module: lazy initialisation, Error subclasses, the `client.dlq` view.
import init, { WasmClient, validateOptions } from './wasm/captcha_dlq_wasm.js';
import { fromWasm } from './errors.js';

export * from './errors.js';

let loading = null;
let loaded = false;

/**
 * Loads the wasm module (once). Optional: every client call waits for it. Pass a URL, Response or
 * WebAssembly.Module to load it from elsewhere than next to this file.
 */
export function ready(moduleOrPath) {
  if (!loading) {
    const arg = moduleOrPath === undefined ? undefined : { module_or_path: moduleOrPath };
    loading = init(arg).then(() => {
      loaded = true;
    });
  }
  return loading;
}

const rethrow = (e) => {
  throw fromWasm(e);
};

export class Client {
  #inner;

  /**
   * Options: { apiKey, provider, baseUrl, dlq: 'indexeddb:NAME' | 'memory' | store object, retry, polling,
   * rate, circuit, replay, onEvent, allowInsecureHttp }. Invalid options throw here once the module is loaded
   * (after `await ready()`), else reject the first call.
   */
  constructor(options) {
    if (loaded) {
      try {
        validateOptions(options);
      } catch (e) {
        rethrow(e);
      }
    }
    this.#inner = ready().then(() => WasmClient.create(options)).catch(rethrow);
    this.#inner.catch(() => {}); // reported by the first call instead of as an unhandled rejection
  }

  /** Like the constructor, but resolves once the DLQ is open (and rejects on a bad option). */
  static async create(options) {
    await ready();
    const client = new Client(options);
    await client.#inner;
    return client;
  }

  async #call(name, ...args) {
    const inner = await this.#inner;
    return inner[name](...args).catch(rethrow);
  }

  /** Resolves to the solution `{ text, fields?, provider_task_id? }`; rejects with SolveFailed (`.record`) etc. */
  solve(task, { signal, labels } = {}) {
    return this.#call('solve', task, { signal, labels });
  }

  /** One `{ status: 'fulfilled', value } | { status: 'rejected', reason }` per task, in order. */
  async solveMany(tasks, { concurrency, onProgress, labels } = {}) {
    const results = await this.#call('solveMany', tasks, { concurrency, onProgress, labels });
    return results.map((r) => (r.status === 'rejected' ? { status: 'rejected', reason: fromWasm(r.reason) } : r));
  }

  /** Leases records out of the DLQ and retries them: `{ received, retried, recovered, failed_again, parked, skipped }`. */
  replay({ reasons, ids, classes, limit, explicit } = {}) {
    return this.#call('replay', { reasons, ids, classes, limit, explicit });
  }

  /** Resumes tasks that a reloaded page or restarted service worker left in flight. */
  recover() {
    return this.#call('recover');
  }

  count(filter) {
    return this.#call('count', filter);
  }
  peek(filter, page) {
    return this.#call('peek', filter, page);
  }
  stats() {
    return this.#call('stats');
  }
  analysis() {
    return this.#call('analysis');
  }
  exportJson(filter) {
    return this.#call('exportJson', filter);
  }
  importJson(text) {
    return this.#call('importJson', text);
  }
  purge(filter) {
    return this.#call('purge', filter);
  }
  park(id, reason) {
    return this.#call('park', id, reason);
  }
  unpark(id) {
    return this.#call('unpark', id);
  }

  /** The account balance, as the provider reports it. Rejects with code PROVIDER_ERROR or ACCOUNT_ERROR. */
  balance() {
    return this.#call('balance');
  }

  /**
   * Tells the provider whether the answer of `providerTaskId` (a solution's `provider_task_id`) was right.
   * Rejects with InvalidConfig (`field: 'report'`) when the provider takes no such report.
   */
  report(providerTaskId, good) {
    return this.#call('report', providerTaskId, good);
  }

  /** Lets submissions flow again after an account error was fixed (new key, top-up). */
  resetCircuit() {
    return this.#call('resetCircuit');
  }

  /** The DLQ operations on their own, as in the Python and Node packages (`client.dlq.stats()`). */
  get dlq() {
    const c = this;
    return {
      count: (f) => c.count(f),
      peek: (f, p) => c.peek(f, p),
      stats: () => c.stats(),
      analysis: () => c.analysis(),
      exportJson: (f) => c.exportJson(f),
      importJson: (t) => c.importJson(t),
      purge: (f) => c.purge(f),
      park: (id, r) => c.park(id, r),
      unpark: (id) => c.unpark(id),
    };
  }

  /** Stops the client; tasks in flight stay in the journal for `recover()`. */
  close() {
    return this.#call('close');
  }
}
