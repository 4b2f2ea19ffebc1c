// A DLQ store written in JavaScript: pass an instance as `new Client({ dlq: store })`.
// It keeps records in a Map (swap the Map for your database) and follows the store
// contract (see DlqStoreObject in index.d.ts): peek-lock leases, delivery counting,
// parking. The package's tests run the client end to end against it.
'use strict';

const { filterMatches } = require('captcha-dlq');

const MAX_DELIVERIES = 10;

class LeaseLost extends Error {
  constructor(id) {
    super(`the lease on record ${id} was lost`);
    this.code = 'LEASE_LOST';
    this.id = id;
  }
}

class ObjectStore {
  constructor() {
    this.records = new Map(); // id -> { record, lease: { nonce, until } | null }
    this.journal = new Map();
    this.counters = { dropped: 0, completed: 0, abandoned: 0 };
    this.sequence = 0;
    this.calls = 0;
  }

  #state(slot, now) {
    if (slot.record.state === 'parked') return 'parked';
    return slot.lease && now < slot.lease.until ? 'leased' : 'ready';
  }

  #sorted(filter, now, pred = () => true) {
    return [...this.records.values()]
      .filter((s) => pred(s) && filterMatches(filter, s.record, this.#state(s, now)))
      .sort((a, b) => Date.parse(a.record.dead_lettered_at) - Date.parse(b.record.dead_lettered_at) || (a.record.id < b.record.id ? -1 : 1));
  }

  #view(slot, now) {
    return { ...slot.record, state: this.#state(slot, now) };
  }

  #leased(token) {
    const slot = this.records.get(token.id);
    if (!slot || !slot.lease || slot.lease.nonce !== token.nonce) throw new LeaseLost(token.id);
    return slot;
  }

  async push(record) {
    this.calls++;
    const old = this.records.get(record.id);
    this.journal.delete(record.id);
    const keepLease = old && old.lease && record.state !== 'parked';
    this.records.set(record.id, { record: { ...record, state: record.state === 'parked' ? 'parked' : 'ready' }, lease: keepLease ? old.lease : null });
    return { replaced: Boolean(old), evicted: [] };
  }

  async receive(filter, max, leaseMs, now) {
    this.calls++;
    const out = [];
    const f = { ...filter, states: [] };
    for (const slot of this.#sorted(f, now, (s) => s.record.state !== 'parked' && !(s.lease && now < s.lease.until))) {
      if (out.length >= max) break;
      if (slot.lease) this.counters.abandoned++;
      slot.lease = null;
      if (slot.record.deliveries >= MAX_DELIVERIES) {
        slot.record = { ...slot.record, state: 'parked', parked_reason: 'MaxDeliveryCountExceeded' };
        continue;
      }
      slot.record = { ...slot.record, deliveries: slot.record.deliveries + 1 };
      const nonce = `${slot.record.deliveries}.${++this.sequence}`;
      slot.lease = { nonce, until: now + leaseMs };
      out.push({ token: { id: slot.record.id, nonce }, record: { ...slot.record, state: 'leased' }, leaseUntil: now + leaseMs });
    }
    return out;
  }

  async complete(token) {
    this.calls++;
    this.#leased(token);
    this.records.delete(token.id);
    this.counters.completed++;
  }

  async abandon(token, update) {
    this.calls++;
    const slot = this.#leased(token);
    const deliveries = slot.record.deliveries;
    if (update) slot.record = { ...update, deliveries };
    slot.lease = null;
    this.counters.abandoned++;
    if (slot.record.state === 'parked' || deliveries >= MAX_DELIVERIES) {
      slot.record = { ...slot.record, state: 'parked', parked_reason: slot.record.parked_reason ?? 'MaxDeliveryCountExceeded' };
      return 'parked';
    }
    slot.record = { ...slot.record, state: 'ready' };
    return 'ready';
  }

  async park(id, reason) {
    this.calls++;
    const slot = this.records.get(id);
    if (!slot) return false;
    slot.lease = null;
    slot.record = { ...slot.record, state: 'parked', parked_reason: reason };
    return true;
  }

  async unpark(id) {
    this.calls++;
    const slot = this.records.get(id);
    if (!slot || slot.record.state !== 'parked') return false;
    const { parked_reason: _, ...rest } = slot.record;
    slot.record = { ...rest, state: 'ready', deliveries: 0 };
    return true;
  }

  async peek(filter, page, now) {
    this.calls++;
    return this.#sorted(filter, now).slice(page.offset, page.offset + page.limit).map((s) => this.#view(s, now));
  }

  async count(filter, now) {
    this.calls++;
    return this.#sorted(filter, now).length;
  }

  async purge(filter, now) {
    this.calls++;
    const gone = this.#sorted(filter, now, (s) => !(s.lease && now < s.lease.until));
    for (const s of gone) this.records.delete(s.record.id);
    return gone.length;
  }

  async stats(now) {
    this.calls++;
    const slots = [...this.records.values()];
    const count = (st) => slots.filter((s) => this.#state(s, now) === st).length;
    const oldest = slots.map((s) => Date.parse(s.record.dead_lettered_at)).sort((a, b) => a - b)[0];
    return {
      total: slots.length,
      ready: count('ready'),
      leased: count('leased'),
      parked: count('parked'),
      ...this.counters,
      oldest_dead_lettered_at: oldest === undefined ? null : oldest,
      in_flight: this.journal.size,
    };
  }

  async journalUpsert(entry) {
    this.calls++;
    this.journal.set(entry.id, entry);
  }

  async journalForget(id) {
    this.calls++;
    this.journal.delete(id);
  }

  async journalEntries() {
    this.calls++;
    return [...this.journal.values()];
  }
}

module.exports = { ObjectStore, LeaseLost };
