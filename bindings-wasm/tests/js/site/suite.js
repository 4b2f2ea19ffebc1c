// The client's behaviour through the package's public JS API, against the mock solver: run in a page
// (suite.html) and in a module dedicated worker (worker.js). Each test takes the mock's URL, sets the mock's
// script it needs and throws on the first failed check; run() runs them one by one.
import {
  Client, ready, CaptchaDlqError, SolveFailed, AccountError, InvalidTask, InvalidConfig, ProviderError, StoreError, Closed,
  Aborted,
} from '/pkg/index.js';
import { KEY, options, page, script, counters, freshDb, seedsBatch } from './common.js';
import { AssertionError, ok, equal, deepEqual, startsWith, show } from './assert.js';
import { SEEDS_BATCH, TOKEN } from './expected.js';

/** The subclass each code arrives as (errors.js). */
const CLASS_OF = {
  SOLVE_FAILED: SolveFailed,
  ACCOUNT_ERROR: AccountError,
  INVALID_TASK: InvalidTask,
  INVALID_CONFIG: InvalidConfig,
  PROVIDER_ERROR: ProviderError,
  STORE_ERROR: StoreError,
  CLOSED: Closed,
  ABORTED: Aborted,
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Awaits a promise that must reject with an Error of the package: the subclass its `code` names, and every
 * property of `expected` (`code`, `field`, `reason`, `class`…). Returns the error for further checks.
 */
async function failsWith(promise, expected, what) {
  let value;
  try {
    value = await promise;
  } catch (e) {
    ok(e instanceof CaptchaDlqError, `${what}: expected a CaptchaDlqError, got ${e?.constructor?.name}: ${e}`);
    for (const [key, want] of Object.entries(expected)) equal(e[key], want, `${what}: .${key} of "${e.message}"`);
    const Class = CLASS_OF[e.code];
    ok(Class, `${what}: unexpected code ${e.code} ("${e.message}")`);
    ok(e instanceof Class, `${what}: expected a ${Class.name} for code ${e.code}, got a ${e.constructor.name}`);
    return e;
  }
  throw new AssertionError(`${what}: expected a rejection with ${show(expected)}, got ${show(value)}`);
}

/** Probes up to 200 times, 10 ms apart, until `done(value)`; returns the last value (the caller checks it). */
async function until(probe, done) {
  let value;
  for (let i = 0; i < 200; i++) {
    value = await probe();
    if (done(value)) break;
    await sleep(10);
  }
  return value;
}

/** Waits long enough for a task the mock answers after a few hundred ms. */
function patient(mock, dlq) {
  const o = options(mock, dlq);
  o.polling.maxPolls = 200;
  return o;
}

/** A host store in plain JS keeping records and journal entries in maps, and logging the calls that write. */
function jsStore() {
  const records = new Map();
  const journal = new Map();
  const log = [];
  return {
    log, records, journal,
    push(r) { log.push('push'); journal.delete(r.id); const replaced = records.has(r.id); records.set(r.id, r); return { replaced, evicted: [] }; },
    receive() { return []; },
    complete() {},
    abandon() { return 'ready'; },
    park() { return false; },
    unpark() { return false; },
    peek() { return [...records.values()]; },
    count() { return records.size; },
    purge() { const n = records.size; records.clear(); return n; },
    // Async on purpose: the store's methods may return a value or a promise.
    async stats() {
      return { total: records.size, ready: records.size, leased: 0, parked: 0, dropped: 0, completed: 0, abandoned: 0,
        oldest_dead_lettered_at: null, in_flight: journal.size };
    },
    journalUpsert(e) { log.push('upsert'); journal.set(e.id, e); },
    journalForget(id) { log.push('forget'); journal.delete(id); },
    journalEntries() { return [...journal.values()]; },
  };
}

async function seedsBatchAgrees(mock, dlq) {
  deepEqual(await seedsBatch(mock, dlq), SEEDS_BATCH, `the seeds' batch summary (${dlq})`);
}

export const tests = {
  seeds_batch_with_indexeddb: (mock) => seedsBatchAgrees(mock, `indexeddb:${freshDb('batch')}`),

  seeds_batch_with_memory: (mock) => seedsBatchAgrees(mock, 'memory'),

  async a_closed_clients_tasks_are_recovered_from_the_journal(mock) {
    const dlq = `indexeddb:${freshDb('recover')}`;
    await script(mock, { default: { solve_after_ms: 400 } });
    const first = await Client.create(patient(mock, dlq));
    // Submitted, journaled, then the client goes away (a reload) before the answer.
    const pending = first.solve(page(7));
    pending.catch(() => {}); // checked after close(); not an unhandled rejection meanwhile
    const stats = await until(() => first.stats(), (s) => s.in_flight === 1);
    equal(stats.in_flight, 1, `in_flight before close (did the task reach the journal?) in ${show(stats)}`);
    await first.close();
    await failsWith(pending, { code: 'CLOSED' }, 'the solve pending at close()');

    const second = await Client.create(patient(mock, dlq));
    const report = await second.recover();
    equal(report.found, 1, `found in ${show(report)}`);
    equal(report.dead_lettered, 0, `dead_lettered in ${show(report)}`);
    startsWith(report.solved[0]?.solution?.text, TOKEN, `the recovered solution in ${show(report)}`);
    const after = await second.dlq.stats();
    deepEqual([after.in_flight, after.total], [0, 0], `[in_flight, total] after recover() in ${show(after)}`);
    await second.close();
  },

  async a_live_clients_journal_is_left_alone(mock) {
    const dlq = `indexeddb:${freshDb('live')}`;
    await script(mock, { default: { solve_after_ms: 300 } });
    const owner = await Client.create(patient(mock, dlq));
    const pending = owner.solve(page(8));
    pending.catch(() => {}); // checked below
    const neighbour = await Client.create(patient(mock, dlq));
    const report = await until(() => neighbour.recover(), (r) => r.skipped_live === 1);
    deepEqual([report.skipped_live, report.found], [1, 0], `[skipped_live, found] in ${show(report)}`);
    startsWith((await pending).text, TOKEN, 'the owner still solves its task');
    await owner.close();
    await neighbour.close();
  },

  async a_host_js_store_receives_records_and_journal(mock) {
    await script(mock, { rules: [{ match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } }] });
    const store = jsStore();
    const client = await Client.create(options(mock, store));
    startsWith((await client.solve(page(1))).text, TOKEN, 'page 1 solved');
    await failsWith(client.solve(page(2)), { code: 'SOLVE_FAILED' }, 'page 2');
    const [stored] = await client.dlq.peek();
    equal(stored?.schema, 1, 'schema of the stored record');
    equal(stored?.reason, 'ERROR_CAPTCHA_UNSOLVABLE', 'reason of the stored record');
    equal(stored?.task?.page_url, 'https://example.com/page/2', 'task.page_url of the stored record');
    ok(store.log.includes('upsert') && store.log.includes('forget'), `the journal was written and cleared: ${show(store.log)}`);
    equal(store.log.at(-1), 'push', `the last call of ${show(store.log)}`);
    equal(store.journal.size, 0, 'journal entries left');
    await client.close();
  },

  async a_store_object_missing_a_method_is_named(mock) {
    const store = jsStore();
    delete store.journalForget;
    await failsWith(Client.create(options(mock, store)), { code: 'INVALID_CONFIG', field: 'dlq.journalForget' }, 'a store without journalForget');
  },

  async bad_input_names_the_field(mock) {
    const badOptions = [
      [{ provider: 'captchaai' }, 'apiKey'],
      [{ apiKey: KEY, dlq: 'memory', polling: { intervalMs: 'fast' } }, 'polling.interval_ms'],
      [{ apiKey: KEY, dlq: 'memory', retry: { maxAttempts: 0 } }, 'retry.max_attempts'],
      [{ apiKey: KEY, dlq: 'memory', provider: 'nope' }, 'provider'],
      [{ apiKey: KEY, dlq: 'sqlite:x' }, 'dlq'],
      [{ apiKey: KEY, dlq: 'memory', colour: 1 }, 'colour'],
      [{ apiKey: KEY, dlq: 'memory', baseUrl: 'http://solver.example.com' }, 'baseUrl'],
    ];
    for (const [bad, field] of badOptions) {
      const e = await failsWith(Client.create(bad), { code: 'INVALID_CONFIG', field }, `Client.create(${show(bad)})`);
      ok(!e.message.includes(KEY), `the key leaked into "${e.message}"`);
    }
    const client = await Client.create(options(mock, 'memory'));
    const badTasks = [
      [{ type: 'recaptcha_v2', pageUrl: 'https://example.com/' }, 'sitekey'],
      [{ sitekey: 'x' }, 'type'],
      // Named as the caller spelled it.
      [{ type: 'recaptcha_v2', sitekey: 'x', pageUrl: 5 }, 'pageUrl'],
      [{ type: 'recaptcha_v2', sitekey: 'x', page_url: 'ftp://x' }, 'page_url'],
      ['not a task', 'task'],
    ];
    for (const [task, field] of badTasks) {
      await failsWith(client.solve(task), { code: 'INVALID_TASK', field }, `solve(${show(task)})`);
    }
    await failsWith(client.solve(page(1), { labels: { n: 1 } }), { code: 'INVALID_CONFIG', field: 'labels' }, 'labels with a number');
    await failsWith(client.dlq.importJson('{"nope"'), { code: 'INVALID_CONFIG' }, 'importJson of broken JSON');
    await client.close();
    await failsWith(client.solve(page(1)), { code: 'CLOSED' }, 'solve after close()');
  },

  async an_abort_signal_cancels_the_task(mock) {
    await script(mock, { default: { outcome: 'never_ready' } });
    const client = await Client.create(options(mock, 'memory'));
    const controller = new AbortController();
    const pending = client.solve(page(1), { signal: controller.signal });
    await sleep(30);
    controller.abort();
    await failsWith(pending, { code: 'ABORTED' }, 'the aborted solve');
    const records = await client.dlq.peek();
    equal(records[0]?.reason, 'Cancelled', `reason of the dead-lettered task in ${show(records)}`);
    await client.close();
  },

  async balance_and_reports_reach_the_mock(mock) {
    await script(mock, { balance: 12.5 });
    const client = await Client.create(options(mock, 'memory'));
    const before = await counters(mock);
    equal(await client.balance(), 12.5, 'balance()');
    const solution = await client.solve(page(1));
    const id = solution.provider_task_id;
    ok(typeof id === 'string' && id !== '', `the solution names its provider task: ${show(solution)}`);
    equal(await client.report(id, true), undefined, 'what a good report resolves to');
    await client.report(id, false);
    const after = await counters(mock);
    const delta = (name) => (after[name] ?? 0) - (before[name] ?? 0);
    deepEqual([delta('balance_checks'), delta('reports_good'), delta('reports_bad')], [1, 1, 1],
      `new [balance_checks, reports_good, reports_bad] in ${show(after)}`);

    // The mock refuses a report on a task it never saw: the provider's code and class come through.
    await failsWith(client.report('999999999', false),
      { code: 'PROVIDER_ERROR', reason: 'ERROR_WRONG_CAPTCHA_ID', class: 'fix_input' }, 'a report on an unknown task');
    await failsWith(client.report(5, true), { code: 'INVALID_CONFIG', field: 'providerTaskId' }, 'a numeric task id');
    await failsWith(client.report('1', 'yes'), { code: 'INVALID_CONFIG', field: 'good' }, 'good as a string');
    await client.close();
  },

  async a_report_the_provider_does_not_take_names_report(mock) {
    await script(mock, {});
    // CapMonster takes reports of wrong answers only.
    const client = await Client.create(options(mock, 'memory', { provider: 'capmonster' }));
    const before = await counters(mock);
    const e = await failsWith(client.report('1', true), { code: 'INVALID_CONFIG', field: 'report' }, 'a good report to capmonster');
    ok(e.message.includes('capmonster'), `the message names the provider: "${e.message}"`);
    deepEqual((await counters(mock)).requests, before.requests, 'requests the mock received per path (none was sent)');
    await client.close();
  },

  async account_and_network_failures_of_direct_requests(mock) {
    const secret = 'secret-key-123';
    await script(mock, { account_errors: { [secret]: 'ERROR_KEY_DOES_NOT_EXIST' } });
    let client = await Client.create(options(mock, 'memory', { apiKey: secret }));
    let e = await failsWith(client.balance(),
      { code: 'ACCOUNT_ERROR', reason: 'ERROR_KEY_DOES_NOT_EXIST', class: 'account_terminal' }, 'balance() with a dead key');
    ok(!e.message.includes(secret), `the key leaked into "${e.message}"`);
    await client.close();

    // Nothing listens there: a transient network failure, without the key (it is in the URL).
    client = await Client.create(options(mock, 'memory', { apiKey: secret, baseUrl: 'http://127.0.0.1:1' }));
    e = await failsWith(client.balance(), { code: 'PROVIDER_ERROR', reason: 'Network', class: 'transient' }, 'balance() with no one listening');
    ok(!e.message.includes(secret), `the key leaked into "${e.message}"`);
    await client.close();
  },

  async reset_circuit_lets_submissions_flow_again(mock) {
    await script(mock, { account_errors: { [KEY]: 'ERROR_KEY_DOES_NOT_EXIST' } });
    const client = await Client.create(options(mock, 'memory'));
    await failsWith(client.solve(page(1)), { code: 'ACCOUNT_ERROR' }, 'solve with a dead key');
    // The key is fixed, but the open circuit keeps refusing until it is reset.
    await script(mock, {});
    const e = await failsWith(client.solve(page(2)), {}, 'solve with the circuit open');
    equal(e.record?.reason, 'CircuitOpen', 'reason of the refused task');
    equal(await client.resetCircuit(), undefined, 'what resetCircuit() resolves to');
    startsWith((await client.solve(page(3))).text, TOKEN, 'solved after the reset');
    await client.close();
    await failsWith(client.resetCircuit(), { code: 'CLOSED' }, 'resetCircuit() after close()');
  },

  async requests_that_time_out_or_break_are_retried_then_dead_lettered_without_the_key(mock) {
    // Every submission answers after 600 ms, past the 150 ms request timeout: the driver aborts each one.
    await script(mock, { faults: { slow_ms: 600, slow_rate: 1, endpoints: ['/in.php'] } });
    const retries = [];
    const client = await Client.create(options(mock, 'memory', {
      retry: { backoff: { kind: 'fixed', delay_ms: 10 }, transientMinDelayMs: 10, requestTimeoutMs: 150, maxRequestRetries: 1 },
      onEvent: (e) => e.name === 'retrying' && retries.push(e.detail.code),
    }));
    let e = await failsWith(client.solve(page(1)), { code: 'SOLVE_FAILED' }, 'solve while every submission times out');
    // Two requests (the first retried), no submission ever accepted.
    deepEqual([e.record.reason, e.record.class, e.record.attempts, e.record.history.length], ['Network', 'transient', 0, 2],
      'the timed-out record: reason, class, attempts, failed requests');
    ok(e.record.description.includes('no complete answer within 150 ms'), `the timeout is described: "${e.record.description}"`);
    deepEqual(retries, ['Network'], 'retrying events before the task was dead-lettered');

    // Every submission's connection is reset: fetch fails, the failure is retried the same way.
    await script(mock, { faults: { connection_reset: 1, endpoints: ['/in.php'] } });
    e = await failsWith(client.solve(page(2)), { code: 'SOLVE_FAILED' }, 'solve while every connection is reset');
    deepEqual([e.record.reason, e.record.history.length], ['Network', 2], 'the reset record: reason, failed requests');
    ok(e.record.description.startsWith('no answer from the service: TypeError'), `fetch's failure is kept: "${e.record.description}"`);
    const stored = await client.exportJson();
    ok(!stored.includes(KEY) && !JSON.stringify(e.record).includes(KEY), 'the key leaked into a record');
    equal(await client.count({ reasons: ['Network'] }), 2, 'both records in the DLQ');
    await script(mock, {});
    await client.close();
  },

  async solve_many_names_the_bad_task_and_solves_the_rest(mock) {
    await script(mock, {});
    const client = await Client.create(options(mock, 'memory'));
    const tasks = [page(1), { type: 'recaptcha_v2', pageUrl: 'https://example.com/' }, 'not a task'];
    const results = await client.solveMany(tasks, { concurrency: 2 });
    equal(results[0].status, 'fulfilled', 'the good task');
    startsWith(results[0].value.text, TOKEN, 'its token');
    for (const [i, field] of [[1, 'tasks[1].sitekey'], [2, 'tasks[2].task']]) {
      await failsWith(Promise.reject(results[i].reason), { code: 'INVALID_TASK', field }, `task ${i} of the batch`);
    }
    await failsWith(client.solveMany(tasks, { concurrency: 0 }), { code: 'INVALID_CONFIG', field: 'concurrency' }, 'concurrency 0');
    await failsWith(client.solveMany(tasks, { labels: { n: 1 } }), { code: 'INVALID_CONFIG', field: 'labels' }, 'labels of numbers');
    await failsWith(client.solveMany('tasks'), { code: 'INVALID_TASK', field: 'tasks' }, 'tasks that are not an array');
    await client.close();
  },

  async what_a_custom_store_returns_is_checked_and_named(mock) {
    const store = jsStore();
    store.peek = () => [{ schema: 1, id: 5 }];
    store.count = () => 'many';
    store.stats = () => { throw new Error('disk on fire'); };
    const client = await Client.create(options(mock, store));
    let e = await failsWith(client.peek(), { code: 'STORE_ERROR' }, 'peek returning a broken record');
    ok(e.message.includes("the custom store's peek returned") && e.message.includes('id'), `names store, method and field: "${e.message}"`);
    e = await failsWith(client.count(), { code: 'STORE_ERROR' }, 'count returning a string');
    ok(e.message.includes("the custom store's count returned"), `names store and method: "${e.message}"`);
    e = await failsWith(client.stats(), { code: 'STORE_ERROR' }, 'stats throwing');
    ok(e.message.includes("the custom store's stats failed: disk on fire"), `names store, method and cause: "${e.message}"`);
    await failsWith(client.peek({ colour: 'red' }), { code: 'INVALID_CONFIG', field: 'filter.colour' }, 'an unknown filter field');
    await failsWith(client.peek(undefined, { limit: -1 }), { code: 'INVALID_CONFIG', field: 'page.limit' }, 'a negative page limit');
    await client.close();
  },
};

/** A test still running after this long has hung: it fails by name instead of stalling the whole suite. */
const HANG_MS = 30_000;

async function guarded(name, test) {
  let timer;
  const hung = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new AssertionError(`${name} hung (${HANG_MS} ms)`)), HANG_MS);
  });
  try {
    await Promise.race([test, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the named tests (all by default) one after the other: `[{ name, ok, error }]`. */
export async function run(mock, names = Object.keys(tests)) {
  await ready();
  const results = [];
  for (const name of names) {
    try {
      await guarded(name, tests[name](mock));
      results.push({ name, ok: true });
    } catch (e) {
      results.push({ name, ok: false, error: String(e?.stack ?? e) });
    }
  }
  return results;
}
