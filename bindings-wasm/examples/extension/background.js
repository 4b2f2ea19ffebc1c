// The extension's service worker: one captcha-dlq client with its DLQ and journal in IndexedDB.
// Settings ({ apiKey, provider, baseUrl }) come from chrome.storage.local; the popup and content scripts talk
// to it with chrome.runtime.sendMessage. A restarted worker resumes the tasks its predecessor left in flight.
// `solveTab` solves the CAPTCHA widgets of a tab's page in place (chrome.scripting, the package's page detector).
import { Client } from './captcha-dlq-web/index.js';

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
 * Solves the CAPTCHAs of tab `tabId` in all its frames: the package's page detector (lib/page-detector.js, the same
 * file captcha-dlq/page and captcha_dlq.page run) goes into every frame's own world, each widget's task is solved
 * here through the client (journal, retries, DLQ), and the answer goes back into the frame it came from. A frame
 * gone before its answer came is recorded in the DLQ as PageGone, with the answer.
 */
async function solveTab(tabId) {
  const c = await getClient();
  const target = { tabId, allFrames: true };
  await chrome.scripting.executeScript({ target, world: 'MAIN', files: ['captcha-dlq-web/lib/page-detector.js'] });
  const frames = await chrome.scripting.executeScript({
    target,
    world: 'MAIN',
    func: () => ({ url: location.href, widgets: globalThis.__captchaDlqPage.detect() }),
  });
  const jobs = frames.flatMap(({ frameId, result }) => (result?.widgets ?? []).map((widget) => ({ frameId, url: result.url, widget })));
  return Promise.all(
    jobs.map(async ({ frameId, url, widget }) => {
      const out = { kind: widget.kind, frame: url, params: widget.task, injected: false, callbackCalled: false };
      if (!widget.supported || !widget.task) return { ...out, error: widget.error ?? `the ${widget.kind} widget gave no task` };
      let solution;
      try {
        solution = await c.solve(widget.task, { labels: { page_host: new URL(url).host, widget: widget.kind } });
      } catch (e) {
        return { ...out, error: e.message, code: e.code };
      }
      let injected;
      try {
        const [done] = await chrome.scripting.executeScript({
          target: { tabId, frameIds: [frameId] },
          world: 'MAIN',
          func: (id, answer) => globalThis.__captchaDlqPage.inject(id, answer),
          args: [widget.id, { text: solution.text, fields: solution.fields }],
        });
        injected = done.result;
      } catch (e) {
        injected = { injected: false, error: `the tab or frame was gone: ${e.message}` };
      }
      if (injected.error) {
        await c.dlq.recordPageOutcome({ verdict: 'gone', task: widget.task, solution, host: new URL(url).host, detail: injected.error });
      }
      return { ...out, injected: injected.injected, callbackCalled: injected.callbackCalled, callback: injected.callback, note: injected.note, error: injected.error };
    }),
  );
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
      return solveTab(tab.id);
    }
    case 'count':
      return (await getClient()).dlq.count();
    case 'stats':
      return (await getClient()).dlq.stats();
    case 'replay':
      return (await (await getClient()).replay({ limit: message.limit ?? 100 })).report;
    case 'recovered':
      await getClient();
      return recovered;
    default:
      return { error: `unknown command ${JSON.stringify(message?.cmd)}` };
  }
}

chrome.runtime.onMessage.addListener((message, _sender, sendResponse) => {
  handle(message).then(sendResponse, (e) => sendResponse({ error: e.message, code: e.code, field: e.field }));
  return true; // answers asynchronously
});
