'use strict';
// Bad input gives a coded error naming the field (never a crash); the API key never
// shows in errors, util.inspect, events, records or exports; CJS and ESM agree.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const util = require('node:util');
const { execFileSync } = require('node:child_process');
const pkg = require('captcha-dlq');
const { Client, ConfigError, InvalidTask, StoreError, CaptchaDlqError, parseTask } = pkg;
const { startMock, tmpDir, FAST } = require('./helpers');

const KEY = 'SECRET-KEY-7f3a9c1e5b';

function throwsCoded(fn, Class, code, field) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof Class, `${e && e.constructor && e.constructor.name}: ${e && e.message}`);
    assert.ok(e instanceof CaptchaDlqError);
    assert.equal(e.code, code);
    if (field !== undefined) assert.equal(e.field, field, e.message);
    return true;
  });
}

async function rejectsCoded(promise, Class, code, field) {
  const e = await promise.then(() => assert.fail('should reject'), (x) => x);
  assert.ok(e instanceof Class, `${e && e.constructor && e.constructor.name}: ${e && e.message}`);
  assert.equal(e.code, code);
  if (field !== undefined) assert.equal(e.field, field, e.message);
  return e;
}

test('bad options throw ConfigError at construction, naming the option', () => {
  throwsCoded(() => new Client({}), ConfigError, 'INVALID_CONFIG', 'apiKey');
  throwsCoded(() => new Client(), ConfigError, 'INVALID_CONFIG', 'options');
  throwsCoded(() => new Client({ apiKey: 'k', retyr: {} }), ConfigError, 'INVALID_CONFIG', 'retyr');
  throwsCoded(() => new Client({ apiKey: 'k', retry: { maxAttempts: 0 } }), ConfigError, 'INVALID_CONFIG', 'retry.max_attempts');
  throwsCoded(() => new Client({ apiKey: 'k', retry: { maxAttempts: 'four' } }), ConfigError, 'INVALID_CONFIG', 'retry.max_attempts');
  throwsCoded(() => new Client({ apiKey: 'k', polling: { intervalMsec: 5 } }), ConfigError, 'INVALID_CONFIG', 'polling.interval_msec');
  throwsCoded(() => new Client({ apiKey: 'k', provider: 'no-such-service' }), ConfigError, 'INVALID_CONFIG');
  throwsCoded(() => new Client({ apiKey: 'k', baseUrl: 'http://solver.example.com' }), ConfigError, 'INVALID_CONFIG', 'baseUrl');
  throwsCoded(() => new Client({ apiKey: 'k', onEvent: 'log' }), ConfigError, 'INVALID_CONFIG', 'onEvent');
  throwsCoded(() => new Client({ apiKey: 'k', dlq: 42 }), ConfigError, 'INVALID_CONFIG', 'dlq');
  throwsCoded(() => new Client({ apiKey: 'k', dlq: { push() {} } }), ConfigError, 'INVALID_CONFIG', 'dlq');
  throwsCoded(() => new Client({ apiKey: 'k', replayPolicy: { replayAttempts: 0 } }), ConfigError, 'INVALID_CONFIG', 'replayPolicy.replay_attempts');
  throwsCoded(() => new Client({ apiKey: 'k', seed: 1n }), ConfigError, 'INVALID_CONFIG', 'options');
  // snake_case spellings work too
  const c = new Client({ api_key: 'k', dlq: 'memory', polling: { interval_ms: 10 } });
  return c.close();
});

test('bad tasks reject with InvalidTask naming the field', async (t) => {
  const client = new Client({ apiKey: 'k', dlq: 'memory', baseUrl: 'http://127.0.0.1:9' });
  t.after(() => client.close());
  await rejectsCoded(client.solve({ type: 'recaptcha_v2', sitekey: '6Le-x' }), InvalidTask, 'INVALID_TASK', 'page_url');
  await rejectsCoded(client.solve({ type: 'recaptcha_v2', sitekey: '6Le-x', pageUrl: 'not a url' }), InvalidTask, 'INVALID_TASK', 'page_url');
  await rejectsCoded(client.solve({ type: 'recaptcha_v9', sitekey: 'x' }), InvalidTask, 'INVALID_TASK', 'type');
  await rejectsCoded(client.solve({ sitekey: 'x' }), InvalidTask, 'INVALID_TASK', 'type');
  await rejectsCoded(client.solve('recaptcha'), InvalidTask, 'INVALID_TASK', 'task');
  await rejectsCoded(client.solve(null), InvalidTask, 'INVALID_TASK', 'task');
  const cyclic = { type: 'recaptcha_v2' };
  cyclic.self = cyclic;
  await rejectsCoded(client.solve(cyclic), InvalidTask, 'INVALID_TASK', 'task');
  const good = { type: 'recaptcha_v2', sitekey: '6Le-x', pageUrl: 'https://example.com/' };
  await rejectsCoded(client.solve(good, { labels: { n: 1 } }), InvalidTask, 'INVALID_TASK', 'labels.n');
  await rejectsCoded(client.solve(good, { signal: 'stop' }), ConfigError, 'INVALID_CONFIG', 'signal');
  await rejectsCoded(client.solveMany('tasks'), ConfigError, 'INVALID_CONFIG', 'tasks');
  await rejectsCoded(client.solveMany([good], { concurrency: 0 }), ConfigError, 'INVALID_CONFIG', 'concurrency');
  // A bad task in a batch is rejected in its own slot; the batch itself resolves.
  const [slot] = await client.solveMany([{ type: 'image' }]);
  assert.equal(slot.status, 'rejected');
  assert.ok(slot.reason instanceof InvalidTask);
  assert.equal(slot.reason.field, 'body');
  await rejectsCoded(client.solveMany([good, 'not a task']), InvalidTask, 'INVALID_TASK', 'task');
  await rejectsCoded(client.dlq.purge(), ConfigError, 'INVALID_CONFIG', 'filter');
  await rejectsCoded(client.dlq.count({ reason: ['x'] }), ConfigError, 'INVALID_CONFIG', 'filter.reason');
  await rejectsCoded(client.dlq.count({ deadLetteredBefore: 'yesterday' }), ConfigError, 'INVALID_CONFIG', 'filter.deadLetteredBefore');
  await rejectsCoded(client.dlq.count({ classes: ['no_such_class'] }), ConfigError, 'INVALID_CONFIG');
  await rejectsCoded(client.dlq.export(path.join(tmpDir('bad'), 'x.csv'), 'csv'), ConfigError, 'INVALID_CONFIG', 'format');
  await rejectsCoded(client.dlq.import(path.join(tmpDir('bad'), 'missing.json')), pkg.IoError, 'IO_ERROR');
  const bad = path.join(tmpDir('bad'), 'broken.json');
  fs.writeFileSync(bad, '[{"sitekey": 5}]');
  await rejectsCoded(client.dlq.import(bad), pkg.IoError, 'IO_ERROR');
  await rejectsCoded(client.report('', true), ConfigError, 'INVALID_CONFIG', 'providerTaskId');
  await rejectsCoded(client.replay({ limit: -1 }), ConfigError, 'INVALID_CONFIG', 'limit');
  throwsCoded(() => parseTask({ type: 'turnstile', sitekey: 'x' }), InvalidTask, 'INVALID_TASK', 'page_url');
  assert.equal(parseTask({ type: 'recaptcha_v2', sitekey: '6Le-x', pageUrl: 'https://e.com/', userAgent: 'UA' }).user_agent, 'UA');
});

test('odd values never crash the addon', async (t) => {
  const client = new Client({ apiKey: 'k', dlq: 'memory', baseUrl: 'http://127.0.0.1:9' });
  t.after(() => client.close());
  const odd = [{}, [], 1e308, -1, NaN, '', '\u0000', 'x'.repeat(100000), { type: 'raw', params: { a: { deep: [1, 2] } } }, { type: 'image', body: '' }];
  for (const v of odd) {
    const e = await client.solve({ type: 'recaptcha_v2', sitekey: v, pageUrl: v }).then(() => null, (x) => x);
    assert.ok(e instanceof InvalidTask, `${util.inspect(v).slice(0, 40)}: ${e}`);
    const e2 = await client.solve(v).then(() => null, (x) => x);
    assert.ok(e2 instanceof InvalidTask, `${util.inspect(v).slice(0, 40)}: ${e2}`);
  }
  assert.throws(() => pkg.evaluateVector('{'), ConfigError);
  assert.throws(() => pkg.evaluateVector('{"provider":"captchaai"}'), ConfigError);
});

test('the API key never shows: errors, inspect, JSON, events, records, exports', async (t) => {
  const mock = await startMock({ bad_keys: [KEY] });
  const events = [];
  const client = new Client({ apiKey: KEY, baseUrl: mock.url, dlq: 'memory', ...FAST, onEvent: (e) => events.push(e) });
  t.after(async () => {
    await client.close();
    mock.stop();
  });
  const seen = [];
  seen.push(util.inspect(client), JSON.stringify(client), util.inspect(client, { showHidden: true, depth: 5 }), String(client));
  assert.match(seen[0], /apiKey: '\*\*\*'/);
  const err = await client.solve({ type: 'recaptcha_v2', sitekey: '6Le-x', pageUrl: 'https://example.com/' }).then(() => assert.fail('should fail'), (e) => e);
  assert.equal(err.code, 'ACCOUNT_ERROR');
  seen.push(err.message, err.stack, util.inspect(err, { depth: 10 }), JSON.stringify(err));
  const balanceErr = await client.balance().then(() => assert.fail('should fail'), (e) => e);
  seen.push(balanceErr.message, util.inspect(balanceErr, { depth: 10 }));
  seen.push(JSON.stringify(events), JSON.stringify(await client.dlq.peek()), JSON.stringify(await client.dlq.analysis()));
  const file = path.join(tmpDir('redact'), 'out.json');
  await client.dlq.export(file, 'json');
  seen.push(fs.readFileSync(file, 'utf8'));
  for (const s of seen) assert.ok(!s.includes(KEY), `the key leaked into: ${s.slice(0, 200)}`);
  assert.ok(events.length > 0);
  // A bad-option error does not echo the key either.
  const e = (() => {
    try {
      new Client({ apiKey: KEY, baseUrl: `http://${KEY}.example.com` });
    } catch (x) {
      return x;
    }
  })();
  assert.ok(e instanceof ConfigError);
});

test('ESM import gives the same classes as require', () => {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { Client, SolveFailed, CaptchaDlqError, evaluateVector } from 'captcha-dlq';
    import { createRequire } from 'node:module';
    const cjs = createRequire(import.meta.url)('captcha-dlq');
    console.log(JSON.stringify({ same: Client === cjs.Client && SolveFailed === cjs.SolveFailed,
      sub: new SolveFailed('m', 'SOLVE_FAILED') instanceof CaptchaDlqError, fn: typeof evaluateVector }));
  `], { cwd: path.resolve(__dirname, '..'), encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), { same: true, sub: true, fn: 'function' });
});

test('StoreError surfaces a failing JS store, with the store message', async (t) => {
  const { ObjectStore } = require('../examples/object-store');
  const store = new ObjectStore();
  store.count = async () => {
    throw new Error('database is down');
  };
  const client = new Client({ apiKey: 'k', dlq: store, baseUrl: 'http://127.0.0.1:9' });
  t.after(() => client.close());
  const e = await rejectsCoded(client.dlq.count(), StoreError, 'STORE_ERROR');
  assert.match(e.message, /database is down/);
  store.stats = async () => ({ total: 'many' });
  const e2 = await rejectsCoded(client.dlq.stats(), StoreError, 'STORE_ERROR');
  assert.match(e2.message, /total/);
});
