// captcha-dlq-web/page: the page detector and injector (lib/page-detector.js, the one source the Node and Python
// packages run too) as a module for code running in the page's own world: a content script registered with
// `world: "MAIN"`, or a bundle your extension injects. `solveInPage(client)` finds the widgets of this document and
// solves them through a captcha-dlq client with the same client-side decisions as the Node and Python front ends:
// the task a widget becomes is the client's (`dlq.pageTask`: the detector's kind mapped to the core's, the
// document's cookies and the user agent where the kind takes them), and so is how its answer is applied
// (`dlq.pageAnswer`: injected into the widget, or, for the kinds whose answer is a cookie, set for the site).
// The client is a captcha-dlq-web `Client`, or a bridge of the same shape to one elsewhere (e.g. messages to an
// extension's service worker). A service worker can do the same without this module: see
// examples/extension/page-solver.js, which runs lib/page-detector.js in every frame with chrome.scripting.
import './lib/page-detector.js';
import { invalidArgument } from './lib/errors.js';

const api = globalThis.__captchaDlqPage;

/** Wraps the widget clients as they load; run it before the page's scripts (`run_at: "document_start"`). */
export const hook = () => api.hook();
/** The widgets of this document: `[{ id, kind, task, supported, callback, visible, scoreBased, note? }]`. */
export const detect = () => api.detect();
/** Writes `solution` where widget `id` expects it and calls the page's callback; a promise where the widget's client takes the answer itself. `note` says why no callback was called. */
export const inject = (id, solution) => api.inject(id, solution);

/** What a result keeps out of sight for `keepFresh`: its client, the task as sent, the widget, its labels. */
const INTERNAL = new WeakMap();

const OPTIONS = ['labels', 'proxy', 'kinds', 'visibleOnly', 'includeScoreBased', 'reload'];
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function readOptions(options) {
  if (options === undefined || options === null) return { labels: {}, includeScoreBased: false, visibleOnly: false, reload: true };
  if (!isObject(options)) throw invalidArgument('options', `expected an object, got ${typeof options}`);
  for (const key of Object.keys(options)) {
    if (!OPTIONS.includes(key)) throw invalidArgument(`options.${key}`, `unknown option (known: ${OPTIONS.join(', ')})`);
  }
  const { labels = {}, proxy, kinds, visibleOnly = false, includeScoreBased = false, reload = true } = options;
  if (!isObject(labels)) throw invalidArgument('options.labels', 'expected an object of strings');
  if (kinds !== undefined && !(Array.isArray(kinds) && kinds.every((k) => typeof k === 'string'))) {
    throw invalidArgument('options.kinds', 'expected an array of widget kinds');
  }
  for (const [k, v] of [['visibleOnly', visibleOnly], ['includeScoreBased', includeScoreBased], ['reload', reload]]) {
    if (typeof v !== 'boolean') throw invalidArgument(`options.${k}`, 'expected true or false');
  }
  // The proxy itself (URL, `{ server, username, password }`, the task's form) is read by the client (`page_task`).
  if (proxy !== undefined && proxy !== false && typeof proxy !== 'string' && !isObject(proxy)) {
    throw invalidArgument('options.proxy', 'expected false, a proxy URL or a proxy object');
  }
  return { labels, proxy, kinds, visibleOnly, includeScoreBased, reload };
}

function checkClient(client) {
  const dlq = client && client.dlq;
  if (!client || typeof client.solve !== 'function' || !dlq || typeof dlq.pageTask !== 'function' || typeof dlq.pageAnswer !== 'function') {
    throw invalidArgument('client', 'expected a Client or { solve, dlq: { pageTask, pageAnswer, recordPageOutcome } }');
  }
}

/**
 * Writes a cookie answer for this document's site. A page script cannot overwrite an HttpOnly cookie of that name
 * (the browser ignores the write): what `document.cookie` shows afterwards says whether it took.
 */
function setDocumentCookie({ name, value }) {
  document.cookie = `${name}=${value}; path=/; SameSite=Lax${location.protocol === 'https:' ? '; Secure' : ''}`;
  return document.cookie.split(';').some((c) => c.trim() === `${name}=${value}`);
}

/**
 * Solves this document's widgets through `client` (see the module doc) and applies the answers. Score-based widgets
 * (v3, invisible Enterprise without a trigger) only with `includeScoreBased`; `kinds` and `visibleOnly` filter like
 * the Node package's `findWidgets`; `proxy` is the task's proxy (a page cannot see the browser's); `labels` go on
 * each task. A cookie answer is written with `document.cookie`, then the page is reloaded once the results are
 * handed back (`reloading: true`; not with `reload: false`). One the page cannot write (an HttpOnly cookie of that
 * name exists) is handed to the caller instead: `cookiesToSet: [{ name, value, url }]` with a note (an extension
 * sets it with chrome.cookies.set, then reloads). One result per widget: `{ kind, params, injected, callbackCalled,
 * callback, fields?, cookies?, reloading?, cookiesToSet?, note?, renewAt?, resolves, solution?, error? }`, `params`
 * the task as the client shows it (proxy without credentials, cookies `***`).
 */
export async function solveInPage(client, options) {
  checkClient(client);
  const { labels, proxy, kinds, visibleOnly, includeScoreBased, reload } = readOptions(options);
  const widgets = detect().filter((w) => (!kinds || kinds.includes(w.kind)) && (!visibleOnly || w.visible !== false) && (includeScoreBased || !w.scoreBased));
  const url = location.href;
  const host = location.host;
  const results = await Promise.all(widgets.map((widget) => solveOne(client, widget, { url, host, labels, proxy })));
  if (reload && results.some((r) => r.reloading)) {
    // After the caller has the results: a reload now would end this document before they are handed back.
    setTimeout(() => location.reload(), 0);
  } else {
    for (const r of results) if (r.reloading) r.reloading = false;
  }
  return results;
}

/** A widget whose kind the client cannot take (a build without the `declared-kinds` feature: AWS WAF, DataDome, …). */
function notSolvable(widget, error) {
  if (error && error.code === 'INVALID_TASK' && error.field === 'type') {
    return { code: 'NOT_SOLVABLE', message: `${widget.kind} is not solvable here: ${error.message}`, cause: error };
  }
  return error;
}

async function solveOne(client, widget, { url, host, labels, proxy }) {
  const result = { kind: widget.kind, params: widget.task, injected: false, callbackCalled: false, callback: widget.callback ?? null, resolves: 0 };
  if (widget.note) result.note = widget.note;
  if (!widget.supported || !widget.task) return { ...result, error: { code: 'NOT_SOLVABLE', message: widget.error ?? `the ${widget.kind} widget gave no task` } };
  const taskLabels = { ...labels, page_host: host, widget: widget.kind };
  let task;
  try {
    // The task the widget becomes: the client's decision (kind, this document's cookies, the user agent).
    const made = await client.dlq.pageTask({ task: widget.task, cookies: document.cookie, ...(proxy === undefined ? {} : { proxy }) });
    task = made.task;
    result.params = made.shown;
  } catch (error) {
    return { ...result, error: notSolvable(widget, error) };
  }
  let solution;
  try {
    solution = await client.solve(task, { labels: taskLabels });
  } catch (error) {
    return { ...result, error };
  }
  result.solution = solution;
  let applied;
  try {
    applied = await client.dlq.pageAnswer({ task, solution, url });
  } catch (error) {
    return { ...result, error };
  }
  const gone = async (message) => {
    result.error = { code: 'PAGE_GONE', message };
    if (typeof client.dlq.recordPageOutcome === 'function') {
      result.recorded = await client.dlq.recordPageOutcome({ verdict: 'gone', task, solution, host, detail: message, labels: taskLabels });
    }
  };
  if (applied.cookies.length) {
    result.callback = null;
    result.cookies = applied.cookies.map((c) => c.name);
    const refused = applied.cookies.filter((c) => !setDocumentCookie(c));
    if (refused.length) {
      // The page holds an HttpOnly cookie of that name: only the browser's owner (an extension, the driver) can write it.
      result.cookiesToSet = refused;
      result.note = 'an HttpOnly cookie of that name blocks it: set cookiesToSet (chrome.cookies.set), then reload';
    } else {
      result.injected = true;
      result.reloading = Boolean(applied.reload);
    }
    return result;
  }
  let injected;
  try {
    injected = await inject(widget.id, { text: solution.text, fields: solution.fields });
  } catch (e) {
    injected = { injected: false, error: `the widget threw: ${e.message}` };
  }
  result.injected = Boolean(injected.injected);
  result.callbackCalled = Boolean(injected.callbackCalled);
  result.callback = injected.callback ?? result.callback;
  result.fields = injected.fields ?? [];
  if (injected.note) result.note = injected.note;
  if (applied.renewAt != null) result.renewAt = applied.renewAt;
  if (injected.error) await gone(injected.error);
  else INTERNAL.set(result, { client, task, widget, labels: taskLabels, url });
  return result;
}

/** Solves an injected result's widget again and injects the new answer; `resolves` counts it. */
async function renew(result) {
  const { client, task, widget, labels, url } = INTERNAL.get(result);
  const solution = await client.solve(task, { labels });
  const applied = await client.dlq.pageAnswer({ task, solution, url });
  const injected = await inject(widget.id, { text: solution.text, fields: solution.fields });
  if (injected.error) throw new Error(injected.error);
  Object.assign(result, { solution, renewAt: applied.renewAt ?? undefined, resolves: result.resolves + 1 });
}

/**
 * Keeps the injected answers of `results` (solveInPage's) fresh: every `intervalMs` (default 1000) a result whose
 * widget's expired-callback fired, or whose `renewAt` (the client's, from the kind's declared life) came while the
 * widget is still in this document, is solved again and injected (`resolves` counts it; a failure is its `error`).
 * `stop()` ends it.
 */
export function keepFresh(results, options) {
  if (!Array.isArray(results)) throw invalidArgument('results', 'expected the results of solveInPage');
  for (const key of Object.keys(options ?? {})) if (key !== 'intervalMs') throw invalidArgument(`options.${key}`, 'unknown option (known: intervalMs)');
  const intervalMs = options?.intervalMs ?? 1000;
  if (!Number.isInteger(intervalMs) || intervalMs <= 0) throw invalidArgument('options.intervalMs', 'expected a positive integer');
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(async () => {
      const expired = api.expired();
      for (const r of results.filter((x) => INTERNAL.has(x))) {
        const { id } = INTERNAL.get(r).widget;
        const lifeEnded = r.renewAt != null && Date.now() >= r.renewAt;
        // A widget no longer in this document: its token was used or dropped with it, nothing to renew.
        if (lifeEnded && !api.waiting(id)) INTERNAL.delete(r);
        else if (lifeEnded || expired.includes(id)) await renew(r).catch((error) => { r.error = error; INTERNAL.delete(r); });
      }
    });
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
