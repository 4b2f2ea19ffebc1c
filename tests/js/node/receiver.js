// A loopback HTTP receiver for what a client sends out of band — webhook alerts and OTLP/HTTP traces — so the
// shared suite (suite.js) can check them from Node and from Chromium alike: every POST is kept (path, the headers
// a test reads, the body as text) and `GET /received?path=P` lists those to `P`, oldest first. It answers CORS
// preflights and sends CORS headers, as a collector or webhook endpoint a browser posts to must.
// Started by node.test.js and by bindings-wasm/tests/js/run.mjs; it only listens on 127.0.0.1.
import http from 'node:http';

/** The request headers a test may read: the signature of a webhook, the content type of an export. */
const KEPT_HEADERS = ['content-type', 'x-captcha-dlq-signature', 'user-agent'];

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': '*',
  // Chromium's Private Network Access: a page or worker posting to loopback may be asked to prove the target agrees.
  'access-control-allow-private-network': 'true',
};

/** Starts the receiver; resolves to `{ url, stop() }`. */
export async function startReceiver() {
  const received = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS).end();
      return;
    }
    if (req.method === 'GET' && url.pathname === '/received') {
      const path = url.searchParams.get('path');
      const list = received.filter((r) => path === null || r.path === path);
      res.writeHead(200, { ...CORS, 'content-type': 'application/json' }).end(JSON.stringify(list));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, CORS).end(`${req.method} is not taken here`);
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(KEPT_HEADERS.filter((h) => h in req.headers).map((h) => [h, req.headers[h]]));
      received.push({ path: url.pathname, headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { ...CORS, 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}
