// captcha-dlq's JavaScript API, over a native client: the napi addon in Node
// (package `captcha-dlq`), the wasm module in the browser (package
// `captcha-dlq-web`). Both export the same native surface (docs/bindings.md), so
// this one file serves both packages: `bind(native)` returns the classes.
//
// It translates and decides nothing: options go to the native side as written
// (minus what only JS holds: `onEvent`, `onAdopted`, a store object, an AbortSignal, an
// `onResult` callback), where the core reads them and refuses unknown keys; the
// answers come back as plain objects. What lives here is JS idiom — promises,
// async iterators, AbortSignal, error classes, `util.inspect` — and no rule of
// the client's.

import {
  CaptchaDlqError, SolveFailed, AccountError, InvalidTask, InvalidConfig, StoreError, ProviderError, Cancelled, Closed,
  Aborted, aborted, fromNative, fromPayload, invalidArgument,
} from './errors.js';

/** Node's `util.inspect.custom`, by its registered name (no Node import: the file also runs in browsers). */
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/** Runs `work` (sync or async), turning what the native side throws into the package's errors. */
async function call(work) {
  try {
    return await work();
  } catch (e) {
    throw fromNative(e);
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Splits a call's options into what only JS holds (`names`) and the rest, which goes to the
 * native side (as plain data, see `plain`). A value that is not an object goes on as it is,
 * for the native side to name the problem.
 */
function split(options, names) {
  if (options === undefined || options === null) return [{}, undefined];
  if (!isObject(options)) return [{}, options];
  const own = {};
  const rest = { ...options };
  for (const name of names) {
    own[name] = rest[name];
    delete rest[name];
  }
  return [own, rest];
}

/**
 * Options as plain data: what cannot cross to the native side as data — a function, an
 * AbortSignal or another class instance under a misspelt key — becomes a placeholder string, so
 * that the core names the key (`options.signl: unknown field`) instead of the boundary failing
 * without a name. A `Date` becomes its RFC 3339 text; a member that is `undefined` is left out
 * (absent, as in JSON), the same for both packages' natives.
 */
function plain(value, depth = 0) {
  if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return '[nested too deep]';
  if (Array.isArray(value)) return value.map((v) => plain(v, depth + 1));
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '[invalid Date]' : value.toISOString();
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return `[${value.constructor?.name ?? 'object'}]`;
  const members = Object.entries(value).filter(([, v]) => v !== undefined);
  return Object.fromEntries(members.map(([k, v]) => [k, plain(v, depth + 1)]));
}

function checkSignal(signal, field) {
  if (signal === undefined) return;
  const ok = isObject(signal) && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function';
  if (!ok) throw invalidArgument(field, 'expected an AbortSignal');
}

function checkFunction(f, field) {
  if (f !== undefined && typeof f !== 'function') throw invalidArgument(field, `expected a function, got ${typeof f}`);
}

/**
 * `dlqRetention.archive` when it is a function (the browser package's archive, `archive(jsonl, count)`), taken out
 * of `options` to be passed beside them; a native without files (`native.archiveFunctions`) takes only that. Where
 * the archive is a file path, a function is refused by name rather than written to as a path.
 */
function archiveFunction(options, native) {
  const retention = options.dlqRetention;
  if (!isObject(retention) || typeof retention.archive !== 'function') return undefined;
  if (!native.archiveFunctions) throw invalidArgument('dlqRetention.archive', 'expected the path of a file (a function is the browser package\'s archive)');
  const { archive, ...limits } = retention;
  options.dlqRetention = limits;
  return archive;
}

/** Whether an error says the task was cancelled (before or after the provider had it). */
const isCancellation = (e) => e?.code === 'CANCELLED' || (e?.code === 'SOLVE_FAILED' && e.record?.reason === 'Cancelled');

/** A batch or recovery result with its error as an instance of the error's class. */
const withError = (item) => (item.error ? { ...item, error: fromPayload(item.error) } : item);

/** The user's event callback: what it throws is reported, never let into the client. */
function guardEvents(onEvent) {
  return (event) => {
    try {
      onEvent(event);
    } catch (e) {
      console.error('captcha-dlq: the onEvent callback threw (the event is dropped):', e);
    }
  };
}

/**
 * The user's `onAdopted` as the native side calls it: always a promise of `null` (the answer was
 * taken: its journal entry goes) or of the reason it was not (the hook threw or rejected: the
 * answer stays in the journal for `recover()`), so nothing the hook does escapes into the client.
 * The hook gets the object `recoverStream()` yields.
 */
function guardAdopted(onAdopted) {
  return (item) =>
    Promise.resolve()
      .then(() => onAdopted(withError(item)))
      .then(
        () => null,
        (e) => `the onAdopted hook threw: ${e?.message ?? String(e)}`,
      );
}

/**
 * An async iterator pulling `next()` from a native stream, one item per pull (so the stream
 * never runs ahead of its consumer). Leaving early (break, throw, return) calls `stop`.
 */
async function* pull(stream, convert, stop) {
  let ended = false;
  try {
    for (;;) {
      const item = await call(() => stream.next());
      if (item === null) {
        ended = true;
        return;
      }
      yield convert(item);
    }
  } finally {
    if (!ended) stop();
  }
}

/**
 * The package's classes over `native`, an object with `open(options, store, onEvent)`
 * resolving to a native client (docs/bindings.md).
 */
export function bind(native) {
  /** The dead-letter queue of a client: inspect, export, import, purge, park. */
  class Dlq {
    #ready;
    #operator;

    /** @internal */
    constructor(ready, operator) {
      this.#ready = ready;
      this.#operator = operator;
    }

    /**
     * Node: this DLQ as `name` acts on it: the audit trail records its actions (purge, park, unpark,
     * import) under that name instead of `api` (the core checks it when it acts).
     */
    asOperator(name) {
      return new Dlq(this.#ready, name);
    }

    async #op(name, args) {
      const client = await this.#ready();
      const named = this.#operator === undefined ? args : { ...args, operator: this.#operator };
      return call(() => client.dlq(name, plain(named)));
    }

    /**
     * Node: the audit trail, newest first (`{limit, before}`: 1 to 1000 entries, default 50; only those older
     * than entry `before`): `{id, at, operator, action, filter, count, detail, error}` each.
     */
    audit(options) {
      return this.#op('audit', options ?? {});
    }

    /** How many records match `filter` (all when omitted). */
    count(filter) {
      return this.#op('count', { filter });
    }

    /** Matching records, oldest first; `{offset, limit}` pages through them. */
    peek(filter, page) {
      if (page !== undefined && !isObject(page)) return Promise.reject(invalidArgument('page', 'expected { offset, limit }'));
      return this.#op('peek', { filter, ...page });
    }

    /** The store's counters (`total`, `ready`, `parked`, `inFlight`…). */
    stats() {
      return this.#op('stats', {});
    }

    /** Counts by reason, class, sitekey, page host, hour and provider; oldest age; repeat-failure rate. */
    analysis(filter) {
      return this.#op('analysis', { filter });
    }

    /** The matching records as export text (`{filter, format}`: `json`, the default, or `jsonl`). */
    async exportText(options) {
      const answer = await this.#op('export', options ?? {});
      return answer.text;
    }

    /** Upserts the records of an export (or of the seeds' `captcha-dlq.json`); how many. */
    importText(text) {
      return this.#op('import', { text });
    }

    /**
     * Node: writes the matching records to `path`, created readable by its owner only
     * (`{filter, format}`; the format follows the file name by default). How many.
     */
    async export(path, options) {
      const client = await this.#ready();
      if (typeof client.exportFile !== 'function') throw invalidArgument('path', 'no file system here: use exportText()');
      // `?? null`: napi reads no JSON value from `undefined`; from null the core names the argument.
      return call(() => client.exportFile(path ?? null, plain(options ?? {})));
    }

    /** Node: upserts the records of an export file; how many. */
    async import(path) {
      const client = await this.#ready();
      if (typeof client.importFile !== 'function') throw invalidArgument('path', 'no file system here: use importText()');
      return call(() => client.importFile(path ?? null, this.#operator ?? null));
    }

    /** Removes the matching records not under a lease; `{}` removes every record (the filter is required). */
    purge(filter) {
      return this.#op('purge', { filter });
    }

    /**
     * Edits the records `filter` selects (required): `{task, labels, preview}`, `task` a JSON merge patch on the
     * task, `labels` values to set (`null` removes). The report lists what changed, per record.
     */
    edit(filter, changes) {
      if (changes !== undefined && !isObject(changes)) {
        return Promise.reject(invalidArgument('changes', 'expected { task, labels, preview }'));
      }
      return this.#op('edit', { ...changes, filter });
    }

    /** Sets a record aside for review; false if there is no such record. */
    park(id, reason) {
      return this.#op('park', { id, reason });
    }

    /** Returns a parked record to ready; false if it was not parked. */
    unpark(id) {
      return this.#op('unpark', { id });
    }

    /** Tasks in flight (of every client sharing the store). */
    journal() {
      return this.#op('journal', {});
    }

    /** Task keys settled (solved and handed over, or dead-lettered) under `prefix`. */
    settled(prefix) {
      return this.#op('settled', { prefix });
    }

    /** Forgets the settled keys under `prefix`; how many. */
    clearSettled(prefix) {
      return this.#op('clear_settled', { prefix });
    }

    /**
     * What became of an answer on a page (the page front ends call it): `accepted`/`rejected` count in the
     * metrics; a rejection is reported to the provider and dead-lettered as `RejectedBySite`, a page gone as
     * `PageGone` with the answer. The rules are the client's (client/src/page.rs).
     */
    recordPageOutcome(outcome) {
      return this.#op('record_page_outcome', outcome);
    }

    /**
     * The task a widget found on a page becomes (the page front ends call it): `{ task, browserProxy?, proxy?,
     * userAgent?, cookies? }` → `{ task, filled, shown }`. The detector's kind mapped to the client's (`aws_waf`
     * is `amazon_waf`), the browser's proxy (or `proxy`: `false` none, else the one given), cookies and user
     * agent in the fields the kind takes; `shown` is the task without the proxy's credentials and the cookies.
     */
    pageTask(args) {
      return this.#op('page_task', args);
    }

    /**
     * How an answer is applied to the page at `url`: `{ task, solution, url }` → `{ cookies: [{ name, value,
     * url }], reload }`. Cookie answers (AWS WAF, DataDome, `cf_clearance`) are written into the browser, then
     * the page is reloaded when `reload`; no cookies means the detector injects the answer.
     */
    pageAnswer(args) {
      return this.#op('page_answer', args);
    }

    [INSPECT]() {
      return 'Dlq {}';
    }
  }

  /** A solving client. Every method is async; none blocks the event loop. */
  class Client {
    #opening;
    #native = null;
    #closed = false;
    #dlq;

    /**
     * Starts a client. Options are the core's (`apiKey`, `provider`, `baseUrl`, `dlq`, `retry`,
     * `polling`, `rate`, `circuit`, `store`, `concurrency`, `replayPolicy`, `fleet`, …) plus `onEvent` and
     * `onAdopted` (each answer this client adopts from a dead fleet member, once); a
     * problem with them rejects `ready()` and every call.
     */
    constructor(options) {
      if (!isObject(options)) throw invalidArgument('options', 'expected an object of options, like { apiKey, dlq }');
      const { onEvent, onAdopted, ...rest } = options;
      checkFunction(onEvent, 'onEvent');
      checkFunction(onAdopted, 'onAdopted');
      let store;
      if (isObject(rest.dlq)) {
        store = rest.dlq;
        delete rest.dlq;
      }
      const events = onEvent ? guardEvents(onEvent) : undefined;
      const adopted = onAdopted ? guardAdopted(onAdopted) : undefined;
      const archive = archiveFunction(rest, native);
      this.#opening = call(() => native.open(plain(rest), store, events, adopted, archive)).then(
        (client) => (this.#native = client),
      );
      // A failed open surfaces on the first call or ready(), never as an unhandled rejection.
      this.#opening.catch(() => {});
      this.#dlq = new Dlq(() => this.#opening);
    }

    /** The dead-letter queue. */
    get dlq() {
      return this.#dlq;
    }

    /** Resolves once the client runs (its store open); rejects with what stopped it. */
    async ready() {
      await this.#opening;
    }

    /** Solves one task: `{text, fields, providerTaskId}`. `options`: `{labels, ttlMs, signal}`. */
    async solve(task, options) {
      const [{ signal }, rest] = split(options, ['signal']);
      checkSignal(signal, 'options.signal');
      if (signal?.aborted) throw aborted(signal);
      const client = await this.#opening;
      const job = await call(() => client.submit(task ?? null, plain(rest)));
      const cancel = () => job.cancel();
      signal?.addEventListener('abort', cancel, { once: true });
      if (signal?.aborted) job.cancel();
      try {
        return await call(() => job.wait());
      } catch (e) {
        if (signal?.aborted && isCancellation(e)) throw aborted(signal, e);
        throw e;
      } finally {
        signal?.removeEventListener('abort', cancel);
      }
    }

    /**
     * Solves many tasks, yielding each result as it ends: `{index, id, key, labels, ok, solution}`
     * or `{…, ok: false, error}`. Never more than `concurrency` tasks ahead of the consumer;
     * leaving the loop early, or `signal`, cancels the rest (tasks the provider has run on, and
     * `recover()` hands their answers over).
     */
    solveStream(tasks, options) {
      const [{ signal }, rest] = split(options, ['signal']);
      const opening = this.#opening;
      return (async function* solveStream() {
        checkSignal(signal, 'options.signal');
        if (signal?.aborted) throw aborted(signal);
        const client = await opening;
        const stream = await call(() => client.solveStream(tasks ?? null, plain(rest)));
        const close = () => stream.close();
        signal?.addEventListener('abort', close, { once: true });
        try {
          yield* pull(stream, withError, close);
          if (signal?.aborted) throw aborted(signal);
        } finally {
          signal?.removeEventListener('abort', close);
        }
      })();
    }

    /**
     * Solves many tasks; one result per task, in input order. `onResult(result)` is called as
     * each ends. Aborted by `signal`, it rejects with `Aborted` (its `partial` holds the results
     * delivered so far) after `onResult` had every one of them.
     */
    async solveMany(tasks, options) {
      const [{ onResult }, rest] = split(options, ['onResult']);
      checkFunction(onResult, 'options.onResult');
      const results = [];
      try {
        for await (const result of this.solveStream(tasks, rest)) {
          results[result.index] = result;
          onResult?.(result);
        }
      } catch (e) {
        if (e instanceof Aborted) e.partial = results;
        throw e;
      }
      return results;
    }

    /**
     * Replays dead-lettered records, yielding each outcome with its solution
     * (`{id, labels, outcome: 'recovered', solution}`, `failed_again`, `parked`, `skipped`, `error`).
     * `report()` on the iterator gives the counts (final once it ended). Leaving early stops
     * starting records; those started finish.
     */
    replayStream(options) {
      return this.#replayStream(options, false);
    }

    #replayStream(options, collect) {
      const opening = this.#opening;
      let replay = null;
      const items = (async function* replayStream() {
        const client = await opening;
        replay = await call(() => client.replayStream(plain(options) ?? null, collect));
        yield* pull(replay, withError, () => replay.cancel());
      })();
      items.report = () => (replay ? replay.report() : null);
      items.result = () => (replay ? replay.result() : null);
      return items;
    }

    /** Replays records: `{report, solved: [{id, key, labels, solution}], items}` (the client's `ReplayResult`). */
    async replay(options) {
      const stream = this.#replayStream(options, true);
      for await (const _ of stream);
      const result = stream.result();
      return { ...result, items: result.items.map(withError) };
    }

    /**
     * Finishes what a dead client (or a cancelled caller) left in flight, yielding each task as it
     * ends: `{id, key, labels, ok, solution}` or `{…, ok: false, error}`. `summary()` on the iterator
     * gives the counts.
     */
    recoverStream(options) {
      return this.#recoverStream(options, false);
    }

    #recoverStream(options, collect) {
      const opening = this.#opening;
      let recovery = null;
      const items = (async function* recoverStream() {
        const client = await opening;
        recovery = await call(() => client.recoverStream(plain(options) ?? null, collect));
        yield* pull(recovery, withError, () => {});
      })();
      items.summary = () => (recovery ? recovery.summary() : null);
      items.result = () => (recovery ? recovery.result() : null);
      return items;
    }

    /** Recovers the journal: `{report, solved: [{id, key, labels, solution}], failed}` (the client's `RecoverResult`). */
    async recover(options) {
      const stream = this.#recoverStream(options, true);
      for await (const _ of stream);
      const result = stream.result();
      return { ...result, failed: result.failed.map(withError) };
    }

    /** The account balance, as the provider reports it. */
    async balance() {
      const client = await this.#opening;
      return call(() => client.balance());
    }

    /** Tells the provider whether the answer of `providerTaskId` was right. */
    async report(providerTaskId, good) {
      const client = await this.#opening;
      return call(() => client.report(providerTaskId ?? null, good ?? null));
    }

    /** The balance at the provider named `name` (its `name` in `providers`). */
    async balanceOf(name) {
      const client = await this.#opening;
      return call(() => client.balanceOf(name ?? null));
    }

    /** Every provider's balance: `[{provider, balance} | {provider, error}]`, errors as the package's classes. */
    async balances() {
      const client = await this.#opening;
      const all = await call(() => client.balances());
      return all.map((b) => (b.error ? { provider: b.provider, error: fromPayload(b.error) } : b));
    }

    /** Tells the provider that solved `solution` (as this client handed it out) whether it was right. */
    async reportSolution(solution, good) {
      const client = await this.#opening;
      return call(() => client.reportSolution(plain(solution), good ?? null));
    }

    /** What this client spent since it started, by provider, kind and label (with its budget). */
    async spend() {
      const client = await this.#opening;
      return call(() => client.spend());
    }

    /** The client's counters and gauges now (tasks, HTTP exchanges, circuits), by provider. */
    async metrics() {
      const client = await this.#opening;
      return call(() => client.metrics());
    }

    /** The metrics and the DLQ's gauges in the Prometheus text format (alerts sent, records evicted included). */
    async metricsText() {
      const client = await this.#opening;
      return call(() => client.metricsText());
    }

    /**
     * Node only: serves the operator dashboard over this client's DLQ (`{listen, readOnly, token, liveIntervalMs}`;
     * loopback `127.0.0.1:8787` by default). Resolves with `{url, close()}`.
     */
    async serveDashboard(options) {
      const client = await this.#opening;
      if (typeof client.serveDashboard !== 'function') throw new Error('serveDashboard() is available in Node only');
      const server = await call(() => client.serveDashboard(plain(options) ?? null));
      return { url: server.url, close: () => call(() => server.close()) };
    }

    /** Lets submissions flow again after an account error was fixed (new key, top-up). */
    async resetCircuit() {
      const client = await this.#opening;
      return call(() => client.resetCircuit());
    }

    /** What the client is doing: `{jobs, inFlight, inFlightLimit, detached, accountFailure, storeDown, storeWrites, …}`. */
    async status() {
      const client = await this.#opening;
      return call(() => client.status());
    }

    /**
     * Resolves once every store write asked for so far has ended: dead letters, journal entries and
     * the removals that taken answers ask for (each written, or given up after its retries, which
     * `storeHealth().failures` counts). A read of the DLQ after it sees them.
     */
    async flush() {
      const client = await this.#opening;
      return call(() => client.flush());
    }

    /** The store's health as the client last saw it: `{available, failures, lastError}`. */
    async storeHealth() {
      const client = await this.#opening;
      return client.storeHealth();
    }

    /** Stops the client once its queued writes are done; tasks in flight stay in the journal. */
    async close() {
      if (this.#closed) return;
      this.#closed = true;
      let client;
      try {
        client = await this.#opening;
      } catch {
        return; // it never ran
      }
      await call(() => client.close());
    }

    #shown() {
      const where = this.#native ? this.#native.describe() : { opening: true };
      return { ...where, closed: this.#closed };
    }

    [INSPECT](depth, options, inspect) {
      return `Client ${inspect ? inspect(this.#shown(), options) : JSON.stringify(this.#shown())}`;
    }

    toJSON() {
      return this.#shown();
    }
  }

  return {
    Client, Dlq, CaptchaDlqError, SolveFailed, AccountError, InvalidTask, InvalidConfig, StoreError, ProviderError,
    Cancelled, Closed, Aborted,
  };
}
