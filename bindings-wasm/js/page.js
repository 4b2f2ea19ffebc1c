// captcha-dlq-web/page: the page detector and injector (lib/page-detector.js, the one source the Node and Python
// packages run too) as a module for code running in the page's own world: a content script registered with
// `world: "MAIN"`, or a bundle your extension injects. It finds the widgets of this document, hands each task to
// `solve` (your bridge to the client, e.g. a message to the extension's service worker) and injects the answers.
// A service worker can do the same without this module: chrome.scripting.executeScript the file
// lib/page-detector.js into every frame (world MAIN), then call __captchaDlqPage.detect / inject (see
// examples/extension/background.js).
import './lib/page-detector.js';

const api = globalThis.__captchaDlqPage;

/** Wraps the widget clients as they load; run it before the page's scripts (`run_at: "document_start"`). */
export const hook = () => api.hook();
/** The widgets of this document: `[{ id, kind, task, supported, callback, note? }]`. */
export const detect = () => api.detect();
/** Writes `solution` where widget `id` expects it and calls the page's callback; a promise where the widget's client takes the answer itself. `note` says why no callback was called. */
export const inject = (id, solution) => api.inject(id, solution);

/**
 * Solves this document's widgets: `solve(task, widget)` resolves with a solution (`{ text, fields }`) or rejects.
 * One result per widget: `{ kind, params, injected, callbackCalled, callback, fields, note?, solution?, error? }`.
 */
export async function solveInPage(solve) {
  if (typeof solve !== 'function') throw new TypeError('solveInPage(solve): solve must be a function (task, widget) => Promise<solution>');
  return Promise.all(
    detect().map(async (widget) => {
      const result = { kind: widget.kind, params: widget.task, injected: false, callbackCalled: false, callback: widget.callback };
      if (!widget.supported || !widget.task) return { ...result, error: { code: 'NOT_SOLVABLE', message: widget.error ?? `the ${widget.kind} widget gave no task` } };
      let solution;
      try {
        solution = await solve(widget.task, widget);
      } catch (error) {
        return { ...result, error };
      }
      // A promise where the widget's client takes the answer itself (hCaptcha rendered from code, page not hooked).
      const injected = await inject(widget.id, solution);
      return { ...result, ...injected, solution, ...(injected.error ? { error: { code: 'PAGE_GONE', message: injected.error } } : {}) };
    }),
  );
}
