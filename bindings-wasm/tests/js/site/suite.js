// What the browser adds to the shared suite (tests/js/suite.js, run beside this one): IndexedDB as the DLQ and
// journal, Web Locks telling live clients from gone ones, and what fetch failures say. Run in a page (suite.html)
// and in a module dedicated worker (worker.js), against the mock solver; each test throws on its first failed check.
import { CaptchaDlqError, SolveFailed, ProviderError, Closed } from 'captcha-dlq-web';
import { KEY, open, options, page, script, freshDb, seedsBatch } from './common.js';
import { AssertionError, ok, equal, deepEqual, startsWith, show } from './assert.js';
import { SEEDS_BATCH, TOKEN } from './expected.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Checks an error of the package: its class, and every property of `expected`; never the key in it. */
function isError(e, Class, expected, what) {
  ok(e instanceof CaptchaDlqError && e instanceof Class, `${what}: expected a ${Class.name}, got ${e?.constructor?.name}: ${e}`);
  for (const [key, want] of Object.entries(expected)) equal(e[key], want, `${what}: .${key} of "${e.message}"`);
  ok(!e.message.includes(KEY), `${what}: the key leaked into "${e.message}"`);
  return e;
}

/** Awaits a promise that must reject with an error of the package (see isError); returns the error. */
async function failsWith(promise, Class, expected, what) {
  let value;
  try {
    value = await promise;
  } catch (e) {
    return isError(e, Class, expected, what);
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

/** An IndexedDB request's result. */
const request = (r) => new Promise((resolve, reject) => {
  r.onsuccess = () => resolve(r.result);
  r.onerror = () => reject(r.error);
});

/** The version, object stores and every row (`[key, value]`) of each table of the database `name`, read raw. */
async function rawRows(name) {
  const db = await request(indexedDB.open(name));
  try {
    const stores = [...db.objectStoreNames];
    const out = { version: db.version, stores };
    for (const table of stores) {
      const store = db.transaction(table, 'readonly').objectStore(table);
      const [keys, values] = [await request(store.getAllKeys()), await request(store.getAll())];
      out[table] = keys.map((key, i) => [key, values[i]]);
    }
    return out;
  } finally {
    db.close();
  }
}

/** Creates the database `name` at `version` with the object stores `tables`, holding the rows of `rows` they name. */
async function rawDatabase(name, version, tables, rows) {
  const opening = indexedDB.open(name, version);
  opening.onupgradeneeded = () => tables.forEach((t) => opening.result.createObjectStore(t));
  const db = await request(opening);
  const tx = db.transaction(tables, 'readwrite');
  for (const table of tables) for (const [key, value] of rows[table] ?? []) tx.objectStore(table).put(value, key);
  await new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onabort = () => reject(tx.error);
  });
  db.close();
}

export const tests = {
  seeds_batch_with_indexeddb: async (mock) =>
    deepEqual(await seedsBatch(mock, `indexeddb:${freshDb('batch')}`), SEEDS_BATCH, "the seeds' batch summary"),

  async a_closed_clients_tasks_are_recovered_from_indexeddb(mock) {
    const dlq = `indexeddb:${freshDb('recover')}`;
    await script(mock, { default: { solve_after_ms: 400 } });
    const first = await open(patient(mock, dlq));
    // Submitted, journaled, then the client goes away (a reload) before the answer.
    const pending = first.solve(page(7));
    pending.catch(() => {}); // checked after close(); not an unhandled rejection meanwhile
    const journal = await until(() => first.dlq.journal(), (j) => j.length === 1 && j[0].providerTaskId);
    equal(journal.length, 1, `journal entries before close in ${show(journal)}`);
    await first.close();
    await failsWith(pending, Closed, { code: 'CLOSED' }, 'the solve pending at close()');

    const second = await open(patient(mock, dlq));
    const report = await second.recover();
    deepEqual([report.report.found, report.report.skippedLive, report.report.deadLettered], [1, 0, 0], `[found, skippedLive, deadLettered] in ${show(report)}`);
    startsWith(report.solved[0]?.solution?.text, TOKEN, `the recovered solution in ${show(report)}`);
    equal(report.solved[0]?.id, journal[0].id, 'the recovered task keeps its record id');
    deepEqual([(await second.dlq.journal()).length, await second.dlq.count()], [0, 0], '[journal, DLQ] after recover()');
    await second.close();
  },

  async a_live_clients_journal_is_left_alone(mock) {
    const dlq = `indexeddb:${freshDb('live')}`;
    await script(mock, { default: { solve_after_ms: 300 } });
    const owner = await open(patient(mock, dlq));
    const pending = owner.solve(page(8));
    pending.catch(() => {}); // checked below
    const neighbour = await open(patient(mock, dlq));
    const report = await until(() => neighbour.recover(), (r) => r.report.skippedLive === 1);
    deepEqual([report.report.skippedLive, report.report.found], [1, 0], `[skippedLive, found] in ${show(report)}`);
    startsWith((await pending).text, TOKEN, 'the owner still solves its task');
    await owner.close();
    await neighbour.close();
  },

  async a_database_written_by_an_earlier_build_opens_with_its_rows(mock) {
    // A dead letter as this build stores it, read back raw.
    const current = freshDb('current');
    await script(mock, { rules: [{ match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } }] });
    const writer = await open(options(mock, `indexeddb:${current}`));
    await failsWith(writer.solve(page(2)), SolveFailed, { code: 'SOLVE_FAILED' }, 'the unsolvable task');
    const [record] = await writer.dlq.peek();
    await writer.close();
    const rows = await rawRows(current);
    equal(rows.records.length, 1, 'the dead letter in the current database');

    // The same rows in a version-2 database (records, journal, settled, meta; no audit trail), as earlier builds left it.
    const earlier = freshDb('earlier');
    await rawDatabase(earlier, 2, ['records', 'journal', 'settled', 'meta'], rows);
    const reader = await open(options(mock, `indexeddb:${earlier}`));
    deepEqual((await reader.dlq.peek()).map((r) => [r.id, r.reason]), [[record.id, record.reason]], 'the earlier database\'s record');
    equal(await reader.dlq.unpark(record.id), false, 'a ready record is not parked');
    equal(await reader.dlq.park(record.id, 'kept from an earlier build'), true, 'the record parks');
    await reader.close();
    const upgraded = await rawRows(earlier);
    ok(upgraded.version >= 3 && upgraded.stores.includes('audit'), `the upgrade added the audit trail: ${show(upgraded.stores)}`);
    equal(upgraded.records.length, 1, 'the record is still there after the upgrade');
    await script(mock, {});
  },

  async retention_hands_evicted_records_to_the_archive_function_first_and_a_refusing_one_keeps_them(mock) {
    await script(mock, { rules: [{ match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } }] });
    const dlq = `indexeddb:${freshDb('retention')}`;
    // An archive that refuses: nothing leaves the DLQ, the failure is not an eviction.
    const refused = [];
    const refusing = await open(options(mock, dlq, {
      dlqRetention: { maxCount: 1, intervalMs: 20, archive: (text, count) => { refused.push(count); throw new Error('disk full'); } },
    }));
    for (const n of ['1', '2']) await failsWith(refusing.solve({ ...page(2), pageUrl: `https://example.com/page/2?n=${n}` }), SolveFailed, {}, 'unsolvable');
    await until(async () => refused.length, (n) => n >= 2);
    ok(refused.length >= 2 && refused.every((count) => count === 1), `the archive was offered the oldest record: ${show(refused)}`);
    equal(await refusing.dlq.count(), 2, 'a refusing archive keeps every record');
    await refusing.close();

    // An async archive that keeps them: the oldest record, redacted JSONL, before it is removed.
    const kept = [];
    const archiving = await open(options(mock, dlq, {
      dlqRetention: { maxCount: 1, intervalMs: 20, archive: async (text, count) => { await sleep(5); kept.push({ text, count }); } },
    }));
    const left = await until(() => archiving.dlq.peek(), (records) => records.length === 1);
    equal(left.length, 1, 'one record left');
    equal(kept.length, 1, `one batch archived: ${show(kept)}`);
    const lines = kept[0].text.trim().split('\n').map((line) => JSON.parse(line));
    deepEqual([kept[0].count, lines.length], [1, 1], 'one record, one JSONL line');
    ok(lines[0].task.page_url.endsWith('n=1') && left[0].task.pageUrl.endsWith('n=2'), 'the oldest went to the archive, the newest stays');
    ok(!kept[0].text.includes(KEY), 'the key is not in the archive');
    const [entry] = (await archiving.dlq.audit()).filter((e) => e.operator === 'retention' && e.stage === 'result');
    equal(entry?.detail, 'max_count, archived to the archive callback', `the audit trail names the archive: ${show(entry)}`);
    await archiving.close();
    await failsWith(open(options(mock, 'memory', { dlqRetention: { maxCount: 1, archive: 'evicted.jsonl' } })), CaptchaDlqError,
      { code: 'INVALID_CONFIG', field: 'dlqRetention.archive' }, 'a file path in the browser');
    await script(mock, {});
  },

  async a_dlq_that_is_not_a_browser_store_is_named(mock) {
    for (const [dlq, words] of [['sqlite:x', 'is not a browser store'], ['indexeddb:', 'needs a database name']]) {
      const e = await failsWith(open(options(mock, dlq)), CaptchaDlqError, { code: 'INVALID_CONFIG', field: 'dlq' }, dlq);
      ok(e.message.includes(words), `"${e.message}"`);
    }
    await failsWith(open(options(mock, 'memory', { proxy: 'socks5://127.0.0.1:1080' })), CaptchaDlqError, { code: 'INVALID_CONFIG', field: 'proxy' }, 'a proxy');
  },

  async traces_over_protobuf_are_refused_naming_the_protocol_the_browser_exports(mock) {
    // The browser's exporter encodes OTLP JSON only (the shared suite checks its spans); protobuf is refused, not
    // sent as JSON behind the caller's back.
    const traces = { otlpEndpoint: 'http://127.0.0.1:4318', protocol: 'http/protobuf' };
    const e = await failsWith(open(options(mock, 'memory', { traces })), CaptchaDlqError,
      { code: 'INVALID_CONFIG', field: 'traces.protocol' }, 'traces over http/protobuf');
    ok(e.message.includes('OTLP/HTTP JSON only'), `names what the browser exports: "${e.message}"`);
  },

  async a_failed_fetch_says_what_it_can_mean_without_the_key(mock) {
    // Nothing listens there: fetch fails; the message says what that can mean, without the key (in the URL).
    const client = await open(options(mock, 'memory', { baseUrl: 'http://127.0.0.1:1' }));
    const e = await failsWith(client.balance(), ProviderError, { code: 'PROVIDER_ERROR' }, 'balance() with no one listening');
    ok(e.message.includes('blocked the request to http://127.0.0.1:1') && e.message.includes('CORS'), `says what happened: "${e.message}"`);
    await client.close();
  },

  async requests_that_time_out_or_break_are_dead_lettered_as_network_without_the_key(mock) {
    // Every submission answers after 600 ms, past the 150 ms request timeout: the transport aborts each one.
    await script(mock, { faults: { slow_ms: 600, slow_rate: 1, endpoints: ['/in.php'] } });
    const client = await open(options(mock, 'memory', {
      retry: { backoff: { kind: 'fixed', delayMs: 10 }, transientMinDelayMs: 10, requestTimeoutMs: 150, maxRequestRetries: 1 },
    }));
    let e = await failsWith(client.solve(page(1)), SolveFailed, { code: 'SOLVE_FAILED' }, 'solve while every submission times out');
    deepEqual([e.record.reason, e.record.class], ['Network', 'transient'], 'the timed-out record: reason, class');
    ok(e.record.description.includes('within 150 ms'), `the timeout is described: "${e.record.description}"`);

    // Every submission's connection is reset: fetch fails, and says what that can mean.
    await script(mock, { faults: { connection_reset: 1, endpoints: ['/in.php'] } });
    e = await failsWith(client.solve(page(2)), SolveFailed, { code: 'SOLVE_FAILED' }, 'solve while every connection is reset');
    equal(e.record.reason, 'Network', 'the reset record: reason');
    ok(e.record.description.includes('blocked the request to'), `fetch's failure is explained: "${e.record.description}"`);
    const exported = await client.dlq.exportText();
    ok(!exported.includes(KEY) && !JSON.stringify(e.record).includes(KEY), 'the key leaked into a record');
    equal(await client.dlq.count({ reasons: ['Network'] }), 2, 'both records in the DLQ');
    await script(mock, {});
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
