// A module service worker using the package: runs the seeds' batch, and starts / recovers a slow task
// around a worker restart. Answers on the MessageChannel port it is given. run.mjs bundles it with esbuild (service
// workers have no import maps), resolving `captcha-dlq-web` from the project's node_modules.
import { seedsBatch, open, options, page, script } from './common.js';

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));

const DLQ = 'indexeddb:sw-restart';
const slow = (mock) => options(mock, DLQ, { polling: { firstPollMs: 20, intervalMs: 50, maxPolls: 200 } });
let keepAlive = null;

async function handle({ cmd, mock }) {
  switch (cmd) {
    case 'batch':
      return seedsBatch(mock, `indexeddb:sw-${Date.now()}`);
    case 'start-slow': {
      await script(mock, { default: { solve_after_ms: 1500 } });
      const client = await open(slow(mock));
      keepAlive = client.solve(page(9)).catch(() => {}); // never awaited: the worker is stopped first
      for (let i = 0; i < 200; i++) {
        const journal = await client.dlq.journal();
        if (journal.length === 1 && journal[0].providerTaskId) return { inFlight: 1 };
        await new Promise((r) => setTimeout(r, 10));
      }
      return { inFlight: 0 };
    }
    case 'recover': {
      const client = await open(slow(mock));
      const report = await client.recover();
      const journal = await client.dlq.journal();
      await client.close();
      return {
        found: report.report.found,
        solved: report.solved.map((s) => s.solution.text.slice(0, 8)),
        inFlight: journal.length,
        restarted: keepAlive === null,
      };
    }
    default:
      return { error: `unknown command ${cmd}` };
  }
}

self.addEventListener('message', (event) => {
  const port = event.ports[0];
  event.waitUntil(
    handle(event.data).then(
      (r) => port.postMessage(r),
      (e) => port.postMessage({ error: String(e?.stack ?? e), code: e?.code }),
    ),
  );
});
