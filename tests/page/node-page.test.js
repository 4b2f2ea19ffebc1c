// `captcha-dlq/page` end to end in headless Chromium (the system's; nothing is downloaded): playwright-core and
// puppeteer-core drive the fixture site (tests/page/site, served by server.mjs), solveOnPage solves every widget
// through a real client against the mock solver, and the site's backend verifies what the page's callbacks and
// forms received against the mock's /siteverify. A token in the wrong frame or field, a callback not called, a
// task without the page's values fails there.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import http from 'node:http';
import { inspect } from 'node:util';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMock } from '../js/node/mock.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
/** The package's folder: an installed copy ($CAPTCHA_DLQ_PACKAGE_DIR, .ci/package-check.sh) or bindings-node. */
const PACKAGE = path.resolve(process.env.CAPTCHA_DLQ_PACKAGE_DIR ?? path.join(ROOT, 'bindings-node'));
const { Client } = await import(path.join(PACKAGE, 'index.js'));
const { solveOnPage, preparePage, findWidgets, solveWidget, injectAnswer, refreshAnswer, resolveExpired, keepFresh, DETECTOR_SOURCE } = await import(path.join(PACKAGE, 'lib/page.js'));
// The browser drivers are bindings-node's dev dependencies, never a user's: they come from the repository.
const requireDev = createRequire(path.join(ROOT, 'bindings-node', 'package.json'));
const { chromium } = requireDev('playwright-core');
const puppeteer = requireDev('puppeteer-core');

const MANIFEST = JSON.parse(readFileSync(path.join(HERE, 'site/fixtures.json'), 'utf8'));
const CHROMIUM = process.env.CHROMIUM ?? execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];

let mock;
let site;
let siteProcess;
let client;
/** A client of a provider that solves AWS WAF (the main one's does not). */
let twoCaptcha;
/** A client of a provider that solves Cloudflare's challenge. */
let capsolver;

/** Starts server.mjs for `mockUrl`; resolves with its URL. */
function startSite(mockUrl) {
  siteProcess = spawn(process.execPath, [path.join(HERE, 'server.mjs'), mockUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    siteProcess.on('exit', (code) => reject(new Error(`the fixture site exited (${code}): ${out}`)));
    siteProcess.stdout.setEncoding('utf8');
    siteProcess.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /^listening (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
      if (m) resolve(m[1]);
    });
  });
}

before(async () => {
  mock = await startMock();
  // The fixtures include hCaptcha, which the mock refuses by default.
  const r = await fetch(`${mock.url}/mock/script`, { method: 'POST', body: JSON.stringify({ hcaptcha_code: '' }) });
  assert.equal(r.status, 200, await r.text());
  site = await startSite(mock.url);
  client = new Client({
    apiKey: 'sk-page-test',
    baseUrl: mock.url,
    dlq: 'memory',
    polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 200, coalesceMs: 5 },
    rate: { submitsPerSecond: 1000 },
  });
  await client.ready();
  twoCaptcha = new Client({ provider: '2captcha', apiKey: 'sk-page-test', baseUrl: mock.url, dlq: 'memory', polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 200, coalesceMs: 5 } });
  await twoCaptcha.ready();
  capsolver = new Client({ provider: 'capsolver', apiKey: 'sk-page-test', baseUrl: mock.url, dlq: 'memory', polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 200, coalesceMs: 5 } });
  await capsolver.ready();
});

after(async () => {
  if (client) await client.close();
  if (twoCaptcha) await twoCaptcha.close();
  if (capsolver) await capsolver.close();
  if (siteProcess) siteProcess.kill();
  if (mock) mock.stop();
});

/** What the site's backend says about `page`'s widgets, after every frame posted its forms. */
async function siteReport(driverPage, page) {
  for (const frame of driverPage.frames()) await frame.evaluate(() => window.fixtureSubmit && window.fixtureSubmit());
  return fetch(`${site}/report?page=${page}`).then((r) => r.json());
}

/** Every widget of `page` verified by the site: callback and form, no stray answers; one result per widget. */
function assertSolved(page, report, results, { hooked }) {
  const expected = MANIFEST.widgets.filter((w) => w.page === page && (hooked || !w.hooked));
  for (const w of expected) {
    const verdict = report.widgets[w.name];
    if (w.callback && !hooked && w.unprepared_callback === false) {
      // Out of reach on a page that was not prepared: the site must not have seen it called either.
      assert.deepEqual({ widget: w.name, callback: verdict.callback }, { widget: w.name, callback: { ok: false, error: 'the callback was not called' } });
    } else if (w.callback) assert.deepEqual({ widget: w.name, ok: verdict.callback.ok, error: verdict.callback.error }, { widget: w.name, ok: true, error: undefined });
    if (w.form) assert.deepEqual({ widget: w.name, ok: verdict.form.ok, error: verdict.form.error }, { widget: w.name, ok: true, error: undefined });
  }
  assert.deepEqual(report.wrong, [], 'no answer lands where it does not belong');
  // No widget the page does not have (a kind detected where there is none fails its task's checks).
  assert.deepEqual(results.filter((r) => r.error && r.error.code !== 'NOT_SOLVABLE').map((r) => [r.kind, r.error.code, r.error.message]), []);
  const solvable = results.filter((r) => !r.error);
  assert.equal(solvable.length, expected.length, `one solved result per widget: ${JSON.stringify(results.map((r) => [r.kind, r.error && r.error.message]))}`);
  for (const r of solvable) {
    assert.equal(r.injected, true, `${r.kind} in ${r.frame} was injected`);
    assert.match(r.frame, /^http:\/\/(127\.0\.0\.1|localhost):\d+\//);
    assert.equal(typeof r.solution.text, 'string');
  }
}

// Pages whose widgets load late are solved with waitFor, in their own tests.
const PAGES = [...new Set(MANIFEST.widgets.filter((w) => !w.late).map((w) => w.page))];

// One browser per driver for the whole file; each test gets a fresh context (Playwright) or page (Puppeteer).
let playwrightBrowser;
let puppeteerBrowser;
before(async () => {
  playwrightBrowser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  puppeteerBrowser = await puppeteer.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
});
after(async () => {
  await playwrightBrowser?.close();
  await puppeteerBrowser?.close();
});

async function withPlaywright(run) {
  const context = await playwrightBrowser.newContext();
  try {
    return await run(await context.newPage());
  } finally {
    await context.close();
  }
}

async function withPuppeteer(run) {
  const context = await puppeteerBrowser.createBrowserContext();
  try {
    return await run(await context.newPage());
  } finally {
    await context.close();
  }
}

for (const [driver, withBrowser] of [['playwright-core', withPlaywright], ['puppeteer-core', withPuppeteer]]) {
  for (const page of PAGES) {
    test(`${driver}: every widget of ${page} solved, injected where it belongs and its callback called (prepared page)`, async () => {
      await fetch(`${site}/reset`, { method: 'POST' });
      await withBrowser(async (p) => {
        await preparePage(p);
        await p.goto(`${site}/${page}`, { waitUntil: 'load' });
        const results = await solveOnPage(client, p, { labels: { suite: 'page' }, includeScoreBased: true });
        const report = await siteReport(p, page);
        assertSolved(page, report, results, { hooked: true });
        for (const r of results.filter((x) => !x.error)) {
          const w = MANIFEST.widgets.find((x) => x.page === page && x.kind.replace(/^geetest$/, 'geetest_v3') === r.kind && r.callbackCalled === x.callback);
          assert.ok(w, `${r.kind}: the callback was called as the page expects (${r.callback})`);
        }
      });
    });
  }
}

test('puppeteer-core, page not prepared: reCAPTCHA v2 and Turnstile in the page and hCaptcha in a frame, from their markup', async () => {
  await fetch(`${site}/reset`, { method: 'POST' });
  await withPuppeteer(async (p) => {
    await p.goto(`${site}/multi.html`, { waitUntil: 'load' });
    const results = await solveOnPage(client, p);
    assert.deepEqual(results.map((r) => r.kind).sort(), ['hcaptcha', 'recaptcha_v2', 'turnstile']);
    assert.equal(results.find((r) => r.kind === 'hcaptcha').frame, `${site}/hcaptcha-frame.html`);
    assert.ok(results.every((r) => r.callbackCalled && r.callback === 'data-callback'));
    assertSolved('multi.html', await siteReport(p, 'multi.html'), results, { hooked: false });
  });
});

for (const [driver, withBrowser] of [['puppeteer-core', withPuppeteer], ['playwright-core', withPlaywright]]) {
  test(`${driver}, page not prepared, widgets rendered from code: reCAPTCHA's callback from its client state, hCaptcha's (in a frame of another origin) through its client, Turnstile's reported out of reach`, async () => {
    await fetch(`${site}/reset`, { method: 'POST' });
    await withBrowser(async (p) => {
      await p.goto(`${site}/coded.html`, { waitUntil: 'load' });
      // The framed widget renders after its own scripts load.
      await waitForFrameWidget(p, 'coded-frame.html');
      const results = await solveOnPage(client, p);
      const byKind = Object.fromEntries(results.map((r) => [r.kind, r]));
      assert.deepEqual(Object.keys(byKind).sort(), ['hcaptcha', 'recaptcha_v2', 'turnstile']);
      const port = new URL(site).port;
      assert.equal(byKind.hcaptcha.frame, `http://localhost:${port}/coded-frame.html`);
      assert.deepEqual([byKind.recaptcha_v2.callbackCalled, byKind.recaptcha_v2.callback], [true, 'client']);
      assert.deepEqual([byKind.hcaptcha.callbackCalled, byKind.hcaptcha.callback], [true, 'client-message']);
      assert.equal(byKind.turnstile.params.sitekey, '0x4AAAAAAACODED', 'the sitekey is read from the frame Turnstile loaded');
      assert.deepEqual([byKind.turnstile.injected, byKind.turnstile.callbackCalled, byKind.turnstile.callback], [true, false, null]);
      assert.match(byKind.turnstile.note, /Turnstile keeps render\(\) callbacks in its script: not called/);
      assertSolved('coded.html', await siteReport(p, 'coded.html'), results, { hooked: false });
    });
  });
}

test('a Turnstile widget rendered from code whose frame URL the page no longer lists: reported as not solvable, not dropped', async () => {
  await withPlaywright(async (p) => {
    await p.goto(`${site}/coded.html`, { waitUntil: 'load' });
    await p.evaluate(() => performance.clearResourceTimings());
    const results = await solveOnPage(client, p);
    const turnstile = results.find((r) => r.kind === 'turnstile');
    assert.deepEqual([turnstile.injected, turnstile.error.code], [false, 'NOT_SOLVABLE']);
    assert.match(turnstile.error.message, /Turnstile widget whose sitekey the page does not show/);
  });
});

/** Waits until `name`'s frame has rendered its widget (its scripts load after the page's load event). */
async function waitForFrameWidget(page, name) {
  for (let tries = 0; tries < 500; tries++) {
    const frame = page.frames().find((f) => f.url().endsWith(`/${name}`));
    if (frame && (await frame.evaluate(() => Boolean(document.querySelector('[data-hcaptcha-widget-id]'))))) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the widget of ${name} never rendered`);
}

test('two reCAPTCHA widgets: the render-parameter callback is found from the client state without hooks', async () => {
  await fetch(`${site}/reset`, { method: 'POST' });
  await withPlaywright(async (p) => {
    await p.goto(`${site}/recaptcha.html`, { waitUntil: 'load' });
    const results = await solveOnPage(client, p);
    const invisible = results.find((r) => r.params.sitekey === '6LfINVISIBLE-key');
    assert.equal(invisible.params.invisible, true);
    assert.equal(invisible.callback, 'client');
    assertSolved('recaptcha.html', await siteReport(p, 'recaptcha.html'), results, { hooked: false });
  });
});

for (const [driver, withBrowser] of [['playwright-core', withPlaywright], ['puppeteer-core', withPuppeteer]]) {
  test(`${driver}: a page behind AWS WAF: the amazon_waf task is solved, its aws-waf-token cookie set for the site and the page reloaded into it`, async () => {
    const gate = MANIFEST.gates['aws-gate.html'];
    await withBrowser(async (p) => {
      const first = await p.goto(`${site}/aws-gate.html`, { waitUntil: 'load' });
      assert.equal(first.status(), 405, 'the challenge page first');
      const results = await solveOnPage(twoCaptcha, p);
      assert.equal(results.length, 1, JSON.stringify(results));
      const [aws] = results;
      assert.equal(aws.kind, 'aws_waf');
      assert.equal(aws.error, undefined, aws.error && aws.error.message);
      assert.equal(aws.params.type, 'amazon_waf');
      for (const [k, v] of Object.entries(gate.fields)) assert.equal(aws.params[k], v, k);
      assert.deepEqual([aws.injected, aws.cookies, aws.reloaded, aws.callbackCalled], [true, ['aws-waf-token'], true, false]);
      // The site let the browser in with the cookie the service answered.
      assert.equal(await p.evaluate(() => document.getElementById('gate-passed')?.textContent ?? document.title), 'aws-gate.html: passed with aws-waf-token');
      const jar = driver === 'playwright-core' ? await p.context().cookies([site]) : await p.cookies(site);
      assert.equal(jar.find((c) => c.name === 'aws-waf-token').value, aws.solution.text);
    });
  });
}

test('a page closed before the answer comes: the answer is returned and dead-lettered as PageGone with why', async () => {
  await fetch(`${mock.url}/mock/script`, { method: 'POST', body: JSON.stringify({ hcaptcha_code: '', rules: [{ match: { site_key: '6LfCHECKBOX-key' }, behavior: { solve_after_ms: 1500 } }] }) });
  try {
    await withPuppeteer(async (p) => {
      await p.goto(`${site}/recaptcha.html`, { waitUntil: 'load' });
      const solving = solveOnPage(client, p, { labels: { run: 'gone' } });
      // The slower widget's answer arrives after the page is gone.
      setTimeout(() => p.close().catch(() => {}), 300);
      const results = await solving;
      const gone = results.find((r) => r.params.sitekey === '6LfCHECKBOX-key');
      assert.equal(gone.injected, false);
      assert.equal(gone.error.code, 'PAGE_GONE');
      assert.ok(gone.solution.text.startsWith('03AGdBq2'));
      const [record] = await client.dlq.peek({ ids: [gone.recorded.recorded] });
      assert.equal(record.reason, 'PageGone');
      assert.equal(record.class, 'application');
      assert.equal(record.labels.answer, gone.solution.text, 'the paid answer is kept');
      assert.equal(record.labels.run, 'gone');
      assert.equal(record.history[0].providerTaskId, gone.solution.providerTaskId);
      assert.match(record.description, /was gone before the recaptcha_v2 answer/);
    });
  } finally {
    await fetch(`${mock.url}/mock/script`, { method: 'POST', body: JSON.stringify({ hcaptcha_code: '' }) });
  }
});

test('acceptance: a navigation counts as accepted; no navigation is a rejection, reported and dead-lettered as RejectedBySite', async () => {
  const before = await fetch(`${mock.url}/mock/counters`).then((r) => r.json());
  await fetch(`${site}/reset`, { method: 'POST' });
  await withPlaywright(async (p) => {
    // The site's callback navigates on a good token: accepted.
    await p.goto(`${site}/multi.html`, { waitUntil: 'load' });
    // The site moves on once both of the page's widgets reported (the framed one is taken out, so no answer
    // arrives for a page already left).
    await p.evaluate(() => {
      document.getElementById('comments').remove();
      const done = new Set();
      const step = (name) => {
        done.add(name);
        if (done.size === 2) location.href = '/recaptcha.html';
      };
      window.onLogin = () => step('login');
      window.onNews = () => step('news');
    });
    const accepted = await solveOnPage(client, p, { check: { navigation: true, timeoutMs: 5000 } });
    assert.deepEqual(accepted.map((r) => [r.kind, r.injected, r.accepted]).sort(), [['recaptcha_v2', true, true], ['turnstile', true, true]]);
  });
  await withPlaywright(async (p) => {
    await p.goto(`${site}/recaptcha.html`, { waitUntil: 'load' });
    const rejected = await solveOnPage(client, p, { check: { predicate: async (page) => page.url().endsWith('/welcome'), timeoutMs: 2000 } });
    assert.ok(rejected.length > 0 && rejected.every((r) => r.accepted === false));
  });
  const metrics = await client.metrics();
  const verdicts = metrics.pageVerdicts;
  const host = new URL(site).host;
  const accepted = verdicts.filter((v) => v.verdict === 'accepted' && v.host === host).reduce((n, v) => n + v.count, 0);
  const rejected = verdicts.find((v) => v.verdict === 'rejected' && v.taskType === 'recaptcha_v2' && v.host === host);
  assert.equal(accepted, 2, JSON.stringify(verdicts));
  assert.equal(rejected.count, 2);
  const records = await client.dlq.peek({ reasons: ['RejectedBySite'] });
  assert.equal(records.length, 2);
  assert.match(records[0].description, /rejected the recaptcha_v2 answer from captchaai.*reported to captchaai as a bad answer/);
  const counters = await fetch(`${mock.url}/mock/counters`).then((r) => r.json());
  assert.equal(counters.reports_bad - before.reports_bad, 2, 'each rejected answer was reported to the provider');
  assert.match(await client.metricsText(), /captcha_dlq_page_verdicts_total\{provider="captchaai",task_type="recaptcha_v2",host="127\.0\.0\.1:\d+",verdict="rejected"\} 2/);
});

for (const provider of ['anti-captcha', 'capsolver']) {
  test(`a Turnstile page with only ${provider} configured: the browser's user agent, which its Turnstile form has no place for, is left out and the widget solved; a challenge page's (pagedata) is not`, async () => {
    // Their Turnstile forms take no user agent: a user's is refused (tests/vectors), the page's is only context for a
    // widget whose token siteverify checks without it (core/kinds/turnstile.toml `droppable`, decision 0077).
    const only = new Client({
      providers: [{ provider, apiKey: 'sk-page-only', baseUrl: mock.url }],
      dlq: 'memory',
      polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 200, coalesceMs: 5 },
    });
    await fetch(`${site}/reset`, { method: 'POST' });
    try {
      await withPuppeteer(async (p) => {
        const ua = `Mozilla/5.0 (X11; Linux x86_64) captcha-dlq-page-test/${provider}`;
        await p.setUserAgent(ua);
        await p.goto(`${site}/multi.html`, { waitUntil: 'load' });
        const results = await solveOnPage(only, p, { kinds: ['turnstile'] });
        assert.deepEqual(results.map((r) => [r.kind, r.error && r.error.message]), [['turnstile', undefined]], JSON.stringify(results.map((r) => r.params)));
        const [turnstile] = results;
        assert.deepEqual([turnstile.params.user_agent, turnstile.params.pagedata], [ua, undefined], 'a widget: the task made from the page carried the user agent');
        assert.deepEqual([turnstile.solution.provider, turnstile.solution.leftOut], [provider, ['userAgent']]);
        assert.equal(turnstile.injected, true);
        const report = await siteReport(p, 'multi.html');
        const widget = MANIFEST.widgets.find((w) => w.page === 'multi.html' && w.kind === 'turnstile');
        const verdict = report.widgets[widget.name];
        for (const check of ['callback', 'form']) {
          if (widget[check]) assert.deepEqual([check, verdict[check].ok, verdict[check].error], [check, true, undefined]);
        }

        // A challenge page's Turnstile (pagedata): its token is bound to the user agent, which is not left out, so
        // anti-captcha is refused naming it (CapSolver has no place for the challenge page's data at all).
        await p.goto(`${site}/explicit.html`, { waitUntil: 'load' });
        const [challenge, ...others] = await solveOnPage(only, p, { kinds: ['turnstile'] });
        assert.deepEqual(others, []);
        assert.equal(challenge.params.pagedata !== undefined, true, JSON.stringify(challenge.params));
        const refused = provider === 'anti-captcha' ? 'user_agent' : 'pagedata';
        assert.deepEqual([challenge.injected, challenge.error && challenge.error.code, challenge.error && challenge.error.field], [false, 'INVALID_TASK', refused]);
      });
      // The same field given by the user is refused too.
      await assert.rejects(
        only.solve({ type: 'turnstile', sitekey: '0x4AAAAAAA-k', pageUrl: `${site}/multi.html`, userAgent: 'Mine/1' }),
        (e) => e.code === 'INVALID_TASK' && e.field === 'user_agent',
      );
    } finally {
      await only.close();
    }
  });
}

test('routing "accepted": after sites refuse one provider\'s tokens, the next task goes to the other', async () => {
  const second = await startMock();
  const routed = new Client({
    providers: [
      { provider: '2captcha', name: 'cheap', apiKey: 'sk-page-a', baseUrl: mock.url, price: 0.001 },
      { provider: '2captcha', name: 'dear', apiKey: 'sk-page-b', baseUrl: second.url, price: 0.0015 },
    ],
    routing: 'accepted',
    dlq: 'memory',
    polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 200, coalesceMs: 5 },
  });
  try {
    const task = { type: 'recaptcha_v2', sitekey: '6LfROUTED-key', pageUrl: `${site}/recaptcha.html` };
    const first = await routed.solve(task);
    assert.equal(first.provider, 'cheap', 'without verdicts the cost decides');
    for (let i = 0; i < 6; i++) {
      await routed.dlq.recordPageOutcome({ verdict: 'rejected', task, solution: first, host: 'site.test' });
    }
    const next = await routed.solve(task);
    assert.equal(next.provider, 'dear', 'cheap costs more per accepted token now');
  } finally {
    await routed.close();
    second.stop();
  }
});

test('options are checked: unknown keys and bad values name the option', async () => {
  const fakePage = { frames: () => [], addInitScript: () => {} };
  await assert.rejects(solveOnPage(client, fakePage, { lables: {} }), /options\.lables: unknown option/);
  await assert.rejects(solveOnPage(client, fakePage, { check: { navigation: true, predicate: () => true } }), /exactly one of navigation, response, predicate/);
  await assert.rejects(solveOnPage(client, fakePage, { check: { navigation: true, timeout: 5 } }), /options\.check\.timeout: unknown option/);
  await assert.rejects(solveOnPage(client, {}, {}), /not a Playwright or Puppeteer page/);
  const outcome = { verdict: 'accepted', task: { type: 'turnstile', sitekey: '0x4AAAAAAA-k', pageUrl: 'https://a.example/' }, solution: { text: 't' }, host: 'a.example' };
  await assert.rejects(client.dlq.recordPageOutcome({ ...outcome, verdict: 'maybe' }), (e) => e.code === 'INVALID_CONFIG' && /verdict/.test(e.message) && /accepted, rejected, gone/.test(e.message));
  await assert.rejects(client.dlq.recordPageOutcome({ ...outcome, colour: 'red' }), (e) => e.code === 'INVALID_CONFIG' && /colour/.test(e.message));
  await assert.rejects(client.dlq.recordPageOutcome({ ...outcome, task: { type: 'turnstile' } }), (e) => /sitekey/.test(e.message));
  assert.match(DETECTOR_SOURCE, /__captchaDlqPage/);
});

// ---------------------------------------------------------------------------------------------- browser context

/**
 * A forward HTTP proxy on loopback (what `--proxy-server` points Chromium at): it relays each request and keeps
 * the URLs it relayed; with `auth`, it wants `Proxy-Authorization` for those credentials (407 otherwise).
 */
function startProxy(auth) {
  const relayed = [];
  const server = http.createServer((req, res) => {
    if (auth) {
      const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
      if (req.headers['proxy-authorization'] !== expected) {
        res.writeHead(407, { 'proxy-authenticate': 'Basic realm="page-test"' });
        return res.end();
      }
    }
    let target;
    try {
      target = new URL(req.url);
    } catch (_) {
      res.writeHead(400);
      return res.end('not a proxy request');
    }
    relayed.push(target.href);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: target.pathname + target.search, headers }, (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    });
    upstream.on('error', (e) => {
      res.writeHead(502);
      res.end(String(e.message));
    });
    req.pipe(upstream);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ address: `127.0.0.1:${server.address().port}`, relayed, stop: () => new Promise((r) => server.close(r)) }));
  });
}

/** The mock solves a task only if it carried every one of `needles` (the proxy, the user agent, a cookie). */
async function mockRequires(needles) {
  const script = { hcaptcha_code: '', default: { outcome: 'bad_parameters', code: 'ERROR_BAD_PARAMETERS' }, rules: [{ match: { all_contain: needles }, behavior: { outcome: 'solve' } }] };
  const r = await fetch(`${mock.url}/mock/script`, { method: 'POST', body: JSON.stringify(script) });
  assert.equal(r.status, 200, await r.text());
}

async function mockDefault() {
  await fetch(`${mock.url}/mock/script`, { method: 'POST', body: JSON.stringify({ hcaptcha_code: '' }) });
}

/** Both reCAPTCHA widgets of recaptcha.html solved and accepted by the site, every task shown without secrets. */
async function assertRecaptchaPageSolved(p, results, { proxyShown, secrets }) {
  assertSolved('recaptcha.html', await siteReport(p, 'recaptcha.html'), results, { hooked: false });
  for (const r of results) {
    assert.equal(r.params.proxy, proxyShown, 'the result shows the proxy without its credentials');
    assert.equal(r.params.cookies, '***');
  }
  for (const shown of [JSON.stringify(results), inspect(results, { depth: 8 })]) {
    for (const secret of secrets) assert.ok(!shown.includes(secret), `the results do not show ${secret}`);
  }
}

test("puppeteer-core launched with --proxy-server: every task carries the browser's proxy, user agent and the site's cookies", async () => {
  const proxy = await startProxy();
  const ua = 'Mozilla/5.0 (X11; Linux x86_64) captcha-dlq-page-test/puppeteer';
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, args: [...FLAGS, `--proxy-server=${proxy.address}`, '--proxy-bypass-list=<-loopback>'], headless: true });
  await fetch(`${site}/reset`, { method: 'POST' });
  try {
    const p = await browser.newPage();
    await p.setUserAgent(ua);
    await p.setCookie({ name: 'session', value: 'sess-puppeteer-7', url: site, httpOnly: true });
    await p.goto(`${site}/recaptcha.html`, { waitUntil: 'load' });
    assert.ok(proxy.relayed.includes(`${site}/recaptcha.html`), 'the page came through the proxy');
    await mockRequires([proxy.address, ua, 'sess-puppeteer-7']);
    const results = await solveOnPage(client, p);
    await mockDefault();
    assert.equal(results.length, 2);
    await assertRecaptchaPageSolved(p, results, { proxyShown: `http://${proxy.address}`, secrets: ['sess-puppeteer-7'] });
  } finally {
    await mockDefault();
    await browser.close();
    await proxy.stop();
  }
});

test("playwright-core launched behind a proxy that wants credentials: the tasks carry that proxy with them, the context's user agent and cookies; none is shown", async () => {
  const auth = { username: 'pageuser', password: 'pw-s3cret-41' };
  const proxy = await startProxy(auth);
  const ua = 'Mozilla/5.0 (X11; Linux x86_64) captcha-dlq-page-test/playwright';
  await fetch(`${site}/reset`, { method: 'POST' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true, proxy: { server: `http://${proxy.address}`, ...auth } });
  const context = await browser.newContext({ userAgent: ua });
  try {
    await context.addCookies([{ name: 'sid', value: 'sid-playwright-9', url: site }]);
    const p = await context.newPage();
    await p.goto(`${site}/recaptcha.html`, { waitUntil: 'load' });
    assert.ok(proxy.relayed.includes(`${site}/recaptcha.html`), 'the page came through the proxy');
    await mockRequires([`${auth.username}:${auth.password}@${proxy.address}`, ua, 'sid-playwright-9']);
    const results = await solveOnPage(client, p);
    await mockDefault();
    await assertRecaptchaPageSolved(p, results, { proxyShown: `http://${proxy.address}`, secrets: [auth.password, 'sid-playwright-9'] });
  } finally {
    await mockDefault();
    await browser.close();
    await proxy.stop();
  }
});

test("the proxy option: false sends none, a proxy given replaces the browser's (with its credentials); bad ones are errors that show no secret", async () => {
  const proxy = await startProxy();
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, args: [...FLAGS, `--proxy-server=${proxy.address}`, '--proxy-bypass-list=<-loopback>'], headless: true });
  try {
    const p = await browser.newPage();
    await p.goto(`${site}/recaptcha.html`, { waitUntil: 'load' });
    const none = await solveOnPage(client, p, { proxy: false });
    assert.ok(none.length === 2 && none.every((r) => !r.error && r.injected && r.params.proxy === undefined), JSON.stringify(none));
    await p.reload({ waitUntil: 'load' });
    await mockRequires(['svc:svc-pw-77@10.1.2.3:3128']);
    const replaced = await solveOnPage(client, p, { proxy: { server: 'http://10.1.2.3:3128', username: 'svc', password: 'svc-pw-77' } });
    await mockDefault();
    assert.ok(replaced.every((r) => !r.error && r.injected && r.params.proxy === 'http://10.1.2.3:3128'), JSON.stringify(replaced));
    assert.ok(!JSON.stringify(replaced).includes('svc-pw-77'));
    const bad = await solveOnPage(client, p, { proxy: 'ftp://u:hunter2@10.1.2.3:21' });
    assert.ok(bad.every((r) => r.error && r.error.code === 'INVALID_TASK' && /proxy/.test(r.error.field ?? r.error.message)), JSON.stringify(bad));
    assert.ok(!JSON.stringify(bad).includes('hunter2') && !bad.some((r) => String(r.error.message).includes('hunter2')));
    await assert.rejects(solveOnPage(client, p, { proxy: 3128 }), /options\.proxy: expected false, a proxy URL or a proxy object/);
  } finally {
    await mockDefault();
    await browser.close();
    await proxy.stop();
  }
});

for (const driver of ['puppeteer-core', 'playwright-core']) {
  test(`${driver} behind a proxy: Cloudflare's challenge page is solved through the browser's proxy and user agent, cf_clearance set and the page reloaded into the site`, async () => {
    const proxy = await startProxy();
    const ua = `Mozilla/5.0 (X11; Linux x86_64) captcha-dlq-page-test/cf-${driver}`;
    const gate = MANIFEST.gates['cf-gate.html'];
    const args = [...FLAGS, `--proxy-server=${proxy.address}`, '--proxy-bypass-list=<-loopback>'];
    const browser = driver === 'puppeteer-core'
      ? await puppeteer.launch({ executablePath: CHROMIUM, args, headless: true })
      : await chromium.launch({ executablePath: CHROMIUM, args, headless: true });
    try {
      let p;
      if (driver === 'puppeteer-core') {
        p = await browser.newPage();
        await p.setUserAgent(ua);
      } else {
        p = await (await browser.newContext({ userAgent: ua })).newPage();
      }
      const first = await p.goto(`${site}/cf-gate.html`, { waitUntil: 'load' });
      assert.equal(first.status(), 403, 'the challenge page first');
      // Without a proxy the kind cannot be solved (the cookie is bound to the IP): refused before anything is spent.
      const [refused] = await solveOnPage(capsolver, p, { proxy: false });
      assert.deepEqual([refused.kind, refused.error.code, refused.error.field], ['cloudflare_challenge', 'INVALID_TASK', 'proxy']);
      await mockRequires([ua, `${site}/cf-gate.html`]);
      const results = await solveOnPage(capsolver, p);
      await mockDefault();
      assert.equal(results.length, 1, JSON.stringify(results));
      const [cf] = results;
      assert.equal(cf.error, undefined, cf.error && cf.error.message);
      assert.deepEqual([cf.kind, cf.params.type, cf.params.sitekey, cf.params.proxy], ['cloudflare_challenge', 'cloudflare_challenge', gate.fields.sitekey, `http://${proxy.address}`]);
      assert.deepEqual([cf.injected, cf.cookies, cf.reloaded], [true, ['cf_clearance'], true]);
      assert.equal(await p.evaluate(() => document.getElementById('gate-passed')?.textContent ?? document.title), 'cf-gate.html: passed with cf_clearance');
    } finally {
      await mockDefault();
      await browser.close();
      await proxy.stop();
    }
  });
}

// ---------------------------------------------------------------------------------------------- separate steps

test('score-based widgets (reCAPTCHA v3) are found but not solved unless asked: nothing is sent to the solver', async () => {
  await withPlaywright(async (p) => {
    await preparePage(p);
    await p.goto(`${site}/v3.html`, { waitUntil: 'load' });
    const all = await findWidgets(p, { includeScoreBased: true });
    assert.ok(all.length >= 2 && all.every((w) => w.kind === 'recaptcha_v3' && w.scoreBased === true), JSON.stringify(all));
    const before = await fetch(`${mock.url}/mock/counters`).then((r) => r.json());
    assert.deepEqual(await findWidgets(p), []);
    assert.deepEqual(await solveOnPage(client, p), []);
    const after = await fetch(`${mock.url}/mock/counters`).then((r) => r.json());
    assert.equal(after.submits, before.submits, 'no task was sent for a widget the caller did not ask for');
  });
});

test('findWidgets filters by kind and visibility; solveWidget solves one without touching the page; injectAnswer writes it and calls its callback', async () => {
  await fetch(`${site}/reset`, { method: 'POST' });
  await withPuppeteer(async (p) => {
    await p.goto(`${site}/multi.html`, { waitUntil: 'load' });
    const all = await findWidgets(p);
    assert.deepEqual(all.map((w) => w.kind).sort(), ['hcaptcha', 'recaptcha_v2', 'turnstile']);
    assert.ok(all.every((w) => w.visible === true && w.scoreBased === false && w.supported === true));
    const [turnstile] = await findWidgets(p, { kinds: ['turnstile'] });
    assert.deepEqual([turnstile.kind, turnstile.params.sitekey], ['turnstile', '0x4AAAAAAAMULTI']);
    // A widget laid out hidden is left out with visibleOnly.
    await p.evaluate(() => { document.querySelector('.cf-turnstile').style.display = 'none'; });
    const shown = await findWidgets(p, { visibleOnly: true });
    assert.deepEqual(shown.map((w) => w.kind).sort(), ['hcaptcha', 'recaptcha_v2']);
    const [recaptcha] = await findWidgets(p, { kinds: ['recaptcha_v2'] });
    const solved = await solveWidget(client, recaptcha, { labels: { step: 'separate' } });
    assert.deepEqual([solved.kind, solved.injected, solved.error], ['recaptcha_v2', false, undefined]);
    assert.ok(solved.solution.text.startsWith('03AGdBq2'));
    let report = await fetch(`${site}/report?page=multi.html`).then((r) => r.json());
    assert.deepEqual(report.widgets['multi-recaptcha'].callback, { ok: false, error: 'the callback was not called' }, 'solveWidget writes nothing');
    const injected = await injectAnswer(client, solved);
    assert.equal(injected, solved);
    assert.deepEqual([solved.injected, solved.callbackCalled, solved.callback], [true, true, 'data-callback']);
    report = await siteReport(p, 'multi.html');
    assert.equal(report.widgets['multi-recaptcha'].callback.ok, true, JSON.stringify(report.widgets['multi-recaptcha']));
    assert.equal(report.widgets['multi-recaptcha'].form.ok, true);
    // The steps' options are checked like solveOnPage's.
    await assert.rejects(findWidgets(p, { kind: ['turnstile'] }), /options\.kind: unknown option/);
    await assert.rejects(findWidgets(p, { kinds: ['recaptcha'] }), /options\.kinds: "recaptcha" is not a widget kind/);
    await assert.rejects(solveWidget(client, { kind: 'turnstile', params: {} }), /widget: not a widget findWidgets returned/);
    await assert.rejects(solveWidget(client, recaptcha, { lables: {} }), /options\.lables: unknown option/);
    await assert.rejects(injectAnswer(client, { kind: 'turnstile' }), /result: not a result of solveWidget/);
    await assert.rejects(solveOnPage(client, p, { visibleonly: true }), /options\.visibleonly: unknown option/);
  });
});

// ---------------------------------------------------------------------------------------------- waiting

for (const [driver, withBrowser] of [['playwright-core', withPlaywright], ['puppeteer-core', withPuppeteer]]) {
  test(`${driver}: waitFor waits for a widget that appears after the page loaded, in a frame added later, and solves it`, async () => {
    await fetch(`${site}/reset`, { method: 'POST' });
    await withBrowser(async (p) => {
      await p.goto(`${site}/late.html`, { waitUntil: 'load' });
      const results = await solveOnPage(client, p, { waitFor: { timeoutMs: 20_000 } });
      assert.deepEqual(results.map((r) => [r.kind, r.frame, r.injected, r.error]), [['recaptcha_v2', `${site}/late-frame.html`, true, undefined]]);
      assertSolved('late.html', await siteReport(p, 'late.html'), results, { hooked: false });
      // A kind the page never shows: the wait ends with none, not an error.
      assert.deepEqual(await findWidgets(p, { kinds: ['hcaptcha'], waitFor: { timeoutMs: 300 } }), []);
      await assert.rejects(findWidgets(p, { waitFor: { timeout: 5 } }), /options\.waitFor\.timeout: unknown option \(known: timeoutMs\)/);
      await assert.rejects(solveOnPage(client, p, { waitFor: { timeoutMs: -1 } }), /options\.waitFor\.timeoutMs: expected a positive integer/);
    });
  });
}

// ---------------------------------------------------------------------------------------------- shadow roots

for (const [driver, withBrowser] of [['playwright-core', withPlaywright], ['puppeteer-core', withPuppeteer]]) {
  test(`${driver}: a widget in a web component's open shadow root is found and solved on a page that was not prepared; one in a closed root is reached on a prepared page, with a note`, async () => {
    await fetch(`${site}/reset`, { method: 'POST' });
    await withBrowser(async (p) => {
      await p.goto(`${site}/shadow.html`, { waitUntil: 'load' });
      const results = await solveOnPage(client, p);
      const [open, closed] = results;
      assert.deepEqual([results.length, open.kind, open.params.sitekey, open.injected, open.callbackCalled], [2, 'turnstile', '0x4AAAAAAASHADOW', true, true]);
      // The closed root is out of the page's reach: reported from the browser's DOM, with why, not missed.
      assert.deepEqual([closed.kind, closed.injected, closed.error.code], ['hcaptcha', false, 'NOT_SOLVABLE']);
      assert.match(closed.note, /in a closed shadow root of <comment-box>: out of a page script's reach; prepare the page/);
      assertSolved('shadow.html', await siteReport(p, 'shadow.html'), results, { hooked: false });
    });
    await fetch(`${site}/reset`, { method: 'POST' });
    await withBrowser(async (p) => {
      await preparePage(p);
      await p.goto(`${site}/shadow.html`, { waitUntil: 'load' });
      const results = await solveOnPage(client, p);
      const closed = results.find((r) => r.kind === 'hcaptcha');
      assert.equal(results.length, 2, 'the closed root\'s widget once, found by the hook');
      assert.equal(closed.params.sitekey, 'hc-closed-0000-key');
      assert.match(closed.note, /in a closed shadow root: reached because the page was prepared/);
      assert.equal(results.find((r) => r.kind === 'turnstile').note, undefined);
      assertSolved('shadow.html', await siteReport(p, 'shadow.html'), results, { hooked: true });
    });
  });
}

// ---------------------------------------------------------------------------------------------- expiry

for (const [driver, withBrowser] of [['playwright-core', withPlaywright], ['puppeteer-core', withPuppeteer]]) {
  test(`${driver}: a token whose life ends (the widget's expired-callback) is solved again and injected; refreshAnswer does it on demand; the result counts re-solves`, async () => {
    await fetch(`${site}/reset`, { method: 'POST' });
    await withBrowser(async (p) => {
      await p.goto(`${site}/expiry.html`, { waitUntil: 'load' });
      const results = await solveOnPage(client, p);
      const [r] = results;
      assert.deepEqual([results.length, r.kind, r.injected, r.resolves], [1, 'recaptcha_v2', true, 0]);
      const first = r.solution.text;
      const watch = keepFresh(client, results, { intervalMs: 100 });
      try {
        // The page's expired-callback fires once (its timer); the watcher renews the token then.
        for (let i = 0; i < 600 && r.resolves === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      } finally {
        await watch.stop();
      }
      assert.equal(r.resolves, 1, 'the expired token was solved again');
      assert.notEqual(r.solution.text, first);
      let report = await siteReport(p, 'expiry.html');
      assert.deepEqual(report.widgets['expiry-recaptcha'].callback, { ok: true, token: r.solution.text }, 'the site got the new token, and getResponse() answers it');
      assert.equal(report.widgets['expiry-recaptcha'].form.token, r.solution.text);
      await refreshAnswer(client, r);
      assert.equal(r.resolves, 2);
      report = await siteReport(p, 'expiry.html');
      assert.deepEqual(report.widgets['expiry-recaptcha'].callback, { ok: true, token: r.solution.text });
      await assert.rejects(refreshAnswer(client, { kind: 'recaptcha_v2' }), /result: not a result of solveWidget or solveOnPage/);
      assert.throws(() => keepFresh(client, results, { every: 5 }), /options\.every: unknown option \(known: intervalMs\)/);
    });
  });
}

/** Makes a solved result's token as old as if it had been solved `ms` ago (its solvedAt and expiresAt moved back). */
function agedBy(result, ms) {
  result.solution = { ...result.solution, solvedAt: result.solution.solvedAt - ms, expiresAt: result.solution.expiresAt - ms };
  return result;
}

for (const [driver, withBrowser] of [['playwright-core', withPlaywright], ['puppeteer-core', withPuppeteer]]) {
  test(`${driver}: a token whose life ends before the page used it is solved again with no expired-callback (the client's renewAt, from the kind's declared life); not once the page moved on`, async () => {
    await fetch(`${site}/reset`, { method: 'POST' });
    await withBrowser(async (p) => {
      await p.goto(`${site}/lifetime.html`, { waitUntil: 'load' });
      const [widget] = await findWidgets(p);
      const r = await solveWidget(client, widget);
      assert.equal(r.error, undefined, r.error && r.error.message);
      // A reCAPTCHA token lives two minutes (core/kinds): as if solved 110 s ago, its renewal is due now.
      agedBy(r, 110_000);
      await injectAnswer(client, r);
      assert.deepEqual([r.injected, r.callbackCalled, r.renewAt, r.resolves], [true, true, r.solution.expiresAt - 15_000, 0]);
      assert.ok(r.renewAt <= Date.now(), 'the client says to renew it now');
      const first = r.solution.text;
      const watch = keepFresh(client, [r], { intervalMs: 100 });
      try {
        for (let i = 0; i < 600 && r.resolves === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      } finally {
        await watch.stop();
      }
      assert.equal(r.resolves, 1, 'the token was solved again');
      assert.notEqual(r.solution.text, first);
      // The new token's renewal is its own: 15 s before its two minutes end.
      assert.equal(r.renewAt, r.solution.expiresAt - 15_000);
      assert.ok(r.renewAt > Date.now());
      const report = await siteReport(p, 'lifetime.html');
      assert.deepEqual(report.widgets['lifetime-recaptcha'].callback, { ok: true, token: r.solution.text }, 'the site got the new token');
      assert.equal(report.widgets['lifetime-recaptcha'].form.token, r.solution.text);

      // A page that moved on (here: loaded again) no longer waits for the token: it is not solved again.
      agedBy(r, 110_000);
      await injectAnswer(client, r);
      assert.ok(r.renewAt <= Date.now());
      await p.goto(`${site}/lifetime.html`, { waitUntil: 'load' });
      assert.equal(await resolveExpired(client, [r]), 0);
      assert.equal(r.resolves, 1);
    });
  });
}

test('taskDefaults: a proxy and a user agent on every task whose kind takes them; unknown keys refused', async () => {
  await mockRequires(['UA-defaults/node', 'u:pw-defaults@10.9.8.7:3128']);
  const c = new Client({ apiKey: 'sk-page-test', baseUrl: mock.url, dlq: 'memory', polling: { firstPollMs: 20, intervalMs: 20, maxPolls: 200, coalesceMs: 5 }, taskDefaults: { userAgent: 'UA-defaults/node', proxy: 'http://u:pw-defaults@10.9.8.7:3128' } });
  try {
    const solution = await c.solve({ type: 'recaptcha_v2', sitekey: 'k', pageUrl: 'https://a.example/' });
    assert.ok(solution.text);
    assert.ok(!inspect(c).includes('pw-defaults'));
  } finally {
    await mockDefault();
    await c.close();
  }
  const bad = new Client({ apiKey: 'sk-page-test', dlq: 'memory', taskDefaults: { colour: 1 } });
  await assert.rejects(bad.ready(), (e) => e.code === 'INVALID_CONFIG' && /taskDefaults\.colour/.test(e.message));
});
