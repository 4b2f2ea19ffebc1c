//! The in-memory [`DlqStore`]: for short scripts, tests and demos. It is the
//! table store ([`crate::dlq::table`]) over rows kept in process memory, so it
//! follows exactly the lease rules every table-backed store follows.
//!
//! Nothing is written anywhere, so a crash loses the queue (use SQLite or
//! Redis for that). Unbounded unless built with [`MemoryStore::bounded`], and
//! then every eviction is reported in [`PushOutcome::evicted`] and counted in
//! [`StoreStats::dropped`].
//!
//! [`DlqStore`]: crate::dlq::DlqStore
//! [`PushOutcome::evicted`]: crate::dlq::PushOutcome::evicted
//! [`StoreStats::dropped`]: crate::dlq::StoreStats::dropped

use crate::dlq::limits::LimitedStore;
use crate::dlq::table::{MemoryTable, TableStore};
use crate::error::ConfigError;

pub use crate::dlq::table::{DEFAULT_MAX_DELIVERIES, PARKED_BY_REPLAYER};

/// The in-memory DLQ store. See the module documentation.
pub type MemoryStore = TableStore<MemoryTable>;

impl TableStore<MemoryTable> {
    /// An unbounded store with the default delivery limit (10).
    pub fn new() -> Self {
        TableStore::over(MemoryTable::new())
    }

    /// A store holding at most `capacity` records: when a push goes over, the
    /// oldest ready record is evicted (else the oldest parked one; records under
    /// a lease are never evicted, so the store may briefly hold more).
    pub fn bounded(capacity: u64) -> Result<Self, ConfigError> {
        MemoryStore::new().with_capacity(capacity)
    }
}

impl Default for TableStore<MemoryTable> {
    fn default() -> Self {
        MemoryStore::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlq::record::RecordState;
    use crate::dlq::store::{DlqStore, Filter};
    use crate::dlq::testkit::{at, run_store_suite, sample_record, CASES};
    use core::time::Duration;
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
        assert_eq!((store.limits().capacity(), store.limits().max_deliveries()), (Some(3), 2));
        assert_eq!(MemoryStore::default().limits(), crate::dlq::StoreLimits::default());
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
