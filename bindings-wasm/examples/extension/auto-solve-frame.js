// Auto-solve mode's content script (registered by auto-solve.js while the mode is on), in every frame of the sites
// the extension may act on: asks the service worker to solve this frame's widgets. A frame whose widget loads late
// is asked about again, a few times, until something is found.
(() => {
  const TRIES = 10;
  const EVERY_MS = 1000;
  let tries = 0;
  const ask = async () => {
    tries += 1;
    let answer;
    try {
      answer = await chrome.runtime.sendMessage({ cmd: 'autoSolveFrame' });
    } catch (e) {
      console.warn('captcha-dlq auto-solve:', e.message);
      return;
    }
    if (answer?.error) console.warn('captcha-dlq auto-solve:', answer.error);
    else if (answer?.found === 0 && !answer.off && !answer.note && tries < TRIES) setTimeout(ask, EVERY_MS);
  };
  ask();
})();
