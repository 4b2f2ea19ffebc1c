'use strict';
// The client against the mock over real HTTP: many concurrent solves, AbortSignal,
// account errors, balance/report, close, recovery after a killed process.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Client, AbortError, AccountError, ClientClosed, SolveFailed, CaptchaDlqError } = require('captcha-dlq');
const { startMock, tmpDir, FAST } = require('./helpers');

const task = (i) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/item/${i}` });

test('1,000 concurrent solve promises all resolve, each with its own token', async (t) => {
  const mock = await startMock({});
  const client = new Client({ apiKey: 'test-key', baseUrl: mock.url, dlq: 'memory', ...FAST });
  t.after(async () => {
    await client.close();
    mock.stop();
  });
  const solutions = await Promise.all(Array.from({ length: 1000 }, (_, i) => client.solve(task(i))));
  assert.equal(solutions.length, 1000);
  assert.equal(new Set(solutions.map((s) => s.text)).size, 1000);
  for (const s of solutions) assert.ok(s.providerTaskId, 'each solution names its provider task');
  assert.equal(await client.dlq.count(), 0);
  const counters = await mock.counters();
  assert.ok(JSON.stringify(counters).length > 2);
});

test('AbortSignal cancels a solve: AbortError, and the task is dead-lettered as Cancelled', async (t) => {
  const mock = await startMock({ default: { outcome: 'never_ready' } });
  const events = [];
  const client = new Client({ apiKey: 'test-key', baseUrl: mock.url, dlq: 'memory', ...FAST, polling: { ...FAST.polling, maxPolls: 1000 }, onEvent: (e) => events.push(e) });
  t.after(async () => {
    await client.close();
    mock.stop();
  });
  const controller = new AbortController();
  const pending = client.solve(task(1), { signal: controller.signal, labels: { run: 'abort' } });
  // Abort once the provider has the task.
  while (!events.some((e) => e.event === 'submitted')) await new Promise((r) => setTimeout(r, 5));
  controller.abort(new Error('user went away'));
  const err = await pending.then(() => assert.fail('should be aborted'), (e) => e);
  assert.ok(err instanceof AbortError, String(err));
  assert.ok(err instanceof CaptchaDlqError);
  assert.equal(err.code, 'ABORTED');
  assert.equal(err.record.reason, 'Cancelled');
  assert.equal(err.cause.message, 'user went away');
  const [rec] = await client.dlq.peek({ reasons: ['Cancelled'] });
  assert.equal(rec.id, err.record.id);
  assert.deepEqual(rec.labels, { run: 'abort' });

  const already = AbortSignal.abort();
  const early = await client.solve(task(2), { signal: already }).then(() => assert.fail('should reject'), (e) => e);
  assert.ok(early instanceof AbortError);
  assert.equal(early.record, undefined);
  assert.equal(await client.dlq.count(), 1);
});

test('an account error is an AccountError with its record; balance and report work', async (t) => {
  const mock = await startMock({ account_errors: { broke: 'ERROR_WRONG_USER_KEY' }, balance: 12.5 });
  const broke = new Client({ apiKey: 'broke', baseUrl: mock.url, dlq: 'memory', ...FAST });
  const good = new Client({ apiKey: 'test-key', baseUrl: mock.url, dlq: 'memory', ...FAST });
  t.after(async () => {
    await broke.close();
    await good.close();
    mock.stop();
  });
  const err = await broke.solve(task(1)).then(() => assert.fail('should fail'), (e) => e);
  assert.ok(err instanceof AccountError, String(err));
  assert.equal(err.code, 'ACCOUNT_ERROR');
  assert.equal(err.record.reason, 'ERROR_WRONG_USER_KEY');
  const balanceErr = await broke.balance().then(() => assert.fail('should fail'), (e) => e);
  assert.equal(balanceErr.code, 'ACCOUNT_ERROR');

  assert.equal(await good.balance(), 12.5);
  const s = await good.solve(task(2));
  await good.report(s.providerTaskId, true);
});

test('close: later calls reject with ClientClosed; close is idempotent', async () => {
  const client = new Client({ apiKey: 'test-key', baseUrl: 'http://127.0.0.1:9', dlq: 'memory' });
  await client.ready();
  await client.close();
  await client.close();
  const err = await client.solve(task(1)).then(() => assert.fail('should reject'), (e) => e);
  assert.ok(err instanceof ClientClosed);
  assert.equal(err.code, 'CLOSED');
});

test('a store that cannot be opened rejects the first call with StoreError', async () => {
  const client = new Client({ apiKey: 'test-key', dlq: 'redis://127.0.0.1:1/' });
  const err = await client.ready().then(() => assert.fail('should reject'), (e) => e);
  assert.equal(err.code, 'STORE_ERROR', String(err));
  const again = await client.dlq.count().then(() => assert.fail('should reject'), (e) => e);
  assert.equal(again.code, 'STORE_ERROR');
  await client.close();
});

test('recover resumes the tasks of a killed process from the SQLite journal', async (t) => {
  // Answers come 1.5 s after submission: the child is killed long before that.
  const mock = await startMock({ default: { outcome: 'solve', solve_after_ms: 1500 } });
  t.after(() => mock.stop());
  const dlq = path.join(tmpDir('recover'), 'dlq.sqlite');
  const options = { apiKey: 'test-key', baseUrl: mock.url, dlq, ...FAST, polling: { ...FAST.polling, maxPolls: 100000 } };
  const script = `
    const { Client } = require('captcha-dlq');
    let submitted = 0;
    const opts = ${JSON.stringify(options)};
    const c = new Client({ ...opts, onEvent: (e) => { if (e.event === 'submitted' && ++submitted === 3) console.log('ready'); } });
    for (let i = 0; i < 3; i++) c.solve({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: 'https://example.com/r/' + i }).catch(() => {});
  `;
  const child = spawn(process.execPath, ['-e', script], { cwd: path.resolve(__dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the child exited early (${code})`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));

  const client = new Client(options);
  t.after(() => client.close());
  const report = await client.recover({ resume: true });
  assert.equal(report.found, 3);
  assert.equal(report.solved.length, 3);
  assert.equal(report.dead_lettered, 0);
  for (const s of report.solved) assert.ok(s.solution.text.length > 10);
  assert.equal(await client.dlq.count(), 0);
});

test('SolveFailed carries the record; records and errors are plain data', async (t) => {
  const mock = await startMock({ default: { outcome: 'bad_parameters', code: 'ERROR_BAD_PARAMETERS' } });
  const client = new Client({ apiKey: 'test-key', baseUrl: mock.url, dlq: 'memory', ...FAST });
  t.after(async () => {
    await client.close();
    mock.stop();
  });
  const err = await client.solve(task(1)).then(() => assert.fail('should fail'), (e) => e);
  assert.ok(err instanceof SolveFailed, String(err));
  assert.equal(err.record.schema, 1);
  assert.equal(err.record.reason, 'ERROR_BAD_PARAMETERS');
  assert.deepEqual(JSON.parse(JSON.stringify(err.record)), err.record);
});

test('solveMany: {task, labels} items, progress reports, results in input order', async (t) => {
  const mock = await startMock({ rules: [{ match: { page_url_contains: '/item/1' }, behavior: { outcome: 'unsolvable' } }] });
  const client = new Client({ apiKey: 'test-key', baseUrl: mock.url, dlq: 'memory', ...FAST });
  t.after(async () => {
    await client.close();
    mock.stop();
  });
  const progress = [];
  const results = await client.solveMany([task(0), { task: task(1), labels: { row: '1' } }, task(2)], {
    concurrency: 2,
    onProgress: (done, total) => progress.push([done, total]),
  });
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.deepEqual(results[1].reason.record.labels, { row: '1' });
  assert.equal(results[1].reason.record.task.page_url, 'https://example.com/item/1');
  // Progress calls are queued to the event loop without blocking the engine; let them drain.
  for (let i = 0; i < 200 && progress.length < 3; i++) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(progress.map((p) => p[1]), [3, 3, 3]);
  assert.deepEqual(progress.map((p) => p[0]).sort(), [1, 2, 3]);
});
