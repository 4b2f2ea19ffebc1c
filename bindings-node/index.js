// captcha-dlq for Node.js (ESM entry): the shared JS API (lib/client.js, the same file the
// browser package ships) bound to this package's napi addon. index.cjs is the CommonJS entry
// (the same module, through Node's require() of ES modules); index.d.ts types both.
import { createRequire } from 'node:module';
import { bind } from './lib/client.js';

const require = createRequire(import.meta.url);
const native = require('./native.cjs');

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

