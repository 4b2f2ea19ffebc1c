//! The store rules' case table ([`rules::cases`](crate::dlq::rules::cases)) run against a store
//! through its public calls, so that one table checks the pure rule functions and every backend:
//! the table store, SQLite's SQL filters and Redis's Lua scripts.
//!
//! ```text
//! futures_lite::future::block_on(run_rule_cases(|max| async move { MemoryStore::new().with_max_deliveries(max).unwrap() }));
//! ```
//!
//! Each case gets a fresh empty store with the delivery limit it names (the default, 10, when
//! it names none). A case that the store answers otherwise panics with the case. Time is
//! virtual, as in the conformance suite ([`testkit`](crate::dlq::testkit)).

use core::future::Future;
use core::time::Duration;

use crate::class::reason;
use crate::dlq::limits::DEFAULT_MAX_DELIVERIES;
use crate::dlq::record::{DeadLetterRecord, RecordState};
use crate::dlq::rules::cases::{
    AbandonCase, ClaimCase, DeliveryCase, JournalWriteCase, LeaseCase, PushCase, SettleCase, ABANDON_CASES,
    CLAIM_CASES, DELIVERY_CASES, HOLD_CASES, JOURNAL_WRITE_CASES, LEASE_CASES, PUSH_CASES, SETTLE_CASES,
};
use crate::dlq::rules::{Abandoned, Delivery, EntryEnd};
use crate::dlq::store::{DlqStore, Filter, Page, StoreError};
use crate::dlq::testkit::{at, sample_journal_entry, sample_record};
use crate::journal::JournalEntry;

const LEASE: Duration = Duration::from_secs(30);
const RECORD: &str = "rule-case-record";
const ENTRY: &str = "rule-case-entry";
/// The reason a record pushed as parked carries.
const HELD: &str = "held for review";

/// Runs every store-checkable case of the table, each on a fresh store that `make_store` opens
/// with the delivery limit given; returns how many cases ran. The lease-holding cases
/// ([`HOLD_CASES`]) name nonces, which are the store's own: the push cases and
/// [`tokens_after_a_redelivery`] check a token's hold through the store instead.
pub async fn run_rule_cases<S, F, Fut>(mut make_store: F) -> usize
where
    S: DlqStore,
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = S>,
{
    let mut ran = 0;
    for case in LEASE_CASES {
        lease_case(case, &make_store(DEFAULT_MAX_DELIVERIES).await).await;
        ran += 1;
    }
    for case in DELIVERY_CASES {
        delivery_case(case, &make_store(case.max).await).await;
        ran += 1;
    }
    for case in ABANDON_CASES {
        abandon_case(case, &make_store(case.max).await).await;
        ran += 1;
    }
    for case in PUSH_CASES {
        push_case(case, &make_store(DEFAULT_MAX_DELIVERIES).await).await;
        ran += 1;
    }
    for case in JOURNAL_WRITE_CASES {
        journal_write_case(case, &make_store(DEFAULT_MAX_DELIVERIES).await).await;
        ran += 1;
    }
    for case in CLAIM_CASES {
        claim_case(case, &make_store(DEFAULT_MAX_DELIVERIES).await).await;
        ran += 1;
    }
    for case in SETTLE_CASES {
        settle_case(case, &make_store(DEFAULT_MAX_DELIVERIES).await).await;
        ran += 1;
    }
    tokens_after_a_redelivery(&make_store(DEFAULT_MAX_DELIVERIES).await).await;
    ran + 1
}

/// How many cases [`run_rule_cases`] runs: every case of the table but [`HOLD_CASES`], and
/// the redelivery check that stands in for them.
pub fn store_case_count() -> usize {
    crate::dlq::rules::cases::count() - HOLD_CASES.len() + 1
}

fn record(state: RecordState, deliveries: u32) -> DeadLetterRecord {
    let mut record = sample_record(RECORD, 0);
    record.state = state;
    record.deliveries = deliveries;
    record.parked_reason = (state == RecordState::Parked).then(|| HELD.to_string());
    record
}

async fn push<S: DlqStore>(store: &S, record: DeadLetterRecord) {
    if let Err(e) = store.push(record).await {
        panic!("rule cases: push failed: {e}");
    }
}

/// The one record of the store, as it shows at `now`.
async fn shown<S: DlqStore>(store: &S, secs: u64) -> DeadLetterRecord {
    match store.peek(&Filter::all(), Page::default(), at(secs)).await {
        Ok(mut records) if records.len() == 1 => records.remove(0),
        other => panic!("rule cases: peek answered {other:?}, not the one record"),
    }
}

async fn receive<S: DlqStore>(store: &S, lease: Duration, secs: u64) -> Vec<crate::dlq::store::Leased> {
    match store.receive(&Filter::all(), 1, lease, at(secs)).await {
        Ok(leased) => leased,
        Err(e) => panic!("rule cases: receive failed: {e}"),
    }
}

async fn lease_case<S: DlqStore>(case: &LeaseCase, store: &S) {
    push(store, record(case.stored, 0)).await;
    if let Some(until) = case.lease_until {
        assert_eq!(receive(store, Duration::from_secs(until), 0).await.len(), 1, "{case:?}: the lease to start from");
    }
    if case.replaying {
        let entry = sample_journal_entry(RECORD, 1);
        if let Err(e) = store.journal_upsert(&entry).await {
            panic!("{case:?}: journal_upsert failed: {e}");
        }
    }
    assert_eq!(shown(store, case.now).await.state, case.visible, "{case:?}: the state shown");
    let leased = receive(store, LEASE, case.now).await;
    assert_eq!(!leased.is_empty(), case.eligible, "{case:?}: received");
}

async fn delivery_case<S: DlqStore>(case: &DeliveryCase, store: &S) {
    push(store, record(RecordState::Ready, case.deliveries)).await;
    let leased = receive(store, LEASE, 0).await;
    match case.verdict {
        Delivery::Deliver { deliveries } => {
            assert_eq!(leased.len(), 1, "{case:?}: delivered");
            assert_eq!(leased[0].record.deliveries, deliveries, "{case:?}: the count delivered");
        }
        Delivery::Park => {
            assert!(leased.is_empty(), "{case:?}: delivered past the limit");
            let seen = shown(store, 0).await;
            assert_eq!(seen.state, RecordState::Parked, "{case:?}: parked");
            assert_eq!(seen.parked_reason.as_deref(), Some(reason::MAX_DELIVERY_COUNT_EXCEEDED), "{case:?}");
        }
    }
}

async fn abandon_case<S: DlqStore>(case: &AbandonCase, store: &S) {
    // The record is delivered once by the case: it was delivered one time fewer before.
    push(store, record(RecordState::Ready, case.deliveries - 1)).await;
    let mut leased = receive(store, LEASE, 0).await;
    assert_eq!(leased.len(), 1, "{case:?}: the lease to abandon");
    let leased = leased.remove(0);
    let update = case.asked_park.map(|why| {
        let mut update = leased.record.clone();
        update.state = RecordState::Parked;
        update.parked_reason = Some(why.to_string());
        update
    });
    let state = match store.abandon(&leased.token, update, at(1)).await {
        Ok(state) => state,
        Err(e) => panic!("{case:?}: abandon failed: {e}"),
    };
    let seen = shown(store, 1).await;
    match case.verdict {
        Abandoned::Ready => {
            assert_eq!((state, seen.state), (RecordState::Ready, RecordState::Ready), "{case:?}");
        }
        Abandoned::Parked(why) => {
            assert_eq!((state, seen.state), (RecordState::Parked, RecordState::Parked), "{case:?}");
            assert_eq!(seen.parked_reason.as_deref(), Some(why), "{case:?}: the reason");
        }
    }
}

async fn push_case<S: DlqStore>(case: &PushCase, store: &S) {
    push(store, record(RecordState::Ready, 0)).await;
    let mut leased = receive(store, LEASE, 0).await;
    assert_eq!(leased.len(), 1, "{case:?}: the lease to push over");
    let token = leased.remove(0).token;
    push(store, record(case.pushed, 1)).await;
    let expected = if case.keeps_lease { RecordState::Leased } else { case.stored };
    assert_eq!(shown(store, 1).await.state, expected, "{case:?}: the state shown");
    // The lease holds exactly when it was kept.
    let completed = store.complete(&token, at(1)).await;
    match (case.keeps_lease, completed) {
        (true, Ok(())) | (false, Err(StoreError::LeaseLost { .. })) => {}
        (_, other) => panic!("{case:?}: complete with the old token answered {other:?}"),
    }
}

/// An expired lease still holds until the record is delivered again; then it does not.
async fn tokens_after_a_redelivery<S: DlqStore>(store: &S) {
    push(store, record(RecordState::Ready, 0)).await;
    let first = receive(store, LEASE, 0).await;
    let second = receive(store, LEASE, 40).await;
    assert_eq!((first.len(), second.len()), (1, 1), "a record whose lease expired is delivered again");
    let old = store.complete(&first[0].token, at(41)).await;
    assert!(matches!(old, Err(StoreError::LeaseLost { .. })), "the first token after a redelivery: {old:?}");
    let new = store.complete(&second[0].token, at(41)).await;
    assert!(new.is_ok(), "the second token: {new:?}");
}

fn entry(owner: Option<&str>, attempts: u32) -> JournalEntry {
    let mut entry = sample_journal_entry(ENTRY, attempts);
    entry.owner = owner.map(str::to_string);
    entry
}

/// The journal entry the store holds, if any.
async fn held<S: DlqStore>(store: &S) -> Option<JournalEntry> {
    held_by(store, ENTRY).await
}

/// The journal entry `id`, if the store holds one.
async fn held_by<S: DlqStore>(store: &S, id: &str) -> Option<JournalEntry> {
    match store.journal_entries().await {
        Ok(entries) => entries.into_iter().find(|e| e.id == id),
        Err(e) => panic!("rule cases: journal_entries failed: {e}"),
    }
}

async fn hold<S: DlqStore>(store: &S, held: Option<Option<&str>>) {
    if let Some(owner) = held {
        if let Err(e) = store.journal_upsert(&entry(owner, 1)).await {
            panic!("rule cases: the entry to start from: {e}");
        }
    }
}

async fn journal_write_case<S: DlqStore>(case: &JournalWriteCase, store: &S) {
    hold(store, case.held).await;
    let written = entry(case.writer, 2);
    let answer =
        if case.must_exist { store.journal_update(&written).await } else { store.journal_upsert(&written).await };
    match (case.allowed, answer) {
        (true, Ok(())) | (false, Err(StoreError::Taken { .. })) => {}
        (_, other) => panic!("{case:?}: the write answered {other:?}"),
    }
    let attempts = held(store).await.map(|e| e.attempts);
    let expected = if case.allowed { Some(2) } else { case.held.map(|_| 1) };
    assert_eq!(attempts, expected, "{case:?}: the entry kept");
}

async fn claim_case<S: DlqStore>(case: &ClaimCase, store: &S) {
    hold(store, case.held).await;
    let claimed = match store.journal_claim(ENTRY, case.from, case.to).await {
        Ok(claimed) => claimed,
        Err(e) => panic!("{case:?}: journal_claim failed: {e}"),
    };
    assert_eq!(claimed.is_some(), case.allowed, "{case:?}: claimed");
    let owner = held(store).await.map(|e| e.owner);
    let expected =
        if case.allowed { Some(case.to.map(str::to_string)) } else { case.held.map(|o| o.map(str::to_string)) };
    assert_eq!(owner, expected, "{case:?}: the owner kept");
}

/// A replay of the record (an entry with its id and a task key) ends as the case says; the entry
/// is gone and its key settled as the rule says, at the time the rule says.
async fn settle_case<S: DlqStore>(case: &SettleCase, store: &S) {
    const KEY: &str = "rule-case-key";
    let mut replay = sample_journal_entry(RECORD, 1);
    replay.key = Some(KEY.to_string());
    let journal = |entry: JournalEntry| async move {
        if let Err(e) = store.journal_upsert(&entry).await {
            panic!("{case:?}: the replay's entry: {e}");
        }
    };
    let pushed = record(RecordState::Ready, 0);
    let at_end = match case.end {
        EntryEnd::Pushed => {
            journal(replay).await;
            push(store, pushed.clone()).await;
            pushed.dead_lettered_at
        }
        EntryEnd::Forgotten => {
            journal(replay).await;
            if let Err(e) = store.journal_forget(RECORD, at(5)).await {
                panic!("{case:?}: journal_forget failed: {e}");
            }
            at(5)
        }
        EntryEnd::Abandoned => {
            push(store, pushed).await;
            let leased = receive(store, LEASE, 0).await;
            assert_eq!(leased.len(), 1, "{case:?}: the lease to abandon");
            journal(replay).await;
            if let Err(e) = store.abandon(&leased[0].token, None, at(5)).await {
                panic!("{case:?}: abandon failed: {e}");
            }
            at(5)
        }
    };
    assert!(held_by(store, RECORD).await.is_none(), "{case:?}: the entry is gone");
    let settled = match store.settled(KEY).await {
        Ok(settled) => settled,
        Err(e) => panic!("{case:?}: settled failed: {e}"),
    };
    let got: Vec<_> = settled.iter().map(|s| (s.key.as_str(), s.id.as_str(), s.outcome, s.at)).collect();
    let expected: Vec<_> = case.settled.map(|outcome| (KEY, RECORD, outcome, at_end)).into_iter().collect();
    assert_eq!(got, expected, "{case:?}: the key settled");
}

#[cfg(test)]
mod tests {
    use super::run_rule_cases;
    use crate::dlq::limits::LimitedStore;
    use crate::dlq::memory::MemoryStore;
    use crate::dlq::rules::cases;

    #[test]
    fn the_table_store_answers_every_rule_case() {
        let ran = futures_lite::future::block_on(run_rule_cases(|max| async move {
            MemoryStore::new().with_max_deliveries(max).expect("a limit of at least 1")
        }));
        assert_eq!(ran, super::store_case_count());
        assert!(ran > cases::HOLD_CASES.len());
    }
}
