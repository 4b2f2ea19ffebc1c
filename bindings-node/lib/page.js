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

const OPTIONS = ['labels', 'signal', 'check', 'proxy', 'kinds', 'visibleOnly', 'includeScoreBased', 'waitFor'];
const CHECK_OPTIONS = ['navigation', 'response', 'predicate', 'timeoutMs'];
const DEFAULT_CHECK_TIMEOUT_MS = 10_000;

function driverOf(page) {
  if (page && typeof page.addInitScript === 'function' && typeof page.frames === 'function') return 'playwright';
  if (page && typeof page.evaluateOnNewDocument === 'function' && typeof page.frames === 'function') return 'puppeteer';
  throw invalidArgument('page', 'not a Playwright or Puppeteer page (it has neither addInitScript nor evaluateOnNewDocument)');
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function readOptions(options) {
  if (options === undefined || options === null) return { labels: {}, check: null };
  if (!isObject(options)) throw invalidArgument('options', `expected an object, got ${typeof options}`);
  for (const key of Object.keys(options)) {
    if (!OPTIONS.includes(key)) throw invalidArgument(`options.${key}`, `unknown option (known: ${OPTIONS.join(', ')})`);
  }
  const { check, kinds, visibleOnly, includeScoreBased, waitFor } = options;
  const solving = readSolveOptions({ labels: options.labels, signal: options.signal, proxy: options.proxy }, 'options', SOLVE_OPTIONS);
  const finding = readFindOptions({ kinds, visibleOnly, includeScoreBased, waitFor }, 'options');
  return { ...solving, ...finding, check: check === undefined ? null : readCheck(check) };
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

/** What `findWidgets`, `solveWidget` and `injectAnswer` keep about a widget or a result, out of sight (secrets). */
const INTERNAL = new WeakMap();
/** A page's browser proxy, read once per page. */
const PROXIES = new WeakMap();

function browserProxyCached(page, driver) {
  if (!PROXIES.has(page)) PROXIES.set(page, browserProxyOf(page, driver));
  return PROXIES.get(page);
}

/**
 * The CAPTCHA widgets of `page` and all its frames, as the detector reports them: `{ id, kind, frame, params,
 * supported, visible, scoreBased, callback, note?, error? }`. `kinds` keeps those kinds; `visibleOnly` drops
 * widgets laid out hidden; score-based ones (v3, invisible Enterprise without a visible trigger) only with
 * `includeScoreBased`.
 */
export async function findWidgets(page, options) {
  const driver = driverOf(page);
  const { kinds, visibleOnly, includeScoreBased, waitFor } = readFindOptions(options, 'options');
  // `waitFor`: widgets (of the kinds asked) that are still loading, in any frame, until they appear or time is up.
  const deadline = waitFor ? Date.now() + waitFor.timeoutMs : 0;
  for (;;) {
    const found = await findOnce(page, driver, { kinds, visibleOnly, includeScoreBased });
    if (found.length || Date.now() >= deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}

const WAIT_POLL_MS = 100;

/** Widget containers by class, as seen in a closed shadow root through the DevTools protocol. */
const CLOSED_KINDS = [['g-recaptcha', 'recaptcha_v2'], ['h-captcha', 'hcaptcha'], ['cf-turnstile', 'turnstile']];

/**
 * Widgets in closed shadow roots, which no page script reaches: read from the DevTools protocol's DOM (which
 * pierces them) to be reported, with a note, rather than missed. `[{ kind, sitekey, host, frame }]`.
 */
function closedRootWidgets(root) {
  const out = [];
  const walk = (node, host, url) => {
    if (host && node.attributes) {
      const attrs = {};
      for (let i = 0; i + 1 < node.attributes.length; i += 2) attrs[node.attributes[i]] = node.attributes[i + 1];
      const classes = String(attrs.class || '').split(/\s+/);
      const hit = CLOSED_KINDS.find(([c]) => classes.includes(c));
      if (hit) out.push({ kind: hit[1], sitekey: attrs['data-sitekey'] || null, host, frame: url });
    }
    for (const r of node.shadowRoots || []) walk(r, r.shadowRootType === 'closed' ? node.localName : host, url);
    if (node.contentDocument) walk(node.contentDocument, null, node.contentDocument.documentURL || url);
    for (const c of node.children || []) walk(c, host, url);
  };
  walk(root, null, root.documentURL || '');
  return out;
}

async function closedRootsOf(page, driver) {
  try {
    const session = driver === 'playwright' ? await page.context().newCDPSession(page) : await page.createCDPSession();
    try {
      const { root } = await session.send('DOM.getDocument', { depth: -1, pierce: true });
      return closedRootWidgets(root);
    } finally {
      await session.detach().catch(() => {});
    }
  } catch (_) {
    return []; // no DevTools protocol (another browser): closed roots stay unseen
  }
}

const CLOSED_NOTE = (host) =>
  `in a closed shadow root of <${host}>: out of a page script's reach; prepare the page (preparePage) before it loads to reach it`;

async function findOnce(page, driver, { kinds, visibleOnly, includeScoreBased }) {
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
    for (const w of widgets) {
      if (kinds && !kinds.includes(w.kind)) continue;
      if (visibleOnly && w.visible === false) continue;
      if (w.scoreBased && !includeScoreBased) continue;
      const widget = { id: w.id, kind: w.kind, frame: frame.url(), params: w.task, supported: Boolean(w.supported && w.task), visible: w.visible, scoreBased: w.scoreBased, callback: w.callback ?? null };
      if (w.note) widget.note = w.note;
      if (w.error) widget.error = w.error;
      INTERNAL.set(widget, { page, driver, frame });
      found.push(widget);
    }
  }
  // Widgets in closed shadow roots the detector could not reach (a page not prepared): reported, not missed.
  for (const c of await closedRootsOf(page, driver)) {
    if (kinds && !kinds.includes(c.kind)) continue;
    if (found.some((w) => w.kind === c.kind && w.params && w.params.sitekey === c.sitekey)) continue;
    const note = CLOSED_NOTE(c.host);
    const widget = { id: null, kind: c.kind, frame: c.frame, params: null, supported: false, visible: null, scoreBased: false, callback: null, note, error: note };
    INTERNAL.set(widget, { page, driver, frame: null });
    found.push(widget);
  }
  return found;
}

const FIND_OPTIONS = ['kinds', 'visibleOnly', 'includeScoreBased', 'waitFor'];
const KINDS = ['recaptcha_v2', 'recaptcha_v3', 'hcaptcha', 'turnstile', 'funcaptcha', 'geetest_v3', 'geetest_v4', 'aws_waf', 'cloudflare_challenge', 'image'];

function readFindOptions(options, name, known = FIND_OPTIONS) {
  if (options === undefined || options === null) return {};
  if (!isObject(options)) throw invalidArgument(name, `expected an object, got ${typeof options}`);
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw invalidArgument(`${name}.${key}`, `unknown option (known: ${known.join(', ')})`);
  }
  const { kinds, visibleOnly = false, includeScoreBased = false, waitFor } = options;
  if (kinds !== undefined) {
    if (!Array.isArray(kinds)) throw invalidArgument(`${name}.kinds`, 'expected an array of widget kinds');
    for (const k of kinds) if (!KINDS.includes(k)) throw invalidArgument(`${name}.kinds`, `${JSON.stringify(k)} is not a widget kind (known: ${KINDS.join(', ')})`);
  }
  for (const [k, v] of [['visibleOnly', visibleOnly], ['includeScoreBased', includeScoreBased]]) {
    if (typeof v !== 'boolean') throw invalidArgument(`${name}.${k}`, 'expected true or false');
  }
  return { kinds, visibleOnly, includeScoreBased, waitFor: waitFor === undefined ? undefined : readWaitFor(waitFor, `${name}.waitFor`) };
}

function readWaitFor(waitFor, name) {
  if (!isObject(waitFor)) throw invalidArgument(name, 'expected { timeoutMs }');
  for (const key of Object.keys(waitFor)) {
    if (key !== 'timeoutMs') throw invalidArgument(`${name}.${key}`, 'unknown option (known: timeoutMs)');
  }
  if (!Number.isInteger(waitFor.timeoutMs) || waitFor.timeoutMs <= 0) throw invalidArgument(`${name}.timeoutMs`, 'expected a positive integer');
  return { timeoutMs: waitFor.timeoutMs };
}

const SOLVE_OPTIONS = ['labels', 'signal', 'proxy'];

/**
 * Solves one widget `findWidgets` returned through `client`: the task it becomes carries the browser's proxy
 * (or `proxy`), the frame's cookies and the user agent where its kind takes them. Nothing is written into the
 * page (`injectAnswer` does). A result as `solveOnPage`'s, `injected: false`.
 */
export async function solveWidget(client, widget, options) {
  checkClient(client);
  const inner = INTERNAL.get(widget);
  if (!inner || !('params' in widget)) throw invalidArgument('widget', 'not a widget findWidgets returned');
  const { labels = {}, signal, proxy } = readSolveOptions(options, 'options', SOLVE_OPTIONS);
  const result = { kind: widget.kind, frame: widget.frame, params: widget.params, injected: false, callbackCalled: false, callback: widget.callback, resolves: 0 };
  if (widget.note) result.note = widget.note;
  if (!widget.supported) {
    result.error = { code: 'NOT_SOLVABLE', message: widget.error ?? `the ${widget.kind} widget gave no task` };
    return result;
  }
  const taskLabels = { ...labels, page_host: hostOf(widget.frame), widget: widget.kind };
  const state = { ...inner, widget, labels: taskLabels, task: null };
  INTERNAL.set(result, state);
  try {
    // The task the widget becomes, with the browser's proxy, cookies and user agent where its kind takes them.
    const made = await client.dlq.pageTask({
      task: widget.params,
      ...(proxy === undefined ? { browserProxy: await browserProxyCached(inner.page, inner.driver) } : { proxy }),
      cookies: await (inner.cookies ? inner.cookies(widget.frame) : cookiesFor(inner.page, inner.driver, widget.frame).catch(() => [])),
    });
    state.task = made.task;
    result.params = made.shown;
  } catch (e) {
    result.error = e;
    return result;
  }
  try {
    result.solution = await client.solve(state.task, { labels: taskLabels, signal });
  } catch (e) {
    // The dead-letter record keeps the task as sent (for replay); the error the caller is shown does not.
    if (e && e.record && e.record.task) e.record.task = result.params;
    result.error = e;
    if (e && e.code === 'INVALID_TASK' && e.field === 'type') {
      result.error = { code: 'NOT_SOLVABLE', message: `${widget.kind} is not solvable yet: this build has no ${widget.kind} task kind (${e.message})`, cause: e };
    }
  }
  return result;
}

/**
 * Writes the answer of a `solveWidget` result into the page: into the widget (its fields, its callback), or, for
 * answers that are cookies (AWS WAF, `cf_clearance`), into the browser for the frame's site, then reloads the
 * frame when the kind needs it (`reloaded`). Answers the result, updated.
 */
export async function injectAnswer(client, result, options) {
  checkClient(client);
  const state = INTERNAL.get(result);
  if (!state || !state.task) throw invalidArgument('result', 'not a result of solveWidget');
  if (!result.solution) throw invalidArgument('result', `the ${result.kind} widget was not solved: nothing to inject`);
  readFindOptions(options, 'options', []);
  await injectInto(client, result, state);
  if (state.reload) await reloadFrames(state.page, [result]);
  return result;
}

async function injectInto(client, result, state) {
  const { frame, task, labels, widget } = state;
  const solution = result.solution;
  let applied;
  try {
    // Answers that are cookies (AWS WAF, DataDome, cf_clearance) go into the browser, not into a widget.
    applied = await client.dlq.pageAnswer({ task, solution, url: result.frame });
  } catch (e) {
    result.error = e;
    return;
  }
  if (applied.cookies.length) {
    await applyCookies(client, state, result, applied);
    return;
  }
  let injected;
  try {
    if (isDetached(frame)) throw new Error('the frame was detached');
    injected = await frame.evaluate(([id, answer]) => globalThis.__captchaDlqPage.inject(id, answer), [widget.id, { text: solution.text, fields: solution.fields }]);
  } catch (e) {
    injected = { injected: false, error: `the page or frame was gone: ${e.message.split('\n')[0]}` };
  }
  result.injected = Boolean(injected.injected);
  // When this token is solved again if the page has not used it by then: the client's decision (its kind's life).
  state.renewAt = injected.injected ? applied.renewAt ?? null : null;
  if (state.renewAt !== null) result.renewAt = state.renewAt;
  result.callbackCalled = Boolean(injected.callbackCalled);
  result.callback = injected.callback ?? result.callback;
  result.fields = injected.fields ?? [];
  // Why no callback was called (none in reach, the widget's client did not take the answer): never a silent success.
  if (injected.note) result.note = injected.note;
  if (injected.error) {
    // The answer is paid for and could not be used: the DLQ keeps why, with the provider's task id.
    result.error = { code: 'PAGE_GONE', message: injected.error };
    result.recorded = await client.dlq.recordPageOutcome({ verdict: 'gone', task, solution, host: hostOf(result.frame), detail: injected.error, labels });
  }
}

function checkClient(client) {
  if (!client || typeof client.solve !== 'function' || !client.dlq) throw invalidArgument('client', 'not a captcha-dlq Client');
}

function readSolveOptions(options, name, known) {
  if (options === undefined || options === null) return {};
  if (!isObject(options)) throw invalidArgument(name, `expected an object, got ${typeof options}`);
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw invalidArgument(`${name}.${key}`, `unknown option (known: ${known.join(', ')})`);
  }
  const { labels = {}, signal, proxy } = options;
  if (!isObject(labels)) throw invalidArgument(`${name}.labels`, 'expected an object of strings');
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalidArgument(`${name}.signal`, 'expected an AbortSignal');
  // The proxy itself (URL, `{ server, username, password }`, the task's form) is read by the client (`page_task`).
  if (proxy !== undefined && proxy !== false && typeof proxy !== 'string' && !isObject(proxy)) {
    throw invalidArgument(`${name}.proxy`, 'expected false, a proxy URL or a proxy object');
  }
  return { labels, signal, proxy };
}

/**
 * Finds the CAPTCHA widgets of `page` and all its frames, solves each through `client` and injects the answer where
 * the widget expects it, calling the page's callback: `findWidgets`, `solveWidget` and `injectAnswer` composed.
 * One result per widget, in frame order.
 */
export async function solveOnPage(client, page, options) {
  const { labels, signal, check, proxy, kinds, visibleOnly, includeScoreBased, waitFor } = readOptions(options);
  driverOf(page);
  checkClient(client);
  const widgets = await findWidgets(page, { kinds, visibleOnly, includeScoreBased, waitFor });
  // The frames' cookies, read once per origin for this call.
  const jar = new Map();
  const cookies = (url) => {
    let origin;
    try {
      origin = new URL(url).origin;
    } catch (_) {
      return Promise.resolve([]);
    }
    if (!jar.has(origin)) jar.set(origin, cookiesFor(page, driverOf(page), url).catch(() => []));
    return jar.get(origin);
  };
  for (const w of widgets) INTERNAL.get(w).cookies = cookies;

  const checking = startCheck(page, check);
  try {
    const results = await Promise.all(
      widgets.map(async (w) => {
        const result = await solveWidget(client, w, { labels, signal, proxy });
        // Reloads wait until every answer is in (`reloadFrames`), so that they do not race the other injections.
        if (result.solution && !result.error) await injectInto(client, result, INTERNAL.get(result));
        return result;
      }),
    );
    await reloadFrames(page, results);
    if (checking && results.some((r) => r.injected)) {
      const { accepted, detail } = await checking.verdict();
      for (const r of results) {
        if (!r.injected) continue;
        r.accepted = accepted;
        if (accepted !== null) {
          const state = INTERNAL.get(r);
          await client.dlq.recordPageOutcome({ verdict: accepted ? 'accepted' : 'rejected', task: state.task, solution: r.solution, host: hostOf(r.frame), detail, labels: state.labels });
        }
      }
    }
    return results;
  } finally {
    if (checking) checking.stop();
  }
}

/**
 * Solves the widget of an injected result again and injects the new answer (a token whose life ended before the
 * page used it); `result.resolves` counts it. Answers the result, updated.
 */
export async function refreshAnswer(client, result, options) {
  checkClient(client);
  const state = INTERNAL.get(result);
  if (!state || !state.task) throw invalidArgument('result', 'not a result of solveWidget or solveOnPage');
  const { signal } = readSolveOptions(options, 'options', ['signal']);
  const solution = await client.solve(state.task, { labels: state.labels, signal });
  result.solution = solution;
  delete result.error;
  await injectInto(client, result, state);
  if (state.reload) await reloadFrames(state.page, [result]);
  result.resolves += 1;
  return result;
}

/**
 * The results to solve again, each solved and injected; how many. A result is due when its widget's expired-callback
 * fired since last asked, or when its token's `renewAt` (the client's: the kind's declared life, `page_answer`) has
 * come while the widget is still in its document waiting for it (a page that navigated or removed the widget used
 * or dropped the token: nothing to renew).
 */
export async function resolveExpired(client, results) {
  checkClient(client);
  const byFrame = new Map();
  for (const r of results) {
    const state = INTERNAL.get(r);
    if (!state || !state.task || !r.injected) continue;
    if (!byFrame.has(state.frame)) byFrame.set(state.frame, []);
    byFrame.get(state.frame).push(r);
  }
  let count = 0;
  for (const [frame, mine] of byFrame) {
    const now = Date.now();
    const due = mine.filter((r) => INTERNAL.get(r).renewAt != null && now >= INTERNAL.get(r).renewAt).map((r) => INTERNAL.get(r).widget.id);
    let ids;
    try {
      if (isDetached(frame)) continue;
      ids = await frame.evaluate((lifeEnded) => {
        const api = globalThis.__captchaDlqPage;
        if (!api) return [];
        return [...api.expired(), ...lifeEnded.filter((id) => api.waiting && api.waiting(id))];
      }, due);
    } catch (_) {
      continue; // the frame navigated or closed: no token of it to renew
    }
    for (const r of mine.filter((x) => ids.includes(INTERNAL.get(x).widget.id))) {
      try {
        await refreshAnswer(client, r);
        count += 1;
      } catch (e) {
        r.error = e;
      }
    }
    // A token whose life ended in a document that no longer waits for it is not renewed later either.
    for (const r of mine) if (due.includes(INTERNAL.get(r).widget.id) && !ids.includes(INTERNAL.get(r).widget.id)) INTERNAL.get(r).renewAt = null;
  }
  return count;
}

/**
 * Keeps injected answers fresh in the background: every `intervalMs` (default 1000) the results whose widget's
 * expired-callback fired, or whose token's life (the client's `renewAt`) ends before the page used it, are solved
 * again and injected (`resolveExpired`; `result.resolves` counts them). `stop()` ends it.
 */
export function keepFresh(client, results, options) {
  checkClient(client);
  if (!Array.isArray(results)) throw invalidArgument('results', 'expected the results of solveOnPage or solveWidget');
  if (options !== undefined && !isObject(options)) throw invalidArgument('options', 'expected { intervalMs }');
  for (const key of Object.keys(options ?? {})) {
    if (key !== 'intervalMs') throw invalidArgument(`options.${key}`, 'unknown option (known: intervalMs)');
  }
  const intervalMs = options?.intervalMs ?? 1000;
  if (!Number.isInteger(intervalMs) || intervalMs <= 0) throw invalidArgument('options.intervalMs', 'expected a positive integer');
  let stopped = false;
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() => (stopped ? 0 : resolveExpired(client, results))).catch(() => 0);
  }, intervalMs);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/** Writes a cookie answer into the browser for the frame's site; the reload, if the kind needs one, is `reloadFrames`'. */
async function applyCookies(client, state, result, applied) {
  result.callback = null;
  result.cookies = applied.cookies.map((c) => c.name);
  result.reloaded = false;
  try {
    await setCookies(state.page, state.driver, applied.cookies);
    result.injected = true;
    if (applied.reload) state.reload = true;
  } catch (e) {
    const why = `the page or frame was gone: ${String(e.message).split('\n')[0]}`;
    result.error = { code: 'PAGE_GONE', message: why };
    result.recorded = await client.dlq.recordPageOutcome({ verdict: 'gone', task: state.task, solution: result.solution, host: hostOf(result.frame), detail: why, labels: state.labels });
  }
}

/** Loads again, once each, the frames whose cookie answers need it (the main frame: the page). */
async function reloadFrames(page, results) {
  const wanting = results.filter((r) => INTERNAL.get(r)?.reload);
  const frames = [...new Set(wanting.map((r) => INTERNAL.get(r).frame))];
  for (const frame of frames) {
    const mine = wanting.filter((r) => INTERNAL.get(r).frame === frame);
    for (const r of mine) INTERNAL.get(r).reload = false;
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
