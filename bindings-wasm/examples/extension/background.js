// The extension's service worker: one captcha-dlq client with its DLQ and journal in IndexedDB.
// Settings ({ apiKey, provider, baseUrl }) come from chrome.storage.local; the popup and content scripts talk
// to it with chrome.runtime.sendMessage. A restarted worker resumes the tasks its predecessor left in flight.
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
