// captcha-dlq-web (browser entry): the shared JS API (lib/client.js, copied from js-api/ by build.sh; the Node package ships the same file)
// bound to this package's wasm module, which exports the native surface of docs/bindings.md. The module is
// compiled once, on the first client, from next to this file (pages, workers and extension service workers
// all resolve it through import.meta.url). index.d.ts (js-api/index.d.ts) types both packages.
import init, { open } from './wasm/captcha_dlq_wasm.js';
import { bind } from './lib/client.js';

let loading = null;

const native = {
  /** `dlqRetention.archive` is a function here: a browser has no file to append to. */
  archiveFunctions: true,
  // `_onAdopted`: the browser's stores keep no fleet, so nothing is ever adopted.
  async open(options, store, onEvent, _onAdopted, archive) {
    loading ??= init();
    await loading;
    return open(options, store, onEvent, archive);
  },
};

export const {
  Client,
  Dlq,
  CaptchaDlqError,
  SolveFailed,
  AccountError,
  InvalidTask,
  InvalidConfig,
  StoreError,
  ProviderError,
  Cancelled,
  Closed,
  Aborted,
} = bind(native);
