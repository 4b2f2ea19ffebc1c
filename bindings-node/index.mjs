// ESM entry: the same objects as the CommonJS entry (one addon instance, one class identity).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const cjs = require('./index.js');

export const {
  Client,
  Dlq,
  CaptchaDlqError,
  SolveFailed,
  AccountError,
  InvalidTask,
  ConfigError,
  StoreError,
  TransportError,
  IoError,
  ClientClosed,
  AbortError,
  evaluateVector,
  parseTask,
  filterMatches,
} = cjs;
export default cjs;
