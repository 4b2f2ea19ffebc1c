// captcha-dlq for Node.js (ESM entry): the shared JS API (lib/client.js, copied from js-api/client.js by
// scripts/build.cjs; the browser package ships the same file) bound to this package's napi addon. index.cjs is the CommonJS entry
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

/**
 * Checks a webhook request's `X-Captcha-Dlq-Signature` header (`t=<unix seconds>,v1=<hex>`)
 * against its raw body, in Rust: `true`, or throws an `Error` (`code` `WEBHOOK_SIGNATURE`)
 * saying why: malformed, older or newer than `toleranceS` seconds (default 300), not matching.
 */
export function verifyWebhook(body, header, secret, toleranceS) {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return native.verifyWebhook(bytes, String(header ?? ''), String(secret ?? ''), toleranceS);
}
