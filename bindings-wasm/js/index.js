// captcha-dlq-web: solve CAPTCHAs from a page, a worker or an extension's service worker without losing a task.
// The client: the wasm module decides (validation, wire formats, retries, replay policy), `driver.js` runs
// the engine, `stores.js` keeps the DLQ and journal, `owner.js` tells live clients from dead ones.
import init, {
  WasmEngine,
  analyse,
  checkStored,
  exportRecords,
  keysOf,
  readFilter,
  readLabels,
  readPage,
  validateOptions,
} from './wasm/captcha_dlq_wasm.js';
import { Driver, DriverClosed, exchange } from './driver.js';
import { Aborted, AccountError, Closed, InvalidConfig, InvalidTask, SolveFailed, StoreError, fromWasm } from './errors.js';
import { Owner, liveOwners } from './owner.js';
import { indexedDbStore, memoryStore } from './stores.js';

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

/** Runs a call into the module, turning what it throws into the error subclasses. */
function wasm(call) {
  try {
    return call();
  } catch (e) {
    throw fromWasm(e);
  }
}

const nowIso = () => new Date().toISOString();
const ALL = { offset: 0, limit: Number.MAX_SAFE_INTEGER };

function invalidConfig(field, problem) {
  return Object.assign(new InvalidConfig(`invalid configuration: ${field}: ${problem}`, 'INVALID_CONFIG'), { field });
}

const closed = () =>
  new Closed('the client is closed; tasks still in flight are in the journal and `recover()` resumes them', 'CLOSED');
const aborted = () => new Aborted("aborted by the caller's signal; the task is dead-lettered as Cancelled", 'ABORTED');

function solveFailed(record, stored) {
  const Class = record.class === 'account_terminal' ? AccountError : SolveFailed;
  const code = record.class === 'account_terminal' ? 'ACCOUNT_ERROR' : 'SOLVE_FAILED';
  const note = stored ? '' : ' (the record could not be stored; it is on this error)';
  const e = new Class(`task ${record.id} dead-lettered: ${record.reason}: ${record.description}${note}`, code);
  return Object.assign(e, { record, stored });
}

// ----- stores --------------------------------------------------------------------------------------

/** The methods a store object must have. */
const METHODS = ['push', 'receive', 'complete', 'abandon', 'park', 'unpark', 'peek', 'count', 'purge', 'stats',
  'journalUpsert', 'journalForget', 'journalEntries'];

const describe = (e) => (e instanceof Error ? e.message : String(e));

/**
 * A store as the client uses it: every method awaited, what it throws turned into StoreError naming the
 * store and method, what it returns checked against the record schema by the core.
 */
function checkedStore(object, label) {
  const store = {};
  for (const method of METHODS) {
    store[method] = async (...args) => {
      let value;
      try {
        value = await object[method](...args);
      } catch (e) {
        if (e?.code === 'LEASE_LOST') {
          const message = `the lease on record ${e.id ?? ''} was lost (expired and taken by another receiver, or already settled)`;
          throw new StoreError(message, 'STORE_ERROR');
        }
        throw new StoreError(`store backend error: ${label}'s ${method} failed: ${describe(e)}`, 'STORE_ERROR');
      }
      return wasm(() => checkStored(label, method, value));
    };
  }
  return store;
}

/** The `dlq` option: 'indexeddb:NAME' (the default, 'indexeddb:captcha-dlq'), 'memory' or a store object. */
async function openStore(spec) {
  if (spec === undefined || spec === null) spec = 'indexeddb:captcha-dlq';
  if (typeof spec === 'object') {
    for (const name of METHODS) {
      if (typeof spec[name] !== 'function') throw invalidConfig(`dlq.${name}`, 'missing: a custom store needs this method');
    }
    return checkedStore(spec, 'the custom store');
  }
  if (spec === 'memory') return checkedStore(memoryStore(keysOf), 'memory');
  const name = spec.slice('indexeddb:'.length); // validateOptions has checked the spelling
  let object;
  try {
    object = await indexedDbStore(name, keysOf);
  } catch (e) {
    throw new StoreError(`store backend error: ${spec}'s open failed: ${describe(e)}`, 'STORE_ERROR');
  }
  return checkedStore(object, spec);
}

// ----- the client ----------------------------------------------------------------------------------

async function open(options) {
  const engine = wasm(() => new WasmEngine(options));
  let store;
  try {
    store = await openStore(options.dlq);
  } catch (e) {
    engine.free();
    throw e;
  }
  const owner = new Owner();
  const onEvent = typeof options.onEvent === 'function' ? options.onEvent : undefined;
  return { engine, store, owner, driver: new Driver(engine, store, owner.id, onEvent) };
}

/** Solves one task on an open client; `fieldPrefix` names its place in a batch (`tasks[3].`). */
async function solveOne({ driver }, task, signal, labels, fieldPrefix = '') {
  if (signal !== undefined && signal !== null && !(signal instanceof AbortSignal)) {
    throw invalidConfig('signal', 'expected an AbortSignal');
  }
  if (driver.closed) throw closed();
  if (signal?.aborted) throw aborted();
  const { job, done } = wasm(() => driver.submit(task, labels, fieldPrefix));
  // Aborting cancels the job: it ends as a `Cancelled` dead letter.
  const onAbort = () => driver.cancel(job);
  signal?.addEventListener('abort', onAbort);
  let outcome;
  try {
    outcome = await done;
  } catch (e) {
    throw e instanceof DriverClosed ? closed() : e;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (outcome.solved) return outcome.solved.solution;
  if (outcome.deadLettered.reason === 'Cancelled' && signal?.aborted) throw aborted();
  throw solveFailed(outcome.deadLettered, outcome.stored);
}

/** Waits for jobs started by the driver; a closed driver rejects with Closed. */
async function outcomes(started) {
  const settled = await Promise.allSettled(started);
  return settled.map((s) => {
    if (s.status === 'fulfilled') return s.value;
    throw s.reason instanceof DriverClosed ? closed() : s.reason;
  });
}

async function replay({ engine, store, driver }, options) {
  const plan = wasm(() => engine.replayPlan(options));
  const report = { received: 0, retried: 0, recovered: 0, failed_again: 0, parked: 0, skipped: 0 };
  if (plan === null) return report;
  if (driver.closed) throw closed();
  const leased = await store.receive(plan.filter, plan.limit, plan.lease_ms, nowIso());
  report.received = leased.length;
  const running = [];
  for (const lease of leased) {
    const decision = wasm(() => engine.replayDecide(lease.record, plan.explicit));
    if (decision.decision === 'replay') {
      try {
        running.push([lease, driver.replay(lease.record, decision.attempts_allowed).done]);
        report.retried += 1;
      } catch (e) {
        if (e instanceof DriverClosed) throw closed();
        if (e?.code !== 'INVALID_TASK') throw fromWasm(e);
        // Invalid under this version's rules: needs a human, not retries.
        report.parked += 1;
        await store.park(lease.record.id, e.message, nowIso());
      }
    } else if (decision.decision === 'park') {
      report.parked += 1;
      await store.park(lease.record.id, decision.reason, nowIso());
    } else {
      report.skipped += 1;
      await store.abandon(lease.token, null, nowIso());
    }
  }
  const ended = await outcomes(running.map(([, done]) => done));
  for (const [i, outcome] of ended.entries()) {
    const lease = running[i][0];
    if (outcome.solved) {
      await store.complete(lease.token, nowIso());
      report.recovered += 1;
    } else {
      const update = wasm(() => engine.replaySettle(lease.record, outcome.deadLettered));
      const state = await store.abandon(lease.token, update, nowIso());
      if (state === 'parked') report.parked += 1;
      else report.failed_again += 1;
    }
  }
  return report;
}

async function recover({ store, driver }) {
  const entries = await store.journalEntries();
  const alive = await liveOwners();
  const report = { found: 0, skipped_live: 0, solved: [], dead_lettered: 0 };
  const waiting = [];
  for (const entry of entries) {
    if (entry.owner && alive.has(entry.owner)) {
      report.skipped_live += 1;
      continue;
    }
    report.found += 1;
    if (driver.closed) throw closed();
    waiting.push(wasm(() => driver.recover(entry)).done);
  }
  for (const outcome of await outcomes(waiting)) {
    if (outcome.solved) report.solved.push(outcome.solved);
    else report.dead_lettered += 1;
  }
  return report;
}

/** One request outside the engine (balance, report), sent once. */
async function direct(engine, request, parse) {
  const result = await exchange(request);
  if (result.failure) throw fromWasm(engine.directFailure(result.failure.message));
  return wasm(() => parse(result.status, result.body));
}

export class Client {
  #state;

  /**
   * Options: { apiKey, provider, baseUrl, dlq: 'indexeddb:NAME' | 'memory' | store object, retry, polling,
   * rate, circuit, replay, onEvent, allowInsecureHttp }. Invalid options throw here once the module is loaded
   * (after `await ready()`), else reject the first call.
   */
  constructor(options) {
    if (loaded) wasm(() => validateOptions(options));
    this.#state = ready().then(() => open(options));
    this.#state.catch(() => {}); // reported by the first call instead of as an unhandled rejection
  }

  /** Like the constructor, but resolves once the DLQ is open (and rejects on a bad option). */
  static async create(options) {
    await ready();
    const client = new Client(options);
    await client.#state;
    return client;
  }

  /** Resolves to the solution `{ text, fields?, provider_task_id? }`; rejects with SolveFailed (`.record`) etc. */
  async solve(task, { signal, labels } = {}) {
    return solveOne(await this.#state, task, signal, labels);
  }

  /** One `{ status: 'fulfilled', value } | { status: 'rejected', reason }` per task, in order. */
  async solveMany(tasks, { concurrency, onProgress, labels } = {}) {
    const state = await this.#state;
    if (!Array.isArray(tasks)) {
      throw Object.assign(new InvalidTask('invalid task: tasks: expected an array of tasks', 'INVALID_TASK'), { field: 'tasks' });
    }
    if (concurrency === undefined || concurrency === null) concurrency = 16;
    else if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw invalidConfig('concurrency', 'expected a whole number of at least 1');
    }
    wasm(() => readLabels(labels));
    const results = new Array(tasks.length);
    let next = 0;
    let finished = 0;
    const lane = async () => {
      while (next < tasks.length) {
        const i = next++;
        try {
          results[i] = { status: 'fulfilled', value: await solveOne(state, tasks[i], undefined, labels, `tasks[${i}].`) };
        } catch (reason) {
          results[i] = { status: 'rejected', reason };
        }
        finished += 1;
        if (typeof onProgress === 'function') onProgress(finished, tasks.length);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, lane));
    return results;
  }

  /** Leases records out of the DLQ and retries them: `{ received, retried, recovered, failed_again, parked, skipped }`. */
  async replay({ reasons, ids, classes, limit, explicit } = {}) {
    return replay(await this.#state, { reasons, ids, classes, limit, explicit });
  }

  /** Resumes tasks that a reloaded page or restarted service worker left in flight. */
  async recover() {
    return recover(await this.#state);
  }

  async count(filter) {
    const { store } = await this.#state;
    return store.count(wasm(() => readFilter(filter)), nowIso());
  }

  /** Records oldest first; `page` is `{offset, limit}` (default 0, 100). */
  async peek(filter, page) {
    const { store } = await this.#state;
    return store.peek(wasm(() => readFilter(filter)), wasm(() => readPage(page)), nowIso());
  }

  async stats() {
    const { store } = await this.#state;
    return store.stats(nowIso());
  }

  /** Counts by reason, class, sitekey, page host, hour; oldest age; replay throughput. */
  async analysis() {
    const { store } = await this.#state;
    const now = Date.now();
    const at = new Date(now).toISOString();
    const stats = await store.stats(at);
    const records = await store.peek(readFilter(undefined), ALL, at);
    return wasm(() => analyse(records, stats, now));
  }

  /** The matching records as a JSON array (no API key is ever in a record). */
  async exportJson(filter) {
    const { store } = await this.#state;
    const records = await store.peek(wasm(() => readFilter(filter)), ALL, nowIso());
    return wasm(() => exportRecords(records));
  }

  /** Imports our JSON/JSONL export or the seeds' `captcha-dlq.json`; resolves to the count. */
  async importJson(text) {
    const { engine, store } = await this.#state;
    const records = wasm(() => engine.importRecords(text, Date.now()));
    for (const record of records) await store.push(record);
    return records.length;
  }

  /** Removes matching records not under a live lease; resolves to how many. */
  async purge(filter) {
    const { store } = await this.#state;
    return store.purge(wasm(() => readFilter(filter)), nowIso());
  }

  async park(id, reason) {
    const { store } = await this.#state;
    if (typeof id !== 'string') throw invalidConfig('id', 'expected a record id (a string)');
    if (reason !== undefined && reason !== null && typeof reason !== 'string') throw invalidConfig('reason', 'expected a string');
    return store.park(id, reason ?? 'ParkedByOperator', nowIso());
  }

  async unpark(id) {
    const { store } = await this.#state;
    if (typeof id !== 'string') throw invalidConfig('id', 'expected a record id (a string)');
    return store.unpark(id, nowIso());
  }

  /** The account balance, as the provider reports it. Rejects with code PROVIDER_ERROR or ACCOUNT_ERROR. */
  async balance() {
    const { engine } = await this.#state;
    return direct(engine, wasm(() => engine.balanceRequest()), (status, body) => engine.parseBalance(status, body));
  }

  /**
   * Tells the provider whether the answer of `providerTaskId` (a solution's `provider_task_id`) was right.
   * Rejects with InvalidConfig (`field: 'report'`) when the provider takes no such report.
   */
  async report(providerTaskId, good) {
    const { engine } = await this.#state;
    const request = wasm(() => engine.reportRequest(providerTaskId, good));
    await direct(engine, request, (status, body) => engine.parseReport(status, body));
  }

  /** Lets submissions flow again after an account error was fixed (new key, top-up). */
  async resetCircuit() {
    const { driver } = await this.#state;
    if (driver.closed) throw closed();
    driver.resetCircuit();
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
  async close() {
    const { driver, owner } = await this.#state;
    driver.close();
    owner.release();
  }
}
