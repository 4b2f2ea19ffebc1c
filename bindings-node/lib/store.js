// Adapts an app's store object (async methods push, receive, ... see index.d.ts
// `DlqStoreObject`) to the single dispatcher the addon calls through a threadsafe
// function. The dispatcher never throws: failures travel back as {error, kind}.
'use strict';

const { configError } = require('./errors');

const METHODS = [
  'push',
  'receive',
  'complete',
  'abandon',
  'park',
  'unpark',
  'peek',
  'count',
  'purge',
  'stats',
  'journalUpsert',
  'journalForget',
  'journalEntries',
];

function isoOrNull(t) {
  if (t === undefined || t === null) return null;
  if (t instanceof Date) return t.toISOString();
  if (typeof t === 'number') return new Date(t).toISOString();
  return t;
}

function normalize(method, result) {
  if (result === undefined) return null;
  if (method === 'receive' && Array.isArray(result)) {
    return result.map((l) => {
      const until = l.leaseUntil ?? l.lease_until;
      return { token: l.token, record: l.record, lease_until: until instanceof Date ? until.getTime() : until };
    });
  }
  if (method === 'stats' && result && typeof result === 'object') {
    return { ...result, oldest_dead_lettered_at: isoOrNull(result.oldest_dead_lettered_at ?? result.oldestDeadLetteredAt) };
  }
  return result;
}

function kindOf(err) {
  const code = err && err.code;
  if (code === 'LEASE_LOST' || code === 'lease_lost') return 'lease_lost';
  if (code === 'NOT_FOUND' || code === 'not_found') return 'not_found';
  return 'backend';
}

/** Checks the object and returns `(requestJson) => Promise<replyJson>`. */
function makeDispatcher(store) {
  const missing = METHODS.filter((m) => typeof store[m] !== 'function');
  if (missing.length > 0) {
    throw configError('dlq', `the store object lacks method(s) ${missing.join(', ')}; see DlqStoreObject in index.d.ts`);
  }
  return async function dispatch(request) {
    try {
      const { method, args } = JSON.parse(request);
      if (!METHODS.includes(method)) return JSON.stringify({ error: `unknown store method ${method}` });
      const result = await store[method](...args);
      return JSON.stringify({ ok: normalize(method, result) });
    } catch (err) {
      const message = err && err.message ? String(err.message) : String(err);
      return JSON.stringify({ error: message, kind: kindOf(err), id: err && typeof err.id === 'string' ? err.id : undefined });
    }
  };
}

module.exports = { makeDispatcher, METHODS };
