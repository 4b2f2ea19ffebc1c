// A module dedicated worker (no window) using the package: runs the seeds' batch with the DLQ in IndexedDB, and the
// whole JS suite (none of its tests needs a window). Answers on the MessageChannel port it is given.
import { freshDb, seedsBatch } from './common.js';
import { run } from './suite.js';

const COMMANDS = {
  batch: (mock) => seedsBatch(mock, `indexeddb:${freshDb('worker')}`),
  suite: (mock) => run(mock),
};

self.addEventListener('message', async ({ data: { cmd, mock }, ports: [port] }) => {
  try {
    port.postMessage(await COMMANDS[cmd](mock));
  } catch (e) {
    port.postMessage({ error: String(e?.stack ?? e) });
  }
});
