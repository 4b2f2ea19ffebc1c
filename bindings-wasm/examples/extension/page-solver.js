// Solving the CAPTCHA widgets of a tab's frames from the extension's service worker, with the same client-side
// decisions as the Node and Python front ends: the package's page detector (lib/page-detector.js) runs in each
// frame's own world (chrome.scripting, world MAIN, so the site's callbacks can be called); the task a widget
// becomes is the client's (`dlq.pageTask`: the detector's kind mapped to the core's, the frame's cookies, HttpOnly
// ones included, and the user agent where the kind takes them); so is how its answer is applied (`dlq.pageAnswer`):
// a cookie answer (AWS WAF, DataDome, Cloudflare's cf_clearance) is set with chrome.cookies for the frame's site and
// the frame reloaded once every answer of it is in; any other is injected into the widget in the frame it came from.
// The proxy the tasks carry is the browser's (chrome.proxy.settings), none or a given one, as the options page says
// (proxy-settings.js); which kinds take it is the client's decision.
// A frame gone before its answer came is recorded in the DLQ as PageGone, with the answer. With `renew`, an injected
// token is solved again at its `renewAt` if the frame has not used it by then (renewals.js, chrome.alarms).
import { injectInFrame } from './frame-inject.js';
import { pageTaskProxy } from './proxy-settings.js';
import { scheduleRenewal } from './renewals.js';

export const DETECTOR = 'captcha-dlq-web/lib/page-detector.js';

/** The cookies the browser holds for `url` (HttpOnly ones included), as `page_task` takes them. */
async function cookiesFor(url) {
  if (!/^https?:/.test(url)) return [];
  const jar = await chrome.cookies.getAll({ url });
  return jar.map(({ name, value }) => ({ name, value }));
}

function hostOf(url) {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/**
 * Solves the widgets of `frameIds` of tab `tabId` (every frame when null) through `client`. Score-based widgets
 * (v3, invisible Enterprise without a trigger) only with `includeScoreBased` (else their result says `skipped`).
 * With `renew`, each injected token with a `renewAt` is scheduled to be solved again then (its result's `renewal`
 * names the alarm). One result per widget: `{ kind, frame, params, injected, callbackCalled, callback?, cookies?,
 * reloaded?, renewAt?, renewal?, skipped?, note?, error?, code? }`, `params` the task as the client shows it (no proxy
 * credentials, cookies `***`).
 */
export async function solveFrames(client, tabId, frameIds, { includeScoreBased = false, renew = false } = {}) {
  const target = frameIds ? { tabId, frameIds } : { tabId, allFrames: true };
  await chrome.scripting.executeScript({ target, world: 'MAIN', files: [DETECTOR] });
  const frames = await chrome.scripting.executeScript({
    target,
    world: 'MAIN',
    func: () => ({ url: location.href, widgets: globalThis.__captchaDlqPage.detect() }),
  });
  const jobs = frames.flatMap(({ frameId, result }) =>
    (result?.widgets ?? []).map((widget) => ({ frameId, url: result.url, widget })),
  );
  const reloads = new Set();
  const proxy = jobs.length ? await pageTaskProxy() : {};
  const results = await Promise.all(jobs.map((job) =>
    job.widget.scoreBased && !includeScoreBased
      ? { frameId: job.frameId, kind: job.widget.kind, frame: job.url, params: job.widget.task, injected: false, callbackCalled: false, skipped: 'a score-based widget: solved only with includeScoreBased' }
      : solveWidget(client, tabId, job, reloads, renew, proxy)));
  // Once every answer of a frame is in: a reload before would race the other injections.
  for (const frameId of reloads) {
    const mine = results.filter((r) => r.frameId === frameId && r.cookies);
    try {
      if (frameId === 0) await chrome.tabs.reload(tabId);
      else await chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, func: () => location.reload() });
      for (const r of mine) r.reloaded = true;
    } catch (e) {
      for (const r of mine) r.note = `the cookie is set but the frame could not be reloaded: ${e.message}`;
    }
  }
  return results.map(({ frameId: _, ...r }) => r);
}

async function solveWidget(client, tabId, { frameId, url, widget }, reloads, renew, proxy) {
  const out = { frameId, kind: widget.kind, frame: url, params: widget.task, injected: false, callbackCalled: false, resolves: 0 };
  if (!widget.supported || !widget.task) return { ...out, error: widget.error ?? `the ${widget.kind} widget gave no task`, code: 'NOT_SOLVABLE' };
  const host = hostOf(url);
  const labels = { page_host: host, widget: widget.kind };
  let task;
  let solution;
  let applied;
  try {
    const made = await client.dlq.pageTask({ task: widget.task, cookies: await cookiesFor(url), ...proxy });
    task = made.task;
    out.params = made.shown;
    solution = await client.solve(task, { labels });
    applied = await client.dlq.pageAnswer({ task, solution, url });
  } catch (e) {
    // A kind the client cannot take (a build without the `declared-kinds` feature: AWS WAF, DataDome, …).
    const notSolvable = e.code === 'INVALID_TASK' && e.field === 'type' && !task;
    return { ...out, error: notSolvable ? `${widget.kind} is not solvable here: ${e.message}` : e.message, code: notSolvable ? 'NOT_SOLVABLE' : e.code };
  }
  const gone = async (why) => {
    await client.dlq.recordPageOutcome({ verdict: 'gone', task, solution, host, detail: why, labels });
    return { ...out, injected: false, error: why, code: 'PAGE_GONE' };
  };
  if (applied.cookies.length) {
    try {
      for (const { name, value, url: site } of applied.cookies) await chrome.cookies.set({ url: site, name, value });
    } catch (e) {
      return gone(`the cookie could not be set: ${e.message}`);
    }
    if (applied.reload) reloads.add(frameId);
    return { ...out, injected: true, callback: null, cookies: applied.cookies.map((c) => c.name), reloaded: false };
  }
  const injected = await injectInFrame(tabId, frameId, widget.id, solution);
  if (injected.error) return gone(injected.error);
  const result = { ...out, injected: injected.injected, callbackCalled: injected.callbackCalled, callback: injected.callback, note: injected.note };
  if (applied.renewAt != null) {
    result.renewAt = applied.renewAt;
    if (renew && injected.injected) {
      result.renewal = await scheduleRenewal({ tabId, frameId, widgetId: widget.id, kind: widget.kind, frame: url, task, labels, renewAt: applied.renewAt });
    }
  }
  return result;
}
