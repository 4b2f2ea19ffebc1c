// What only the Node package has, next to the shared suite: export and import files, util.inspect,
// the CommonJS entry, `verifyWebhook`, the shared wire vectors and the fleet ledger suite through the
// addon, a process that exits while a client it never closed sits idle, and a fleet of processes on a JS
// store. (Declared kinds, edit, the audit trail, retention and alerts are in the shared suite: the browser
// package has them too.)
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import util from 'node:util';
import { DirectoryStore } from './node/directory-store.js';
import { startMock } from './node/mock.js';
import { MapStore } from './map-store.js';
import { SECRET, TOKEN } from './suite.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
/** The package's folder: an installed copy ($CAPTCHA_DLQ_PACKAGE_DIR, .ci/package-check.sh) or bindings-node. */
const PACKAGE = path.resolve(process.env.CAPTCHA_DLQ_PACKAGE_DIR ?? path.join(ROOT, 'bindings-node'));
const pkg = await import(path.join(PACKAGE, 'index.js'));
const { Client, CaptchaDlqError, InvalidConfig, SolveFailed, verifyWebhook } = pkg;
/** The addon itself: the shared wire vectors run through `evaluateVector`, a Node-only test hook. */
const native = createRequire(import.meta.url)(path.join(PACKAGE, 'native.cjs'));

const mock = await startMock();
after(() => mock.stop());

const KEY = `sk-node-${SECRET}`;
const page = (n) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/page/${n}` });
const options = (extra = {}) => ({
  apiKey: KEY,
  baseUrl: mock.url,
  dlq: 'memory',
  retry: { backoff: { kind: 'fixed', delayMs: 10 }, transientMinDelayMs: 10 },
  polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 3, coalesceMs: 5 },
  rate: { submitsPerSecond: 1000 },
  ...extra,
});

async function script(body) {
  const r = await fetch(`${mock.url}/mock/script`, { method: 'POST', body: JSON.stringify(body) });
  assert.equal(r.status, 200, await r.text());
}

/** A client whose DLQ holds two unsolvable tasks' records. */
async function clientWithRecords() {
  await script({ rules: [{ match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } }] });
  const client = new Client(options());
  for (const jobId of ['a', 'b']) await assert.rejects(client.solve(page(2), { labels: { jobId } }), SolveFailed);
  return client;
}

test('export(path) writes a file only its owner can read, in the format its name says; import(path) reads it back', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-dlq-export-'));
  const client = await clientWithRecords();
  const json = path.join(dir, 'failed.json');
  const jsonl = path.join(dir, 'failed.jsonl');
  fs.writeFileSync(json, 'old', { mode: 0o644 });
  assert.equal(await client.dlq.export(json), 2);
  assert.equal(await client.dlq.export(jsonl, { filter: { labels: { jobId: 'a' } } }), 1);
  assert.equal(fs.statSync(json).mode & 0o777, 0o600, 'an existing file is narrowed to 0600');
  assert.equal(fs.statSync(jsonl).mode & 0o777, 0o600);
  const records = JSON.parse(fs.readFileSync(json, 'utf8'));
  assert.equal(records.length, 2);
  assert.equal(fs.readFileSync(jsonl, 'utf8').trim().split('\n').length, 1, 'one record per line');
  for (const f of [json, jsonl]) assert.ok(!fs.readFileSync(f, 'utf8').includes(SECRET), 'the key is not exported');
  await assert.rejects(client.dlq.export(json, { fromat: 'jsonl' }), (e) => e instanceof InvalidConfig && e.field === 'export: fromat');
  for (const notAPath of [undefined, 5, { path: json }]) {
    await assert.rejects(client.dlq.export(notAPath), (e) => e instanceof InvalidConfig && e.field === 'path', `export(${notAPath})`);
    await assert.rejects(client.dlq.import(notAPath), (e) => e instanceof InvalidConfig && e.field === 'path', `import(${notAPath})`);
  }

  const other = new Client(options());
  assert.equal(await other.dlq.import(json), 2);
  assert.deepEqual((await other.dlq.peek()).map((r) => r.labels.jobId).sort(), ['a', 'b']);
  await assert.rejects(other.dlq.import(path.join(dir, 'missing.json')), (e) => e instanceof CaptchaDlqError && e.code === 'IO_ERROR' && e.message.includes('missing.json'));
  await client.close();
  await other.close();
  fs.rmSync(dir, { recursive: true });
});

test('replay() and recover() return the shapes of tests/shapes/results.json, in camelCase', async () => {
  // An installed copy of this suite (.ci/package-check.sh) is told where the repository's shapes are.
  const file = process.env.CAPTCHA_DLQ_SHAPES ?? path.join(ROOT, 'tests/shapes/results.json');
  const shapes = JSON.parse(fs.readFileSync(file, 'utf8'));
  const camel = (names) => names.map((n) => n.replace(/_([a-z])/g, (_, c) => c.toUpperCase())).sort();
  const client = new Client(options());
  const replayed = await client.replay();
  assert.deepEqual(Object.keys(replayed).sort(), camel(shapes.replay));
  assert.deepEqual(Object.keys(replayed.report).sort(), camel(shapes.replay_report));
  const recovered = await client.recover();
  assert.deepEqual(Object.keys(recovered).sort(), camel(shapes.recover));
  assert.deepEqual(Object.keys(recovered.report).sort(), camel(shapes.recover_report));
  await client.close();
});

test('issue 44, finding 5: webhook signatures cover a timestamp; verifyWebhook (the Rust check) refuses the rest', () => {
  const body = Buffer.from('{"event":"new_reason"}');
  const header = (t, { secret = 'node-hook-secret', signed = body } = {}) =>
    `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(signed).digest('hex')}`;
  const now = Math.floor(Date.now() / 1000);
  assert.equal(verifyWebhook(body, header(now), 'node-hook-secret'), true);
  assert.equal(verifyWebhook(body.toString('utf8'), header(now), 'node-hook-secret'), true, 'a string body');
  assert.equal(verifyWebhook(new Uint8Array(body), header(now - 500), 'node-hook-secret', 600), true);
  const refusals = [
    [header(now), 'other-secret', /does not match/],
    [header(now, { signed: Buffer.from('{}') }), 'node-hook-secret', /does not match/],
    [header(now - 301), 'node-hook-secret', /tolerance/],
    [`sha256=${createHmac('sha256', 'node-hook-secret').update(body).digest('hex')}`, 'node-hook-secret', /malformed/],
    [header(now), '', /empty/],
  ];
  for (const [given, secret, why] of refusals) {
    assert.throws(() => verifyWebhook(body, given, secret), (e) => e.code === 'WEBHOOK_SIGNATURE' && why.test(e.message), given);
  }
});

test("a function as dlqRetention.archive (the browser package's) is refused by name: here the archive is a file", () => {
  assert.throws(
    () => new Client(options({ dlqRetention: { maxCount: 1, archive: () => {} } })),
    (e) => e instanceof InvalidConfig && e.field === 'dlqRetention.archive' && /path of a file/.test(e.message),
  );
});

test('util.inspect shows the provider and base URL, never the key', async () => {
  await script({});
  const client = new Client(options());
  assert.match(util.inspect(client), /^Client \{ opening: true, closed: false \}$/);
  await client.ready();
  const shown = util.inspect(client);
  assert.ok(shown.includes("provider: 'captchaai'") && shown.includes(mock.url), shown);
  assert.ok(!shown.includes(SECRET), shown);
  assert.equal(util.inspect(client.dlq), 'Dlq {}');
  await client.close();
  assert.match(util.inspect(client), /closed: true/);
});

test('the CommonJS entry is the same module: one set of classes', async () => {
  const require = createRequire(import.meta.url);
  const cjs = require(path.join(PACKAGE, 'index.cjs'));
  assert.equal(cjs.Client, Client);
  assert.equal(cjs.SolveFailed, SolveFailed);
  await script({});
  const client = new cjs.Client(options());
  assert.ok((await client.solve(page(1))).text.startsWith(TOKEN));
  await client.close();
});

test('an onEvent callback that throws is reported and does not stop the client', async () => {
  await script({});
  const reported = [];
  const original = console.error;
  console.error = (...args) => reported.push(args.map(String).join(' '));
  try {
    const client = new Client(options({ onEvent: () => { throw new Error('callback bug'); } }));
    assert.ok((await client.solve(page(1))).text.startsWith(TOKEN));
    await client.close();
  } finally {
    console.error = original;
  }
  assert.ok(reported.some((line) => line.includes('callback bug')), reported.join('\n'));
});

test('a process whose client was never closed exits once it is idle', () => {
  const program = `
    import { Client } from ${JSON.stringify(path.join(PACKAGE, 'index.js'))};
    const client = new Client(${JSON.stringify(options())});
    const s = await client.solve(${JSON.stringify(page(1))});
    console.log(s.text.slice(0, 8));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.error, undefined, 'the process ended by itself');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), TOKEN);
});

test('a killed process\'s tasks are adopted by a running client: each answer reaches onAdopted once, nothing is paid twice', async () => {
  await script({ default: { solve_after_ms: 4000 } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-dlq-adopt-'));
  const dlq = path.join(dir, 'dlq.sqlite');
  const patient = { polling: { firstPollMs: 100, intervalMs: 100, maxPolls: 100000 } };
  const before = (await (await fetch(`${mock.url}/mock/counters`)).json()).tasks_created;
  const N = 4;
  // A child with N tasks in flight on the SQLite DLQ, killed once they are with the provider.
  const program = `
    import { Client } from ${JSON.stringify(path.join(PACKAGE, 'index.js'))};
    const client = new Client(${JSON.stringify(options({ dlq, ...patient }))});
    const tasks = Array.from({ length: ${N} }, (_, i) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: 'https://example.com/adopt/' + i }));
    await client.solveMany(tasks);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: 'ignore' });
  const taken = [];
  const adopter = new Client(options({ dlq, ...patient, onAdopted: (item) => { taken.push(item); } }));
  try {
    const journaled = async () => (await adopter.dlq.journal()).filter((e) => e.providerTaskId).length;
    await until(async () => (await journaled()) === N, 'the child\'s tasks are with the provider');
    child.kill('SIGKILL');
    await until(async () => taken.length >= N, 'every adopted answer reached onAdopted');
    assert.equal(new Set(taken.map((item) => item.id)).size, N, 'each answer once');
    assert.ok(taken.every((item) => item.ok && item.solution.providerTaskId && item.solution.text.startsWith(TOKEN)));
    await until(async () => (await adopter.dlq.journal()).length === 0, 'the taken answers leave the journal');
    assert.equal(taken.length, N);
    const after = (await (await fetch(`${mock.url}/mock/counters`)).json()).tasks_created;
    assert.equal(after - before, N, 'adopted tasks were polled, not submitted again');
  } finally {
    child.kill('SIGKILL');
    await adopter.close();
    fs.rmSync(dir, { recursive: true });
  }
  assert.throws(() => new Client(options({ onAdopted: 'log' })), (e) => e instanceof InvalidConfig && e.field === 'onAdopted');
});

/** Polls `check` every 50 ms for at most a minute (a bounded wait, not a timing assertion). */
async function until(check, what) {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `${what} did not happen within a minute`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The map store of docs/custom-store.md, declared shared (its lock is one process's: enough for the suite). */
class SharedMapStore extends MapStore {
  shared = true;
  lock() {}
  unlock() {}
}

test('the fleet ledger suite passes over a JS store declared shared, as over SQLite and Redis', async () => {
  assert.equal(await native.runLedgerSuiteOn(new SharedMapStore(), 1), 9);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-dlq-ledger-'));
  try {
    assert.equal(await native.runLedgerSuiteOn(new DirectoryStore(dir), 2), 9, 'and over the shared directory store');
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
  await assert.rejects(native.runLedgerSuiteOn(new MapStore(), 3), /not declared shared/);
});

test('a store that does not declare itself shared is asked about its four tables only', async () => {
  class TableNoting extends MapStore {
    tables = new Set();
    get(table, key) { this.tables.add(table); return super.get(table, key); }
    scan(table) { this.tables.add(table); return super.scan(table); }
    write(ops) { for (const op of ops) this.tables.add(op.table); return super.write(ops); }
  }
  const plain = new TableNoting();
  const client = new Client(options({ dlq: plain, budget: 1, price: 0.001 }));
  await script({ default: { solve_after_ms: 0 } });
  await client.solve(page(1));
  await client.close();
  assert.ok([...plain.tables].every((t) => ['records', 'journal', 'settled', 'meta'].includes(t)), `a store of one process keeps no ledger: ${[...plain.tables]}`);
});

test('two processes on one shared JS store spend within the fleet\'s one budget', async () => {
  await script({ default: { solve_after_ms: 0 } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-dlq-fleet-'));
  const [perClient, budget, price] = [10, 0.01, 0.001];
  const before = (await (await fetch(`${mock.url}/mock/counters`)).json()).tasks_created;
  const member = path.join(HERE, 'node', 'fleet-member.js');
  const memberOptions = JSON.stringify(options({ dlq: undefined, budget, price, rate: { submitsPerSecond: 1000, maxInFlight: 100 } }));
  const children = ['a', 'b'].map((name) => spawn(process.execPath, [member, PACKAGE, memberOptions, dir, name, String(perClient)], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const ended = children.map((child) => new Promise((resolve) => child.once('exit', resolve)));
  // Bounded: members whose ledger never answers submit nothing and would wait for ever.
  const firstLine = (child) => new Promise((resolve, reject) => {
    setTimeout(() => reject(new Error('a fleet member gave no results within two minutes')), 120_000).unref();
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`a fleet member exited (${code}) before its results: ${out}`)));
  });
  const rows = (table) => Object.values(JSON.parse(fs.readFileSync(path.join(dir, 'rows.json'), 'utf8'))[table] ?? {});
  try {
    const outcomes = (await Promise.all(children.map(firstLine))).flatMap((line) => JSON.parse(line));
    const solved = outcomes.filter((o) => 'cost' in o);
    const refused = outcomes.filter((o) => 'reason' in o);
    assert.equal(solved.length + refused.length, 2 * perClient);
    // Alone, each client would solve all its tasks: twice the budget.
    assert.ok(solved.reduce((sum, o) => sum + o.cost, 0) <= budget + 1e-9, `the fleet spent over its budget: ${solved.length} solved`);
    assert.ok(refused.every((o) => o.reason === 'BudgetExhausted' && o.description.includes("fleet's budget")), JSON.stringify(refused));
    const after = (await (await fetch(`${mock.url}/mock/counters`)).json()).tasks_created;
    assert.equal(after - before, solved.length, 'nothing refused was paid for');
    assert.equal(rows('fleet_owners').length, 2, 'both members are in the ledger, in the user\'s store');
    // Each member reports its spend at its next sync (its heartbeat at the latest).
    const spent = () => rows('fleet_accounts').reduce((sum, a) => sum + a.state.spent_nano, 0);
    await until(async () => spent() === Math.round(solved.length * price * 1e9), "the fleet's spend is in the user's store");
    assert.equal(rows('fleet_accounts').length, 1, 'one key, one account');
  } finally {
    for (const child of children) child.stdin.end('close\n');
    const stuck = setTimeout(() => children.forEach((child) => child.kill('SIGKILL')), 60_000);
    const codes = await Promise.all(ended);
    clearTimeout(stuck);
    assert.deepEqual(codes, [0, 0]);
  }
  assert.deepEqual(rows('fleet_owners'), [], 'each member left the ledger as it closed');
  fs.rmSync(dir, { recursive: true });
});

const vectors = process.env.CAPTCHA_DLQ_VECTORS ?? path.join(ROOT, 'tests', 'vectors');
for (const file of fs.readdirSync(vectors).filter((f) => f.endsWith('.json'))) {
  test(`the shared wire vectors: ${file}`, () => {
    const { cases } = JSON.parse(fs.readFileSync(path.join(vectors, file), 'utf8'));
    assert.ok(cases.length > 0);
    for (const [i, c] of cases.entries()) {
      const { expected, name, source, ...input } = c;
      assert.deepEqual(native.evaluateVector(input), expected, `${file} case ${i} ${name ?? ''} (${source ?? ''})`);
    }
  });
}

test('several providers: failover at an account error, spend, balances, reportSolution, metrics, the dashboard', async () => {
  // A second mock that charges 1.0 per task from a balance of 3.0: the fourth submission gets ERROR_ZERO_BALANCE.
  const dry = await startMock();
  try {
    await fetch(`${dry.url}/mock/script`, {
      method: 'POST',
      body: JSON.stringify({ balance: 3, task_cost: 1, charge: true }),
    });
    await script({ balance: 7.5, rules: [] });
    const base = options();
    delete base.apiKey;
    delete base.baseUrl;
    const client = new Client({
      ...base,
      providers: [
        { provider: '2captcha', name: 'dry', apiKey: KEY, baseUrl: dry.url, price: 0.002 },
        { provider: '2captcha', name: 'spare', apiKey: KEY, baseUrl: mock.url, price: 0.003 },
      ],
    });
    try {
      const results = await client.solveMany([0, 1, 3, 5, 6, 7].map(page), { concurrency: 1 });
      assert.ok(results.every((r) => r.ok), JSON.stringify(results));
      assert.deepEqual(results.map((r) => r.solution.provider), ['dry', 'dry', 'dry', 'spare', 'spare', 'spare']);

      const spend = await client.spend();
      assert.equal(spend.solved, 6);
      assert.ok(Math.abs(spend.cost - (3 * 0.002 + 3 * 0.003)) < 1e-9, JSON.stringify(spend));

      const balances = await client.balances();
      assert.deepEqual(balances.map((b) => b.provider), ['dry', 'spare']);
      assert.equal(balances[1].balance, 7.5);
      assert.equal(await client.balanceOf('spare'), 7.5);
      await assert.rejects(client.balanceOf('nowhere'), InvalidConfig);

      const before = await (await fetch(`${mock.url}/mock/counters`)).json();
      await client.reportSolution(results[5].solution, false);
      const after = await (await fetch(`${mock.url}/mock/counters`)).json();
      assert.equal(after.reports_bad, before.reports_bad + 1, 'the report went to the provider that solved it');

      const metrics = await client.metrics();
      assert.deepEqual(metrics.providers, ['dry', 'spare']);
      const submitted = Object.fromEntries(metrics.tasksSubmitted.map((c) => [c.provider, c.count]));
      assert.deepEqual(submitted, { dry: 3, spare: 3 });
      const text = await client.metricsText();
      assert.ok(text.includes('captcha_dlq_tasks_solved_total{provider="spare",task_type="recaptcha_v2"} 3'), text);

      const server = await client.serveDashboard({ listen: ':0', readOnly: true });
      try {
        assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
        const page = await fetch(server.url);
        assert.equal(page.status, 200);
        const scraped = await (await fetch(`${server.url}metrics`)).text();
        assert.ok(scraped.includes('captcha_dlq_circuit_open{provider="dry"}'), scraped);
        assert.ok(!scraped.includes(SECRET) && !(await page.text()).includes(SECRET));
      } finally {
        await server.close();
      }
      await assert.rejects(fetch(server.url), 'closed: nothing listens any more');
      await assert.rejects(client.serveDashboard({ listen: '0.0.0.0:0' }), /without a token/);
      await assert.rejects(client.serveDashboard({ redOnly: true }), /redOnly/);
    } finally {
      await client.close();
    }
  } finally {
    dry.stop();
  }
});

test('captcha-dlq/page ships: its export, types and the page detector it evaluates', async () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
  assert.deepEqual(manifest.exports['./page'], { types: './page.d.ts', default: './lib/page.js' });
  assert.ok(fs.existsSync(path.join(PACKAGE, 'page.d.ts')));
  const page = await import(path.join(PACKAGE, 'lib/page.js'));
  assert.equal(typeof page.solveOnPage, 'function');
  assert.equal(typeof page.preparePage, 'function');
  // The tarball ships the detector in lib/, and that file is what the page module evaluates.
  const shipped = fs.readFileSync(path.join(PACKAGE, 'lib/page-detector.js'), 'utf8');
  assert.match(shipped, /__captchaDlqPage/);
  assert.equal(page.DETECTOR_SOURCE, shipped);
  // In the repository the build copies it from the one checked-in detector (page-detector-js/); an installed
  // package has no repository beside it.
  if (!process.env.CAPTCHA_DLQ_PACKAGE_DIR) {
    assert.equal(shipped, fs.readFileSync(path.join(PACKAGE, '../page-detector-js/page-detector.js'), 'utf8'));
  }
});
