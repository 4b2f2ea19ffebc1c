// The client's behaviour through the package's public JS API, against the mock solver: run in a page
// (suite.html) and in a module dedicated worker (worker.js). Each test takes the mock's URL, sets the mock's
// script it needs and throws on the first failed check; run() runs them one by one.
import {
  Client, ready, CaptchaDlqError, SolveFailed, AccountError, InvalidTask, InvalidConfig, ProviderError, StoreError, Closed,
  Aborted, Cancelled,
} from '/pkg/index.js';
import { KEY, options, page, script, counters, freshDb, seedsBatch } from './common.js';
import { AssertionError, ok, equal, deepEqual, startsWith, show } from './assert.js';
import { SEEDS_BATCH, TOKEN } from './expected.js';

/** The class each code arrives as (errors.js). */
const CLASS_OF = {
  SOLVE_FAILED: SolveFailed,
  ACCOUNT_ERROR: AccountError,
  INVALID_TASK: InvalidTask,
  INVALID_CONFIG: InvalidConfig,
  PROVIDER_ERROR: ProviderError,
  STORE_ERROR: StoreError,
  CANCELLED: Cancelled,
  CLOSED: Closed,
  ABORTED: Aborted,
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Checks an error of the package: the class its `code` names, and every property of `expected`. */
function isError(e, expected, what) {
  ok(e instanceof CaptchaDlqError, `${what}: expected a CaptchaDlqError, got ${e?.constructor?.name}: ${e}`);
  for (const [key, want] of Object.entries(expected)) equal(e[key], want, `${what}: .${key} of "${e.message}"`);
  const Class = CLASS_OF[e.code];
  ok(Class, `${what}: unexpected code ${e.code} ("${e.message}")`);
  ok(e instanceof Class, `${what}: expected a ${Class.name} for code ${e.code}, got a ${e.constructor.name}`);
  ok(!e.message.includes(KEY), `${what}: the key leaked into "${e.message}"`);
  return e;
}

/** Awaits a promise that must reject with an error of the package (see isError); returns the error. */
async function failsWith(promise, expected, what) {
  let value;
  try {
    value = await promise;
  } catch (e) {
    return isError(e, expected, what);
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

/** The example store of docs/custom-store.md, logging what it is asked to write. */
class MapStore {
  tables = new Map();
  log = [];
  table(name) {
    if (!this.tables.has(name)) this.tables.set(name, new Map());
    return this.tables.get(name);
  }
  get(table, key) { return this.table(table).get(key) ?? null; }
  // Async on purpose: a store's methods may answer with a promise.
  async scan(table) { return [...this.table(table).values()]; }
  write(ops) {
    for (const op of ops) {
      this.log.push(`${op.op} ${op.table}`);
      if (op.op === 'put') this.table(op.table).set(op.key, structuredClone(op.row));
      else this.table(op.table).delete(op.key);
    }
  }
}

async function seedsBatchAgrees(mock, dlq) {
  deepEqual(await seedsBatch(mock, dlq), SEEDS_BATCH, `the seeds' batch summary (${dlq})`);
}

export const tests = {
  seeds_batch_with_indexeddb: (mock) => seedsBatchAgrees(mock, `indexeddb:${freshDb('batch')}`),

  seeds_batch_with_memory: (mock) => seedsBatchAgrees(mock, 'memory'),

  seeds_batch_with_a_js_store_object: (mock) => seedsBatchAgrees(mock, new MapStore()),

  async a_closed_clients_tasks_are_recovered_from_the_journal(mock) {
    const dlq = `indexeddb:${freshDb('recover')}`;
    await script(mock, { default: { solve_after_ms: 400 } });
    const first = await Client.create(patient(mock, dlq));
    // Submitted, journaled, then the client goes away (a reload) before the answer.
    const pending = first.solve(page(7));
    pending.catch(() => {}); // checked after close(); not an unhandled rejection meanwhile
    const journal = await until(() => first.dlq.journal(), (j) => j.length === 1 && j[0].providerTaskId);
    equal(journal.length, 1, `journal entries before close in ${show(journal)}`);
    await first.close();
    await failsWith(pending, { code: 'CLOSED' }, 'the solve pending at close()');

    const second = await Client.create(patient(mock, dlq));
    const report = await second.recover();
    deepEqual([report.found, report.skippedLive, report.deadLettered], [1, 0, 0], `[found, skippedLive, deadLettered] in ${show(report)}`);
    startsWith(report.solved[0]?.solution?.text, TOKEN, `the recovered solution in ${show(report)}`);
    equal(report.solved[0]?.id, journal[0].id, 'the recovered task keeps its record id');
    deepEqual([(await second.dlq.journal()).length, await second.dlq.count()], [0, 0], '[journal, DLQ] after recover()');
    await second.close();
  },

  async a_live_clients_journal_is_left_alone(mock) {
    const dlq = `indexeddb:${freshDb('live')}`;
    await script(mock, { default: { solve_after_ms: 300 } });
    const owner = await Client.create(patient(mock, dlq));
    const pending = owner.solve(page(8));
    pending.catch(() => {}); // checked below
    const neighbour = await Client.create(patient(mock, dlq));
    const report = await until(() => neighbour.recover(), (r) => r.skippedLive === 1);
    deepEqual([report.skippedLive, report.found], [1, 0], `[skippedLive, found] in ${show(report)}`);
    startsWith((await pending).text, TOKEN, 'the owner still solves its task');
    await owner.close();
    await neighbour.close();
  },

  async a_js_store_object_keeps_records_and_journal(mock) {
    await script(mock, { rules: [{ match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } }] });
    const store = new MapStore();
    const client = await Client.create(options(mock, store));
    startsWith((await client.solve(page(1))).text, TOKEN, 'page 1 solved');
    const e = await failsWith(client.solve(page(2)), { code: 'SOLVE_FAILED', stored: true }, 'page 2');
    const [stored] = await client.dlq.peek();
    deepEqual([stored?.id, stored?.reason, stored?.task?.pageUrl], [e.record.id, 'ERROR_CAPTCHA_UNSOLVABLE', 'https://example.com/page/2'],
      `[id, reason, task.pageUrl] of the stored record ${show(stored)}`);
    ok(store.log.includes('put journal') && store.log.includes('delete journal'), `the journal was written and cleared: ${show(store.log)}`);
    // Rows are kept in the schema's own spelling, whatever the host's.
    const row = store.table('records').get(e.record.id);
    equal(row?.record?.task?.page_url, 'https://example.com/page/2', `the stored row ${show(row)}`);
    equal(store.table('journal').size, 0, 'journal rows left');
    await client.close();
  },

  async a_store_object_missing_a_method_is_named(mock) {
    const store = new MapStore();
    store.scan = undefined;
    const e = await failsWith(Client.create(options(mock, store)), { code: 'INVALID_CONFIG', field: 'dlq' }, 'a store without scan');
    ok(e.message.includes('`scan`'), `names the method: "${e.message}"`);
  },

  async what_a_js_store_answers_is_checked_and_named(mock) {
    const store = new MapStore();
    const client = await Client.create(options(mock, store));
    store.scan = (table) => (table === 'records' ? [{ record: { schema: 1, id: 5 } }] : []);
    let e = await failsWith(client.dlq.peek(), { code: 'STORE_ERROR' }, 'peek over a broken row');
    ok(e.message.includes("the custom store's scan") && e.message.includes('records.record'), `names store, method and field: "${e.message}"`);
    store.scan = () => { throw new Error('disk on fire'); };
    e = await failsWith(client.dlq.count(), { code: 'STORE_ERROR' }, 'count over a throwing scan');
    ok(e.message.includes("the custom store's scan failed: disk on fire"), `names store, method and cause: "${e.message}"`);
    await failsWith(client.dlq.peek({ colour: 'red' }), { code: 'INVALID_CONFIG' }, 'an unknown filter field');
    await client.close();
  },

  async bad_input_names_the_field_as_written(mock) {
    const badOptions = [
      [{ provider: 'captchaai' }, 'apiKey'],
      [{ apiKey: KEY, dlq: 'memory', polling: { intervalMs: 'fast' } }, 'polling.intervalMs'],
      [{ apiKey: KEY, dlq: 'memory', retry: { maxAttempts: 0 } }, 'retry.maxAttempts'],
      [{ apiKey: KEY, dlq: 'memory', provider: 'nope' }, 'provider'],
      [{ apiKey: KEY, dlq: 'sqlite:x' }, 'dlq'],
      [{ apiKey: KEY, dlq: 'memory', colour: 1 }, 'colour'],
      [{ apiKey: KEY, dlq: 'memory', baseUrl: 'http://solver.example.com' }, 'baseUrl'],
      [{ apiKey: KEY, dlq: 'memory', proxy: 'socks5://127.0.0.1:1080' }, 'proxy'],
      [{ apiKey: KEY, dlq: 'memory', onEvent: 'yes' }, 'onEvent'],
    ];
    for (const [bad, field] of badOptions) {
      await failsWith(Client.create(bad), { code: 'INVALID_CONFIG', field }, `Client.create(${show(bad)})`);
    }
    const client = await Client.create(options(mock, 'memory'));
    const badTasks = [
      [{ type: 'recaptcha_v2', pageUrl: 'https://example.com/' }, 'sitekey'],
      [{ sitekey: 'x' }, 'type'],
      [{ type: 'recaptcha_v2', sitekey: 'x', pageUrl: 5 }, 'pageUrl'],
      [{ type: 'recaptcha_v2', sitekey: 'x', page_url: 'ftp://x' }, 'page_url'],
    ];
    for (const [task, field] of badTasks) {
      await failsWith(client.solve(task), { code: 'INVALID_TASK', field }, `solve(${show(task)})`);
    }
    await failsWith(client.solve('not a task'), { code: 'INVALID_TASK' }, 'solve of a string');
    const labels = await failsWith(client.solve(page(1), { labels: { n: 1 } }), {}, 'labels with a number');
    ok(labels.field?.startsWith('labels'), `the field names the labels: ${labels.field}`);
    await failsWith(client.dlq.import('{"nope"'), { code: 'INVALID_CONFIG' }, 'import of broken JSON');
    await client.close();
    await failsWith(client.solve(page(1)), { code: 'CLOSED' }, 'solve after close()');
  },

  async unknown_option_keys_are_errors_and_replay_nothing(mock) {
    await script(mock, { rules: [{ match: { page_url_contains: '/page/' }, behavior: { outcome: 'unsolvable' } }] });
    const client = await Client.create(options(mock, 'memory'));
    await failsWith(client.solve(page(1)), { code: 'SOLVE_FAILED' }, 'the task to keep in the DLQ');
    const before = (await counters(mock)).submits;
    await failsWith(client.replay({ reasons: ['ERROR_CAPTCHA_UNSOLVABLE'], limt: 1 }), { code: 'INVALID_CONFIG', field: 'options.limt' }, 'replay with limt');
    equal((await counters(mock)).submits, before, 'submissions made by the refused replay');
    equal(await client.dlq.count(), 1, 'records left by the refused replay');
    await failsWith(client.solveMany([page(1)], { concurency: 2 }), { code: 'INVALID_CONFIG', field: 'options.concurency' }, 'solveMany with concurency');
    await failsWith(client.recover({ resum: false }), { code: 'INVALID_CONFIG', field: 'options.resum' }, 'recover with resum');
    await client.close();
  },

  async a_camel_case_label_filter_matches(mock) {
    await script(mock, { rules: [{ match: { page_url_contains: '/page/' }, behavior: { outcome: 'unsolvable' } }] });
    const client = await Client.create(options(mock, 'memory'));
    await failsWith(client.solve(page(1), { labels: { jobId: 'x' } }), { code: 'SOLVE_FAILED' }, 'a labelled task');
    await failsWith(client.solve(page(2), { labels: { jobId: 'y' } }), { code: 'SOLVE_FAILED' }, 'another');
    equal(await client.dlq.count({ labels: { jobId: 'x' } }), 1, 'records labelled jobId x');
    const [record] = await client.dlq.peek({ labels: { jobId: 'x' } });
    deepEqual(record?.labels, { jobId: 'x' }, 'label keys are data: kept as written');
    await client.close();
  },

  async an_abort_signal_cancels_the_task(mock) {
    await script(mock, { default: { outcome: 'never_ready' } });
    const client = await Client.create(options(mock, 'memory', { polling: { firstPollMs: { recaptchaV2: 20 }, intervalMs: 20, maxPolls: 200 } }));
    // Aborted before anything was sent: nothing reaches the provider (had the driver accepted it, it would be
    // dead-lettered as Cancelled).
    let controller = new AbortController();
    const created = (await counters(mock)).tasks_created;
    let pending = client.solve(page(1), { signal: controller.signal });
    controller.abort();
    let e = await failsWith(pending, { code: 'ABORTED' }, 'the solve aborted at once');
    if (e.cause) equal(e.cause.record?.reason, 'Cancelled', `what the abort did: ${show(e.cause)}`);
    deepEqual([(await counters(mock)).tasks_created, (await client.dlq.journal()).length], [created, 0],
      '[tasks the provider got, journal entries] after the abort');
    // Aborted once the provider has it: it runs on, its answer waits in the journal for recover().
    controller = new AbortController();
    const before = (await counters(mock)).tasks_created;
    pending = client.solve(page(2), { signal: controller.signal });
    await until(() => counters(mock), (c) => c.tasks_created > before);
    controller.abort();
    e = await failsWith(pending, { code: 'ABORTED' }, 'the solve aborted after submission');
    isError(e.cause, { code: 'CANCELLED', runsOn: true }, 'what the abort did');
    equal((await client.dlq.journal()).length, 1, 'the running task is in the journal');
    await failsWith(client.solve(page(3), { signal: controller.signal }), { code: 'ABORTED' }, 'a solve with an aborted signal');
    await client.close();
  },

  async a_batch_streams_results_as_they_end(mock) {
    await script(mock, { rules: [{ match: { page_url_contains: '/page/1' }, behavior: { solve_after_ms: 300 } }] });
    const client = await Client.create(patient(mock, 'memory'));
    const order = [];
    for await (const r of client.solveStream([page(1), page(2), { task: page(3), labels: { n: '3' }, key: 'k3' }], { concurrency: 3 })) {
      ok(r.ok, `result ${show(r)}`);
      order.push(r.index);
      if (r.index === 2) deepEqual([r.key, r.labels], ['k3', { n: '3' }], 'the wrapped item keeps its key and labels');
    }
    equal(order.at(-1), 0, `the slow task ends last: ${show(order)}`);
    deepEqual((await client.dlq.settled('k')).map((s) => s.key), ['k3'], 'the keyed task is settled');
    await client.close();
  },

  async balance_and_reports_reach_the_mock(mock) {
    await script(mock, { balance: 12.5 });
    const client = await Client.create(options(mock, 'memory'));
    const before = await counters(mock);
    equal(await client.balance(), 12.5, 'balance()');
    const solution = await client.solve(page(1));
    const id = solution.providerTaskId;
    ok(typeof id === 'string' && id !== '', `the solution names its provider task: ${show(solution)}`);
    equal(await client.report(id, true), undefined, 'what a good report resolves to');
    await client.report(id, false);
    const after = await counters(mock);
    const delta = (name) => (after[name] ?? 0) - (before[name] ?? 0);
    deepEqual([delta('balance_checks'), delta('reports_good'), delta('reports_bad')], [1, 1, 1],
      `new [balance_checks, reports_good, reports_bad] in ${show(after)}`);
    const e = await failsWith(client.report('999999999', false), { code: 'PROVIDER_ERROR' }, 'a report on an unknown task');
    ok(e.message.includes('ERROR_WRONG_CAPTCHA_ID'), `the provider's code comes through: "${e.message}"`);
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
    let e = await failsWith(client.balance(), { code: 'ACCOUNT_ERROR' }, 'balance() with a dead key');
    ok(!e.message.includes(secret) && e.message.includes('ERROR_KEY_DOES_NOT_EXIST'), `"${e.message}"`);
    await client.close();

    // Nothing listens there: fetch fails; the message says what that can mean, without the key (in the URL).
    client = await Client.create(options(mock, 'memory', { apiKey: secret, baseUrl: 'http://127.0.0.1:1' }));
    e = await failsWith(client.balance(), { code: 'PROVIDER_ERROR' }, 'balance() with no one listening');
    ok(!e.message.includes(secret), `the key leaked into "${e.message}"`);
    ok(e.message.includes('blocked the request to http://127.0.0.1:1') && e.message.includes('CORS'), `says what happened: "${e.message}"`);
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

  async requests_that_time_out_or_break_are_dead_lettered_as_network_without_the_key(mock) {
    // Every submission answers after 600 ms, past the 150 ms request timeout: the transport aborts each one.
    await script(mock, { faults: { slow_ms: 600, slow_rate: 1, endpoints: ['/in.php'] } });
    const client = await Client.create(options(mock, 'memory', {
      retry: { backoff: { kind: 'fixed', delayMs: 10 }, transientMinDelayMs: 10, requestTimeoutMs: 150, maxRequestRetries: 1 },
    }));
    let e = await failsWith(client.solve(page(1)), { code: 'SOLVE_FAILED' }, 'solve while every submission times out');
    deepEqual([e.record.reason, e.record.class], ['Network', 'transient'], 'the timed-out record: reason, class');
    ok(e.record.description.includes('within 150 ms'), `the timeout is described: "${e.record.description}"`);

    // Every submission's connection is reset: fetch fails, and says what that can mean.
    await script(mock, { faults: { connection_reset: 1, endpoints: ['/in.php'] } });
    e = await failsWith(client.solve(page(2)), { code: 'SOLVE_FAILED' }, 'solve while every connection is reset');
    equal(e.record.reason, 'Network', 'the reset record: reason');
    ok(e.record.description.includes('blocked the request to'), `fetch's failure is explained: "${e.record.description}"`);
    const exported = (await client.dlq.export()).text;
    ok(!exported.includes(KEY) && !JSON.stringify(e.record).includes(KEY), 'the key leaked into a record');
    equal(await client.dlq.count({ reasons: ['Network'] }), 2, 'both records in the DLQ');
    await script(mock, {});
    await client.close();
  },

  async solve_many_names_the_bad_task_and_solves_the_rest(mock) {
    await script(mock, {});
    const client = await Client.create(options(mock, 'memory'));
    const tasks = [page(1), { type: 'recaptcha_v2', pageUrl: 'https://example.com/' }, { task: page(3), lables: {} }];
    const results = await client.solveMany(tasks, { concurrency: 2 });
    ok(results[0].ok, `the good task: ${show(results[0])}`);
    startsWith(results[0].solution.text, TOKEN, 'its token');
    isError(results[1].error, { code: 'INVALID_TASK', field: 'tasks[1].sitekey' }, 'task 1 of the batch');
    isError(results[2].error, { code: 'INVALID_TASK', field: 'tasks[2].lables' }, 'task 2 of the batch');
    await failsWith(client.solveMany(tasks, { concurrency: 0 }), { code: 'INVALID_CONFIG', field: 'options.concurrency' }, 'concurrency 0');
    await failsWith(client.solveMany('tasks'), { code: 'INVALID_TASK', field: 'tasks' }, 'tasks that are not an array');
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
