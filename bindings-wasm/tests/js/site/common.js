// Shared by the test page, the JS suite, the dedicated worker and the service worker: options, the mock's
// controls, and the seeds' batch through the built package.
import { Client, SolveFailed } from 'captcha-dlq-web';

/** A client whose store is open (`ready()` rejects with what stopped it). */
export async function open(options) {
  const client = new Client(options);
  await client.ready();
  return client;
}

/** The API key of every test client; it must never show up in a record or an error message. */
export const KEY = 'test-key';

export const page = (n) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/page/${n}` });

/** Polling fast enough that the seeds' batch (24 polls in the seeds) takes well under a second. */
export function options(mock, dlq, extra = {}) {
  return {
    apiKey: KEY,
    provider: 'captchaai',
    baseUrl: mock,
    dlq,
    retry: { backoff: { kind: 'fixed', delayMs: 10 }, transientMinDelayMs: 10, requestTimeoutMs: 5000 },
    polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 3, coalesceMs: 5 },
    rate: { submitsPerSecond: 1000 },
    ...extra,
  };
}

/** Replaces the mock's script. */
export async function script(mock, body) {
  const r = await fetch(`${mock}/mock/script`, { method: 'POST', body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`the mock refused the script: ${await r.text()}`);
}

/** The mock's request counters (`requests`, `balance_checks`, `reports_good`, `reports_bad`…). */
export async function counters(mock) {
  return (await fetch(`${mock}/mock/counters`)).json();
}

/** A database name no earlier run used. */
export const freshDb = (tag) => `captcha-dlq-test-${tag}-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;

/**
 * The seeds' batch: pages 1..5, page 2 unsolvable, page 4 never ready → 3 solved, 2 dead-lettered with 4 attempts;
 * then the service recovers and `replay()` solves both. Returns a summary that must equal SEEDS_BATCH (expected.js).
 */
export async function seedsBatch(mock, dlq) {
  await script(mock, {
    rules: [
      { match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } },
      { match: { page_url_contains: '/page/4' }, behavior: { outcome: 'never_ready' } },
    ],
  });
  const events = [];
  const client = await open(options(mock, dlq, { onEvent: (e) => events.push(e.event) }));
  let progress = 0;
  const results = await client.solveMany([1, 2, 3, 4, 5].map(page), { concurrency: 5, onResult: () => (progress += 1) });
  const records = results.map((r) => (r.ok ? null : r.error.record));
  const summary = {
    ok: results.map((r) => r.ok),
    reasons: records.map((r) => r?.reason ?? null),
    attempts: records.map((r) => r?.attempts ?? null),
    states: records.map((r) => r?.state ?? null),
    subclass: results.every((r) => r.ok || (r.error instanceof SolveFailed && r.error.code === 'SOLVE_FAILED')),
    keyLeaked: [JSON.stringify(records), await client.dlq.exportText()].some((text) => text.includes(KEY)),
    tokens: results.filter((r) => r.ok).map((r) => r.solution.text.slice(0, 8)),
    progress,
    deadLetteredEvents: events.filter((name) => name === 'dead_lettered').length,
    count: await client.dlq.count(),
    // Every task ended, so nothing is left in the journal.
    inFlight: (await client.dlq.journal()).length,
  };
  await script(mock, {});
  const { report, solved } = await client.replay();
  summary.received = report.received;
  summary.recovered = report.recovered;
  summary.replayedTokens = solved.map((s) => s.solution.text.slice(0, 8));
  summary.countAfter = await client.dlq.count();
  await client.close();
  return summary;
}
