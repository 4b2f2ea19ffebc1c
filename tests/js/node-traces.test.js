// The `traces` option where only Node has it: over http/protobuf (Node's default; the browser encodes JSON only)
// a client solving against the mock solver exports to an OTLP/HTTP receiver on loopback (node:http), and the raw
// bytes carry the task's id and label, never the key. Traces over http/json, the same in both packages, are the
// shared suite's (suite.js).
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
