// The driver: the one loop that runs a client's engine (the wasm `WasmEngine`, a sans-IO state machine).
// It feeds the engine commands, answers and the time, and performs what `pollAction()` asks, in order:
// HTTP through the global `fetch` (a timeout per request through an AbortController), journal and DLQ
// writes through the store (each awaited before the next action, so the journal is written before the
// request it covers is sent), solutions and dead letters to whoever waits, events to `onEvent`. Between
// inputs it sleeps on one timer until `pollTimeout()`. Only globals every realm has: it runs in pages,
// dedicated workers and service workers.

/** Rejects the waiters of a driver that was closed. */
export class DriverClosed extends Error {}

export class Driver {
  #engine;
  #store;
  #owner;
  #onEvent;
  #waiters = new Map(); // job -> { resolve, reject }
  #replays = new Set(); // jobs whose lease the replayer settles: their dead letters are not pushed
  #requests = new Set(); // AbortControllers of requests in flight
  #timer = null;
  #scheduled = false;
  #pumping = false;
  #closed = false;

  /**
   * `store` is the client's checked store (see `index.js`), `owner` the id stamped on journal entries,
   * `onEvent` the user's callback or undefined.
   */
  constructor(engine, store, owner, onEvent) {
    this.#engine = engine;
    this.#store = store;
    this.#owner = owner;
    this.#onEvent = onEvent;
  }

  get closed() {
    return this.#closed;
  }

  /**
   * Accepts a task (throws what the engine throws: INVALID_TASK naming `fieldPrefix` + the field,
   * INVALID_CONFIG for labels).
   */
  submit(task, labels, fieldPrefix = '') {
    this.#open();
    return this.#start(this.#engine.submit(task, labels, fieldPrefix, Date.now()));
  }

  /** Replays a leased record; its dead letter is not pushed (the replayer abandons the lease with it). */
  replay(record, attempts) {
    this.#open();
    const started = this.#start(this.#engine.replay(record, attempts, Date.now()));
    this.#replays.add(started.job);
    return started;
  }

  /** Resumes a journal entry of a client that is gone. */
  recover(entry) {
    this.#open();
    return this.#start(this.#engine.recover(entry, Date.now()));
  }

  /** Ends the job as a `Cancelled` dead letter (a no-op once it ended). */
  cancel(job) {
    if (this.#closed) return;
    this.#engine.cancel(job, Date.now());
    this.#wake();
  }

  resetCircuit() {
    this.#engine.resetCircuit();
    this.#wake();
  }

  /**
   * Stops: no more actions, requests in flight aborted, every waiter rejected with DriverClosed. Tasks in
   * flight stay in the journal for `recover()`; a store write under way finishes first.
   */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const controller of this.#requests) controller.abort();
    for (const { reject } of this.#waiters.values()) reject(new DriverClosed());
    this.#waiters.clear();
  }

  #open() {
    if (this.#closed) throw new DriverClosed();
  }

  /** `{job, done}`: `done` resolves to `{solved: {id, labels, solution}}` or `{deadLettered: record, stored}`. */
  #start(job) {
    const done = new Promise((resolve, reject) => this.#waiters.set(job, { resolve, reject }));
    this.#wake();
    return { job, done };
  }

  /** Runs the pump soon: commands given in one turn (a `solveMany`) reach the engine before it acts. */
  #wake() {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#pump();
    });
  }

  async #pump() {
    if (this.#pumping || this.#closed) return;
    this.#pumping = true;
    try {
      for (;;) {
        const action = this.#engine.pollAction(Date.now());
        if (action === undefined) break;
        await this.#perform(action);
        if (this.#closed) return;
      }
    } finally {
      this.#pumping = false;
    }
    this.#arm();
  }

  /** One timer, for the engine's next deadline (none when only answers can move it). */
  #arm() {
    clearTimeout(this.#timer);
    this.#timer = null;
    const at = this.#engine.pollTimeout();
    if (at === undefined) return;
    // setTimeout takes at most 2^31-1 ms; the engine is asked again then.
    const delay = Math.min(Math.max(0, at - Date.now()), 2_147_483_647);
    this.#timer = setTimeout(() => this.#wake(), delay);
  }

  async #perform(action) {
    switch (action.kind) {
      case 'send':
        this.#send(action);
        return;
      case 'journal_upsert': {
        const entry = { ...action.entry, owner: this.#owner };
        // The task goes on without crash-safety; the warning says so.
        await this.#store.journalUpsert(entry).catch((e) => warn(`journal write failed for ${entry.id}: ${e.message}`));
        return;
      }
      case 'journal_forget':
        await this.#store.journalForget(action.id).catch((e) => warn(`journal removal failed for ${action.id}: ${e.message}`));
        return;
      case 'solved':
        this.#replays.delete(action.job);
        this.#settle(action.job, { solved: { id: action.id, labels: action.labels, solution: action.solution } });
        return;
      case 'dead_letter': {
        let stored = false;
        if (!this.#replays.delete(action.job)) {
          try {
            await this.#store.push(action.record);
            stored = true;
          } catch (e) {
            warn(`DLQ write failed for ${action.record.id}: ${e.message}`);
          }
        }
        this.#settle(action.job, { deadLettered: action.record, stored });
        return;
      }
      case 'event':
        if (this.#onEvent) {
          try {
            this.#onEvent({ name: action.name, warning: action.warning, message: action.message, detail: action.detail });
          } catch {
            // A throwing callback must not stop the driver.
          }
        }
        return;
      default:
        warn(`unknown engine action ${action.kind}`);
    }
  }

  #settle(job, outcome) {
    const waiter = this.#waiters.get(job);
    this.#waiters.delete(job);
    waiter?.resolve(outcome);
  }

  /** Sends without blocking the loop; the answer (or the failure) goes back to the engine. */
  async #send(action) {
    const controller = new AbortController();
    this.#requests.add(controller);
    const result = await exchange(action, controller);
    this.#requests.delete(controller);
    if (this.#closed) return;
    const now = Date.now();
    if (result.failure) this.#engine.handleFailure(action.request, result.failure.kind, result.failure.message, now);
    else this.#engine.handleResponse(action.request, result.status, result.body, now);
    this.#wake();
  }
}

/**
 * One HTTP exchange of a `send` action or direct request: `{status, body: Uint8Array}` or
 * `{failure: {kind, message}}` with kind `connect`, `timeout` or `reset`. Messages never carry the URL
 * (it holds the API key): `fetch` reports network failures as a bare TypeError, whose text is kept.
 */
export async function exchange(request, controller = new AbortController()) {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, request.timeout_ms);
  const failed = (kind, e) =>
    timedOut
      ? { failure: { kind: 'timeout', message: `no complete answer within ${request.timeout_ms} ms` } }
      : { failure: { kind, message: `${e?.name ?? 'Error'}: ${e?.message ?? e}` } };
  try {
    let response;
    try {
      response = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: controller.signal,
      });
    } catch (e) {
      return failed('connect', e);
    }
    try {
      return { status: response.status, body: new Uint8Array(await response.arrayBuffer()) };
    } catch (e) {
      return failed('reset', e);
    }
  } finally {
    clearTimeout(timer);
  }
}

function warn(message) {
  globalThis.console?.warn?.(`captcha-dlq: ${message}`);
}
