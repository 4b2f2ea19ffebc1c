// Shared by the test page and the test service worker: the seeds' batch through the built package.
import { Client, SolveFailed } from '/pkg/index.js';

export const page = (n) => ({ type: 'recaptcha_v2', sitekey: '6Le-SITEKEY', pageUrl: `https://example.com/page/${n}` });

export function options(mock, dlq, extra = {}) {
  return {
    apiKey: 'test-key',
    provider: 'captchaai',
    baseUrl: mock,
    dlq,
    retry: { backoff: { kind: 'fixed', delay_ms: 10 }, transientMinDelayMs: 10 },
    polling: { firstPollMs: { recaptchaV2: 20 }, intervalMs: 20, maxPolls: 3, coalesceMs: 5 },
    rate: { submitsPerSecond: 1000 },
    ...extra,
  };
}

export async function script(mock, body) {
  const r = await fetch(`${mock}/mock/script`, { method: 'POST', body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`the mock refused the script: ${await r.text()}`);
}

/** Runs the batch and the replay; returns a summary the test compares. */
export async function seedsBatch(mock, dlq) {
  await script(mock, {
    rules: [
      { match: { page_url_contains: '/page/2' }, behavior: { outcome: 'unsolvable' } },
      { match: { page_url_contains: '/page/4' }, behavior: { outcome: 'never_ready' } },
    ],
  });
  const events = [];
  const client = await Client.create(options(mock, dlq, { onEvent: (e) => events.push(e.name) }));
  let progress = 0;
  const results = await client.solveMany([1, 2, 3, 4, 5].map(page), { concurrency: 5, onProgress: (d) => (progress = d) });
  const summary = {
    statuses: results.map((r) => r.status),
    reasons: results.map((r) => (r.status === 'rejected' ? r.reason.record.reason : null)),
    attempts: results.map((r) => (r.status === 'rejected' ? r.reason.record.attempts : null)),
    subclass: results.every((r) => r.status === 'fulfilled' || (r.reason instanceof SolveFailed && r.reason.code === 'SOLVE_FAILED')),
    tokens: results.filter((r) => r.status === 'fulfilled').map((r) => r.value.text.slice(0, 8)),
    progress,
    count: await client.dlq.count(),
    sawEvents: events.includes('dead_lettered') || events.length > 0,
  };
  await script(mock, {});
  const report = await client.replay();
  summary.recovered = report.recovered;
  summary.countAfter = await client.count();
  await client.close();
  return summary;
}
