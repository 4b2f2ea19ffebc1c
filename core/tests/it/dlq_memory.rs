//! The store conformance suite against `MemoryStore`, plus a whole replay
//! round of the seeds' batch driven by `ReplayPolicy`.

use core::time::Duration;

use captcha_dlq_core::class::reason;
use captcha_dlq_core::dlq::testkit::{at, run_case, run_store_suite, sample_record, CASES};
use captcha_dlq_core::dlq::{
    DlqStore, Filter, LimitedStore, MemoryStore, RecordState, ReplayDecision, ReplayPolicy, ReplayReport,
};
use captcha_dlq_core::ErrorClass;
use futures_lite::future::block_on;

#[test]
fn memory_store_passes_the_conformance_suite() {
    let ran = block_on(run_store_suite(|| async { MemoryStore::new() }));
    assert_eq!(ran, CASES.len());
}

#[test]
fn a_bounded_store_with_room_passes_too() {
    let ran = block_on(run_store_suite(|| async { MemoryStore::bounded(1000).unwrap() }));
    assert_eq!(ran, CASES.len());
}

#[test]
#[should_panic(expected = "[park_after_max_deliveries] state after abandoning delivery 3 (limit 10)")]
fn the_suite_catches_a_store_with_another_delivery_limit() {
    let store = MemoryStore::new().with_max_deliveries(3).unwrap();
    block_on(run_case("park_after_max_deliveries", &store));
}

/// The seeds' batch: two tasks dead-lettered with `attempts: 4`; one replay of
/// two attempts each; one recovers, the other fails again and is parked.
#[test]
fn replay_round_of_the_seeds_batch() {
    block_on(async {
        let store = MemoryStore::new();
        let policy = ReplayPolicy::default();
        let unsolvable = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R01", 0);
        let mut timeout = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R02", 1);
        timeout.reason = reason::TIMEOUT.into();
        let mut wrong_url = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R03", 2);
        wrong_url.reason = "ERROR_PAGEURL".into();
        wrong_url.class = ErrorClass::FixInput;
        for r in [unsolvable, timeout, wrong_url] {
            store.push(r).await.unwrap();
        }

        let filter = policy.auto_filter().unwrap();
        let now = at(3600);
        let leased = store.receive(&filter, 100, policy.lease(), now).await.unwrap();
        let mut report = ReplayReport { received: leased.len() as u64, ..ReplayReport::default() };
        for l in leased {
            let decision = policy.decide(&l.record, false);
            report.count_decision(&decision);
            assert_eq!(decision, ReplayDecision::Replay { attempts_allowed: 2 });
            if l.record.reason == reason::TIMEOUT {
                store.complete(&l.token, now.add(Duration::from_secs(40))).await.unwrap();
                report.recovered += 1;
            } else {
                let mut again = l.record.clone();
                again.attempts += 2;
                again.replays += 1;
                let next = policy.decide(&again, false);
                let ReplayDecision::Park { reason } = next else { panic!("expected Park, got {next:?}") };
                again.state = RecordState::Parked;
                again.parked_reason = Some(reason);
                let state = store.abandon(&l.token, Some(again), now.add(Duration::from_secs(60))).await.unwrap();
                assert_eq!(state, RecordState::Parked);
                report.failed_again += 1;
                report.parked += 1;
            }
        }
        assert_eq!(
            report,
            ReplayReport { received: 2, retried: 2, recovered: 1, failed_again: 1, parked: 1, skipped: 0 }
        );
        let stats = store.stats(now.add(Duration::from_secs(61))).await.unwrap();
        assert_eq!((stats.total, stats.ready, stats.parked, stats.completed, stats.abandoned), (2, 1, 1, 1, 1));
        // The fix_input record is still waiting for review, untouched.
        let waiting = store
            .peek(&Filter { states: vec![RecordState::Ready], ..Filter::default() }, Default::default(), now)
            .await
            .unwrap();
        assert_eq!(waiting.len(), 1);
        assert_eq!((waiting[0].reason.as_str(), waiting[0].deliveries), ("ERROR_PAGEURL", 0));
        let parked = store
            .peek(&Filter { states: vec![RecordState::Parked], ..Filter::default() }, Default::default(), now)
            .await
            .unwrap();
        assert_eq!(parked[0].parked_reason.as_deref(), Some(reason::MAX_DELIVERY_COUNT_EXCEEDED));
        assert_eq!((parked[0].attempts, parked[0].replays), (6, 1));
    });
}
