'use strict';
// The seeds' batch end to end against the mock over real HTTP, once per store:
// SQLite file, memory, redis:// (a real redis-server) and a JS object.
// Pages 2 (unsolvable) and 4 (never ready) are dead-lettered after 4 attempts; once
// the service behaves, replay recovers both. Then the DLQ operations on what is left.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Client, SolveFailed } = require('captcha-dlq');
const { ObjectStore } = require('../examples/object-store');
const { startMock, startRedis, tmpDir, FAST, SEED_SCRIPT, seedTasks } = require('./helpers');

const stores = [
  ['sqlite', async () => ({ dlq: path.join(tmpDir('sqlite'), 'dlq.sqlite') })],
  ['memory', async () => ({ dlq: 'memory' })],
  ['redis', async () => {
    const redis = await startRedis();
    return redis && { dlq: redis.url, stop: () => redis.stop() };
  }],
  ['js object', async () => {
    const store = new ObjectStore();
    return { dlq: store, store };
  }],
];

for (const [name, make] of stores) {
  test(`seeds' batch, replay and DLQ operations: ${name} store`, async (t) => {
    const made = await make();
    if (!made) {
      // A missing redis-server fails, as in the Rust and Python suites, unless explicitly waived.
      if (process.env.CAPTCHA_DLQ_SKIP_REDIS !== '1') {
        throw new Error('redis-server is not on PATH (install it, or set CAPTCHA_DLQ_SKIP_REDIS=1 to skip)');
      }
      t.skip('CAPTCHA_DLQ_SKIP_REDIS=1 and redis-server is not on PATH');
      return;
    }
    const mock = await startMock(SEED_SCRIPT);
    const events = [];
    const client = new Client({ apiKey: 'test-key', provider: 'captchaai', baseUrl: mock.url, dlq: made.dlq, ...FAST, onEvent: (e) => events.push(e) });
    t.after(async () => {
      await client.close();
      mock.stop();
      if (made.stop) made.stop();
    });

    const results = await client.solveMany(seedTasks(), { concurrency: 5 });
    assert.equal(results.length, 5);
    const solved = results.filter((r) => r.status === 'fulfilled');
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected']);
    for (const r of solved) assert.match(r.value.text, /\S{10,}/);
    for (const i of [2, 4]) {
      const err = results[i].reason;
      assert.ok(err instanceof SolveFailed, `page ${i}: ${err}`);
      assert.equal(err.code, 'SOLVE_FAILED');
      assert.equal(err.record.attempts, 4);
      assert.equal(err.record.task.page_url, `https://example.com/page/${i}`);
      assert.equal(err.stored, true);
    }
    assert.equal(results[2].reason.record.reason, 'ERROR_CAPTCHA_UNSOLVABLE');
    assert.equal(results[4].reason.record.reason, 'Timeout');
    assert.equal(await client.dlq.count(), 2);
    const names = new Set(events.map((e) => e.event));
    assert.ok(names.has('solved') && names.has('dead_lettered'), [...names].join(','));
    if (made.store) assert.ok(made.store.calls > 0, 'the JS store was called');

    // The service recovers; replaying the two records solves them.
    await mock.script({});
    const ids = [results[2].reason.record.id, results[4].reason.record.id];
    const report = await client.replay({ ids });
    assert.equal(report.received, 2);
    assert.equal(report.retried, 2);
    assert.equal(report.recovered, 2);
    assert.equal(await client.dlq.count(), 0);

    // A fresh failure to exercise the DLQ operations.
    await mock.script({ default: { outcome: 'unsolvable' } });
    const fail = await client.solve({ type: 'recaptcha_v2', sitekey: '6Le-OTHER', pageUrl: 'https://shop.example.org/x' }, { labels: { batch: 'b1' } }).then(
      () => assert.fail('should not solve'),
      (e) => e,
    );
    assert.ok(fail instanceof SolveFailed);
    assert.deepEqual(fail.record.labels, { batch: 'b1' });
    const [rec] = await client.dlq.peek({ labels: { batch: 'b1' } });
    assert.equal(rec.id, fail.record.id);
    assert.equal(await client.dlq.count({ pageHost: 'shop.example.org' }), 1);
    assert.equal(await client.dlq.count({ reasons: ['nothing-like-this'] }), 0);
    const stats = await client.dlq.stats();
    assert.equal(stats.total, 1);
    assert.equal(stats.ready, 1);
    assert.ok(stats.completed >= 2, JSON.stringify(stats));
    const analysis = await client.dlq.analysis();
    assert.equal(analysis.records, 1);
    assert.deepEqual(analysis.by_sitekey, [{ key: '6Le-OTHER', count: 1 }]);

    assert.equal(await client.dlq.park(rec.id, 'bad sitekey'), true);
    assert.equal(await client.dlq.count({ states: ['parked'] }), 1);
    assert.equal(await client.dlq.park('01NOSUCHRECORD0000000000000', 'x'), false);
    assert.equal(await client.dlq.unpark(rec.id), true);
    assert.equal(await client.dlq.unpark(rec.id), false);

    const file = path.join(tmpDir('export'), 'failed.jsonl');
    assert.equal(await client.dlq.export(file), 1);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(JSON.parse(lines[0]).id, rec.id);
    assert.equal(await client.dlq.purge({}), 1);
    assert.equal(await client.dlq.count(), 0);
    assert.equal(await client.dlq.import(file), 1);
    assert.equal((await client.dlq.peek())[0].id, rec.id);
  });
}
