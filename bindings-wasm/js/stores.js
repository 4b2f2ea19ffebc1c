// The browser's built-in dead-letter stores: IndexedDB (durable) and memory.
// Both are one set of lease rules (`LeaseStore`) over a small table backend, and
// the wasm drives them through the host-store contract (`src/store/js.rs`),
// exactly as it drives a store an extension writes itself. They are plain JS
// because IndexedDB is a JS API: written here they cost the .wasm nothing.
//
// Lease rules are the core's `MemoryStore` rules (core/src/dlq/memory.rs),
// checked by the same conformance suite (`dlq::testkit`) in Chromium:
// - a lease is live while now < lease_until; a live lease shows as `leased`
//   and no other receiver gets the record;
// - an expired lease makes the record receivable again, but its token stays
//   valid until the record is delivered again;
// - a record is delivered at most `maxDeliveries` times (receive parks a
//   record whose expired lease was its last delivery; abandon parks at the limit);
// - push of a leased id replaces the content but keeps the lease, unless the
//   pushed record is parked; push drops the journal entry of the same id in
//   the same transaction;
// - abandon(update) stores the update with the store's own delivery count.
//
// Values are the serde JSON shapes (schema-1 records, RFC 3339 times). The
// IndexedDB layout: object stores `records` ({record, lease_nonce?,
// lease_until?, keys?} by id), `journal` (entries by id) and `meta`
// (`counters`: schema, dropped, completed, abandoned, sequence).

const RECORDS = 'records';
const JOURNAL = 'journal';
const META = 'meta';
const COUNTERS = 'counters';
/** The layout version this build writes and reads. */
const STORE_SCHEMA = 1;
const DEFAULT_MAX_DELIVERIES = 10;
const MAX_DELIVERY_COUNT_EXCEEDED = 'MaxDeliveryCountExceeded';
const PARKED_BY_REPLAYER = 'ParkedByReplayer';
/** 9999-12-31T23:59:59.999Z, the last instant RFC 3339 can write. */
const LAST_MS = 253402300799999;

/** Milliseconds of an RFC 3339 time. */
const ms = (text) => Date.parse(text);
const iso = (millis) => new Date(Math.min(millis, LAST_MS)).toISOString();

function storeError(code, message, extra) {
  return Object.assign(new Error(message), { code }, extra);
}

function leaseLost(id) {
  return storeError('LEASE_LOST', `the lease on record ${id} was lost`, { id });
}

/** Oldest first, by dead_lettered_at then id (the order of a page). */
function oldestFirst(slots) {
  return slots
    .map((slot) => [ms(slot.record.dead_lettered_at), slot])
    .sort(([a, x], [b, y]) => a - b || (x.record.id < y.record.id ? -1 : x.record.id > y.record.id ? 1 : 0))
    .map(([, slot]) => slot);
}

/** Lease rules over a table backend; implements the host-store contract. */
export class LeaseStore {
  /**
   * @param backend `begin(write)` resolving to a transaction (see MemoryTable)
   * @param keysOf  record => {sitekey, page_host}, derived by the core (filters name them)
   */
  constructor(backend, keysOf, maxDeliveries = DEFAULT_MAX_DELIVERIES) {
    this.backend = backend;
    this.keysOf = keysOf;
    this.maxDeliveries = maxDeliveries;
  }

  state(slot, now) {
    if (slot.record.state === 'parked') return 'parked';
    return this.liveLease(slot, now) ? 'leased' : 'ready';
  }

  liveLease(slot, now) {
    return slot.lease_until != null && ms(now) < ms(slot.lease_until);
  }

  holds(slot, token) {
    return slot.record.state !== 'parked' && slot.lease_nonce != null && slot.lease_nonce === token.nonce;
  }

  view(slot, now) {
    return { ...slot.record, state: this.state(slot, now) };
  }

  keys(slot) {
    if (!slot.keys) slot.keys = this.keysOf(slot.record);
    return slot.keys;
  }

  matches(filter, slot, state) {
    const r = slot.record;
    const any = (list, value) => !list || list.length === 0 || list.includes(value);
    if (!any(filter.ids, r.id) || !any(filter.reasons, r.reason) || !any(filter.classes, r.class)) return false;
    if (!any(filter.states, state)) return false;
    if (filter.sitekey != null && this.keys(slot).sitekey !== filter.sitekey) return false;
    if (filter.page_host != null && this.keys(slot).page_host !== filter.page_host) return false;
    for (const [k, v] of Object.entries(filter.labels ?? {})) {
      if (r.labels?.[k] !== v) return false;
    }
    const at = ms(r.dead_lettered_at);
    if (filter.dead_lettered_before != null && !(at < ms(filter.dead_lettered_before))) return false;
    if (filter.dead_lettered_after != null && !(at >= ms(filter.dead_lettered_after))) return false;
    return true;
  }

  /** Writes `slot`; `changed` says its record's content is new, so its filter keys are derived again. */
  put(tx, slot, changed = false) {
    if (changed || !slot.keys) slot.keys = this.keysOf(slot.record);
    tx.put(slot);
  }

  parkSlot(slot, why) {
    slot.record.state = 'parked';
    slot.record.parked_reason = why;
    delete slot.lease_nonce;
    delete slot.lease_until;
  }

  async matching(filter, now) {
    const tx = await this.backend.begin(false);
    const slots = await tx.slots();
    await tx.commit();
    return oldestFirst(slots).filter((slot) => this.matches(filter, slot, this.state(slot, now)));
  }

  async push(record) {
    const tx = await this.backend.begin(true);
    tx.journalDelete(record.id);
    if (record.state === 'leased') record.state = 'ready'; // a lease is the store's bookkeeping
    if (record.state !== 'parked') delete record.parked_reason;
    const old = await tx.slot(record.id);
    const slot = { record };
    // Keep the lease of a replaced record so that it is not handed out twice;
    // pushing a parked record cancels it.
    if (old && record.state !== 'parked' && old.lease_nonce != null) {
      slot.lease_nonce = old.lease_nonce;
      slot.lease_until = old.lease_until;
    }
    this.put(tx, slot, true);
    await tx.commit();
    return { replaced: old !== undefined, evicted: [] };
  }

  async receive(filter, max, leaseMs, now) {
    const tx = await this.backend.begin(true);
    const counters = await tx.counters();
    const any = { ...filter, states: [] };
    const out = [];
    for (const slot of oldestFirst(await tx.slots())) {
      if (out.length >= max) break;
      if (slot.record.state === 'parked' || this.liveLease(slot, now) || !this.matches(any, slot, 'ready')) continue;
      counters.sequence += 1;
      const expired = slot.lease_nonce != null;
      delete slot.lease_nonce;
      delete slot.lease_until;
      if (slot.record.deliveries >= this.maxDeliveries) {
        this.parkSlot(slot, MAX_DELIVERY_COUNT_EXCEEDED);
      } else {
        slot.record.deliveries += 1;
        slot.lease_nonce = `${slot.record.deliveries}.${counters.sequence}`;
        slot.lease_until = iso(ms(now) + leaseMs);
        out.push({
          token: { id: slot.record.id, nonce: slot.lease_nonce },
          record: { ...slot.record, state: 'leased' },
          lease_until: slot.lease_until,
        });
      }
      if (expired) counters.abandoned += 1;
      this.put(tx, slot);
    }
    tx.putCounters(counters);
    await tx.commit();
    return out;
  }

  async complete(token) {
    const tx = await this.backend.begin(true);
    const slot = await tx.slot(token.id);
    if (!slot || !this.holds(slot, token)) throw leaseLost(token.id);
    const counters = await tx.counters();
    counters.completed += 1;
    tx.delete(token.id);
    tx.putCounters(counters);
    await tx.commit();
  }

  async abandon(token, update) {
    const tx = await this.backend.begin(true);
    const slot = await tx.slot(token.id);
    if (!slot || !this.holds(slot, token)) throw leaseLost(token.id);
    delete slot.lease_nonce;
    delete slot.lease_until;
    let parkWhy = null;
    if (update) {
      // The token names the record; the store owns the delivery count.
      update.id = token.id;
      update.deliveries = slot.record.deliveries;
      if (update.state === 'parked') parkWhy = update.parked_reason ?? PARKED_BY_REPLAYER;
      update.state = 'ready';
      delete update.parked_reason;
      slot.record = update;
    }
    if (parkWhy === null && slot.record.deliveries >= this.maxDeliveries) parkWhy = MAX_DELIVERY_COUNT_EXCEEDED;
    if (parkWhy !== null) this.parkSlot(slot, parkWhy);
    const counters = await tx.counters();
    counters.abandoned += 1;
    this.put(tx, slot, update != null);
    tx.putCounters(counters);
    await tx.commit();
    return parkWhy === null ? 'ready' : 'parked';
  }

  async park(id, reason) {
    const tx = await this.backend.begin(true);
    const slot = await tx.slot(id);
    if (!slot) return false;
    this.parkSlot(slot, reason);
    this.put(tx, slot);
    await tx.commit();
    return true;
  }

  async unpark(id) {
    const tx = await this.backend.begin(true);
    const slot = await tx.slot(id);
    if (!slot || slot.record.state !== 'parked') return false;
    slot.record.state = 'ready';
    delete slot.record.parked_reason;
    slot.record.deliveries = 0;
    this.put(tx, slot);
    await tx.commit();
    return true;
  }

  async peek(filter, page, now) {
    const slots = await this.matching(filter, now);
    return slots.slice(page.offset, page.offset + page.limit).map((slot) => this.view(slot, now));
  }

  async count(filter, now) {
    return (await this.matching(filter, now)).length;
  }

  async purge(filter, now) {
    const tx = await this.backend.begin(true);
    let removed = 0;
    for (const slot of await tx.slots()) {
      if (this.matches(filter, slot, this.state(slot, now)) && !this.liveLease(slot, now)) {
        tx.delete(slot.record.id);
        removed += 1;
      }
    }
    await tx.commit();
    return removed;
  }

  async stats(now) {
    const tx = await this.backend.begin(false);
    const slots = await tx.slots();
    const counters = await tx.counters();
    const inFlight = await tx.journalCount();
    await tx.commit();
    const stats = {
      total: slots.length,
      ready: 0,
      leased: 0,
      parked: 0,
      dropped: counters.dropped,
      completed: counters.completed,
      abandoned: counters.abandoned,
      oldest_dead_lettered_at: null,
      in_flight: inFlight,
    };
    let oldest = Infinity;
    for (const slot of slots) {
      stats[this.state(slot, now)] += 1;
      const at = ms(slot.record.dead_lettered_at);
      if (at < oldest) {
        oldest = at;
        stats.oldest_dead_lettered_at = slot.record.dead_lettered_at;
      }
    }
    return stats;
  }

  async journalUpsert(entry) {
    const tx = await this.backend.begin(true);
    tx.journalPut(entry);
    await tx.commit();
  }

  async journalForget(id) {
    const tx = await this.backend.begin(true);
    tx.journalDelete(id);
    await tx.commit();
  }

  async journalEntries() {
    const tx = await this.backend.begin(false);
    const entries = await tx.journalAll();
    await tx.commit();
    return entries;
  }
}

function freshCounters(stored) {
  return {
    schema: stored?.schema ?? 0,
    dropped: stored?.dropped ?? 0,
    completed: stored?.completed ?? 0,
    abandoned: stored?.abandoned ?? 0,
    sequence: stored?.sequence ?? 0,
  };
}

/** Tables in this context's memory. Values are copied in and out, as IndexedDB does. */
export class MemoryTable {
  constructor() {
    this.records = new Map();
    this.journal = new Map();
    this.counters = freshCounters({ schema: STORE_SCHEMA });
  }

  async begin() {
    const copy = (v) => structuredClone(v);
    const t = this;
    return {
      slot: async (id) => (t.records.has(id) ? copy(t.records.get(id)) : undefined),
      slots: async () => [...t.records.values()].map(copy),
      put: (slot) => t.records.set(slot.record.id, copy(slot)),
      delete: (id) => t.records.delete(id),
      counters: async () => copy(t.counters),
      putCounters: (c) => (t.counters = copy(c)),
      journalPut: (entry) => t.journal.set(entry.id, copy(entry)),
      journalDelete: (id) => t.journal.delete(id),
      journalAll: async () => [...t.journal.values()].map(copy),
      journalCount: async () => t.journal.size,
      commit: async () => {},
    };
  }
}

function domMessage(what, e) {
  const text = e && e.name && e.message ? `${e.name}: ${e.message}` : String(e);
  return `IndexedDB ${what}: ${text}`;
}

/** The result of an IndexedDB request. Resumes in a microtask, so the transaction stays active. */
function done(request, what) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(storeError('STORE_BACKEND', domMessage(what, request.error)));
  });
}

/** Tables in an IndexedDB database; every operation is one transaction over the three stores. */
export class IndexedDbTable {
  constructor(db, name) {
    this.db = db;
    this.name = name;
  }

  /** Opens (creating or upgrading) the database `name`; refuses one written by a newer layout. */
  static async open(name) {
    if (!name) throw storeError('STORE_BACKEND', 'an IndexedDB store needs a database name');
    const factory = globalThis.indexedDB;
    if (!factory) throw storeError('STORE_BACKEND', 'IndexedDB is not available in this context');
    const request = factory.open(name, 1);
    request.onupgradeneeded = () => {
      const db = request.result;
      for (const store of [RECORDS, JOURNAL, META]) {
        if (!db.objectStoreNames.contains(store)) db.createObjectStore(store);
      }
    };
    const db = await done(request, `open ${JSON.stringify(name)}`);
    const table = new IndexedDbTable(db, name);
    const tx = await table.begin(true);
    const counters = await tx.counters();
    if (counters.schema > STORE_SCHEMA) {
      tx.abort();
      db.close();
      throw storeError(
        'NEWER_SCHEMA',
        `the store at indexeddb:${name} has schema version ${counters.schema}; this build reads up to ${STORE_SCHEMA}`,
      );
    }
    if (counters.schema === 0) {
      counters.schema = STORE_SCHEMA;
      tx.putCounters(counters);
    }
    await tx.commit();
    return table;
  }

  close() {
    this.db.close();
  }

  async begin(write) {
    let tx;
    try {
      tx = this.db.transaction([RECORDS, JOURNAL, META], write ? 'readwrite' : 'readonly');
    } catch (e) {
      throw storeError('STORE_BACKEND', domMessage('transaction', e));
    }
    const committed = new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve();
      // A failed request aborts the transaction, so `abort` covers errors.
      tx.onabort = () => reject(storeError('STORE_BACKEND', domMessage('commit', tx.error ?? 'transaction aborted')));
    });
    committed.catch(() => {}); // observed by commit(); an early throw must not leave it unhandled
    const records = tx.objectStore(RECORDS);
    const journal = tx.objectStore(JOURNAL);
    const meta = tx.objectStore(META);
    return {
      slot: (id) => done(records.get(id), 'get'),
      slots: () => done(records.getAll(), 'getAll'),
      put: (slot) => records.put(slot, slot.record.id),
      delete: (id) => records.delete(id),
      counters: async () => freshCounters(await done(meta.get(COUNTERS), 'get')),
      putCounters: (c) => meta.put(c, COUNTERS),
      journalPut: (entry) => journal.put(entry, entry.id),
      journalDelete: (id) => journal.delete(id),
      journalAll: () => done(journal.getAll(), 'getAll'),
      journalCount: () => done(journal.count(), 'count'),
      abort: () => tx.abort(),
      commit: () => committed,
    };
  }
}

/** The `"memory"` store. */
export function memoryStore(keysOf) {
  return new LeaseStore(new MemoryTable(), keysOf);
}

/** The `"indexeddb:NAME"` store. */
export async function indexedDbStore(name, keysOf) {
  return new LeaseStore(await IndexedDbTable.open(name), keysOf);
}
