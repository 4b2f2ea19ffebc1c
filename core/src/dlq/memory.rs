//! An in-memory [`DlqStore`]: for short scripts, tests, and as the reference
//! implementation of the store contract (it runs the same conformance suite,
//! `dlq::testkit`, as the durable backends).
//!
//! Everything lives behind one mutex; nothing is written anywhere, so a crash
//! loses the queue (use SQLite or Redis for that). Unbounded unless built with
//! [`MemoryStore::bounded`], and then every eviction is reported in
//! [`PushOutcome::evicted`] and counted in [`StoreStats::dropped`].
//!
//! Lease rules (shared by every backend, see the trait):
//! - a lease is live while `now < lease_until`; while live the record shows as
//!   `leased` and no other receiver gets it;
//! - an expired lease makes the record receivable again, but its token stays
//!   valid until the record is actually delivered again (the token is then
//!   stale), so a slow replayer that finishes before anyone else took over
//!   may still settle it;
//! - a record is never delivered more than `max_deliveries` times: `abandon`
//!   parks it at the limit, and `receive` parks (instead of delivering) a
//!   record whose expired lease was its last allowed delivery;
//! - `push` of an id that is under a lease replaces the content but keeps the
//!   lease (the record is not handed to a second replayer), unless the pushed
//!   record is parked;
//! - `abandon(update)` stores the update under the token's id with the store's
//!   own delivery count: the store, not the replayer, counts deliveries.

use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::class::reason;
use crate::dlq::record::{DeadLetterRecord, RecordState};
use crate::dlq::store::{DlqStore, Filter, LeaseToken, Leased, Page, PushOutcome, StoreError, StoreStats};
use crate::error::ConfigError;
use crate::journal::JournalEntry;
use crate::time::Timestamp;

/// Azure Service Bus's default `MaxDeliveryCount`, used by every backend unless configured.
pub const DEFAULT_MAX_DELIVERIES: u32 = 10;

/// Reason recorded when a replayer parks a record without naming a reason.
pub const PARKED_BY_REPLAYER: &str = "ParkedByReplayer";

/// The in-memory DLQ store. See the module documentation for its rules.
#[derive(Debug)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
    max_deliveries: u32,
    capacity: Option<usize>,
}

#[derive(Debug, Default)]
struct Inner {
    records: BTreeMap<String, Slot>,
    journal: BTreeMap<String, JournalEntry>,
    dropped: u64,
    completed: u64,
    abandoned: u64,
    /// Deliveries handed out by this store, ever: makes every token nonce unique
    /// (a per-record count alone would repeat after `unpark` resets it).
    sequence: u64,
}

#[derive(Debug)]
struct Slot {
    /// Stored state is `Ready` or `Parked`; `Leased` is derived from `lease`.
    record: DeadLetterRecord,
    lease: Option<Lease>,
}

#[derive(Debug)]
struct Lease {
    nonce: String,
    until: Timestamp,
}

impl Slot {
    fn state(&self, now: Timestamp) -> RecordState {
        if self.record.state == RecordState::Parked {
            RecordState::Parked
        } else if self.live_lease(now) {
            RecordState::Leased
        } else {
            RecordState::Ready
        }
    }

    fn live_lease(&self, now: Timestamp) -> bool {
        self.lease.as_ref().is_some_and(|l| now < l.until)
    }

    fn holds(&self, token: &LeaseToken) -> bool {
        self.record.state != RecordState::Parked && self.lease.as_ref().is_some_and(|l| l.nonce == token.nonce)
    }

    /// The record as callers see it: with its current state.
    fn view(&self, now: Timestamp) -> DeadLetterRecord {
        let mut record = self.record.clone();
        record.state = self.state(now);
        record
    }

    fn park(&mut self, why: &str) {
        self.record.state = RecordState::Parked;
        self.record.parked_reason = Some(why.to_string());
        self.lease = None;
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new()
    }
}

impl MemoryStore {
    /// An unbounded store with the default delivery limit (10).
    pub fn new() -> Self {
        MemoryStore { inner: Mutex::new(Inner::default()), max_deliveries: DEFAULT_MAX_DELIVERIES, capacity: None }
    }

    /// A store holding at most `capacity` records: when a push goes over, the
    /// oldest ready record is evicted (else the oldest parked one; records under
    /// a live lease are never evicted, so the store may briefly hold more).
    pub fn bounded(capacity: usize) -> Result<Self, ConfigError> {
        if capacity == 0 {
            return Err(ConfigError::new("capacity", "must be at least 1"));
        }
        Ok(MemoryStore { capacity: Some(capacity), ..MemoryStore::new() })
    }

    /// Park records after this many deliveries instead of the default 10.
    pub fn with_max_deliveries(mut self, max_deliveries: u32) -> Result<Self, ConfigError> {
        if max_deliveries == 0 {
            return Err(ConfigError::new("max_deliveries", "must be at least 1"));
        }
        self.max_deliveries = max_deliveries;
        Ok(self)
    }

    pub fn max_deliveries(&self) -> u32 {
        self.max_deliveries
    }

    pub fn capacity(&self) -> Option<usize> {
        self.capacity
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves the maps consistent
        // (every mutation is a single insert/remove), so keep going.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Oldest first, by `dead_lettered_at` then id (the order of [`Page`]).
fn sorted_ids<'a>(slots: impl Iterator<Item = (&'a String, &'a Slot)>) -> Vec<String> {
    let mut keyed: Vec<(Timestamp, &String)> = slots.map(|(id, s)| (s.record.dead_lettered_at, id)).collect();
    keyed.sort();
    keyed.into_iter().map(|(_, id)| id.clone()).collect()
}

impl Inner {
    fn matching(&self, filter: &Filter, now: Timestamp) -> Vec<String> {
        sorted_ids(self.records.iter().filter(|(_, s)| filter.matches(&s.record, s.state(now))))
    }

    /// Evicts until within `capacity`: oldest ready first, then oldest parked.
    /// `push` has no clock, so any unsettled lease counts as live: evicting a
    /// record a replayer may still be working on would lose its outcome.
    fn evict(&mut self, capacity: usize) -> Vec<String> {
        let mut evicted = Vec::new();
        for wanted in [RecordState::Ready, RecordState::Parked] {
            let candidates =
                sorted_ids(self.records.iter().filter(|(_, s)| s.lease.is_none() && s.record.state == wanted));
            for id in candidates {
                if self.records.len() <= capacity {
                    return evicted;
                }
                self.records.remove(&id);
                self.dropped += 1;
                evicted.push(id);
            }
        }
        evicted
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl DlqStore for MemoryStore {
    async fn push(&self, mut record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        let mut inner = self.lock();
        inner.journal.remove(&record.id);
        if record.state == RecordState::Leased {
            // A lease is the store's bookkeeping, not something a caller can push.
            record.state = RecordState::Ready;
        }
        if record.state != RecordState::Parked {
            record.parked_reason = None;
        }
        let id = record.id.clone();
        // Keep the lease of a replaced record so that it is not handed out twice;
        // pushing a parked record cancels it.
        let (replaced, lease) = match inner.records.remove(&id) {
            Some(old) if record.state != RecordState::Parked => (true, old.lease),
            Some(_) => (true, None),
            None => (false, None),
        };
        inner.records.insert(id, Slot { record, lease });
        let evicted = match self.capacity {
            Some(cap) => inner.evict(cap),
            None => Vec::new(),
        };
        Ok(PushOutcome { replaced, evicted })
    }

    async fn receive(
        &self,
        filter: &Filter,
        max: usize,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Vec<Leased>, StoreError> {
        let mut inner = self.lock();
        let filter = Filter { states: Vec::new(), ..filter.clone() };
        let candidates = sorted_ids(inner.records.iter().filter(|(_, s)| {
            s.record.state != RecordState::Parked && !s.live_lease(now) && filter.matches(&s.record, RecordState::Ready)
        }));
        let mut out = Vec::new();
        for id in candidates {
            if out.len() >= max {
                break;
            }
            inner.sequence += 1;
            let sequence = inner.sequence;
            let Some(slot) = inner.records.get_mut(&id) else { continue };
            let expired = slot.lease.take().is_some();
            let at_limit = slot.record.deliveries >= self.max_deliveries;
            if at_limit {
                slot.park(reason::MAX_DELIVERY_COUNT_EXCEEDED);
            } else {
                slot.record.deliveries += 1;
                let nonce = format!("{}.{}", slot.record.deliveries, sequence);
                let until = now.add(lease);
                slot.lease = Some(Lease { nonce: nonce.clone(), until });
                let mut record = slot.record.clone();
                record.state = RecordState::Leased;
                out.push(Leased { token: LeaseToken { id: id.clone(), nonce }, record, lease_until: until });
            }
            if expired {
                inner.abandoned += 1;
            }
        }
        Ok(out)
    }

    async fn complete(&self, token: &LeaseToken, _now: Timestamp) -> Result<(), StoreError> {
        let mut inner = self.lock();
        match inner.records.get(&token.id) {
            Some(slot) if slot.holds(token) => {
                inner.records.remove(&token.id);
                inner.completed += 1;
                Ok(())
            }
            _ => Err(StoreError::LeaseLost { id: token.id.clone() }),
        }
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        _now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        let mut inner = self.lock();
        let Some(slot) = inner.records.get_mut(&token.id).filter(|s| s.holds(token)) else {
            return Err(StoreError::LeaseLost { id: token.id.clone() });
        };
        slot.lease = None;
        let mut park_why = None;
        if let Some(mut update) = update {
            // The token names the record; the store owns the delivery count.
            update.id = token.id.clone();
            update.deliveries = slot.record.deliveries;
            if update.state == RecordState::Parked {
                park_why = Some(update.parked_reason.clone().unwrap_or_else(|| PARKED_BY_REPLAYER.to_string()));
            }
            update.state = RecordState::Ready;
            update.parked_reason = None;
            slot.record = update;
        }
        if park_why.is_none() && slot.record.deliveries >= self.max_deliveries {
            park_why = Some(reason::MAX_DELIVERY_COUNT_EXCEEDED.to_string());
        }
        let state = match park_why {
            Some(why) => {
                slot.park(&why);
                RecordState::Parked
            }
            None => RecordState::Ready,
        };
        inner.abandoned += 1;
        Ok(state)
    }

    async fn park(&self, id: &str, reason: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        Ok(match inner.records.get_mut(id) {
            Some(slot) => {
                slot.park(reason);
                true
            }
            None => false,
        })
    }

    async fn unpark(&self, id: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        Ok(match inner.records.get_mut(id) {
            Some(slot) if slot.record.state == RecordState::Parked => {
                slot.record.state = RecordState::Ready;
                slot.record.parked_reason = None;
                slot.record.deliveries = 0;
                true
            }
            _ => false,
        })
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        let inner = self.lock();
        Ok(inner
            .matching(filter, now)
            .iter()
            .skip(page.offset)
            .take(page.limit)
            .filter_map(|id| inner.records.get(id).map(|s| s.view(now)))
            .collect())
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let inner = self.lock();
        Ok(inner.matching(filter, now).len() as u64)
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let mut inner = self.lock();
        let mut removed = 0;
        for id in inner.matching(filter, now) {
            if inner.records.get(&id).is_some_and(|s| !s.live_lease(now)) {
                inner.records.remove(&id);
                removed += 1;
            }
        }
        Ok(removed)
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        let inner = self.lock();
        let mut stats = StoreStats {
            total: inner.records.len() as u64,
            dropped: inner.dropped,
            completed: inner.completed,
            abandoned: inner.abandoned,
            oldest_dead_lettered_at: inner.records.values().map(|s| s.record.dead_lettered_at).min(),
            in_flight: inner.journal.len() as u64,
            ..StoreStats::default()
        };
        for slot in inner.records.values() {
            match slot.state(now) {
                RecordState::Ready => stats.ready += 1,
                RecordState::Leased => stats.leased += 1,
                RecordState::Parked => stats.parked += 1,
            }
        }
        Ok(stats)
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.lock().journal.insert(entry.id.clone(), entry.clone());
        Ok(())
    }

    async fn journal_forget(&self, id: &str) -> Result<(), StoreError> {
        self.lock().journal.remove(id);
        Ok(())
    }

    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        Ok(self.lock().journal.values().cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlq::testkit::{at, run_store_suite, sample_record, CASES};
    use futures_lite::future::block_on;

    #[test]
    fn conforms_to_the_store_contract() {
        assert_eq!(block_on(run_store_suite(|| async { MemoryStore::new() })), CASES.len());
    }

    #[test]
    fn configuration_is_checked() {
        assert_eq!(MemoryStore::bounded(0).unwrap_err().field, "capacity");
        assert_eq!(MemoryStore::new().with_max_deliveries(0).unwrap_err().field, "max_deliveries");
        let store = MemoryStore::bounded(3).unwrap().with_max_deliveries(2).unwrap();
        assert_eq!((store.capacity(), store.max_deliveries()), (Some(3), 2));
        assert_eq!((MemoryStore::default().capacity(), MemoryStore::default().max_deliveries()), (None, 10));
    }

    #[test]
    fn custom_delivery_limit_parks_earlier() {
        block_on(async {
            let store = MemoryStore::new().with_max_deliveries(2).unwrap();
            store.push(sample_record("a", 0)).await.unwrap();
            let lease = Duration::from_secs(30);
            let first = store.receive(&Filter::all(), 1, lease, at(60)).await.unwrap();
            assert_eq!(store.abandon(&first[0].token, None, at(61)).await.unwrap(), RecordState::Ready);
            let second = store.receive(&Filter::all(), 1, lease, at(62)).await.unwrap();
            assert_eq!(store.abandon(&second[0].token, None, at(63)).await.unwrap(), RecordState::Parked);
        });
    }

    #[test]
    fn bounded_store_evicts_oldest_ready_and_counts_it() {
        block_on(async {
            let store = MemoryStore::bounded(2).unwrap();
            let lease = Duration::from_secs(30);
            store.push(sample_record("old", 1)).await.unwrap();
            store.push(sample_record("older", 0)).await.unwrap();
            // "older" is leased, so it is not evictable; "old" goes.
            let leased = store.receive(&Filter::all(), 1, lease, at(600)).await.unwrap();
            assert_eq!(leased[0].record.id, "older");
            let outcome = store.push(sample_record("new", 5)).await.unwrap();
            assert_eq!(outcome.evicted, vec!["old".to_string()]);
            assert!(!outcome.replaced);
            // Replacing an id never evicts.
            assert!(store.push(sample_record("new", 5)).await.unwrap().evicted.is_empty());
            // Parked records go when no ready one is left.
            assert!(store.park("new", "x", at(600)).await.unwrap());
            let outcome = store.push(sample_record("newest", 6)).await.unwrap();
            assert_eq!(outcome.evicted, vec!["newest".to_string()], "the oldest ready record is the new one");
            store.complete(&leased[0].token, at(601)).await.unwrap();
            let outcome = store.push(sample_record("last", 7)).await.unwrap();
            assert!(outcome.evicted.is_empty());
            let stats = store.stats(at(602)).await.unwrap();
            assert_eq!((stats.total, stats.dropped, stats.parked, stats.completed), (2, 2, 1, 1));
        });
    }

    #[test]
    fn bounded_store_never_evicts_live_leases() {
        block_on(async {
            let store = MemoryStore::bounded(1).unwrap();
            store.push(sample_record("a", 0)).await.unwrap();
            let leased = store.receive(&Filter::all(), 1, Duration::from_secs(30), at(60)).await.unwrap();
            let outcome = store.push(sample_record("b", 0)).await.unwrap();
            assert_eq!(outcome.evicted, vec!["b".to_string()]);
            store.complete(&leased[0].token, at(61)).await.unwrap();
            assert_eq!(store.stats(at(62)).await.unwrap().dropped, 1);
        });
    }

    #[test]
    fn pushing_a_leased_record_keeps_the_lease() {
        block_on(async {
            let store = MemoryStore::new();
            store.push(sample_record("a", 0)).await.unwrap();
            let leased = store.receive(&Filter::all(), 1, Duration::from_secs(30), at(60)).await.unwrap();
            let mut update = leased[0].record.clone();
            update.attempts = 9;
            assert!(store.push(update).await.unwrap().replaced);
            assert!(store.receive(&Filter::all(), 1, Duration::from_secs(30), at(61)).await.unwrap().is_empty());
            store.complete(&leased[0].token, at(62)).await.unwrap();
            assert_eq!(store.count(&Filter::all(), at(63)).await.unwrap(), 0);
        });
    }
}
