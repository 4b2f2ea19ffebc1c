// The audit trail from Node on SQLite: `client.dlq` actions (as `api`, or as the name given to `asOperator`), a
// replay with `operator`, export and import files, then `dlq.audit()` shows who did what to how many. The same in
// memory and on a store written in JS is in the shared suite (suite.js), which the browser package runs too.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMock } from './node/mock.js';
import { SECRET } from './suite.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const PACKAGE = path.resolve(process.env.CAPTCHA_DLQ_PACKAGE_DIR ?? path.join(ROOT, 'bindings-node'));
const { Client, InvalidConfig, SolveFailed } = await import(path.join(PACKAGE, 'index.js'));

const mock = await startMock();
after(() => mock.stop());

const page = (n) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/page/${n}` });
const options = (dlq) => ({
  apiKey: `sk-node-${SECRET}`,
  baseUrl: mock.url,
  dlq,
  retry: { backoff: { kind: 'fixed', delayMs: 10 }, transientMinDelayMs: 10 },
  polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 3, coalesceMs: 5 },
  rate: { submitsPerSecond: 1000 },
});

for (const where of ['sqlite']) {
  test(`on ${where}, every action is in the trail under its operator's name`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-dlq-audit-'));
    const store = path.join(dir, 'dlq.sqlite');
    const r = await fetch(`${mock.url}/mock/script`, {
      method: 'POST',
      body: JSON.stringify({ rules: [{ match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } }] }),
    });
    assert.equal(r.status, 200);
    const client = new Client(options(store));
    try {
      for (const jobId of ['a', 'b']) await assert.rejects(client.solve(page(2), { labels: { jobId } }), SolveFailed);
      assert.deepEqual(await client.dlq.audit(), [], 'solving is no operator action');
      const [a, b] = await client.dlq.peek();
      const alice = client.dlq.asOperator('alice');
      assert.equal(await alice.park(a.id, 'wrong sitekey'), true);
      assert.equal(await alice.unpark(a.id), true);
      const file = path.join(dir, 'dump.jsonl');
      assert.equal(await client.dlq.export(file), 2);
      assert.equal(await alice.purge({ ids: [b.id] }), 1);
      assert.equal(await client.dlq.asOperator('bob').import(file), 2);
      const replayed = await client.replay({ ids: [a.id], operator: 'carol' });
      assert.equal(replayed.report.received, 1);
      assert.equal(await client.dlq.purge({ ids: ['no-such-id'] }), 0);

      const all = await client.dlq.audit();
      // Each action leaves its intent before it runs and its result after, pointing at it.
      const intents = new Map(all.filter((e) => e.stage === 'intent').map((e) => [e.id, e]));
      const entries = all.filter((e) => e.stage === 'result');
      assert.equal(intents.size, 6);
      assert.ok(entries.every((e) => intents.get(e.intent)?.action === e.action));
      assert.deepEqual(
        entries.map((e) => [e.operator, e.action, e.count]),
        [
          ['api', 'purge', 0],
          ['carol', 'replay', 1],
          ['bob', 'import', 2],
          ['alice', 'purge', 1],
          ['alice', 'unpark', 1],
          ['alice', 'park', 1],
        ],
      );
      assert.deepEqual(entries[3].filter, { ids: [b.id] });
      assert.equal(entries[5].detail, 'wrong sitekey');
      assert.equal(entries[2].filter, null);
      assert.ok(all.every((e) => e.error === null && e.at.startsWith('20')));
      const older = await client.dlq.audit({ limit: 2, before: entries[3].id });
      assert.deepEqual(older.map((e) => [e.action, e.stage]), [['purge', 'intent'], ['unpark', 'result']]);

      await assert.rejects(client.dlq.asOperator('').park(a.id), InvalidConfig);
      await assert.rejects(client.dlq.audit({ limit: 0 }), InvalidConfig);
    } finally {
      await client.close();
    }
  });
}
