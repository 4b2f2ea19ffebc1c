// The popup: shows the DLQ count kept by the service worker and replays the queue on request; its toggles set the
// auto-solve mode (`autoSolve` in chrome.storage.local, which the service worker follows: auto-solve.js).
const ask = (message) => chrome.runtime.sendMessage(message);
const countEl = document.getElementById('count');
const statusEl = document.getElementById('status');

async function refresh() {
  const count = await ask({ cmd: 'count' });
  countEl.textContent = typeof count === 'number' ? String(count) : `error: ${count?.error}`;
  countEl.dataset.ready = 'true';
}

document.getElementById('replay').addEventListener('click', async () => {
  statusEl.textContent = 'replaying…';
  const report = await ask({ cmd: 'replay' });
  statusEl.textContent = report.error
    ? `error: ${report.error}`
    : `recovered ${report.recovered}, failed again ${report.failedAgain}, parked ${report.parked}`;
  statusEl.dataset.done = 'true';
  await refresh();
});

refresh();

const autoEl = document.getElementById('auto-solve');
const scoreEl = document.getElementById('auto-score');
chrome.storage.local.get('autoSolve').then(({ autoSolve = {} }) => {
  autoEl.checked = autoSolve.enabled === true;
  scoreEl.checked = autoSolve.includeScoreBased === true;
  autoEl.dataset.ready = 'true';
});
for (const el of [autoEl, scoreEl]) {
  el.addEventListener('change', () =>
    chrome.storage.local.set({ autoSolve: { enabled: autoEl.checked, includeScoreBased: scoreEl.checked } }),
  );
}
