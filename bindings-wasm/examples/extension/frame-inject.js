// Writes an answer into one frame of a tab through the page detector the frame already holds
// (__captchaDlqPage.inject, run in the page's own world). Shared by the first solve (page-solver.js) and the
// renewals (renewals.js), so that neither imports the other.

/** Injects `solution` for widget `widgetId` of frame `frameId`: the detector's report, or `{ injected: false, error }` when the tab or frame is gone. */
export async function injectInFrame(tabId, frameId, widgetId, solution) {
  try {
    const [done] = await chrome.scripting.executeScript({
      target: { tabId, frameIds: [frameId] },
      world: 'MAIN',
      func: (id, answer) => globalThis.__captchaDlqPage.inject(id, answer),
      args: [widgetId, { text: solution.text, fields: solution.fields }],
    });
    return done.result;
  } catch (e) {
    return { injected: false, error: `the tab or frame was gone: ${e.message}` };
  }
}
