// The popup: shows the DLQ count kept by the service worker and replays the queue on request.
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
