// A typed example of `captcha-dlq/page` with Playwright, checked by `tsc --noEmit` (ci.sh) to keep page.d.ts honest.
import { Client } from 'captcha-dlq';
import { findWidgets, injectAnswer, keepFresh, preparePage, refreshAnswer, resolveExpired, solveOnPage, solveWidget, type Widget, type WidgetResult } from 'captcha-dlq/page';
import { chromium } from 'playwright-core';

export async function solveLogin(apiKey: string): Promise<WidgetResult[]> {
  const client = new Client({ apiKey, dlq: 'captcha-dlq.sqlite' });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
  const page = await browser.newPage();
  await preparePage(page);
  await page.goto('https://example.com/login');
  const results = await solveOnPage(client, page, {
    labels: { flow: 'login' },
    check: { response: (r) => (r.url().endsWith('/session') ? r.status() === 200 : undefined), timeoutMs: 15_000 },
  });
  for (const r of results) {
    if (r.error) console.log(r.kind, r.frame, r.error.message);
    else console.log(r.kind, r.injected, r.callbackCalled, r.callback, r.accepted);
  }
  // Separate steps: choose, solve, inject later (say, right before the form is sent).
  const chosen: Widget[] = await findWidgets(page, { kinds: ['turnstile', 'recaptcha_v2'], visibleOnly: true, waitFor: { timeoutMs: 10_000 } });
  for (const w of chosen) {
    const solved = await solveWidget(client, w, { proxy: { server: 'http://proxy.example:3128', username: 'u', password: 'p' } });
    if (solved.solution) console.log((await injectAnswer(client, solved)).injected, solved.cookies, solved.reloaded);
  }
  const fresh = keepFresh(client, results, { intervalMs: 1000 });
  await fresh.stop();
  console.log(await resolveExpired(client, results), (await refreshAnswer(client, results[0]!)).resolves);
  const outcome = await client.dlq.recordPageOutcome({ verdict: 'accepted', task: { type: 'turnstile', sitekey: 'k', pageUrl: 'https://example.com' }, solution: results[0]!.solution!, host: 'example.com' });
  console.log(outcome.recorded, outcome.reported);
  await browser.close();
  await client.close();
  return results;
}
