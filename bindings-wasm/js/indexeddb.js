// The IndexedDB table behind `dlq: 'indexeddb:NAME'`: rows of the tables `records`, `journal`, `settled`,
// `meta` and `audit` (the audit trail, one row per entry keyed by its zero-padded id), kept as given, through the host-store protocol (docs/custom-store.md). It decides nothing:
// the lease rules, limits and checks are the core's (TableStore in Rust). Each call is one IndexedDB
// transaction; `lock`/`unlock` hold a Web Lock named after the database, so the tabs and workers that
// share it take turns.

const TABLES = ['records', 'journal', 'settled', 'meta', 'audit'];
/**
 * Versions 1 (records, journal, meta) and 2 (+ settled) were written by earlier builds: the upgrade only adds the
 * object stores they lack, so their rows stay and read the same.
 */
const VERSION = 3;

const failure = (what, e) => new Error(`IndexedDB ${what}: ${e?.name ? `${e.name}: ${e.message}` : String(e ?? 'aborted')}`);

function result(request, what) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(failure(what, request.error));
  });
}

class IndexedDbTable {
  #db;
  #lockName;
  #release = null;
  #cancel = null;

  constructor(db, name) {
    this.#db = db;
    this.#lockName = `captcha-dlq-store:${name}`;
  }

  async get(table, key) {
    const store = this.#db.transaction(table, 'readonly').objectStore(table);
    return (await result(store.get(key), 'get')) ?? null;
  }

  scan(table) {
    return result(this.#db.transaction(table, 'readonly').objectStore(table).getAll(), 'scan');
  }

  /** Every op or none: one transaction over the tables the ops touch. */
  write(ops) {
    if (ops.length === 0) return undefined;
    const tx = this.#db.transaction([...new Set(ops.map((op) => op.table))], 'readwrite');
    const done = new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onabort = () => reject(failure('write', tx.error));
    });
    try {
      for (const op of ops) {
        const store = tx.objectStore(op.table);
        if (op.op === 'put') store.put(op.row, op.key);
        else store.delete(op.key);
      }
    } catch (e) {
      tx.abort(); // none of the ops, not the ones before the failure
      done.catch(() => {});
      throw failure('write', e);
    }
    return done;
  }

  lock() {
    const locks = globalThis.navigator?.locks;
    if (!locks) return undefined;
    const cancel = new AbortController();
    this.#cancel = cancel;
    const holding = new Promise((acquired, failed) => {
      locks
        .request(this.#lockName, { signal: cancel.signal }, () => {
          acquired();
          return new Promise((release) => (this.#release = release));
        })
        .catch(failed);
    });
    // A request cancelled by `unlock` rejects; the operation that awaited it is gone.
    holding.catch(() => {});
    return holding;
  }

  /** Releases the lock, or withdraws a request not granted yet (its operation was dropped). */
  unlock() {
    const release = this.#release;
    const cancel = this.#cancel;
    this.#release = this.#cancel = null;
    if (release) release();
    else cancel?.abort();
  }
}

/** Opens (creating or upgrading) the database `name`. */
export async function openIndexedDb(name) {
  const factory = globalThis.indexedDB;
  if (!factory) throw new Error('IndexedDB is not available in this context');
  const request = factory.open(name, VERSION);
  request.onupgradeneeded = () => {
    for (const table of TABLES) {
      if (!request.result.objectStoreNames.contains(table)) request.result.createObjectStore(table);
    }
  };
  const db = await result(request, `open ${JSON.stringify(name)}`);
  // A newer build upgrading the database in another tab waits for every connection to close.
  db.onversionchange = () => db.close();
  return new IndexedDbTable(db, name);
}
