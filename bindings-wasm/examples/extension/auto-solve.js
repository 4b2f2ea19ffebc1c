// The extension's auto-solve mode, in its service worker. While `autoSolve.enabled` is on in chrome.storage.local
// (the popup's toggle), a content script (auto-solve-frame.js) is registered in every frame of the sites the
// extension may act on (its host permissions); each frame asks this worker to solve what the page detector finds
// there (`{ cmd: 'autoSolveFrame' }`), and page-solver.js does it through the client (pageTask, solve with the
// journal and the IndexedDB DLQ, pageAnswer: chrome.cookies for cookie answers, injection for the others).
// Score-based widgets (v3, invisible Enterprise without a trigger) only with `autoSolve.includeScoreBased`, which
// also registers the detector's hook at document_start in the page's world (it holds a v3 page's execute() calls
// for the answer, so it is not installed where they are not solved).
import { DETECTOR, solveFrames } from './page-solver.js';

const FRAME_SCRIPT = 'captcha-dlq-auto-solve';
const HOOK_SCRIPT = 'captcha-dlq-hook';
/** A gate answered with a cookie that sends the frame back to the same gate is not solved more than this. */
const MAX_GATE_SOLVES = 2;
/** Results kept for `autoSolveResults`, newest last. */
const KEPT = 50;

const recent = [];
const gateSolves = new Map(); // `${tabId} ${url}` -> cookie answers set for it
let syncing = Promise.resolve();

/** The mode's settings: `{ enabled, includeScoreBased }`, both false unless set. */
export async function autoSolveSettings() {
  const { autoSolve = {} } = await chrome.storage.local.get('autoSolve');
  return { enabled: autoSolve.enabled === true, includeScoreBased: autoSolve.includeScoreBased === true };
}

/** Registers the content scripts when the mode is on, unregisters them when off (one change at a time). */
export function syncAutoSolve() {
  syncing = syncing.catch(() => {}).then(async () => {
    const settings = await autoSolveSettings();
    const ids = (await chrome.scripting.getRegisteredContentScripts({ ids: [FRAME_SCRIPT, HOOK_SCRIPT] })).map((s) => s.id);
    if (ids.length) await chrome.scripting.unregisterContentScripts({ ids });
    if (!settings.enabled) return settings;
    // The sites this extension may act on: its host permissions (the solving services' among them are harmless).
    const matches = chrome.runtime.getManifest().host_permissions;
    const scripts = [{ id: FRAME_SCRIPT, matches, allFrames: true, runAt: 'document_idle', js: ['auto-solve-frame.js'] }];
    if (settings.includeScoreBased) {
      scripts.push({ id: HOOK_SCRIPT, matches, allFrames: true, runAt: 'document_start', world: 'MAIN', js: [DETECTOR, 'page-hook.js'] });
    }
    await chrome.scripting.registerContentScripts(scripts);
    return settings;
  });
  return syncing;
}

/** Solves the widgets of the frame that asked (`sender`): `{ found, results }`, or `{ found: 0, off: true }`. */
export async function autoSolveFrame(client, sender) {
  const settings = await autoSolveSettings();
  if (!settings.enabled) return { found: 0, off: true };
  const tabId = sender.tab?.id;
  if (tabId === undefined) return { error: 'autoSolveFrame: not asked from a tab' };
  const key = `${tabId} ${sender.url}`;
  if ((gateSolves.get(key) ?? 0) >= MAX_GATE_SOLVES) {
    return { found: 0, note: `${sender.url} came back to its gate after ${MAX_GATE_SOLVES} cookie answers: not solved again` };
  }
  const results = await solveFrames(await client(), tabId, [sender.frameId], { includeScoreBased: settings.includeScoreBased, renew: true });
  if (results.some((r) => r.cookies)) gateSolves.set(key, (gateSolves.get(key) ?? 0) + 1);
  recent.push(...results);
  recent.splice(0, Math.max(0, recent.length - KEPT));
  return { found: results.length, results };
}

/** What the mode solved lately (the popup, tests). */
export const autoSolveResults = () => recent.slice();

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && changes.autoSolve) syncAutoSolve().catch((e) => console.warn('captcha-dlq auto-solve:', e.message));
});
