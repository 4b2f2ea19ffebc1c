// Renewing injected tokens whose life ends before the page used them, in the extension's service worker. When a
// token is solved again is the client's (`pageAnswer`'s `renewAt`, docs/decisions/0072-page-auto-solve.md); this
// module only schedules it. A service worker's timers do not outlive its suspension, so each renewal is a
// chrome.alarms alarm (it wakes the worker), and what the renewal needs is kept in chrome.storage.session (memory
// only, for this browser session: the task may carry the page's cookies, which never go to disk here).
// When the alarm fires, a frame that still holds the widget (the detector's `waiting(id)`, in the same document)
// gets a new token, solved through the client and injected, and the next renewal is scheduled; a frame gone,
// navigated, or whose widget was removed used or dropped the token and is not charged for a new one.
// A tab closed, or gone to another origin, holds none of its widgets any more: its alarms and their session state
// are cleared then (`forgetTab`, on chrome.tabs.onRemoved and onUpdated), not left to fire for nothing.
import { injectInFrame } from './frame-inject.js';

const PREFIX = 'captcha-dlq-renew ';
/** Renewals done lately, newest last, for `{ cmd: 'renewals' }` (the popup, tests); lost with the worker. */
const done = [];
const KEPT = 50;

/** Schedules the renewal of an injected widget's token at `renewAt` (Unix ms); answers the alarm's name. */
export async function scheduleRenewal({ tabId, frameId, widgetId, kind, frame, task, labels, renewAt, resolves = 0, tabOrigin }) {
  const name = `${PREFIX}${tabId} ${frameId} ${widgetId}`;
  // The origin of the tab's page (a widget may be in a frame of another): a navigation away from it ends the renewal.
  tabOrigin ??= await chrome.tabs.get(tabId).then((tab) => originOf(tab.url ?? tab.pendingUrl), () => null);
  await chrome.storage.session.set({ [name]: { tabId, frameId, widgetId, kind, frame, task, labels, resolves, tabOrigin } });
  await chrome.alarms.create(name, { when: renewAt });
  return name;
}

const originOf = (url) => {
  try {
    return url ? new URL(url).origin : null;
  } catch {
    return null;
  }
};

/**
 * Clears the renewals of tab `tabId` and what they keep in chrome.storage.session: all of them (the tab closed), or,
 * given the URL it navigated to ('' when the extension may not see it), those of a page of another origin. Answers
 * the names cleared.
 */
export async function forgetTab(tabId, navigatedTo) {
  const prefix = `${PREFIX}${tabId} `;
  const names = (await chrome.alarms.getAll()).filter((a) => a.name.startsWith(prefix)).map((a) => a.name);
  if (!names.length) return [];
  const entries = await chrome.storage.session.get(names);
  const to = navigatedTo === undefined ? undefined : originOf(navigatedTo);
  const gone = names.filter((name) => to === undefined || !entries[name] || entries[name].tabOrigin !== to);
  await Promise.all(gone.map((name) => chrome.alarms.clear(name)));
  await chrome.storage.session.remove(gone);
  return gone;
}

/** Whether `alarm` is one of this module's. */
export const isRenewal = (alarm) => alarm.name.startsWith(PREFIX);

/** The renewals waiting (`[{ name, kind, frame, renewAt }]`) and the ones done lately. */
export async function renewals() {
  const alarms = (await chrome.alarms.getAll()).filter(isRenewal);
  const entries = await chrome.storage.session.get(alarms.map((a) => a.name));
  const pending = alarms
    .filter((a) => entries[a.name])
    .map((a) => ({ name: a.name, kind: entries[a.name].kind, frame: entries[a.name].frame, renewAt: a.scheduledTime }));
  return { pending, done: done.slice() };
}

function keep(result) {
  done.push(result);
  done.splice(0, Math.max(0, done.length - KEPT));
  return result;
}

/** Whether frame `frameId` of `tabId` is still the document `url` holding widget `widgetId`. */
async function stillWaiting(tabId, frameId, widgetId, url) {
  try {
    const [{ result }] = await chrome.scripting.executeScript({
      target: { tabId, frameIds: [frameId] },
      world: 'MAIN',
      func: (id, at) => location.href === at && globalThis.__captchaDlqPage?.waiting(id) === true,
      args: [widgetId, url],
    });
    return result === true;
  } catch {
    return false; // the tab or frame is gone
  }
}

/**
 * The renewal of alarm `name`, through the client `getClient()` answers: `{ kind, frame, resolves, injected,
 * callbackCalled?, renewAt?, dropped?, error?, code? }`, or null when nothing is kept for it (already done).
 */
export async function renew(getClient, name) {
  const { [name]: entry } = await chrome.storage.session.get(name);
  if (!entry) return null;
  await chrome.storage.session.remove(name);
  const { tabId, frameId, widgetId, kind, frame, task, labels } = entry;
  const out = { kind, frame, resolves: entry.resolves, injected: false };
  if (!(await stillWaiting(tabId, frameId, widgetId, frame))) {
    return keep({ ...out, dropped: 'the frame no longer holds the widget: its token was used or dropped, not solved again' });
  }
  const client = await getClient();
  let solution;
  let applied;
  try {
    solution = await client.solve(task, { labels });
    applied = await client.dlq.pageAnswer({ task, solution, url: frame });
  } catch (e) {
    return keep({ ...out, error: e.message, code: e.code });
  }
  const injected = await injectInFrame(tabId, frameId, widgetId, solution);
  if (injected.error) {
    await client.dlq.recordPageOutcome({ verdict: 'gone', task, solution, host: new URL(frame).host, detail: injected.error, labels });
    return keep({ ...out, error: injected.error, code: 'PAGE_GONE' });
  }
  const result = { ...out, resolves: entry.resolves + 1, injected: injected.injected, callbackCalled: injected.callbackCalled };
  if (applied.renewAt != null) {
    result.renewAt = applied.renewAt;
    await scheduleRenewal({ ...entry, renewAt: applied.renewAt, resolves: result.resolves });
  }
  return keep(result);
}
