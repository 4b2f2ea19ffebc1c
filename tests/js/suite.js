// The one JS test suite of captcha-dlq's two npm packages. It is given the package under
// test (`pkg`: the module of `captcha-dlq` in Node, of `captcha-dlq-web` in a browser) and
// the URL of the mock solver (mock-service), and uses nothing but the package's public
// API, `fetch` and `AbortController`, so the same file runs in Node (node.test.js) and in
// Chromium (bindings-wasm/tests/js/run.mjs). `receiver` is the URL of a loopback receiver of
// webhook alerts and OTLP traces (node/receiver.js), started by both runners. Node-only checks
// (files, util.inspect, the CommonJS entry, the fleet, OTLP over protobuf, which the browser does not encode) are
// in node-only.test.js,
// node-audit.test.js (SQLite) and node-traces.test.js.
//
// The tests share one mock, so they run one after another; each sets the mock's script it
// needs and uses its own API key, so the mock's per-key counters are its own.

import { AssertionError, deepEqual, equal, includes, ok, show, startsWith } from './assert.js';
import { MapStore } from './map-store.js';

/** The prefix of every reCAPTCHA token the mock hands out. */
export const TOKEN = '03AGdBq2';

/** Part of every test's API key: it must never show up in an error, an event, an export or an inspection. */
export const SECRET = 'never-shown';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The mock's rule for tasks whose page URL contains `part`. */
const rule = (part, behavior) => ({ match: { page_url_contains: part }, behavior });
const unsolvable = (part) => rule(part, { outcome: 'unsolvable' });
const neverReady = (part) => rule(part, { outcome: 'never_ready' });

const page = (n) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/page/${n}` });

/** Polling that waits long enough for slow or never-ready tasks (nothing is given up during a test). */
const PATIENT = { firstPollMs: 20, intervalMs: 20, maxPolls: 1000, coalesceMs: 5 };

/**
 * The tests, as `[{name, run}]`, for the package `pkg` against the mock at `mock`.
 * @param {Record<string, any>} pkg the package's exports
 * @param {{mock: string, receiver: string}} env
 */
export function suite(pkg, { mock, receiver }) {
  const {
    Client, CaptchaDlqError, SolveFailed, AccountError, InvalidTask, InvalidConfig, StoreError, ProviderError, Cancelled,
    Closed, Aborted,
  } = pkg;

  /** The package's class named after an error code (`SOLVE_FAILED` → `SolveFailed`): every code has one. */
  const classOf = (code) => pkg[code.toLowerCase().replace(/(?:^|_)([a-z])/g, (_, letter) => letter.toUpperCase())];

  const key = (name) => `sk-${name}-${SECRET}`;

  /** A test client's options: the mock, a memory DLQ, fast retries and polls. */
  function options(name, extra = {}) {
    return {
      apiKey: key(name),
      provider: 'captchaai',
      baseUrl: mock,
      dlq: 'memory',
      retry: { backoff: { kind: 'fixed', delayMs: 10 }, transientMinDelayMs: 10, requestTimeoutMs: 5000 },
      polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 3, coalesceMs: 5 },
      rate: { submitsPerSecond: 1000 },
      ...extra,
    };
  }

  async function script(body) {
    const r = await fetch(`${mock}/mock/script`, { method: 'POST', body: JSON.stringify(body) });
    if (r.status !== 200) throw new Error(`the mock refused the script: ${await r.text()}`);
  }

  async function counters() {
    return (await fetch(`${mock}/mock/counters`)).json();
  }

  /** Submits the mock received with this test's key. */
  async function submits(name) {
    return (await counters()).by_key?.[key(name)]?.submits ?? 0;
  }

  /** Probes every 10 ms, at most 1,000 times, until `done(value)`; returns the last value (the caller checks it). */
  async function until(probe, done) {
    let value;
    for (let i = 0; i < 1000; i++) {
      value = await probe();
      if (done(value)) break;
      await sleep(10);
    }
    return value;
  }

  /** Everything an error shows: message, stack and own properties. */
  const shown = (e) => `${e?.message}\n${e?.stack}\n${JSON.stringify(e)}`;

  /**
   * Awaits a promise that must reject with the package's `Class`, whose `code` maps to that class,
   * with every property of `expected`; never with the key in it. Returns the error.
   */
  async function rejects(promise, Class, expected, what) {
    let value;
    try {
      value = await promise;
    } catch (e) {
      ok(e instanceof CaptchaDlqError, `${what}: expected a CaptchaDlqError, got ${e?.constructor?.name}: ${e?.stack ?? e}`);
      ok(e instanceof Class, `${what}: expected ${Class.name}, got ${e.constructor.name}: ${e.message}`);
      equal(e.name, Class.name, `${what}: name`);
      equal(classOf(e.code), Class, `${what}: the class of code ${e.code}`);
      for (const [name, want] of Object.entries(expected)) equal(e[name], want, `${what}: .${name} of "${e.message}"`);
      ok(!shown(e).includes(SECRET), `${what}: the key shows in ${shown(e)}`);
      return e;
    }
    throw new AssertionError(`${what}: expected a rejection, got ${show(value)}`);
  }

  /** A client `name` with a task dead-lettered (page 2, which the mock finds unsolvable) for each of `labelSets`. */
  async function withDeadLetters(name, labelSets) {
    await script({ rules: [unsolvable('/page/2')] });
    const client = new Client(options(name));
    for (const labels of labelSets) await rejects(client.solve(page(2), { labels }), SolveFailed, {}, 'unsolvable');
    return client;
  }

  const refusedAs = (promise, field, what = field) =>
    rejects(promise, InvalidConfig, { code: 'INVALID_CONFIG', field }, `refused: ${what}`);

  /** The first item of an async iterator (then leaves it). */
  async function first(iterator) {
    for await (const item of iterator) return item;
    return undefined;
  }

  /** Records the names of events and checks every event's shape as it comes. */
  function eventLog() {
    const events = [];
    const onEvent = (e) => events.push(e);
    return { events, onEvent, named: (name) => events.filter((e) => e.event === name) };
  }

  function checkSolution(s, what) {
    // `provider` names who solved it; `cost` appears only where a price is known (none here).
    deepEqual(Object.keys(s).sort(), ['answer', 'expiresAt', 'fields', 'provider', 'providerTaskId', 'solvedAt', 'text'], `${what}: the solution's fields`);
    // The answer by the names its kind declares: a reCAPTCHA's is its token.
    deepEqual(s.answer, { token: s.text }, `${what}: answer`);
    equal(typeof s.provider, 'string', `${what}: provider`);
    startsWith(s.text, TOKEN, `${what}: the token`);
    // A reCAPTCHA token lives two minutes from when it was solved (Unix ms).
    equal(s.expiresAt - s.solvedAt, 120000, `${what}: expiresAt is solvedAt plus the kind's answer life`);
    equal(typeof s.providerTaskId, 'string', `${what}: providerTaskId`);
    deepEqual(s.fields, {}, `${what}: fields`);
  }

  /** What the receiver got at `path` so far: `[{path, headers, body}]`, oldest first. */
  async function received(path) {
    return (await fetch(`${receiver}/received?path=${encodeURIComponent(path)}`)).json();
  }

  /** `X-Captcha-Dlq-Signature`'s `v1` for `body` signed at `t` with `secret` (HMAC-SHA256, WebCrypto: Node and browsers). */
  async function webhookSignature(secret, t, body) {
    const bytes = (text) => new TextEncoder().encode(text);
    const hmac = await crypto.subtle.importKey('raw', bytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', hmac, bytes(`${t}.${body}`)));
    return [...mac].map((b) => b.toString(16).padStart(2, '0')).join('');
  }

  const tests = [
    {
      name: "seeds' batch: three solved, two dead-lettered with 4 attempts, onResult per task, replay returns both tokens",
      async run() {
        await script({ rules: [unsolvable('/page/2'), neverReady('/page/4')] });
        const log = eventLog();
        const client = new Client(options('seeds', { onEvent: log.onEvent }));
        const delivered = [];
        const results = await client.solveMany([1, 2, 3, 4, 5].map(page), {
          concurrency: 5,
          onResult: (r) => delivered.push(r.index),
        });
        deepEqual(results.map((r) => r.index), [0, 1, 2, 3, 4], 'one result per task, in input order');
        deepEqual([...delivered].sort(), [0, 1, 2, 3, 4], 'onResult called once per task');
        deepEqual(results.map((r) => r.ok), [true, false, true, false, true], 'which tasks were solved');
        const records = results.map((r) => (r.ok ? null : r.error.record));
        deepEqual(records.map((r) => r?.reason ?? null), [null, 'ERROR_CAPTCHA_UNSOLVABLE', null, 'Timeout', null], 'reasons');
        deepEqual(records.map((r) => r?.attempts ?? null), [null, 4, null, 4, null], 'attempts');
        deepEqual(records.map((r) => r?.state ?? null), [null, 'ready', null, 'ready', null], 'states');
        for (const r of results.filter((r) => !r.ok)) {
          ok(r.error instanceof SolveFailed, `a failed task's error is a SolveFailed: ${r.error?.constructor?.name}`);
          equal(r.error.code, 'SOLVE_FAILED', 'code');
          equal(r.error.stored, true, 'the record is in the DLQ');
          equal(typeof r.error.record.deadLetteredAt, 'string', 'records come camelCased');
        }
        for (const r of results.filter((r) => r.ok)) checkSolution(r.solution, `task ${r.index}`);
        equal(log.named('dead_lettered').length, 2, 'dead_lettered events');
        const submitted = log.named('submitted');
        ok(submitted.length >= 5 && submitted.every((e) => typeof e.providerTaskId === 'string'), `submitted events carry providerTaskId: ${show(submitted[0])}`);
        const snake = log.events.flatMap((e) => Object.keys(e)).filter((k) => k.includes('_'));
        deepEqual([...new Set(snake)], [], 'event field names are camelCase');
        equal(await client.dlq.count(), 2, 'records in the DLQ');
        equal((await client.dlq.stats()).inFlight, 0, 'every task ended: nothing left in the journal');
        const exported = await client.dlq.exportText();
        equal(JSON.parse(exported).length, 2, 'the export holds both records');
        ok(![exported, JSON.stringify(log.events), JSON.stringify(records)].some((t) => t.includes(SECRET)), 'the key is in an export, an event or a record');

        await script({});
        const { report, solved } = await client.replay();
        equal(report.received, 2, `received in ${show(report)}`);
        equal(report.recovered, 2, `recovered in ${show(report)}`);
        deepEqual(solved.map((s) => s.id).sort(), records.filter(Boolean).map((r) => r.id).sort(), 'replay returns the solutions of the records it took');
        for (const s of solved) checkSolution(s.solution, `replayed ${s.id}`);
        for (const s of solved) deepEqual(Object.keys(s).sort(), ['id', 'key', 'labels', 'solution'], `an answer's fields (tests/shapes/results.json)`);
        equal(await client.dlq.count(), 0, 'count after the replay');
        await client.close();
      },
    },

    {
      name: 'the store of docs/custom-store.md (a Map-based class, sync or async) runs unchanged and is shared by two clients',
      async run() {
        class AsyncMapStore extends MapStore {
          async get(table, k) { return super.get(table, k); }
          async scan(table) { await sleep(1); return super.scan(table); }
          async write(ops) { await sleep(1); return super.write(ops); }
        }
        for (const [kind, store] of [['sync', new MapStore()], ['async', new AsyncMapStore()]]) {
          const name = `mapstore-${kind}`;
          await script({ rules: [unsolvable('/page/2')] });
          const a = new Client(options(name, { dlq: store }));
          checkSolution(await a.solve(page(1)), `${kind}: solve`);
          const failed = await rejects(a.solve(page(2), { labels: { jobId: 'j-1' } }), SolveFailed, { code: 'SOLVE_FAILED', stored: true }, `${kind}: unsolvable`);
          equal(await a.dlq.count(), 1, `${kind}: count`);
          await a.close();

          const b = new Client(options(name, { dlq: store }));
          deepEqual((await b.dlq.peek()).map((r) => [r.id, r.labels]), [[failed.record.id, { jobId: 'j-1' }]], `${kind}: a second client sees the record`);
          await script({});
          const { solved } = await b.replay({ ids: [failed.record.id] });
          equal(solved.length, 1, `${kind}: replayed`);
          equal(await b.dlq.count(), 0, `${kind}: count after replay`);
          deepEqual(await b.dlq.journal(), [], `${kind}: journal`);
          deepEqual(await store.scan('records'), [], `${kind}: the store's own rows`);
          await b.close();
        }
      },
    },

    {
      name: 'a store object declares `shared` true (with lock and unlock) or false; anything else is refused, naming it',
      async run() {
        const name = 'shared-declaration';
        class SharedMapStore extends MapStore {
          shared = true;
          lock() {}
          unlock() {}
        }
        await script({});
        for (const store of [new SharedMapStore(), Object.assign(new MapStore(), { shared: false })]) {
          const client = new Client(options(name, { dlq: store }));
          checkSolution(await client.solve(page(1)), `shared: ${store.shared}`);
          await client.close();
        }
        const lockless = new Client(options(name, { dlq: Object.assign(new MapStore(), { shared: true }) }));
        const e = await rejects(lockless.solve(page(1)), StoreError, { code: 'STORE_ERROR' }, 'shared without lock');
        includes(e.message, 'declared `shared` but has no `lock` method', 'shared without lock');
        for (const [shared, shown] of [['yes', '"yes"'], [1, '1'], [() => true, '']]) {
          const client = new Client(options(name, { dlq: Object.assign(new SharedMapStore(), { shared }) }));
          const refused = await rejects(client.solve(page(1)), StoreError, { code: 'STORE_ERROR' }, `shared: ${show(shared)}`);
          includes(refused.message, `the custom store's \`shared\` is ${shown}`, `shared: ${show(shared)}`);
        }
      },
    },

    {
      name: "a closed client's task is recovered by the next client on the same store, without a second submission",
      async run() {
        const name = 'recover';
        const store = new MapStore();
        await script({ default: { solve_after_ms: 300 } });
        const log = eventLog();
        const a = new Client(options(name, { dlq: store, polling: PATIENT, onEvent: log.onEvent }));
        const pending = a.solve(page(7));
        pending.catch(() => {}); // checked below
        await until(() => log.named('submitted').length, (n) => n === 1);
        await a.close();
        await rejects(pending, Closed, { code: 'CLOSED' }, 'the solve pending at close()');

        const b = new Client(options(name, { dlq: store, polling: PATIENT }));
        const r = await b.recover();
        equal(r.report.found, 1, `found in ${show(r)}`);
        equal(r.report.deadLettered, 0, `deadLettered in ${show(r)}`);
        deepEqual(r.failed, [], `failed in ${show(r)}`);
        equal(r.solved.length, 1, `solved in ${show(r)}`);
        checkSolution(r.solved[0].solution, 'the recovered answer');
        equal(await submits(name), 1, 'recover polled the task the provider had: nothing submitted twice');
        deepEqual(await b.dlq.journal(), [], 'the journal after recover');
        await b.close();
      },
    },

    {
      name: 'unknown option keys are refused in every options object, named as written, and nothing is submitted',
      async run() {
        const name = 'typos';
        await script({});
        await refusedAs(new Client(options(name, { retry: { maxAtempts: 3 } })).ready(), 'retry.maxAtempts');
        await refusedAs(new Client(options(name, { replay_policy: {} })).ready(), 'replay_policy');
        await refusedAs(new Client(options(name, { apiKee: 'x' })).ready(), 'apiKee');
        const client = new Client(options(name));
        await client.ready();
        await refusedAs(client.solve(page(1), { labels: {}, signl: 1 }), 'options.signl');
        await refusedAs(client.solveMany([page(1)], { concurency: 2 }), 'options.concurency');
        await refusedAs(first(client.solveStream([page(1)], { lables: {} })), 'options.lables');
        await refusedAs(client.replay({ limt: 1 }), 'options.limt');
        await refusedAs(client.replay({ reason: ['Timeout'] }), 'options.reason');
        await refusedAs(client.replay({ filter: { reasn: ['Timeout'] } }), 'options.filter.reasn');
        await refusedAs(client.recover({ resum: false }), 'options.resum');
        await refusedAs(client.dlq.peek(undefined, { limt: 5 }), 'peek: limt');
        await refusedAs(client.dlq.peek({ stats: ['ready'] }), 'peek: filter.stats');
        await refusedAs(client.dlq.count({ reasn: ['Timeout'] }), 'count: filter.reasn');
        await refusedAs(client.dlq.analysis({ label: { a: 'b' } }), 'analysis: filter.label');
        await refusedAs(client.dlq.purge({ labls: { jobId: 'x' } }), 'purge: filter.labls');
        await refusedAs(client.dlq.exportText({ fromat: 'jsonl' }), 'export: fromat');
        const [item] = await client.solveMany([{ task: page(1), lables: { a: 'b' } }]);
        ok(!item.ok && item.error instanceof InvalidTask, `a batch item with an unknown key: ${show(item)}`);
        equal(item.error.field, 'tasks[0].lables', 'the batch item field');
        equal(await submits(name), 0, 'nothing was submitted');
        await client.close();
      },
    },

    {
      name: "replay({reasons, limt}) is refused and replays nothing; solve(task, {signl}) is refused and submits nothing",
      async run() {
        const name = 'typo-replay';
        const client = await withDeadLetters(name, [{ jobId: 'a' }, { jobId: 'b' }]);
        const before = await submits(name);
        await script({});
        await refusedAs(client.replay({ reasons: ['ERROR_CAPTCHA_UNSOLVABLE'], limt: 1 }), 'options.limt');
        equal(await client.dlq.count({ states: ['ready'] }), 2, 'both records still ready');
        equal(await submits(name), before, 'no submission after the refused replay');
        const signal = new AbortController().signal;
        await refusedAs(client.solve(page(1), { signl: signal }), 'options.signl');
        equal(await submits(name), before, 'no submission after the refused solve');
        await client.close();
      },
    },

    {
      name: 'camelCase label filters match camelCase labels in count, peek, purge and replay',
      async run() {
        const name = 'labels';
        const client = await withDeadLetters(name, ['x', 'y', 'y'].map((jobId) => ({ jobId, 'team-Name': 'T' })));
        const onlyX = { labels: { jobId: 'x' } };
        equal(await client.dlq.count(onlyX), 1, 'count');
        deepEqual((await client.dlq.peek(onlyX)).map((r) => r.labels), [{ jobId: 'x', 'team-Name': 'T' }], 'peek');
        equal(await client.dlq.count({ labels: { 'team-Name': 'T' } }), 3, 'a label key with a dash and capitals');
        await script({});
        const { report, solved } = await client.replay({ filter: onlyX });
        equal(report.received, 1, `received in ${show(report)}`);
        deepEqual(solved.map((s) => s.labels.jobId), ['x'], 'the replayed record');
        equal(await client.dlq.purge({ labels: { jobId: 'y' } }), 2, 'purge');
        equal(await client.dlq.count(), 0, 'count after purge');
        await client.close();
      },
    },

    {
      name: 'AbortSignal: a task the provider has runs on and recover() hands its answer over; nothing is submitted twice',
      async run() {
        const name = 'abort';
        await script({ default: { solve_after_ms: 300 } });
        const log = eventLog();
        const client = new Client(options(name, { polling: PATIENT, onEvent: log.onEvent }));
        const controller = new AbortController();
        const pending = client.solve(page(1), { signal: controller.signal });
        await until(() => log.named('submitted').length, (n) => n === 1);
        const reason = new Error('the user left');
        controller.abort(reason);
        const e = await rejects(pending, Aborted, { code: 'ABORTED', runsOn: true }, 'aborted after submission');
        equal(e.cause, reason, "the error's cause is the signal's reason");
        const r = await client.recover();
        equal(r.solved.length, 1, `recover() hands the answer over: ${show(r)}`);
        checkSolution(r.solved[0].solution, 'the answer of the aborted task');
        equal(await submits(name), 1, 'the aborted task was submitted once');

        await rejects(client.solve(page(2), { signal: AbortSignal.abort() }), Aborted, { code: 'ABORTED', runsOn: false }, 'aborted before');
        await rejects(client.solve(page(3), { signal: 'stop' }), InvalidConfig, { field: 'options.signal' }, 'not a signal');
        equal(await submits(name), 1, 'nothing submitted for an already aborted signal');
        await client.close();
      },
    },

    {
      name: 'solveMany aborted: results already solved reach onResult before it rejects; submitted tasks run on, none twice',
      async run() {
        const name = 'abort-many';
        await script({ rules: [neverReady('/page/4'), neverReady('/page/5')] });
        const log = eventLog();
        const client = new Client(options(name, { polling: PATIENT, onEvent: log.onEvent }));
        const controller = new AbortController();
        const delivered = [];
        const many = client.solveMany([1, 2, 3, 4, 5].map(page), {
          concurrency: 5,
          signal: controller.signal,
          onResult: (r) => delivered.push(r),
        });
        many.catch(() => {}); // checked below
        await until(() => [delivered.length, log.named('submitted').length], ([d, s]) => d === 3 && s === 5);
        controller.abort();
        const e = await rejects(many, Aborted, { code: 'ABORTED' }, 'solveMany aborted');
        deepEqual(delivered.map((r) => [r.index, r.ok]).sort(), [[0, true], [1, true], [2, true]], 'onResult had the solved tasks');
        deepEqual(e.partial.filter(Boolean).map((r) => r.index).sort(), [0, 1, 2], 'partial');
        equal((await client.status()).detached, 2, 'the two submitted, unfinished tasks run on');
        equal(await submits(name), 5, 'each task submitted once');
        await client.close();
      },
    },

    {
      name: 'an answer longer than any solving service sends is not read: the task ends in the DLQ saying so',
      async run() {
        const name = 'oversized';
        // Every submit gets 5 MiB of filler back (the mock declares its length).
        await script({ faults: { oversized: 1, endpoints: ['/in.php'] } });
        const client = new Client(options(name, { retry: { maxAttempts: 1, backoff: { kind: 'fixed', delayMs: 10 }, transientMinDelayMs: 10 } }));
        const e = await rejects(client.solve(page(1)), SolveFailed, { code: 'SOLVE_FAILED' }, 'an oversized answer');
        ok(e.record.description.includes('longer than 4 MiB'), `the dead letter says why: ${e.record.description}`);
        equal(await client.dlq.count(), 1, 'the task is in the DLQ');
        await client.close();
      },
    },

    {
      name: 'flush: once it resolves, the DLQ holds the dead letters of what an abort cancelled before it was sent',
      async run() {
        const name = 'flush';
        await script({ rules: [neverReady('/page/')] });
        const log = eventLog();
        // One submission every 5 s: the abort finds the other tasks accepted and not yet sent.
        const client = new Client(options(name, { polling: PATIENT, onEvent: log.onEvent, rate: { submitsPerSecond: 0.2 } }));
        const controller = new AbortController();
        const many = client.solveMany([1, 2, 3, 4, 5, 6].map(page), { concurrency: 6, signal: controller.signal });
        many.catch(() => {}); // checked below
        await until(() => log.named('submitted').length, (n) => n === 1);
        controller.abort();
        await rejects(many, Aborted, { code: 'ABORTED' }, 'solveMany aborted');
        await client.flush();
        const sent = await submits(name);
        ok(sent >= 1 && sent < 6, `some tasks were sent, some not: ${sent}`);
        equal(await client.dlq.count({ reasons: ['Cancelled'] }), 6 - sent, 'each task never sent is a Cancelled record');
        equal((await client.status()).storeWrites, 0, 'no store write is left');
        await client.close();
      },
    },

    {
      name: 'solveStream: results arrive as they end, before a task that never completes; it stays within concurrency',
      async run() {
        const name = 'stream';
        await script({ rules: [neverReady('/page/2')] });
        const log = eventLog();
        const client = new Client(options(name, { polling: PATIENT, onEvent: log.onEvent }));
        const got = [];
        for await (const r of client.solveStream([1, 2, 3, 4].map(page), { concurrency: 4 })) {
          got.push(r);
          if (got.length === 3) {
            await until(() => log.named('submitted').length, (n) => n === 4);
            break; // leaving early: the never-ready task, which the provider has, runs on
          }
        }
        deepEqual(got.map((r) => [r.index, r.ok]).sort(), [[0, true], [2, true], [3, true]], 'the three that end');
        for (const r of got) checkSolution(r.solution, `task ${r.index}`);
        equal((await client.status()).detached, 1, 'the never-ready task runs on after the loop left');
        equal((await client.dlq.journal()).length, 1, 'and is in the journal');

        // Backpressure: with concurrency 2, a consumer that has taken one result has started two tasks.
        await script({});
        const paced = 'stream-paced';
        const slow = new Client(options(paced));
        const stream = slow.solveStream([1, 2, 3, 4, 5].map(page), { concurrency: 2 });
        const firstResult = await stream.next();
        ok(firstResult.value.ok, 'the first result');
        equal(await submits(paced), 2, 'submitted while the consumer holds its first result');
        let rest = 0;
        for await (const r of stream) rest += r.ok ? 1 : 0;
        equal(rest, 4, 'the other four, once pulled');
        equal(await submits(paced), 5, 'each task submitted once');
        await client.close();
        await slow.close();
      },
    },

    {
      name: 'errors: each code arrives as its class (InvalidConfig, InvalidTask, AccountError, ProviderError, StoreError, Closed)',
      async run() {
        const name = 'errors';
        await script({});
        for (const Class of [SolveFailed, AccountError, InvalidTask, InvalidConfig, StoreError, ProviderError, Cancelled, Closed, Aborted]) {
          ok(Class.prototype instanceof CaptchaDlqError && CaptchaDlqError.prototype instanceof Error, `${Class.name} extends CaptchaDlqError`);
        }
        const noKey = options(name);
        delete noKey.apiKey;
        await rejects(new Client(noKey).ready(), InvalidConfig, { code: 'INVALID_CONFIG', field: 'apiKey' }, 'no apiKey');
        await rejects(new Client(options(name, { baseUrl: 'http://solver.example.com' })).ready(), InvalidConfig, { field: 'baseUrl' }, 'plain http');
        await rejects(new Client(options(name, { provider: '127.0.0.1:9' })).ready(), InvalidConfig, { field: 'provider' }, 'a host without a scheme');
        // Power-loss durability is for a SQLite DLQ only: a memory DLQ refuses it (so does every browser store).
        await rejects(new Client(options(name, { store: { durability: 'power_loss' } })).ready(), InvalidConfig, { field: 'store.durability' }, 'power_loss on a memory DLQ');
        await rejects(new Client(options(name, { store: { durability: 'disk' } })).ready(), InvalidConfig, { field: 'store.durability' }, 'an unknown durability');
        // A location that names no store is refused as an option, before any store is tried.
        await rejects(new Client(options(name, { dlq: '' })).ready(), InvalidConfig, { field: 'dlq' }, 'an empty DLQ location');
        await rejects(new Client(options(name, { dlq: 'dlq\0' })).ready(), InvalidConfig, { field: 'dlq' }, 'a NUL in the DLQ location');
        // Alerts and retention are Node's: the browser build refuses each option outright (`alerts`), Node
        // names what is wrong inside it (`alerts.webhooks`: empty).
        for (const [option, value] of [['alerts', { webhooks: [] }], ['dlqRetention', {}]]) {
          const refused = await new Client(options(name, { [option]: value })).ready().then(() => null, (e) => e);
          ok(refused instanceof InvalidConfig && refused.field.startsWith(option), `${option} ${JSON.stringify(value)} refused: ${refused}`);
        }
        let thrown;
        try {
          new Client(options(name, { onEvent: 5 }));
        } catch (e) {
          thrown = e;
        }
        ok(thrown instanceof InvalidConfig && thrown.field === 'onEvent', `onEvent must be a function: ${thrown}`);

        const client = new Client(options(name));
        await rejects(client.solve({ type: 'recaptcha_v2', sitekey: '', pageUrl: 'https://example.com/' }), InvalidTask, { code: 'INVALID_TASK', field: 'sitekey' }, 'empty sitekey');
        await rejects(client.solve({ type: 'no-such-kind' }), InvalidTask, { code: 'INVALID_TASK' }, 'unknown kind');
        await rejects(client.report('71823400', true), ProviderError, { code: 'PROVIDER_ERROR' }, 'report of an unknown task');
        // Positional arguments are checked by the core and named as the API names them.
        await rejects(client.report(71823400, true), InvalidConfig, { field: 'providerTaskId' }, 'a task id that is a number');
        await rejects(client.report('71823400', 'yes'), InvalidConfig, { field: 'good' }, 'good that is not a boolean');
        await rejects(client.balanceOf(5), InvalidConfig, { field: 'name' }, 'a provider name that is a number');
        await client.close();
        await rejects(client.solve(page(1)), Closed, { code: 'CLOSED' }, 'solve after close');

        await script({ bad_keys: [key('errors-account')] });
        const broke = new Client(options('errors-account'));
        const e = await rejects(broke.solve(page(1)), AccountError, { code: 'ACCOUNT_ERROR' }, 'a revoked key');
        equal(typeof e.record?.id, 'string', 'an account error from a solve carries its record');
        await broke.close();

        class FailingStore extends MapStore {
          write() { throw new Error('disk full'); }
        }
        const failing = new Client(options('errors-store', { dlq: new FailingStore(), store: { timeoutMs: 1000, retryForMs: 0 } }));
        const se = await rejects(failing.solve(page(1)), StoreError, { code: 'STORE_ERROR' }, 'a store that fails');
        includes(se.message, 'disk full', 'the store error names what the store said');
        equal(await submits('errors-store'), 0, 'nothing submitted while the store fails');
        await failing.close();
        const partial = { get() { return null; }, write() {} };
        const me = await rejects(new Client(options(name, { dlq: partial })).ready(), StoreError, { code: 'STORE_ERROR' }, 'a store without scan');
        includes(me.message, 'scan', 'names the missing method');
      },
    },

    {
      name: 'balance, report, resetCircuit, status and storeHealth',
      async run() {
        const name = 'account';
        await script({ balance: 7.25 });
        const client = new Client(options(name));
        equal(await client.balance(), 7.25, 'balance');
        const solution = await client.solve(page(1));
        const before = (await counters()).reports_good;
        await client.report(solution.providerTaskId, true);
        equal((await counters()).reports_good, before + 1, 'the report reached the mock');
        equal(await client.resetCircuit(), undefined, 'resetCircuit');
        const status = await client.status();
        equal(status.jobs, 0, `no job left in ${show(status)}`);
        equal(typeof status.inFlightLimit, 'number', `inFlightLimit in ${show(status)}`);
        deepEqual(await client.storeHealth(), { available: true, failures: 0, lastError: null }, 'storeHealth');
        await client.close();
      },
    },

    {
      name: 'several providers: an account error at one moves the rest to the next; spend, balances, reportSolution, metrics',
      async run() {
        // One mock, two accounts: the first provider's key is out of money, the second's is fine.
        const broke = key('providers-broke');
        const fine = key('providers-fine');
        await script({ balance: 4.5, account_errors: { [broke]: 'ERROR_ZERO_BALANCE' } });
        const base = options('providers');
        delete base.apiKey;
        delete base.provider;
        delete base.baseUrl;
        const client = new Client({
          ...base,
          providers: [
            { provider: '2captcha', name: 'broke', apiKey: broke, baseUrl: mock, price: 0.002 },
            { provider: '2captcha', name: 'fine', apiKey: fine, baseUrl: mock, price: 0.003 },
          ],
        });
        const results = await client.solveMany([1, 3, 5].map(page), { concurrency: 1 });
        ok(results.every((r) => r.ok), `all solved: ${show(results)}`);
        deepEqual(results.map((r) => r.solution.provider), ['fine', 'fine', 'fine'], 'solved where the account has money');
        const byKey = (await counters()).by_key ?? {};
        equal(byKey[broke]?.submits ?? 0, 1, 'one refused submission at the broke account, then none');
        equal(byKey[fine]?.submits ?? 0, 3, 'each task submitted once at the other');

        const spend = await client.spend();
        equal(spend.solved, 3, `spend.solved in ${show(spend)}`);
        ok(Math.abs(spend.cost - 3 * 0.003) < 1e-9, `spend.cost in ${show(spend)}`);
        const balances = await client.balances();
        deepEqual(balances.map((b) => b.provider), ['broke', 'fine'], 'balances in configuration order');
        ok(balances[0].error instanceof CaptchaDlqError, `the broke account's balance is an error: ${show(balances[0])}`);
        ok(balances[0].error.message.includes('ERROR_ZERO_BALANCE'), `it says why: ${balances[0].error.message}`);
        equal(balances[1].balance, 4.5, 'the other balance');
        equal(await client.balanceOf('fine'), 4.5, 'balanceOf');
        await rejects(client.balanceOf('nowhere'), InvalidConfig, { code: 'INVALID_CONFIG' }, 'an unknown provider');

        const before = (await counters()).reports_bad;
        await client.reportSolution(results[0].solution, false);
        equal((await counters()).reports_bad, before + 1, 'the report reached the provider that solved it');

        const metrics = await client.metrics();
        deepEqual(metrics.providers, ['broke', 'fine'], 'metrics name the providers');
        deepEqual(metrics.circuits.map((c) => [c.provider, c.open]), [['broke', true], ['fine', false]], 'circuits');
        await client.close();
      },
    },

    {
      name: 'declared kinds: an MTCaptcha task is solved at a service that takes it, with its typed answer; one that does not is refused',
      async run() {
        await script({});
        const task = { type: 'mtcaptcha', sitekey: 'MTPublic-KzqLY1cKH', pageUrl: 'https://example.com/mt/1' };
        const client = new Client(options('declared', { provider: '2captcha' }));
        const solution = await client.solve(task, { labels: { kind: 'mt' } });
        deepEqual(solution.answer, { token: solution.text }, 'the answer by the name the kind declares');
        equal(typeof solution.text, 'string', 'a token');
        ok(solution.text.length > 0, 'a token');
        // The kind's declaration checks its fields, in Rust, before anything is sent.
        await rejects(client.solve({ type: 'mtcaptcha', pageUrl: 'https://example.com/mt/2' }), InvalidTask, { field: 'sitekey' }, 'no sitekey');
        await client.close();
        // CaptchaAI's protocol has no MTCaptcha method: the task is refused rather than sent.
        const other = new Client(options('declared-no', { provider: 'captchaai' }));
        const before = await submits('declared-no');
        const e = await rejects(other.solve(task), InvalidTask, { code: 'INVALID_TASK', field: 'type' }, 'a service that does not take the kind');
        includes(e.message, 'captchaai does not solve mtcaptcha tasks (solved by: 2captcha', 'the refusal names the kind and who takes it');
        equal(await submits('declared-no'), before, 'nothing was sent');
        await other.close();
      },
    },

    {
      name: 'dlq.edit: wrong sitekeys are previewed, fixed and replayed until solved; an invalid result is refused naming the field',
      async run() {
        await script({ rules: [{ match: { site_key: '6Le-WRONG' }, behavior: { outcome: 'bad_parameters', code: 'ERROR_WRONG_GOOGLEKEY' } }] });
        const client = new Client(options('edit'));
        const wrong = (n) => ({ type: 'recaptcha_v2', sitekey: '6Le-WRONG', pageUrl: `https://example.com/edit/${n}` });
        const results = await client.solveMany([wrong(1), wrong(2)]);
        deepEqual(results.map((r) => r.ok), [false, false], 'both tasks dead-lettered');
        const filter = { sitekey: '6Le-WRONG' };
        const preview = await client.dlq.edit(filter, { task: { sitekey: '6Le-RIGHT' }, labels: { fixed: 'yes' }, preview: true });
        deepEqual([preview.preview, preview.matched, preview.changed, preview.refused], [true, 2, 2, []], 'the preview');
        const changes = preview.diffs[0].changes;
        deepEqual(changes.find((c) => c.path === 'task.sitekey'), { path: 'task.sitekey', before: '6Le-WRONG', after: '6Le-RIGHT' }, 'the sitekey diff');
        deepEqual(changes.find((c) => c.path === 'labels.fixed'), { path: 'labels.fixed', before: null, after: 'yes' }, 'the label diff');
        equal(await client.dlq.count(filter), 2, 'a preview writes nothing');
        // camelCase task fields, as JS tasks are written; the refusal names the field.
        const bad = await client.dlq.edit(filter, { task: { pageUrl: null } });
        deepEqual([bad.changed, bad.refused.length], [0, 2], 'an edit leaving no page URL changes nothing');
        includes(bad.refused[0].error, 'task.page_url', 'the refusal names the field');
        await refusedAs(client.dlq.edit(filter, { task: { sitekey: 'x' }, labls: {} }), 'edit: labls');
        await refusedAs(client.dlq.edit(undefined, { task: { sitekey: 'x' } }), 'edit: filter');
        const applied = await client.dlq.edit(filter, { task: { sitekey: '6Le-RIGHT' }, labels: { fixed: 'yes' } });
        deepEqual([applied.preview, applied.changed], [false, 2], 'the edit');
        const [record] = await client.dlq.peek({ sitekey: '6Le-RIGHT' }, { limit: 1 });
        equal(record.history.at(-1).phase, 'edit', 'the edit is in the history');
        const { report, solved } = await client.replay({ ids: applied.diffs.map((d) => d.id) });
        equal(report.recovered, 2, `recovered in ${show(report)}`);
        ok(solved.every((s) => s.labels.fixed === 'yes'), 'the edited labels travel with the answers');
        equal(await client.dlq.count(), 0, 'the DLQ after the replay');
        const edits = (await client.dlq.audit()).filter((e) => e.action === 'edit' && e.stage === 'result');
        deepEqual(edits.map((e) => e.count), [2, 0], 'both edits that wrote are in the audit trail, newest first');
        await client.close();
      },
    },

    {
      name: "the audit trail: every DLQ action leaves its intent and its result under its operator's name, in memory and in a JS store",
      async run() {
        for (const store of ['memory', new MapStore()]) {
          const where = store === 'memory' ? 'memory' : 'a JS store';
          await script({ rules: [unsolvable('/page/2')] });
          const audited = new Client(options(`audit-${store === 'memory' ? 'memory' : 'js'}`, { dlq: store }));
          for (const jobId of ['a', 'b']) await rejects(audited.solve(page(2), { labels: { jobId } }), SolveFailed, {}, 'unsolvable');
          deepEqual(await audited.dlq.audit(), [], `${where}: solving is no operator action`);
          const [a, b] = await audited.dlq.peek();
          const alice = audited.dlq.asOperator('alice');
          equal(await alice.park(a.id, 'wrong sitekey'), true, 'park');
          equal(await alice.unpark(a.id), true, 'unpark');
          const text = await audited.dlq.exportText({ format: 'jsonl' });
          equal(await alice.purge({ ids: [b.id] }), 1, 'purge');
          equal(await audited.dlq.asOperator('bob').importText(text), 2, 'import');
          await script({});
          const replayed = await audited.replay({ ids: [a.id], operator: 'carol' });
          equal(replayed.report.received, 1, 'replayed');
          equal(await audited.dlq.purge({ ids: ['no-such-id'] }), 0, 'a purge of nothing');

          const all = await audited.dlq.audit();
          const intents = new Map(all.filter((e) => e.stage === 'intent').map((e) => [e.id, e]));
          const entries = all.filter((e) => e.stage === 'result');
          equal(intents.size, 6, `${where}: an intent per action`);
          ok(entries.every((e) => intents.get(e.intent)?.action === e.action), `${where}: each result points at its intent`);
          deepEqual(entries.map((e) => [e.operator, e.action, e.count]), [
            ['api', 'purge', 0], ['carol', 'replay', 1], ['bob', 'import', 2], ['alice', 'purge', 1], ['alice', 'unpark', 1], ['alice', 'park', 1],
          ], `${where}: the results, newest first`);
          deepEqual(entries[3].filter, { ids: [b.id] }, 'the purge filter');
          equal(entries[5].detail, 'wrong sitekey', 'the park reason');
          ok(all.every((e) => e.error === null && e.at.startsWith('20')), 'no errors; times as RFC 3339');
          const older = await audited.dlq.audit({ limit: 2, before: entries[3].id });
          deepEqual(older.map((e) => [e.action, e.stage]), [['purge', 'intent'], ['unpark', 'result']], 'a page before an entry');
          await refusedAs(audited.dlq.asOperator('').park(a.id, 'x'), 'operator', 'an empty operator');
          await refusedAs(audited.dlq.audit({ limit: 0 }), 'limit');
          if (store instanceof MapStore) equal(store.scan('audit').length, 12, "the trail is a table of the user's store");
          await audited.close();
        }
      },
    },

    {
      name: 'retention: beyond maxCount the oldest records are evicted, counted, and entered in the audit trail as retention',
      async run() {
        await script({ rules: [unsolvable('/page/2')] });
        const store = new MapStore();
        const retained = new Client(options('retention', { dlq: store, dlqRetention: { maxCount: 1, intervalMs: 30 } }));
        for (const n of ['1', '2', '3']) await rejects(retained.solve(page(2), { labels: { n } }), SolveFailed, {}, 'unsolvable');
        const left = await until(() => retained.dlq.peek(), (records) => records.length === 1);
        deepEqual(left.map((r) => r.labels.n), ['3'], 'the newest record stays');
        const evictions = await until(
          async () => (await retained.dlq.audit()).filter((e) => e.operator === 'retention' && e.stage === 'result'),
          (entries) => entries.reduce((sum, e) => sum + e.count, 0) === 2,
        );
        equal(evictions.reduce((sum, e) => sum + e.count, 0), 2, `the trail counts both evictions: ${show(evictions)}`);
        ok(evictions.every((e) => e.action === 'evict' && e.detail.startsWith('max_count')), `as max_count evictions: ${show(evictions)}`);
        includes(await retained.metricsText(), 'captcha_dlq_dlq_evicted_total{reason="max_count"} 2', 'the eviction counter');
        await retained.close();
        await refusedAs(new Client(options('retention', { dlqRetention: { maxAgeMs: 0 } })).ready(), 'dlqRetention.maxAgeMs');
      },
    },

    {
      name: 'alerts: a webhook receives a new reason, signed over its time and body, without the key; bad webhooks are refused',
      async run() {
        const url = `${receiver}/hook/${Date.now()}`;
        const path = new URL(url).pathname;
        await script({ rules: [unsolvable('/page/2')] });
        const client = new Client(options('alerts', {
          alerts: { webhooks: [{ url, secret: 'shared-hook-secret', events: ['new_reason'] }], gatherMs: 10 },
        }));
        await rejects(client.solve(page(2)), SolveFailed, {}, 'unsolvable');
        const got = await until(() => received(path), (list) => list.length > 0);
        await client.close();
        equal(got.length, 1, `one alert: ${show(got)}`);
        const alert = JSON.parse(got[0].body);
        deepEqual([alert.event, alert.subject], ['new_reason', 'ERROR_CAPTCHA_UNSOLVABLE'], 'the alert');
        const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(got[0].headers['x-captcha-dlq-signature'] ?? '') ?? [];
        ok(t !== undefined, `the signature header: ${show(got[0].headers)}`);
        equal(v1, await webhookSignature('shared-hook-secret', t, got[0].body), 'signed over its time and body');
        ok(!got[0].body.includes(SECRET), 'the key is not in the body');
        includes(await client.metricsText(), 'captcha_dlq_alerts_sent_total 1', 'the delivery is counted');
        for (const [bad, field] of [
          [{ alerts: { webhooks: [{ url: 'http://hooks.example.com/x' }] } }, 'alerts.webhooks[0].url'],
          [{ alerts: { webhooks: [{ url, sekret: 'x' }] } }, 'alerts.webhooks[0].sekret'],
        ]) {
          await refusedAs(new Client(options('alerts', bad)).ready(), field);
        }
      },
    },

    {
      name: 'traces: one solved task exports its task span and an attempt under it over OTLP/HTTP JSON, with no secret in any attribute',
      async run() {
        const path = `/otlp/${Date.now()}/v1/traces`;
        const collectorToken = `collector-token-${SECRET}`;
        const traces = { otlpEndpoint: `${receiver}${path}`, protocol: 'http/json', serviceName: 'suite-shop', headers: { 'x-collector-token': collectorToken } };
        await script({});
        const client = new Client(options('traces', { traces }));
        const solution = await client.solve(page(1), { labels: { case: 'ok' } });
        await client.flush(); // exports the spans that ended
        const got = await received(path);
        await client.close();
        ok(got.length > 0, 'spans arrived');
        const spans = [];
        for (const { headers, body } of got) {
          equal(headers['content-type'], 'application/json', 'the export is OTLP JSON');
          for (const secret of [SECRET, collectorToken, solution.text]) ok(!body.includes(secret), `a secret is in an export: ${body}`);
          for (const resource of JSON.parse(body).resourceSpans) {
            const service = resource.resource.attributes.find((a) => a.key === 'service.name');
            equal(service?.value.stringValue, 'suite-shop', 'the service name');
            for (const scope of resource.scopeSpans) spans.push(...scope.spans);
          }
        }
        // Integers are strings in OTLP JSON (proto3's int64); either way they read the same here.
        const attrs = (span) => Object.fromEntries((span.attributes ?? []).map((a) => [a.key, String(Object.values(a.value)[0])]));
        deepEqual(spans.map((s) => s.name).sort(), ['captcha_dlq.attempt', 'captcha_dlq.task'], `the spans: ${show(spans)}`);
        const task = spans.find((s) => s.name === 'captcha_dlq.task');
        const attempt = spans.find((s) => s.name === 'captcha_dlq.attempt');
        const taskAttrs = attrs(task);
        deepEqual(Object.keys(taskAttrs).sort(), [
          'captcha_dlq.attempts', 'captcha_dlq.label.case', 'captcha_dlq.outcome', 'captcha_dlq.provider', 'captcha_dlq.task.id',
          'captcha_dlq.task.origin', 'captcha_dlq.task.type',
        ], 'the task span\'s attributes');
        deepEqual(
          [taskAttrs['captcha_dlq.label.case'], taskAttrs['captcha_dlq.outcome'], taskAttrs['captcha_dlq.task.origin'], taskAttrs['captcha_dlq.task.type'], taskAttrs['captcha_dlq.attempts']],
          ['ok', 'solved', 'submitted', 'recaptcha_v2', '1'],
          'the task span',
        );
        ok(/^[0-9A-HJKMNP-TV-Z]{26}$/.test(taskAttrs['captcha_dlq.task.id']), `the task's id is its ULID: ${taskAttrs['captcha_dlq.task.id']}`);
        equal(task.status.code, 1, 'STATUS_CODE_OK');
        deepEqual((task.events ?? []).map((e) => e.name), ['submitted'], 'the task span\'s events');
        deepEqual(attrs(attempt), {
          'captcha_dlq.attempt': '1', 'captcha_dlq.provider': taskAttrs['captcha_dlq.provider'], 'captcha_dlq.provider_task_id': solution.providerTaskId,
        }, 'the attempt span\'s attributes');
        deepEqual([attempt.traceId, attempt.parentSpanId], [task.traceId, task.spanId], 'the attempt is the task\'s child');
        ok(/^[0-9a-f]{32}$/.test(task.traceId) && /^[0-9a-f]{16}$/.test(task.spanId), `hex ids: ${task.traceId} ${task.spanId}`);
        ok((attempt.events ?? []).length > 0 && attempt.events.every((e) => e.name === 'poll'), `a poll event per poll: ${show(attempt.events)}`);
        ok(BigInt(task.startTimeUnixNano) <= BigInt(attempt.startTimeUnixNano) && BigInt(attempt.endTimeUnixNano) <= BigInt(task.endTimeUnixNano), 'the attempt is within the task');
        await refusedAs(new Client(options('traces', { traces: { ...traces, protocol: 'grpc' } })).ready(), 'traces.protocol');
        await refusedAs(new Client(options('traces', { traces: { otlpEndpoint: 'ftp://127.0.0.1:4318' } })).ready(), 'traces.otlpEndpoint');
      },
    },

    {
      name: 'the key never appears in an error, an event, an export or an inspection',
      async run() {
        const name = 'secret';
        await script({ bad_keys: [key(name)], rules: [unsolvable('/page/2')] });
        const log = eventLog();
        const client = new Client(options(name, { onEvent: log.onEvent }));
        const texts = [];
        const calls = [() => client.solve(page(1)), () => client.balance(), () => client.report('1', false), () => client.dlq.count({ reasn: [] })];
        for (const work of calls) {
          try {
            await work();
          } catch (e) {
            texts.push(shown(e));
          }
        }
        texts.push(JSON.stringify(log.events), await client.dlq.exportText(), JSON.stringify(await client.dlq.peek()));
        const inspect = client[Symbol.for('nodejs.util.inspect.custom')];
        texts.push(JSON.stringify(client), typeof inspect === 'function' ? inspect.call(client) : '');
        equal(texts.length, 9, `every call failed as expected: ${texts.slice(0, 4).join('\n')}`);
        for (const t of texts) ok(!t.includes(SECRET), `the key shows in: ${t}`);
        includes(JSON.stringify(client), 'captchaai', 'an inspection shows the provider');
        await client.close();
      },
    },
  ];
  return tests;
}

/** Runs every test in order (for runners without a test framework, such as a browser page). */
export async function run(pkg, env) {
  const results = [];
  for (const t of suite(pkg, env)) {
    try {
      await t.run();
      results.push({ name: t.name, ok: true });
    } catch (e) {
      results.push({ name: t.name, ok: false, error: String(e?.stack ?? e) });
    }
  }
  return results;
}
