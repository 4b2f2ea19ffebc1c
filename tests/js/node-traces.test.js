// The `traces` option in the Node package: a client solving against the mock solver exports a trace per
// task to an OTLP/HTTP receiver on loopback (node:http). Over http/json the spans are decoded and checked
// (ids, labels, parent/child, the dead letter's error status); over http/protobuf (the default) the raw
// bytes carry the task's id and label; neither ever carries the key. A bad option is refused by field.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMock } from './node/mock.js';
import { SECRET } from './suite.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The package's folder: an installed copy ($CAPTCHA_DLQ_PACKAGE_DIR, .ci/package-check.sh) or bindings-node. */
const PACKAGE = path.resolve(process.env.CAPTCHA_DLQ_PACKAGE_DIR ?? path.join(HERE, '../../bindings-node'));
const { Client, InvalidConfig, SolveFailed } = await import(path.join(PACKAGE, 'index.js'));

const mock = await startMock();
after(() => mock.stop());

const KEY = `sk-node-traces-${SECRET}`;
const page = (n) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/page/${n}` });

/** An OTLP/HTTP receiver: `{url, requests: [{path, headers, body: Buffer}], close()}`. */
async function receiver() {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => server.close() };
}

/** Solves page 1 (labelled `case: ok`) and page 2 (unsolvable, `case: bad`); the dead letter's record. */
async function solveOneOfEach(traces) {
  const r = await fetch(`${mock.url}/mock/script`, {
    method: 'POST',
    body: JSON.stringify({ rules: [{ match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } }] }),
  });
  assert.equal(r.status, 200);
  const client = new Client({
    apiKey: KEY,
    baseUrl: mock.url,
    dlq: 'memory',
    retry: { backoff: { kind: 'fixed', delayMs: 10 }, transientMinDelayMs: 10 },
    polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 3, coalesceMs: 5 },
    traces,
  });
  await client.solve(page(1), { labels: { case: 'ok' } });
  let record;
  await assert.rejects(client.solve(page(2), { labels: { case: 'bad' } }), (e) => {
    record = e.record;
    return e instanceof SolveFailed;
  });
  await client.close(); // exports the last spans
  return record;
}

function assertNoKey(requests) {
  assert.ok(requests.length > 0, 'spans arrived');
  for (const { path: p, headers, body } of requests) {
    assert.equal(p, '/v1/traces');
    assert.ok(!body.includes(KEY) && !body.includes(SECRET), 'the key is not in an export');
    assert.ok(!body.includes('key='), 'no URL with a key parameter is in an export');
    assert.ok(!JSON.stringify(headers).includes(SECRET), 'the key is not in a header');
  }
}

test('traces over http/json: a span per task with its id and labels, attempts under it, the dead letter as an error', async () => {
  const collector = await receiver();
  const record = await solveOneOfEach({ otlpEndpoint: collector.url, protocol: 'http/json', serviceName: 'node-shop' });
  collector.close();
  assertNoKey(collector.requests);
  const spans = [];
  for (const { headers, body } of collector.requests) {
    assert.equal(headers['content-type'], 'application/json');
    for (const resource of JSON.parse(body).resourceSpans) {
      const service = resource.resource.attributes.find((a) => a.key === 'service.name');
      assert.equal(service.value.stringValue, 'node-shop');
      for (const scope of resource.scopeSpans) spans.push(...scope.spans);
    }
  }
  const attrs = (span) => Object.fromEntries((span.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]));
  const tasks = Object.fromEntries(spans.filter((s) => s.name === 'captcha_dlq.task').map((s) => [attrs(s)['captcha_dlq.label.case'], s]));
  assert.deepEqual(Object.keys(tasks).sort(), ['bad', 'ok']);
  assert.equal(attrs(tasks.bad)['captcha_dlq.task.id'], record.id);
  assert.equal(attrs(tasks.ok)['captcha_dlq.outcome'], 'solved');
  assert.equal(attrs(tasks.bad)['captcha_dlq.outcome'], 'dead_lettered');
  assert.equal(tasks.bad.status.code, 2, 'STATUS_CODE_ERROR');
  assert.equal(tasks.bad.status.message, record.reason);
  assert.equal(tasks.bad.events.at(-1).name, 'dead_letter');
  const attempts = spans.filter((s) => s.name === 'captcha_dlq.attempt' && s.parentSpanId === tasks.bad.spanId);
  assert.equal(attempts.length, record.attempts, 'an attempt span per submission');
  assert.ok(attempts.every((a) => a.traceId === tasks.bad.traceId));
});

test('traces over http/protobuf (the default): the export carries the task id and labels, never the key', async () => {
  const collector = await receiver();
  const record = await solveOneOfEach({ otlpEndpoint: `${collector.url}/v1/traces` });
  collector.close();
  assertNoKey(collector.requests);
  assert.ok(collector.requests.every((r) => r.headers['content-type'] === 'application/x-protobuf'));
  const all = Buffer.concat(collector.requests.map((r) => r.body));
  assert.ok(all.includes(record.id), 'the dead letter\'s id is in the spans');
  assert.ok(all.includes('captcha_dlq.label.case'), 'the labels are attributes');
});

test('a bad traces option is refused naming the field', async () => {
  const refused = (traces, field) =>
    assert.rejects(new Client({ apiKey: KEY, dlq: 'memory', traces }).ready(), (e) => e instanceof InvalidConfig && e.field === field);
  await refused({ otlpEndpoint: 'ftp://127.0.0.1:4318' }, 'traces.otlpEndpoint');
  await refused({ otlpEndpoint: 'http://127.0.0.1:4318', endpoint: 'x' }, 'traces.endpoint');
});
