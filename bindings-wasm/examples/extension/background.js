// The extension's service worker: one captcha-dlq client with its DLQ and journal in IndexedDB.
// Settings ({ apiKey, provider, baseUrl }) come from chrome.storage.local; the popup and content scripts talk
// to it with chrome.runtime.sendMessage. A restarted worker resumes the tasks its predecessor left in flight.
// `solveTab` solves the CAPTCHA widgets of a tab's page in place (page-solver.js); auto-solve mode does it in every
// frame as it loads (auto-solve.js). Injected tokens the page has not used are solved again at their `renewAt`
// (renewals.js: chrome.alarms) in auto-solve mode, and after `solveTab` with `renew: true`.
import { Client } from './captcha-dlq-web/index.js';
import { solveFrames } from './page-solver.js';
import { autoSolveFrame, autoSolveResults, syncAutoSolve } from './auto-solve.js';
import { forgetTab, isRenewal, renew, renewals } from './renewals.js';

let client = null;
let recovered = null;

async function getClient() {
  if (client) return client;
  const { settings = {} } = await chrome.storage.local.get('settings');
  client = new Client({ provider: 'captchaai', ...settings, dlq: 'indexeddb:captcha-dlq-extension' });
  await client.ready();
  // Tasks a stopped worker left in flight: resume them once, in the background.
  recovered = client.recover().catch((e) => ({ error: e.message }));
  return client;
}

/**
 * Solves the CAPTCHAs of tab `tabId` in all its frames (page-solver.js): the package's page detector in every
 * frame's own world, each widget's task made and solved here through the client (pageTask, journal, retries, DLQ),
 * each answer applied as the client says (pageAnswer: a cookie for the site, or injected into its frame).
 */
function solveTab(tabId, renewTokens) {
  return getClient().then((c) => solveFrames(c, tabId, null, { renew: renewTokens }));
}

async function handle(message) {
  switch (message?.cmd) {
    case 'configure':
      await chrome.storage.local.set({ settings: message.settings });
      if (client) await client.close();
      client = null;
      return { ok: true };
    case 'solve': {
      const c = await getClient();
      const results = await c.solveMany(message.tasks, { concurrency: 8 });
      return results.map((r) =>
        r.ok ? { ok: true, text: r.solution.text } : { ok: false, code: r.error.code, message: r.error.message },
      );
    }
    case 'solveTab': {
      // The tab whose URL is `url` (the popup or a content script names it).
      const [tab] = await chrome.tabs.query({ url: message.url });
      if (!tab) return { error: `no tab at ${message.url}` };
      if (message.renew !== undefined && typeof message.renew !== 'boolean') return { error: 'solveTab: renew: expected true or false' };
      return solveTab(tab.id, message.renew === true);
    }
    case 'count':
      return (await getClient()).dlq.count();
    case 'stats':
      return (await getClient()).dlq.stats();
    case 'replay':
      return (await (await getClient()).replay({ limit: message.limit ?? 100 })).report;
    case 'renewals':
      return renewals();
    case 'recovered':
      await getClient();
      return recovered;
    default:
      return { error: `unknown command ${JSON.stringify(message?.cmd)}` };
  }
}

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  (autoSolveMessage(message, sender) ?? handle(message)).then(sendResponse, (e) => sendResponse({ error: e.message, code: e.code, field: e.field }));
  return true; // answers asynchronously
});

// ---- Auto-solve mode (auto-solve.js): content scripts in every frame while the popup's toggle is on. ----

/** The mode's messages (null: not one of them): a frame asking to be solved, what was solved lately. */
function autoSolveMessage(message, sender) {
  switch (message?.cmd) {
    case 'autoSolveFrame':
      return autoSolveFrame(getClient, sender);
    case 'autoSolveResults':
      return Promise.resolve(autoSolveResults());
    case 'autoSolveSync':
      return syncAutoSolve();
    default:
      return null;
  }
}

// A renewal's alarm wakes the worker: registered at its top level, so that a suspended worker's alarm reaches it.
chrome.alarms.onAlarm.addListener((alarm) => {
  if (isRenewal(alarm)) renew(getClient, alarm.name).catch((e) => console.warn('captcha-dlq renewal:', e.message));
});

// A tab closed or gone to another origin holds none of its widgets: its renewals (alarms, session state) go too.
chrome.tabs.onRemoved.addListener((tabId) => {
  forgetTab(tabId).catch((e) => console.warn('captcha-dlq renewals of a closed tab:', e.message));
});
// `tab.url` is there only for a page of the extension's host permissions: a page without it is of another origin
// than the one renewals were scheduled for (which had them), so '' clears them too.
chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (!change.url && change.status !== 'loading') return;
  forgetTab(tabId, tab.url ?? '').catch((e) => console.warn('captcha-dlq renewals of a tab that navigated:', e.message));
});

// The registration follows the setting on every start of the worker.
syncAutoSolve().catch((e) => console.warn('captcha-dlq auto-solve:', e.message));
