// A module dedicated worker (no window) using the package: runs the seeds' batch with the DLQ in IndexedDB, the
// browser's suite and the shared JS suite (none of their tests needs a window). Answers on the MessageChannel port
// it is given. run.mjs bundles it with esbuild (workers have no import maps), resolving `captcha-dlq-web` from the
// project's node_modules; /shared/ stays a URL.
import * as pkg from 'captcha-dlq-web';
import { run as runShared } from '/shared/suite.js';
import { freshDb, seedsBatch } from './common.js';
import { run } from './suite.js';

const COMMANDS = {
  batch: (mock) => seedsBatch(mock, `indexeddb:${freshDb('worker')}`),
  suite: (mock) => run(mock),
  shared: (mock, receiver) => runShared(pkg, { mock, receiver }),
};

self.addEventListener('message', async ({ data: { cmd, mock, receiver }, ports: [port] }) => {
  try {
    port.postMessage(await COMMANDS[cmd](mock, receiver));
  } catch (e) {
    port.postMessage({ error: String(e?.stack ?? e) });
  }
});
