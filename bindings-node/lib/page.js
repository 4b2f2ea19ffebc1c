// `captcha-dlq/page`: solve the CAPTCHAs of a Playwright or Puppeteer page through a captcha-dlq client.
//
// The page side is lib/page-detector.js (the one detector and injector, shared with the Python and browser
// packages); the solving is the client's (`client.solve`: journal, retries, failover, DLQ). What lives here is the
// driver glue: run the detector in every frame, hand each widget's task to the client, inject the answer into the
// frame it came from, watch the optional acceptance check, and tell the client how it went
// (`dlq.recordPageOutcome`: acceptance metrics, `RejectedBySite` and `PageGone` records, reports to the provider),
// where the rules live in Rust.
import { readFileSync } from 'node:fs';
import { invalidArgument } from './errors.js';

/** The detector's source, evaluated as a string in each frame (the same text the other packages ship). */
export const DETECTOR_SOURCE = readFileSync(new URL('./page-detector.js', import.meta.url), 'utf8');
const HOOKED_SOURCE = `${DETECTOR_SOURCE}\n;globalThis.__captchaDlqPage.hook();`;

const OPTIONS = ['labels', 'signal', 'check', 'proxy'];
const CHECK_OPTIONS = ['navigation', 'response', 'predicate', 'timeoutMs'];
const DEFAULT_CHECK_TIMEOUT_MS = 10_000;

function driverOf(page) {
  if (page && typeof page.addInitScript === 'function' && typeof page.frames === 'function') return 'playwright';
  if (page && typeof page.evaluateOnNewDocument === 'function' && typeof page.frames === 'function') return 'puppeteer';
  throw invalidArgument('page', 'not a Playwright or Puppeteer page (it has neither addInitScript nor evaluateOnNewDocument)');
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function readOptions(options) {
  if (options === undefined || options === null) return { labels: {}, check: null, proxy: undefined };
  if (!isObject(options)) throw invalidArgument('options', `expected an object, got ${typeof options}`);
  for (const key of Object.keys(options)) {
    if (!OPTIONS.includes(key)) throw invalidArgument(`options.${key}`, `unknown option (known: ${OPTIONS.join(', ')})`);
  }
  const { labels = {}, signal, check, proxy } = options;
  if (!isObject(labels)) throw invalidArgument('options.labels', 'expected an object of strings');
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalidArgument('options.signal', 'expected an AbortSignal');
  // The proxy itself (URL, `{ server, username, password }`, the task's form) is read by the client (`page_task`).
  if (proxy !== undefined && proxy !== false && typeof proxy !== 'string' && !isObject(proxy)) {
    throw invalidArgument('options.proxy', 'expected false, a proxy URL or a proxy object');
  }
  return { labels, signal, check: check === undefined ? null : readCheck(check), proxy };
}

function readCheck(check) {
  if (!isObject(check)) throw invalidArgument('options.check', 'expected an object');
  for (const key of Object.keys(check)) {
    if (!CHECK_OPTIONS.includes(key)) throw invalidArgument(`options.check.${key}`, `unknown option (known: ${CHECK_OPTIONS.join(', ')})`);
  }
  const given = ['navigation', 'response', 'predicate'].filter((k) => check[k] !== undefined);
  if (given.length !== 1) throw invalidArgument('options.check', `give exactly one of navigation, response, predicate (got ${given.join(', ') || 'none'})`);
  if (check.navigation !== undefined && check.navigation !== true) throw invalidArgument('options.check.navigation', 'expected true');
  for (const k of ['response', 'predicate']) {
    if (check[k] !== undefined && typeof check[k] !== 'function') throw invalidArgument(`options.check.${k}`, 'expected a function');
  }
  const timeoutMs = check.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw invalidArgument('options.check.timeoutMs', 'expected a positive integer');
  return { ...check, timeoutMs };
}

/**
 * Makes the page's future documents hookable: the detector runs in every frame before the page's scripts, so it
 * sees render parameters, reCAPTCHA v3 `execute` actions (those calls then wait for `solveOnPage`'s answer, at most 2 minutes),
 * hCaptcha's `setData`, GeeTest's and Arkose's configurations. Call it before `page.goto`.
 */
export async function preparePage(page) {
  const driver = driverOf(page);
  if (driver === 'playwright') await page.addInitScript({ content: HOOKED_SOURCE });
  else await page.evaluateOnNewDocument(HOOKED_SOURCE);
}

const isDetached = (frame) =>
  typeof frame.isDetached === 'function' ? frame.isDetached() : Boolean(frame.detached);

/** `--proxy-server=…` of a browser's command line, or null. */
function proxyArg(args) {
  if (!Array.isArray(args)) return null;
  for (const arg of args) {
    const m = /^--proxy-server=(.+)$/.exec(String(arg));
    if (m) return m[1].replace(/^"|"$/g, '');
  }
  return null;
}

/**
 * The proxy the page's browser goes through, as the driver shows it: Playwright's context or launch `proxy`
 * option (with its credentials), else `--proxy-server` among the launch arguments, else on the browser's own
 * command line (a browser Puppeteer or Playwright connected to). The client reads whichever form it is.
 */
async function browserProxyOf(page, driver) {
  let args = null;
  if (driver === 'playwright') {
    const context = page.context();
    const browser = context.browser();
    // The options the context and the browser were made with (Playwright keeps them on its client objects).
    const given = context._options?.proxy ?? browser?._options?.proxy;
    if (given && given.server) return given;
    args = browser?._options?.args;
  } else {
    args = page.browser().process?.()?.spawnargs;
  }
  const fromArgs = proxyArg(args);
  if (fromArgs) return fromArgs;
  try {
    const session = driver === 'playwright' ? await page.context().newCDPSession(page) : await page.createCDPSession();
    try {
      const { arguments: line } = await session.send('Browser.getBrowserCommandLine');
      return proxyArg(line);
    } finally {
      await session.detach().catch(() => {});
    }
  } catch (_) {
    return null; // no CDP (another browser) or no command line to read (not launched with --enable-automation)
  }
}

/** The cookies the browser holds for `url` (HttpOnly ones included): `[{ name, value }]`. */
async function cookiesFor(page, driver, url) {
  if (!/^https?:/.test(url)) return [];
  const list = driver === 'playwright' ? await page.context().cookies([url]) : await page.cookies(url);
  return list.map(({ name, value }) => ({ name, value }));
}

/** Writes cookie answers (`[{ name, value, url }]`, from the client's `page_answer`) into the browser. */
async function setCookies(page, driver, cookies) {
  if (driver === 'playwright') await page.context().addCookies(cookies);
  else await page.setCookie(...cookies);
}

/** The widgets of one frame, as the detector reports them. */
async function detectIn(frame) {
  await frame.evaluate(DETECTOR_SOURCE);
  return frame.evaluate(() => globalThis.__captchaDlqPage.detect());
}

function hostOf(url) {
  try {
    return new URL(url).host;
  } catch (_) {
    return '';
  }
}

/** Starts the acceptance check before anything is injected (the callback may navigate at once). */
function startCheck(page, check) {
  if (!check) return null;
  let timer;
  let stop = () => {};
  const verdict = new Promise((resolve) => {
    timer = setTimeout(() => resolve(check.navigation ? { accepted: false, detail: `no navigation within ${check.timeoutMs} ms` } : { accepted: null, detail: `no verdict within ${check.timeoutMs} ms` }), check.timeoutMs);
    if (check.navigation) {
      const main = page.mainFrame();
      const onNavigated = (frame) => {
        if (frame === main) resolve({ accepted: true, detail: `navigated to ${frame.url()}` });
      };
      page.on('framenavigated', onNavigated);
      stop = () => page.off('framenavigated', onNavigated);
    } else if (check.response) {
      const onResponse = async (response) => {
        try {
          const said = await check.response(response);
          if (said === true || said === false) resolve({ accepted: said, detail: `${response.status()} ${response.url()}` });
        } catch (e) {
          resolve({ accepted: null, detail: `the response check threw: ${e.message}` });
        }
      };
      page.on('response', onResponse);
      stop = () => page.off('response', onResponse);
    }
  });
  return {
    async verdict() {
      if (check.predicate) {
        clearTimeout(timer);
        const deadline = new Promise((resolve) => {
          timer = setTimeout(() => resolve({ accepted: null, detail: `the predicate did not answer within ${check.timeoutMs} ms` }), check.timeoutMs);
        });
        const asked = Promise.resolve()
          .then(() => check.predicate(page))
          .then((said) => ({ accepted: Boolean(said), detail: `the predicate said ${Boolean(said)}` }), (e) => ({ accepted: null, detail: `the predicate threw: ${e.message}` }));
        return Promise.race([asked, deadline]);
      }
      return verdict;
    },
    stop() {
      clearTimeout(timer);
      stop();
    },
  };
}

/**
 * Finds the CAPTCHA widgets of `page` and all its frames, solves each through `client` and injects the answer where
 * the widget expects it, calling the page's callback. One result per widget, in frame order.
 */
export async function solveOnPage(client, page, options) {
  const { labels, signal, check, proxy } = readOptions(options);
  const driver = driverOf(page);
  if (!client || typeof client.solve !== 'function' || !client.dlq) throw invalidArgument('client', 'not a captcha-dlq Client');
  // What the tasks take from the browser (the client decides which kinds take what: `page_task`).
  const browser = { driver, page, proxy, browserProxy: proxy === undefined ? await browserProxyOf(page, driver) : null, cookies: new Map() };

  const found = [];
  for (const frame of page.frames()) {
    if (isDetached(frame)) continue;
    let widgets;
    try {
      widgets = await detectIn(frame);
    } catch (e) {
      // A frame that navigated or closed while we looked has no widgets to solve now.
      if (frame === page.mainFrame()) throw e;
      continue;
    }
    for (const widget of widgets) found.push({ frame, url: frame.url(), widget });
  }

  const checking = startCheck(page, check);
  try {
    const results = await Promise.all(found.map((item) => solveOne(client, item, labels, signal, browser)));
    await reloadFrames(page, results);
    if (checking && results.some((r) => r.injected)) {
      const { accepted, detail } = await checking.verdict();
      for (const r of results) {
        if (!r.injected) continue;
        r.accepted = accepted;
        if (accepted !== null) {
          await client.dlq.recordPageOutcome({ verdict: accepted ? 'accepted' : 'rejected', task: r.task, solution: r.solution, host: hostOf(r.frame), detail, labels: r.labels });
        }
      }
    }
    // The task as sent holds the proxy's credentials and the cookies: results show `params` (without them).
    return results.map(({ labels: _labels, task: _task, reload: _reload, ...r }) => r);
  } finally {
    if (checking) checking.stop();
  }
}

/** The frame's cookies, read once per origin. */
function frameCookies(browser, url) {
  let origin;
  try {
    origin = new URL(url).origin;
  } catch (_) {
    return Promise.resolve([]);
  }
  if (!browser.cookies.has(origin)) browser.cookies.set(origin, cookiesFor(browser.page, browser.driver, url).catch(() => []));
  return browser.cookies.get(origin);
}

async function solveOne(client, { frame, url, widget }, labels, signal, browser) {
  const result = { kind: widget.kind, frame: url, params: widget.task, injected: false, callbackCalled: false, callback: widget.callback ?? null };
  if (widget.note) result.note = widget.note;
  if (!widget.supported || !widget.task) {
    result.error = { code: 'NOT_SOLVABLE', message: widget.error ?? `the ${widget.kind} widget gave no task` };
    return result;
  }
  const taskLabels = { ...labels, page_host: hostOf(url), widget: widget.kind };
  result.labels = taskLabels;
  let task;
  try {
    // The task the widget becomes, with the browser's proxy, cookies and user agent where its kind takes them.
    const made = await client.dlq.pageTask({
      task: widget.task,
      ...(browser.proxy === undefined ? { browserProxy: browser.browserProxy } : { proxy: browser.proxy }),
      cookies: await frameCookies(browser, url),
    });
    task = made.task;
    result.params = made.shown;
    result.task = task;
  } catch (e) {
    result.error = e;
    return result;
  }
  let solution;
  try {
    solution = await client.solve(task, { labels: taskLabels, signal });
  } catch (e) {
    // The dead-letter record keeps the task as sent (for replay); the error the caller is shown does not.
    if (e && e.record && e.record.task) e.record.task = result.params;
    result.error = e;
    if (e && e.code === 'INVALID_TASK' && e.field === 'type') {
      result.error = { code: 'NOT_SOLVABLE', message: `${widget.kind} is not solvable yet: this build has no ${widget.kind} task kind (${e.message})`, cause: e };
    }
    return result;
  }
  result.solution = solution;
  let applied;
  try {
    // Answers that are cookies (AWS WAF, DataDome, cf_clearance) go into the browser, not into a widget.
    applied = await client.dlq.pageAnswer({ task, solution, url });
  } catch (e) {
    result.error = e;
    return result;
  }
  if (applied.cookies.length) return applyCookies(client, browser, frame, result, applied, taskLabels);
  let injected;
  try {
    if (isDetached(frame)) throw new Error('the frame was detached');
    injected = await frame.evaluate(([id, answer]) => globalThis.__captchaDlqPage.inject(id, answer), [widget.id, { text: solution.text, fields: solution.fields }]);
  } catch (e) {
    injected = { injected: false, error: `the page or frame was gone: ${e.message.split('\n')[0]}` };
  }
  result.injected = Boolean(injected.injected);
  result.callbackCalled = Boolean(injected.callbackCalled);
  result.callback = injected.callback ?? result.callback;
  result.fields = injected.fields ?? [];
  // Why no callback was called (none in reach, the widget's client did not take the answer): never a silent success.
  if (injected.note) result.note = injected.note;
  if (injected.error) {
    // The answer is paid for and could not be used: the DLQ keeps why, with the provider's task id.
    result.error = { code: 'PAGE_GONE', message: injected.error };
    result.recorded = await client.dlq.recordPageOutcome({ verdict: 'gone', task, solution, host: hostOf(url), detail: injected.error, labels: taskLabels });
  }
  return result;
}

/**
 * Writes a cookie answer into the browser for the frame's site. The reload the kind may need is done once every
 * widget's answer is in (`reloadFrames`), so that it does not race the other widgets' injections.
 */
async function applyCookies(client, browser, frame, result, applied, taskLabels) {
  result.callback = null;
  result.cookies = applied.cookies.map((c) => c.name);
  result.reloaded = false;
  try {
    await setCookies(browser.page, browser.driver, applied.cookies);
    result.injected = true;
    if (applied.reload) result.reload = frame;
  } catch (e) {
    const why = `the page or frame was gone: ${String(e.message).split('\n')[0]}`;
    result.error = { code: 'PAGE_GONE', message: why };
    result.recorded = await client.dlq.recordPageOutcome({ verdict: 'gone', task: result.task, solution: result.solution, host: hostOf(result.frame), detail: why, labels: taskLabels });
  }
  return result;
}

/** Loads again, once each, the frames whose cookie answers need it (the main frame: the page). */
async function reloadFrames(page, results) {
  const frames = [...new Set(results.map((r) => r.reload).filter(Boolean))];
  for (const frame of frames) {
    const mine = results.filter((r) => r.reload === frame);
    try {
      if (isDetached(frame)) throw new Error('the frame was detached');
      if (frame === page.mainFrame()) await page.reload({ waitUntil: 'load' });
      else await frame.evaluate(() => location.reload());
      for (const r of mine) r.reloaded = true;
    } catch (e) {
      // The cookie is set; the page was not loaded again with it: said, not hidden.
      for (const r of mine) r.note = `the cookie is set but the frame could not be reloaded: ${String(e.message).split('\n')[0]}`;
    }
  }
}
