//! The store conformance suite: one case per clause of the [`DlqStore`]
//! contract, each on a fresh empty store. Every backend (memory, SQLite,
//! Redis, IndexedDB) runs it, so they all behave alike:
//!
//! ```text
//! futures_lite::future::block_on(run_store_suite(|| async { MemoryStore::new() }));
//! ```
//!
//! The store under test must use the default delivery limit (10). Cases
//! panic with the case name and what differed. Time is virtual: the cases pass
//! timestamps around 2026-11-21T10:00Z and never sleep.

use core::future::Future;
use core::time::Duration;
use std::collections::BTreeMap;

use crate::class::{reason, ErrorClass};
#[cfg(feature = "edit")]
use crate::dlq::edit::{Edit, Edited};
use crate::dlq::record::{DeadLetterRecord, HistoryEntry, Phase, RecordState, SCHEMA};
use crate::dlq::rules::PARKED_BY_REPLAYER;
#[cfg(feature = "edit")]
use crate::dlq::store::EditWrite;
use crate::dlq::store::{DlqStore, Filter, LeaseToken, Leased, Page, SettledKey, Settlement, StoreError};
use crate::journal::JournalEntry;
use crate::solution::Solution;
use crate::support::time::Timestamp;
use crate::task::ValidTask;

/// 2026-11-21T10:00:00Z, the suite's "now" before any time passes.
pub const T0: Timestamp = Timestamp::from_unix_millis(1_795_255_200_000);

/// The delivery limit every backend uses unless configured otherwise.
pub const DEFAULT_MAX_DELIVERIES: u32 = 10;

const LEASE: Duration = Duration::from_secs(30);

/// `T0` plus `secs` seconds.
pub fn at(secs: u64) -> Timestamp {
    T0.add(Duration::from_secs(secs))
}

/// A reCAPTCHA v2 task, built through its serde form (the stable contract of `Task`).
pub fn sample_task(sitekey: &str, page_url: &str) -> ValidTask {
    let value = serde_json::json!({"type": "recaptcha_v2", "sitekey": sitekey, "page_url": page_url});
    match serde_json::from_value(value) {
        Ok(task) => task,
        Err(e) => panic!("testkit: cannot build a recaptcha_v2 task from its serde form: {e}"),
    }
}

/// A complete record (labels, two history entries) dead-lettered `minutes` after `T0`.
pub fn sample_record(id: &str, minutes: u64) -> DeadLetterRecord {
    let dead_lettered_at = at(minutes * 60);
    let first_failed_at = at((minutes * 60).saturating_sub(26));
    DeadLetterRecord {
        schema: SCHEMA,
        id: id.to_string(),
        task: sample_task("6Le-SITEKEY", "https://example.com/page/2"),
        provider: "captchaai".to_string(),
        reason: "ERROR_CAPTCHA_UNSOLVABLE".to_string(),
        description: "the solver could not solve the challenge (res.php, provider task 71823460)".to_string(),
        class: ErrorClass::TaskTerminal,
        attempts: 4,
        replays: 0,
        history: vec![
            HistoryEntry {
                at: first_failed_at,
                phase: Phase::Submit,
                error: "HTTP 502".to_string(),
                provider_task_id: None,
                http_status: Some(502),
                provider: None,
            },
            HistoryEntry {
                at: dead_lettered_at,
                phase: Phase::Poll,
                error: "ERROR_CAPTCHA_UNSOLVABLE".to_string(),
                provider_task_id: Some("71823460".to_string()),
                http_status: Some(200),
                provider: Some("captchaai".to_string()),
            },
        ],
        first_failed_at,
        dead_lettered_at,
        labels: BTreeMap::from([("job".to_string(), "scrape-42".to_string())]),
        state: RecordState::Ready,
        deliveries: 0,
        parked_reason: None,
        solution: None,
    }
}

/// An in-flight journal entry.
pub fn sample_journal_entry(id: &str, attempts: u32) -> JournalEntry {
    JournalEntry {
        id: id.to_string(),
        task: sample_task("6Le-SITEKEY", "https://example.com/page/1"),
        provider: "captchaai".to_string(),
        labels: BTreeMap::from([("job".to_string(), "scrape-42".to_string())]).into(),
        provider_task_id: Some("71823461".to_string()),
        attempts,
        replays: 0,
        history: Vec::new(),
        accepted_at: T0,
        updated_at: at(5),
        replay_of: None,
        owner: None,
        key: None,
        solution: None,
        wanted_until: None,
    }
}

/// The cases [`run_store_suite`] runs, in order: every one this build has. Editing
/// (`replace_edited`, feature `edit`) and the audit trail (feature `audit`) come last; the
/// browser build leaves both out (decisions 0053 and 0054 in docs/decisions/).
pub const CASES: &[&str] = &[
    "push_peek_round_trip",
    "push_is_an_upsert",
    "push_forgets_the_journal_entry",
    "receive_oldest_first_up_to_max",
    "peek_pages",
    "filters",
    "lease_is_exclusive",
    "expired_lease_is_redelivered",
    "complete_removes",
    "complete_many_answers_each_token",
    "abandon_with_update",
    "park_after_max_deliveries",
    "expired_leases_count_toward_the_limit",
    "park_and_unpark",
    "purge_skips_live_leases",
    "purge_unchanged_deletes_only_the_version_read",
    "count_and_stats",
    "journal",
    "journal_keeps_solutions_and_keys",
    "receive_skips_records_being_replayed",
    "forget_settles_the_key_and_the_replayed_record",
    "push_settles_the_key_and_abandon_forgets_the_entry",
    "settled_keys_by_prefix",
    "journal_claim_is_a_compare_and_set",
    "journal_upsert_is_fenced_by_the_owner",
    #[cfg(feature = "edit")]
    "replace_edited_changes_only_task_labels_and_history",
    #[cfg(feature = "edit")]
    "replace_edited_refuses_leases_replays_and_stale_reads",
    #[cfg(feature = "audit")]
    "audit_lists_newest_first_before_a_cursor",
    #[cfg(feature = "audit")]
    "audit_keeps_every_entry_as_written",
];

/// Runs every case on a fresh store from `make_empty_store`; returns the number of cases run.
pub async fn run_store_suite<S, F, Fut>(mut make_empty_store: F) -> usize
where
    S: DlqStore,
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
{
    let mut ran = 0;
    for case in CASES {
        let store = make_empty_store().await;
        run_case(case, &store).await;
        ran += 1;
    }
    ran
}

/// Runs one named case on `store` (which must be empty); panics on an unknown name.
pub async fn run_case<S: DlqStore>(case: &str, store: &S) {
    match case {
        "push_peek_round_trip" => push_peek_round_trip(store).await,
        "push_is_an_upsert" => push_is_an_upsert(store).await,
        "push_forgets_the_journal_entry" => push_forgets_the_journal_entry(store).await,
        "receive_oldest_first_up_to_max" => receive_oldest_first_up_to_max(store).await,
        "peek_pages" => peek_pages(store).await,
        "filters" => filters(store).await,
        "lease_is_exclusive" => lease_is_exclusive(store).await,
        "expired_lease_is_redelivered" => expired_lease_is_redelivered(store).await,
        "complete_removes" => complete_removes(store).await,
        "complete_many_answers_each_token" => complete_many_answers_each_token(store).await,
        "abandon_with_update" => abandon_with_update(store).await,
        "park_after_max_deliveries" => park_after_max_deliveries(store).await,
        "expired_leases_count_toward_the_limit" => expired_leases_count_toward_the_limit(store).await,
        "park_and_unpark" => park_and_unpark(store).await,
        "purge_skips_live_leases" => purge_skips_live_leases(store).await,
        "purge_unchanged_deletes_only_the_version_read" => purge_unchanged_deletes_only_the_version_read(store).await,
        "count_and_stats" => count_and_stats(store).await,
        "journal" => journal(store).await,
        "journal_keeps_solutions_and_keys" => journal_keeps_solutions_and_keys(store).await,
        "receive_skips_records_being_replayed" => receive_skips_records_being_replayed(store).await,
        "forget_settles_the_key_and_the_replayed_record" => forget_settles_the_key_and_the_replayed_record(store).await,
        "push_settles_the_key_and_abandon_forgets_the_entry" => {
            push_settles_the_key_and_abandon_forgets_the_entry(store).await
        }
        "settled_keys_by_prefix" => settled_keys_by_prefix(store).await,
        "journal_claim_is_a_compare_and_set" => journal_claim_is_a_compare_and_set(store).await,
        "journal_upsert_is_fenced_by_the_owner" => journal_upsert_is_fenced_by_the_owner(store).await,
        #[cfg(feature = "edit")]
        "replace_edited_changes_only_task_labels_and_history" => {
            replace_edited_changes_only_task_labels_and_history(store).await
        }
        #[cfg(feature = "edit")]
        "replace_edited_refuses_leases_replays_and_stale_reads" => {
            replace_edited_refuses_leases_replays_and_stale_reads(store).await
        }
        #[cfg(feature = "audit")]
        "audit_lists_newest_first_before_a_cursor" => audit::lists_newest_first_before_a_cursor(store).await,
        #[cfg(feature = "audit")]
        "audit_keeps_every_entry_as_written" => audit::keeps_every_entry_as_written(store).await,
        other => panic!("testkit: no case named {other:?}"),
    }
}

// ---- helpers: unwrap store results with the case name in the message ----

fn ok<T>(case: &str, what: &str, r: Result<T, StoreError>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("[{case}] {what} failed: {e}"),
    }
}

fn lease_lost<T: core::fmt::Debug>(case: &str, what: &str, r: Result<T, StoreError>, id: &str) {
    match r {
        Err(StoreError::LeaseLost { id: got }) if got == id => {}
        other => panic!("[{case}] {what}: expected LeaseLost {{ id: {id} }}, got {other:?}"),
    }
}

fn ids(records: &[DeadLetterRecord]) -> Vec<&str> {
    records.iter().map(|r| r.id.as_str()).collect()
}

fn leased_ids(leased: &[Leased]) -> Vec<&str> {
    leased.iter().map(|l| l.record.id.as_str()).collect()
}

async fn push_all<S: DlqStore>(case: &str, store: &S, records: &[DeadLetterRecord]) {
    for r in records {
        ok(case, &format!("push {}", r.id), store.push(r.clone()).await);
    }
}

async fn peek_all<S: DlqStore>(case: &str, store: &S, now: Timestamp) -> Vec<DeadLetterRecord> {
    ok(case, "peek", store.peek(&Filter::all(), Page { offset: 0, limit: 1000 }, now).await)
}

async fn peek_one<S: DlqStore>(case: &str, store: &S, id: &str, now: Timestamp) -> DeadLetterRecord {
    let filter = Filter { ids: vec![id.to_string()], ..Filter::default() };
    let mut found = ok(case, "peek by id", store.peek(&filter, Page::default(), now).await);
    match (found.pop(), found.is_empty()) {
        (Some(r), true) => r,
        (r, _) => panic!("[{case}] peek by id {id}: expected exactly one record, got {r:?} and {} more", found.len()),
    }
}

async fn receive_one<S: DlqStore>(case: &str, store: &S, lease: Duration, now: Timestamp) -> Leased {
    let mut got = ok(case, "receive", store.receive(&Filter::all(), 1, lease, now).await);
    match got.pop() {
        Some(l) if got.is_empty() => l,
        other => panic!("[{case}] receive(max 1): expected one record, got {other:?}"),
    }
}

// ---- the cases ----

async fn push_peek_round_trip<S: DlqStore>(store: &S) {
    let case = "push_peek_round_trip";
    let mut record = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0);
    record.labels.insert("team".into(), "growth".into());
    record.replays = 1;
    let outcome = ok(case, "push", store.push(record.clone()).await);
    assert!(!outcome.replaced, "[{case}] first push of an id reported replaced");
    assert!(outcome.evicted.is_empty(), "[{case}] an unbounded store evicted {:?}", outcome.evicted);
    let all = peek_all(case, store, at(60)).await;
    assert_eq!(all, vec![record], "[{case}] peek did not return the pushed record unchanged");
}

async fn push_is_an_upsert<S: DlqStore>(store: &S) {
    let case = "push_is_an_upsert";
    let record = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0);
    ok(case, "push", store.push(record.clone()).await);
    let again = ok(case, "push again", store.push(record.clone()).await);
    assert!(again.replaced, "[{case}] pushing the same id again did not report replaced");
    assert_eq!(ok(case, "count", store.count(&Filter::all(), at(1)).await), 1, "[{case}] same id stored twice");
    assert_eq!(peek_all(case, store, at(1)).await, vec![record.clone()], "[{case}] idempotent push changed the record");
    let mut changed = record;
    changed.attempts = 6;
    changed.replays = 1;
    changed.description = "failed again after a replay".into();
    ok(case, "push changed", store.push(changed.clone()).await);
    assert_eq!(peek_all(case, store, at(1)).await, vec![changed], "[{case}] push did not replace the content");
}

async fn push_forgets_the_journal_entry<S: DlqStore>(store: &S) {
    let case = "push_forgets_the_journal_entry";
    let failing = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R01", 4);
    let other = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R02", 1);
    ok(case, "journal_upsert", store.journal_upsert(&failing).await);
    ok(case, "journal_upsert", store.journal_upsert(&other).await);
    ok(case, "push", store.push(sample_record(&failing.id, 0)).await);
    let entries = ok(case, "journal_entries", store.journal_entries().await);
    assert_eq!(entries, vec![other], "[{case}] push must remove exactly the journal entry with the record's id");
    let stats = ok(case, "stats", store.stats(at(1)).await);
    assert_eq!((stats.total, stats.in_flight), (1, 1), "[{case}] stats total/in_flight");
}

async fn receive_oldest_first_up_to_max<S: DlqStore>(store: &S) {
    let case = "receive_oldest_first_up_to_max";
    // Pushed out of order; equal times are ordered by id.
    let records =
        [sample_record("c-third", 3), sample_record("a-first", 1), sample_record("b-second", 1), sample_record("d", 4)];
    push_all(case, store, &records).await;
    let now = at(600);
    let none = ok(case, "receive max 0", store.receive(&Filter::all(), 0, LEASE, now).await);
    assert!(none.is_empty(), "[{case}] receive(max 0) handed out {:?}", leased_ids(&none));
    let first = ok(case, "receive max 2", store.receive(&Filter::all(), 2, LEASE, now).await);
    assert_eq!(leased_ids(&first), ["a-first", "b-second"], "[{case}] receive(max 2) order");
    for l in &first {
        assert_eq!(l.record.deliveries, 1, "[{case}] first delivery of {} must count 1", l.record.id);
        assert_eq!(l.record.state, RecordState::Leased, "[{case}] a received record's state");
        assert_eq!(l.lease_until, now.add(LEASE), "[{case}] lease_until must be now + lease");
        assert_eq!(l.token.id, l.record.id, "[{case}] the token names its record");
    }
    assert_ne!(first[0].token, first[1].token, "[{case}] two leases share a token");
    let rest = ok(case, "receive max 10", store.receive(&Filter::all(), 10, LEASE, now).await);
    assert_eq!(leased_ids(&rest), ["c-third", "d"], "[{case}] the remaining ready records, oldest first");
}

async fn peek_pages<S: DlqStore>(store: &S) {
    let case = "peek_pages";
    let records: Vec<_> = (0..5).map(|i| sample_record(&format!("r{i}"), 10 - i)).collect();
    push_all(case, store, &records).await;
    let page = ok(case, "peek", store.peek(&Filter::all(), Page { offset: 1, limit: 2 }, at(3600)).await);
    assert_eq!(ids(&page), ["r3", "r2"], "[{case}] page {{offset 1, limit 2}} of oldest-first order");
    let past = ok(case, "peek", store.peek(&Filter::all(), Page { offset: 10, limit: 2 }, at(3600)).await);
    assert!(past.is_empty(), "[{case}] a page past the end must be empty");
    let zero = ok(case, "peek", store.peek(&Filter::all(), Page { offset: 0, limit: 0 }, at(3600)).await);
    assert!(zero.is_empty(), "[{case}] a page of limit 0 must be empty");
}

async fn filters<S: DlqStore>(store: &S) {
    let case = "filters";
    let a = sample_record("a", 1);
    let mut b = sample_record("b", 2);
    b.reason = reason::TIMEOUT.into();
    b.class = ErrorClass::TaskTerminal;
    b.task = sample_task("6Le-OTHER", "https://shop.example.org/checkout");
    b.labels = BTreeMap::from([("job".to_string(), "scrape-43".to_string())]);
    let mut c = sample_record("c", 3);
    c.reason = "ERROR_PAGEURL".into();
    c.class = ErrorClass::FixInput;
    c.labels.insert("team".into(), "growth".into());
    push_all(case, store, &[a, b, c]).await;
    let now = at(3600);
    let checks: Vec<(&str, Filter, Vec<&str>)> = vec![
        ("all", Filter::all(), vec!["a", "b", "c"]),
        ("ids", Filter { ids: vec!["c".into(), "a".into(), "zz".into()], ..Filter::default() }, vec!["a", "c"]),
        ("reason", Filter { reasons: vec![reason::TIMEOUT.into()], ..Filter::default() }, vec!["b"]),
        (
            "reasons",
            Filter { reasons: vec!["ERROR_PAGEURL".into(), "ERROR_CAPTCHA_UNSOLVABLE".into()], ..Filter::default() },
            vec!["a", "c"],
        ),
        ("class", Filter { classes: vec![ErrorClass::FixInput], ..Filter::default() }, vec!["c"]),
        ("sitekey", Filter { sitekey: Some("6Le-OTHER".into()), ..Filter::default() }, vec!["b"]),
        ("page host", Filter { page_host: Some("example.com".into()), ..Filter::default() }, vec!["a", "c"]),
        (
            "one label",
            Filter { labels: BTreeMap::from([("job".into(), "scrape-42".into())]), ..Filter::default() },
            vec!["a", "c"],
        ),
        (
            "two labels",
            Filter {
                labels: BTreeMap::from([("job".into(), "scrape-42".into()), ("team".into(), "growth".into())]),
                ..Filter::default()
            },
            vec!["c"],
        ),
        ("before", Filter { dead_lettered_before: Some(at(120)), ..Filter::default() }, vec!["a"]),
        ("after (inclusive)", Filter { dead_lettered_after: Some(at(120)), ..Filter::default() }, vec!["b", "c"]),
        (
            "date window",
            Filter { dead_lettered_after: Some(at(60)), dead_lettered_before: Some(at(180)), ..Filter::default() },
            vec!["a", "b"],
        ),
        ("state ready", Filter { states: vec![RecordState::Ready], ..Filter::default() }, vec!["a", "b", "c"]),
        ("state parked", Filter { states: vec![RecordState::Parked], ..Filter::default() }, vec![]),
        (
            "reason and class",
            Filter {
                reasons: vec!["ERROR_PAGEURL".into()],
                classes: vec![ErrorClass::TaskTerminal],
                ..Filter::default()
            },
            vec![],
        ),
    ];
    for (name, filter, want) in &checks {
        let got = ok(case, "peek", store.peek(filter, Page::default(), now).await);
        assert_eq!(ids(&got), *want, "[{case}] peek with filter `{name}`");
        let n = ok(case, "count", store.count(filter, now).await);
        assert_eq!(n, want.len() as u64, "[{case}] count with filter `{name}`");
    }
    // receive honours the same filter (and ignores `states`).
    let filter =
        Filter { classes: vec![ErrorClass::TaskTerminal], states: vec![RecordState::Parked], ..Filter::default() };
    let got = ok(case, "receive", store.receive(&filter, 10, LEASE, now).await);
    assert_eq!(leased_ids(&got), ["a", "b"], "[{case}] receive with a class filter");
    let leased = Filter { states: vec![RecordState::Leased], ..Filter::default() };
    let got = ok(case, "peek", store.peek(&leased, Page::default(), now).await);
    assert_eq!(ids(&got), ["a", "b"], "[{case}] peek with filter `state leased`");
}

async fn lease_is_exclusive<S: DlqStore>(store: &S) {
    let case = "lease_is_exclusive";
    push_all(case, store, &[sample_record("a", 0)]).await;
    let now = at(60);
    let leased = receive_one(case, store, LEASE, now).await;
    let second = ok(case, "second receive", store.receive(&Filter::all(), 10, LEASE, now.add(LEASE / 2)).await);
    assert!(second.is_empty(), "[{case}] a leased record was handed out again: {:?}", leased_ids(&second));
    let seen = peek_one(case, store, "a", now.add(LEASE / 2)).await;
    assert_eq!(seen.state, RecordState::Leased, "[{case}] peek during a live lease must show `leased`");
    assert_eq!(seen.deliveries, 1, "[{case}] deliveries while leased");
    let just_before_end = leased.lease_until.since(T0) - Duration::from_millis(1);
    let still = ok(case, "receive", store.receive(&Filter::all(), 10, LEASE, T0.add(just_before_end)).await);
    assert!(still.is_empty(), "[{case}] the lease ended before lease_until");
    let after = peek_one(case, store, "a", leased.lease_until).await;
    assert_eq!(after.state, RecordState::Ready, "[{case}] at lease_until the lease is over and the record ready");
}

async fn expired_lease_is_redelivered<S: DlqStore>(store: &S) {
    let case = "expired_lease_is_redelivered";
    push_all(case, store, &[sample_record("a", 0)]).await;
    let first = receive_one(case, store, LEASE, at(60)).await;
    // Expired but not yet taken by anyone: the slow holder may still settle it.
    let late = ok(case, "late abandon", store.abandon(&first.token, None, at(100)).await);
    assert_eq!(late, RecordState::Ready, "[{case}] abandon after expiry but before re-delivery");
    let second = receive_one(case, store, LEASE, at(200)).await;
    let third = receive_one(case, store, LEASE, at(300)).await;
    assert_eq!(third.record.deliveries, 3, "[{case}] a re-delivery counts one more delivery");
    assert_ne!(third.token, second.token, "[{case}] a re-delivery must get a fresh token");
    lease_lost(case, "complete with the expired token", store.complete(&second.token, at(301)).await, "a");
    lease_lost(case, "abandon with the expired token", store.abandon(&second.token, None, at(301)).await, "a");
    lease_lost(case, "complete with a settled token", store.complete(&first.token, at(301)).await, "a");
    ok(case, "complete with the current token", store.complete(&third.token, at(302)).await);
    let stats = ok(case, "stats", store.stats(at(303)).await);
    assert_eq!(
        (stats.total, stats.completed, stats.abandoned),
        (0, 1, 2),
        "[{case}] stats (total, completed, abandoned) after one abandon and one expiry"
    );
    let forged = LeaseToken { id: "nope".into(), nonce: third.token.nonce.clone() };
    lease_lost(case, "complete of an unknown id", store.complete(&forged, at(304)).await, "nope");
}

async fn complete_removes<S: DlqStore>(store: &S) {
    let case = "complete_removes";
    push_all(case, store, &[sample_record("a", 0), sample_record("b", 1)]).await;
    let leased = receive_one(case, store, LEASE, at(60)).await;
    ok(case, "complete", store.complete(&leased.token, at(61)).await);
    assert_eq!(ids(&peek_all(case, store, at(62)).await), ["b"], "[{case}] complete must remove exactly its record");
    lease_lost(case, "complete twice", store.complete(&leased.token, at(62)).await, "a");
    lease_lost(case, "abandon after complete", store.abandon(&leased.token, None, at(62)).await, "a");
    let stats = ok(case, "stats", store.stats(at(63)).await);
    assert_eq!((stats.total, stats.completed), (1, 1), "[{case}] stats (total, completed)");
}

/// A batch of completes where some leases are no longer held: each token gets its own answer,
/// in order, and only the held leases are completed.
async fn complete_many_answers_each_token<S: DlqStore>(store: &S) {
    let case = "complete_many_answers_each_token";
    let records: Vec<DeadLetterRecord> =
        ["a", "b", "c", "d", "e"].iter().zip(0..).map(|(id, m)| sample_record(id, m)).collect();
    push_all(case, store, &records).await;
    let leased = ok(case, "receive", store.receive(&Filter::all(), 5, LEASE, at(600)).await);
    assert_eq!(leased_ids(&leased), ["a", "b", "c", "d", "e"], "[{case}] receive");
    let token = |id: &str| match leased.iter().find(|l| l.record.id == id) {
        Some(l) => l.token.clone(),
        None => panic!("[{case}] no lease for {id}"),
    };
    ok(case, "complete b alone", store.complete(&token("b"), at(601)).await);
    // c goes back and is leased again: its first token is stale.
    ok(case, "abandon c", store.abandon(&token("c"), None, at(602)).await);
    let again = receive_one(case, store, LEASE, at(603)).await;
    assert_eq!(again.record.id, "c", "[{case}] the abandoned record is the one ready");
    let forged = LeaseToken { id: "nope".into(), nonce: token("a").nonce };
    let batch = [token("a"), token("b"), token("c"), forged, token("d"), token("a")];
    let results = store.complete_many(&batch, at(604)).await;
    assert_eq!(results.len(), batch.len(), "[{case}] one result per token");
    let mut results = results.into_iter();
    let mut next = |what: &str| match results.next() {
        Some(r) => r,
        None => panic!("[{case}] no result for {what}"),
    };
    ok(case, "complete_many: a", next("a"));
    lease_lost(case, "complete_many: b, already completed", next("b"), "b");
    lease_lost(case, "complete_many: c, stale token", next("c"), "c");
    lease_lost(case, "complete_many: unknown id", next("nope"), "nope");
    ok(case, "complete_many: d", next("d"));
    lease_lost(case, "complete_many: a named twice", next("a again"), "a");
    let left = peek_all(case, store, at(605)).await;
    assert_eq!(ids(&left), ["c", "e"], "[{case}] exactly the held leases were completed");
    assert!(left.iter().all(|r| r.state == RecordState::Leased), "[{case}] c and e keep their leases: {left:?}");
    let stats = ok(case, "stats", store.stats(at(605)).await);
    assert_eq!((stats.total, stats.completed, stats.leased), (2, 3, 2), "[{case}] stats (total, completed, leased)");
    assert!(store.complete_many(&[], at(606)).await.is_empty(), "[{case}] no tokens, no results");
    let last = store.complete_many(core::slice::from_ref(&again.token), at(606)).await;
    assert!(matches!(last.as_slice(), [Ok(())]), "[{case}] the new token of c completes it: {last:?}");
}

async fn abandon_with_update<S: DlqStore>(store: &S) {
    let case = "abandon_with_update";
    let original = sample_record("a", 0);
    push_all(case, store, core::slice::from_ref(&original)).await;
    let leased = receive_one(case, store, LEASE, at(60)).await;
    let mut update = leased.record.clone();
    update.attempts += 2;
    update.replays += 1;
    update.description = "still unsolvable after a replay".into();
    update.history.push(HistoryEntry {
        at: at(90),
        phase: Phase::Poll,
        error: "ERROR_CAPTCHA_UNSOLVABLE".into(),
        provider_task_id: Some("71823999".into()),
        http_status: None,
        provider: Some("2captcha".into()),
    });
    let state = ok(case, "abandon", store.abandon(&leased.token, Some(update.clone()), at(91)).await);
    assert_eq!(state, RecordState::Ready, "[{case}] abandon below the delivery limit returns ready");
    let seen = peek_one(case, store, "a", at(92)).await;
    let want = DeadLetterRecord { state: RecordState::Ready, deliveries: 1, ..update };
    assert_eq!(seen, want, "[{case}] abandon must store the update (deliveries kept by the store)");
    lease_lost(case, "abandon twice", store.abandon(&leased.token, None, at(93)).await, "a");

    let again = receive_one(case, store, LEASE, at(100)).await;
    assert_eq!(again.record.deliveries, 2, "[{case}] deliveries after one abandon");
    assert_eq!(again.record.attempts, original.attempts + 2, "[{case}] the update is what is delivered next");
    let same = ok(case, "abandon without update", store.abandon(&again.token, None, at(101)).await);
    assert_eq!(same, RecordState::Ready, "[{case}] abandon without update");
    assert_eq!(peek_one(case, store, "a", at(102)).await.attempts, 6, "[{case}] abandon(None) keeps the content");

    let third = receive_one(case, store, LEASE, at(110)).await;
    let mut park = third.record.clone();
    park.state = RecordState::Parked;
    park.parked_reason = Some("NeedsReview".into());
    let state = ok(case, "abandon parked", store.abandon(&third.token, Some(park), at(111)).await);
    assert_eq!(state, RecordState::Parked, "[{case}] an update in state parked parks the record");
    let seen = peek_one(case, store, "a", at(112)).await;
    assert_eq!(
        (seen.state, seen.parked_reason.as_deref()),
        (RecordState::Parked, Some("NeedsReview")),
        "[{case}] parked record and its reason"
    );
    let stats = ok(case, "stats", store.stats(at(113)).await);
    assert_eq!((stats.abandoned, stats.parked), (3, 1), "[{case}] stats (abandoned, parked)");

    // A record pushed parked without a reason still says why it waits, on every backend.
    let mut unnamed = sample_record("b", 3);
    unnamed.state = RecordState::Parked;
    ok(case, "push parked", store.push(unnamed).await);
    let seen = peek_one(case, store, "b", at(114)).await;
    assert_eq!(
        (seen.state, seen.parked_reason.as_deref()),
        (RecordState::Parked, Some(PARKED_BY_REPLAYER)),
        "[{case}] a record pushed parked without a reason"
    );
}

async fn park_after_max_deliveries<S: DlqStore>(store: &S) {
    let case = "park_after_max_deliveries";
    push_all(case, store, &[sample_record("a", 0)]).await;
    for delivery in 1..=DEFAULT_MAX_DELIVERIES {
        let now = at(60 * u64::from(delivery));
        let leased = receive_one(case, store, LEASE, now).await;
        assert_eq!(leased.record.deliveries, delivery, "[{case}] deliveries counted per receive");
        let state = ok(case, "abandon", store.abandon(&leased.token, None, now.add(Duration::from_secs(1))).await);
        let want = if delivery < DEFAULT_MAX_DELIVERIES { RecordState::Ready } else { RecordState::Parked };
        assert_eq!(state, want, "[{case}] state after abandoning delivery {delivery} (limit 10)");
    }
    let now = at(3600);
    let got = ok(case, "receive", store.receive(&Filter::all(), 10, LEASE, now).await);
    assert!(got.is_empty(), "[{case}] a parked record was received");
    let seen = peek_one(case, store, "a", now).await;
    assert_eq!(seen.state, RecordState::Parked, "[{case}] state after the limit");
    assert_eq!(
        seen.parked_reason.as_deref(),
        Some(reason::MAX_DELIVERY_COUNT_EXCEEDED),
        "[{case}] parked_reason after the limit"
    );
    assert!(ok(case, "unpark", store.unpark("a", now).await), "[{case}] unpark of a parked record");
    let back = receive_one(case, store, LEASE, now).await;
    assert_eq!(back.record.deliveries, 1, "[{case}] unpark resets the delivery count");
}

async fn expired_leases_count_toward_the_limit<S: DlqStore>(store: &S) {
    let case = "expired_leases_count_toward_the_limit";
    push_all(case, store, &[sample_record("a", 0)]).await;
    // Each lease of 30 s expires unsettled before the next receive a minute later.
    for delivery in 1..=DEFAULT_MAX_DELIVERIES {
        let leased = receive_one(case, store, LEASE, at(60 * u64::from(delivery))).await;
        assert_eq!(leased.record.deliveries, delivery, "[{case}] deliveries counted per receive");
    }
    let now = at(60 * u64::from(DEFAULT_MAX_DELIVERIES + 1));
    let got = ok(case, "receive", store.receive(&Filter::all(), 10, LEASE, now).await);
    assert!(got.is_empty(), "[{case}] delivered more than 10 times: {:?}", leased_ids(&got));
    let seen = peek_one(case, store, "a", now).await;
    assert_eq!(
        (seen.state, seen.parked_reason.as_deref()),
        (RecordState::Parked, Some(reason::MAX_DELIVERY_COUNT_EXCEEDED)),
        "[{case}] state after 10 expired leases"
    );
}

async fn park_and_unpark<S: DlqStore>(store: &S) {
    let case = "park_and_unpark";
    push_all(case, store, &[sample_record("a", 0), sample_record("b", 1), sample_record("c", 2)]).await;
    let now = at(600);
    assert!(ok(case, "park", store.park("a", "NeedsReview", now).await), "[{case}] park of a ready record");
    assert!(!ok(case, "park unknown", store.park("zz", "x", now).await), "[{case}] park of an unknown id");
    assert!(!ok(case, "unpark unknown", store.unpark("zz", now).await), "[{case}] unpark of an unknown id");
    assert!(!ok(case, "unpark ready", store.unpark("c", now).await), "[{case}] unpark of a ready record");
    let seen = peek_one(case, store, "a", now).await;
    assert_eq!(
        (seen.state, seen.parked_reason.as_deref()),
        (RecordState::Parked, Some("NeedsReview")),
        "[{case}] parked state and reason"
    );
    // b is leased, then parked under its holder: the holder's token is stale.
    let leased = receive_one(case, store, LEASE, now).await;
    assert_eq!(leased.record.id, "b", "[{case}] parked records are never received");
    assert!(ok(case, "park leased", store.park("b", "Suspicious", now).await), "[{case}] park of a leased record");
    lease_lost(case, "complete of a parked lease", store.complete(&leased.token, now).await, "b");
    let parked = Filter { states: vec![RecordState::Parked], ..Filter::default() };
    assert_eq!(ok(case, "count parked", store.count(&parked, now).await), 2, "[{case}] count of parked records");
    let rest = ok(case, "receive", store.receive(&Filter::all(), 10, LEASE, now.add(LEASE * 10)).await);
    assert_eq!(leased_ids(&rest), ["c"], "[{case}] receive must skip parked records");

    assert!(ok(case, "unpark", store.unpark("a", now).await), "[{case}] unpark of a parked record");
    let back = peek_one(case, store, "a", now).await;
    assert_eq!(
        (back.state, back.parked_reason.as_deref(), back.deliveries),
        (RecordState::Ready, None, 0),
        "[{case}] unparked record (state, parked_reason, deliveries)"
    );
}

/// Issue 44, finding 8: retention read a batch, archived it, then purged by id, so a record
/// edited or stored again in between was deleted with only its older copy archived.
/// `purge_unchanged` deletes a record only while it is the version read, and never one under a
/// live lease (the lease here runs for years, so every store's clock sees it live).
async fn purge_unchanged_deletes_only_the_version_read<S: DlqStore>(store: &S) {
    let case = "purge_unchanged_deletes_only_the_version_read";
    push_all(
        case,
        store,
        &[sample_record("a", 0), sample_record("b", 1), sample_record("c", 2), sample_record("d", 3)],
    )
    .await;
    let now = at(600);
    let read = peek_all(case, store, now).await;
    assert_eq!(ids(&read), ["a", "b", "c", "d"], "[{case}] the batch read");
    // After the read: b is stored again (a replay that failed anew), d is edited by an operator,
    // c is leased by a replayer.
    let mut again = sample_record("b", 1);
    again.attempts += 1;
    again.history.push(again.history[0].clone());
    ok(case, "push again", store.push(again.clone()).await);
    let mut edited = read[3].clone();
    edited.labels.insert("fixed".into(), "yes".into());
    let before = read[3].clone();
    let edit = crate::dlq::edit::Edited { before, record: edited, changes: Vec::new() };
    #[cfg(feature = "edit")]
    ok(case, "edit", store.replace_edited(&edit, now).await);
    #[cfg(not(feature = "edit"))]
    ok(case, "push edited", store.push(edit.record.clone()).await);
    let years = Duration::from_secs(10 * 365 * 24 * 3600);
    let only_c = Filter { ids: vec!["c".into()], ..Filter::default() };
    let leased = ok(case, "receive c", store.receive(&only_c, 1, years, now).await);
    assert_eq!(leased_ids(&leased), ["c"], "[{case}] c leased");

    let gone = ok(case, "purge_unchanged", store.purge_unchanged(&read, now).await);
    assert_eq!(gone, 1, "[{case}] only a is still the version read and not leased");
    let left = peek_all(case, store, now).await;
    assert_eq!(ids(&left), ["b", "c", "d"], "[{case}] what is left");
    assert_eq!(left[0].attempts, again.attempts, "[{case}] b keeps its newer content");
    assert_eq!(left[2].labels.get("fixed").map(String::as_str), Some("yes"), "[{case}] d keeps its edit");
    assert_eq!(ok(case, "again", store.purge_unchanged(&read, now).await), 0, "[{case}] nothing more goes");
    let fresh = peek_all(case, store, now).await;
    let not_c: Vec<DeadLetterRecord> = fresh.into_iter().filter(|r| r.id != "c").collect();
    assert_eq!(
        ok(case, "the new versions", store.purge_unchanged(&not_c, now).await),
        2,
        "[{case}] b and d as read now"
    );
}

async fn purge_skips_live_leases<S: DlqStore>(store: &S) {
    let case = "purge_skips_live_leases";
    let mut timeout = sample_record("d", 3);
    timeout.reason = reason::TIMEOUT.into();
    push_all(case, store, &[sample_record("a", 0), sample_record("b", 1), sample_record("c", 2), timeout]).await;
    let now = at(600);
    let only_timeout = Filter { reasons: vec![reason::TIMEOUT.into()], ..Filter::default() };
    assert_eq!(ok(case, "purge by reason", store.purge(&only_timeout, now).await), 1, "[{case}] purge by reason");
    let leased = receive_one(case, store, LEASE, now).await;
    assert!(ok(case, "park", store.park("c", "x", now).await), "[{case}] park");
    assert_eq!(
        ok(case, "purge all", store.purge(&Filter::all(), now).await),
        2,
        "[{case}] purge must skip a live lease"
    );
    assert_eq!(ids(&peek_all(case, store, now).await), [leased.record.id.as_str()], "[{case}] what purge left");
    let later = leased.lease_until;
    assert_eq!(ok(case, "purge after expiry", store.purge(&Filter::all(), later).await), 1, "[{case}] expired lease");
    assert_eq!(ok(case, "count", store.count(&Filter::all(), later).await), 0, "[{case}] empty after purge");
    let stats = ok(case, "stats", store.stats(later).await);
    assert_eq!(stats.dropped, 0, "[{case}] purge is not a capacity drop");
}

async fn count_and_stats<S: DlqStore>(store: &S) {
    let case = "count_and_stats";
    let empty = ok(case, "stats", store.stats(T0).await);
    assert_eq!(
        (empty.total, empty.ready, empty.leased, empty.parked, empty.oldest_dead_lettered_at),
        (0, 0, 0, 0, None),
        "[{case}] stats of an empty store"
    );
    let mut fix = sample_record("e", 5);
    fix.class = ErrorClass::FixInput;
    let records = [sample_record("b", 2), sample_record("a", 1), sample_record("c", 3), sample_record("d", 4), fix];
    push_all(case, store, &records).await;
    ok(case, "journal_upsert", store.journal_upsert(&sample_journal_entry("j1", 1)).await);
    let now = at(600);
    let leased = ok(case, "receive", store.receive(&Filter::all(), 2, LEASE, now).await);
    assert_eq!(leased.len(), 2, "[{case}] receive(max 2) of 5");
    assert!(ok(case, "park", store.park("e", "x", now).await), "[{case}] park");
    let stats = ok(case, "stats", store.stats(now).await);
    assert_eq!(
        (stats.total, stats.ready, stats.leased, stats.parked, stats.in_flight),
        (5, 2, 2, 1, 1),
        "[{case}] stats (total, ready, leased, parked, in_flight)"
    );
    assert_eq!(stats.oldest_dead_lettered_at, Some(at(60)), "[{case}] oldest_dead_lettered_at");
    assert_eq!((stats.completed, stats.abandoned, stats.dropped), (0, 0, 0), "[{case}] counters untouched");
    assert_eq!(ok(case, "count", store.count(&Filter::all(), now).await), 5, "[{case}] count all");
    let fix_only = Filter { classes: vec![ErrorClass::FixInput], ..Filter::default() };
    assert_eq!(ok(case, "count", store.count(&fix_only, now).await), 1, "[{case}] count by class");
    let expired = ok(case, "stats", store.stats(leased[0].lease_until).await);
    assert_eq!((expired.ready, expired.leased), (4, 0), "[{case}] expired leases count as ready");
}

async fn journal<S: DlqStore>(store: &S) {
    let case = "journal";
    assert!(ok(case, "entries", store.journal_entries().await).is_empty(), "[{case}] a fresh journal is empty");
    let a = sample_journal_entry("a", 1);
    let b = sample_journal_entry("b", 1);
    ok(case, "upsert a", store.journal_upsert(&a).await);
    ok(case, "upsert b", store.journal_upsert(&b).await);
    let mut a2 = a.clone();
    a2.attempts = 2;
    a2.provider_task_id = Some("71823462".into());
    a2.updated_at = at(30);
    ok(case, "upsert a again", store.journal_upsert(&a2).await);
    let mut entries = ok(case, "entries", store.journal_entries().await);
    entries.sort_by(|x, y| x.id.cmp(&y.id));
    assert_eq!(entries, vec![a2, b.clone()], "[{case}] upsert must replace the entry with the same id");
    ok(case, "forget a", store.journal_forget("a", at(40)).await);
    ok(case, "forget unknown", store.journal_forget("zz", at(40)).await);
    assert_eq!(ok(case, "entries", store.journal_entries().await), vec![b], "[{case}] after forget");
    let stats = ok(case, "stats", store.stats(T0).await);
    assert_eq!((stats.in_flight, stats.total), (1, 0), "[{case}] stats (in_flight, total)");
}

async fn journal_keeps_solutions_and_keys<S: DlqStore>(store: &S) {
    let case = "journal_keeps_solutions_and_keys";
    let mut entry = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R11", 1);
    entry.key = Some("batch:abc/line:7".into());
    ok(case, "upsert", store.journal_upsert(&entry).await);
    let mut solution = Solution::text("03AGdBq24-token");
    solution.provider_task_id = Some("71823461".into());
    solution.fields.insert("userAgent".into(), serde_json::json!("Mozilla/5.0"));
    entry.solution = Some(solution);
    entry.updated_at = at(20);
    ok(case, "upsert with solution", store.journal_upsert(&entry).await);
    let entries = ok(case, "entries", store.journal_entries().await);
    assert_eq!(entries, vec![entry], "[{case}] the key and the solution must come back unchanged");
}

async fn receive_skips_records_being_replayed<S: DlqStore>(store: &S) {
    let case = "receive_skips_records_being_replayed";
    push_all(case, store, &[sample_record("a-replaying", 0), sample_record("b-free", 1)]).await;
    // A replay of a-replaying is in flight (its journal entry has the record's id), maybe by a
    // process that died with the lease: nobody else may receive it, even once the lease expired.
    let mut entry = sample_journal_entry("a-replaying", 4);
    entry.replay_of = Some("a-replaying".into());
    ok(case, "journal_upsert", store.journal_upsert(&entry).await);
    let got = ok(case, "receive", store.receive(&Filter::all(), 10, LEASE, at(120)).await);
    assert_eq!(leased_ids(&got), vec!["b-free"], "[{case}] a record with a journal entry was received");
    let seen = peek_one(case, store, "a-replaying", at(121)).await;
    assert_eq!(seen.state, RecordState::Ready, "[{case}] the skipped record stays ready");
    assert_eq!(seen.deliveries, 0, "[{case}] skipping is not a delivery");
}

async fn forget_settles_the_key_and_the_replayed_record<S: DlqStore>(store: &S) {
    let case = "forget_settles_the_key_and_the_replayed_record";
    // A keyed task solved and handed over: its key is settled, its entry gone.
    let mut keyed = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R21", 1);
    keyed.key = Some("job-21".into());
    ok(case, "upsert keyed", store.journal_upsert(&keyed).await);
    ok(case, "forget keyed", store.journal_forget(&keyed.id, at(50)).await);
    let settled = ok(case, "settled", store.settled("").await);
    let expected = SettledKey { key: "job-21".into(), id: keyed.id.clone(), outcome: Settlement::Solved, at: at(50) };
    assert_eq!(settled, vec![expected], "[{case}] forget must settle the entry's key as solved");
    // A replayed task solved: its dead-letter record goes with the entry, counted as completed.
    push_all(case, store, &[sample_record("replayed", 0), sample_record("other", 1)]).await;
    let mut replay = sample_journal_entry("replayed", 5);
    replay.replay_of = Some("replayed".into());
    ok(case, "upsert replay", store.journal_upsert(&replay).await);
    ok(case, "forget replay", store.journal_forget("replayed", at(60)).await);
    assert_eq!(ids(&peek_all(case, store, at(61)).await), vec!["other"], "[{case}] the solved record must go");
    let stats = ok(case, "stats", store.stats(at(61)).await);
    assert_eq!(
        (stats.total, stats.completed, stats.in_flight),
        (1, 1, 0),
        "[{case}] stats (total, completed, in_flight)"
    );
    assert_eq!(ok(case, "settled", store.settled("").await).len(), 1, "[{case}] an unkeyed entry settles no key");
}

async fn push_settles_the_key_and_abandon_forgets_the_entry<S: DlqStore>(store: &S) {
    let case = "push_settles_the_key_and_abandon_forgets_the_entry";
    let mut keyed = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R31", 4);
    keyed.key = Some("line-31".into());
    ok(case, "upsert", store.journal_upsert(&keyed).await);
    let record = sample_record(&keyed.id, 2);
    ok(case, "push", store.push(record.clone()).await);
    let expected = SettledKey {
        key: "line-31".into(),
        id: keyed.id.clone(),
        outcome: Settlement::DeadLettered,
        at: record.dead_lettered_at,
    };
    assert_eq!(ok(case, "settled", store.settled("line-").await), vec![expected], "[{case}] push must settle the key");
    // A replay that failed again: abandoning its lease drops its journal entry with it.
    let leased = receive_one(case, store, LEASE, at(200)).await;
    let mut entry = sample_journal_entry(&keyed.id, 5);
    entry.replay_of = Some(keyed.id.clone());
    ok(case, "upsert replay entry", store.journal_upsert(&entry).await);
    let mut update = leased.record.clone();
    update.attempts = 5;
    ok(case, "abandon", store.abandon(&leased.token, Some(update), at(210)).await);
    assert!(ok(case, "entries", store.journal_entries().await).is_empty(), "[{case}] abandon must drop the entry");
    assert_eq!(peek_one(case, store, &keyed.id, at(211)).await.attempts, 5, "[{case}] abandon stores the update");
}

async fn settled_keys_by_prefix<S: DlqStore>(store: &S) {
    let case = "settled_keys_by_prefix";
    for (i, key) in ["b/2", "a/1", "b/1", "c"].iter().enumerate() {
        let mut entry = sample_journal_entry(&format!("id-{i}"), 1);
        entry.key = Some((*key).to_string());
        ok(case, "upsert", store.journal_upsert(&entry).await);
        ok(case, "forget", store.journal_forget(&entry.id, at(i as u64)).await);
    }
    let keys = |v: Vec<SettledKey>| v.into_iter().map(|s| s.key).collect::<Vec<_>>();
    assert_eq!(
        keys(ok(case, "settled b/", store.settled("b/").await)),
        vec!["b/1", "b/2"],
        "[{case}] prefix, key order"
    );
    assert_eq!(ok(case, "clear b/", store.clear_settled("b/").await), 2, "[{case}] clear_settled count");
    assert_eq!(keys(ok(case, "settled all", store.settled("").await)), vec!["a/1", "c"], "[{case}] after clear");
    assert_eq!(ok(case, "clear none", store.clear_settled("zz").await), 0, "[{case}] clearing nothing");
}

/// Two takers of a dead owner's entry: one gets it, the other is told it is gone; a released
/// entry (no owner) is taken once more by whoever recovers it.
async fn journal_claim_is_a_compare_and_set<S: DlqStore>(store: &S) {
    let case = "journal_claim_is_a_compare_and_set";
    let mut entry = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R12", 2);
    entry.owner = Some("host-a/41/1".into());
    entry.key = Some("batch:abc/line:9".into());
    let mut solution = Solution::text("03AGdBq24-claimed");
    solution.provider_task_id = Some("71823461".into());
    entry.solution = Some(solution);
    ok(case, "upsert", store.journal_upsert(&entry).await);
    let other = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R13", 1);
    ok(case, "upsert other", store.journal_upsert(&other).await);

    let claimed = ok(case, "claim", store.journal_claim(&entry.id, Some("host-a/41/1"), Some("host-b/7/1")).await);
    let expected = JournalEntry { owner: Some("host-b/7/1".into()), ..entry.clone() };
    assert_eq!(
        claimed.as_ref(),
        Some(&expected),
        "[{case}] the claim returns the entry with its new owner, else unchanged"
    );
    let again = ok(case, "second claim", store.journal_claim(&entry.id, Some("host-a/41/1"), Some("host-c/9/1")).await);
    assert_eq!(again, None, "[{case}] a second claim naming the old owner must fail");
    let unowned = ok(case, "claim as unowned", store.journal_claim(&entry.id, None, Some("host-c/9/1")).await);
    assert_eq!(unowned, None, "[{case}] an owned entry is not taken as one without an owner");
    let missing = ok(case, "claim missing", store.journal_claim("01JD7Z6Q8V3K9R2M4N5P6Q7R99", None, Some("x")).await);
    assert_eq!(missing, None, "[{case}] claiming a missing entry gives None");
    let entries = ok(case, "entries", store.journal_entries().await);
    assert_eq!(
        entries,
        vec![expected.clone(), other.clone()],
        "[{case}] the journal holds the claimed entry, the other untouched"
    );

    // Released (no owner), then taken by a recovery: once.
    let released = ok(case, "release", store.journal_claim(&entry.id, Some("host-b/7/1"), None).await);
    assert_eq!(released.and_then(|e| e.owner), None, "[{case}] a released entry has no owner");
    let taken = ok(case, "take released", store.journal_claim(&entry.id, None, Some("host-d/3/2")).await);
    assert_eq!(taken.map(|e| (e.owner, e.solution)), Some((Some("host-d/3/2".into()), expected.solution.clone())));
    let twice = ok(case, "take released twice", store.journal_claim(&entry.id, None, Some("host-e/3/2")).await);
    assert_eq!(twice, None, "[{case}] a released entry is taken once");
    // A claimed entry keeps its key: its acknowledgement settles it as for any entry.
    ok(case, "forget", store.journal_forget(&entry.id, at(60)).await);
    let settled = ok(case, "settled", store.settled("batch:abc/").await);
    assert_eq!(
        settled.iter().map(|s| (s.key.as_str(), s.outcome)).collect::<Vec<_>>(),
        [("batch:abc/line:9", Settlement::Solved)]
    );
    let gone = ok(case, "claim forgotten", store.journal_claim(&entry.id, Some("host-d/3/2"), Some("x")).await);
    assert_eq!(gone, None, "[{case}] a forgotten entry cannot be claimed");
}

/// An owner whose entry was claimed away cannot take it back by writing it (a process paused past
/// the fleet's TTL that resumes and writes the answer it polled): the write fails with `Taken`
/// and the entry stays the new owner's.
async fn journal_upsert_is_fenced_by_the_owner<S: DlqStore>(store: &S) {
    let case = "journal_upsert_is_fenced_by_the_owner";
    let mut entry = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R14", 1);
    entry.owner = Some("host-a/41/1".into());
    ok(case, "upsert", store.journal_upsert(&entry).await);
    entry.attempts = 2;
    ok(case, "upsert by its owner", store.journal_upsert(&entry).await);
    let claimed = ok(case, "claim", store.journal_claim(&entry.id, Some("host-a/41/1"), Some("host-b/7/1")).await);
    let claimed = match claimed {
        Some(c) => c,
        None => panic!("[{case}] the claim must succeed"),
    };
    let mut stale = entry.clone();
    stale.solution = Some(Solution::text("03AG-late"));
    match store.journal_upsert(&stale).await {
        Err(StoreError::Taken { id }) => assert_eq!(id, entry.id, "[{case}] Taken names the entry"),
        other => panic!("[{case}] a write by the old owner must fail with Taken, got {other:?}"),
    }
    let mut unowned = entry.clone();
    unowned.owner = None;
    match store.journal_upsert(&unowned).await {
        Err(StoreError::Taken { .. }) => {}
        other => panic!("[{case}] a write without an owner over an owned entry must fail with Taken, got {other:?}"),
    }
    assert_eq!(
        ok(case, "entries", store.journal_entries().await),
        vec![claimed.clone()],
        "[{case}] the entry stays the new owner's, unchanged"
    );
    match store.journal_update(&stale).await {
        Err(StoreError::Taken { .. }) => {}
        other => panic!("[{case}] an update by the old owner must fail with Taken, got {other:?}"),
    }
    let mut next = claimed.clone();
    next.provider_task_id = Some("71823499".into());
    ok(case, "update by the new owner", store.journal_update(&next).await);
    assert_eq!(
        ok(case, "entries", store.journal_entries().await),
        vec![next.clone()],
        "[{case}] the new owner writes it"
    );
    // The new owner finished the task: the old owner's late write does not bring the entry back.
    ok(case, "forget", store.journal_forget(&next.id, at(90)).await);
    match store.journal_update(&stale).await {
        Err(StoreError::Taken { id }) => assert_eq!(id, next.id),
        other => panic!("[{case}] an update of a forgotten entry must fail with Taken, got {other:?}"),
    }
    assert!(ok(case, "entries", store.journal_entries().await).is_empty(), "[{case}] nothing was written back");
    let fresh = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R15", 0);
    match store.journal_update(&fresh).await {
        Err(StoreError::Taken { .. }) => {}
        other => panic!("[{case}] journal_update never creates an entry, got {other:?}"),
    }
    ok(case, "upsert creates it", store.journal_upsert(&fresh).await);
    ok(case, "update by its owner", store.journal_update(&fresh).await);
    assert_eq!(ok(case, "entries", store.journal_entries().await), vec![fresh], "[{case}] created, then updated");
}

#[cfg(feature = "edit")]
/// `record` with its sitekey set to `sitekey` and the label `fixed` set, as `dlq::edit` makes it.
fn edited(case: &str, record: &DeadLetterRecord, sitekey: &str, now: Timestamp) -> Edited {
    let edit: Edit = match serde_json::from_value(
        serde_json::json!({"task": {"sitekey": sitekey}, "labels": {"fixed": "yes", "job": null}}),
    ) {
        Ok(edit) => edit,
        Err(e) => panic!("[{case}] testkit: cannot build an edit: {e}"),
    };
    match edit.apply(record, now) {
        Ok(out) => out,
        Err(e) => panic!("[{case}] testkit: cannot apply an edit: {e}"),
    }
}

#[cfg(feature = "edit")]
async fn replace_edited_changes_only_task_labels_and_history<S: DlqStore>(store: &S) {
    let case = "replace_edited_changes_only_task_labels_and_history";
    push_all(case, store, &[sample_record("a", 0), sample_record("b", 1)]).await;
    // a was delivered once and abandoned: its deliveries and counts must survive the edit.
    let leased = receive_one(case, store, LEASE, at(60)).await;
    ok(case, "abandon", store.abandon(&leased.token, None, at(61)).await);
    assert!(ok(case, "park", store.park("b", "NeedsReview", at(62)).await), "[{case}] park b");
    let now = at(120);
    for id in ["a", "b"] {
        let before = peek_one(case, store, id, now).await;
        let after = edited(case, &before, "6Le-RIGHT", now);
        let wrote = ok(case, "replace_edited", store.replace_edited(&after, now).await);
        assert_eq!(wrote, EditWrite::Written, "[{case}] edit of {id} ({:?})", before.state);
        let seen = peek_one(case, store, id, now).await;
        let want = DeadLetterRecord {
            task: after.record.task.clone(),
            labels: after.record.labels.clone(),
            history: after.record.history.clone(),
            ..before.clone()
        };
        assert_eq!(seen, want, "[{case}] {id} after the edit: new task, labels, history; the rest as before");
    }
    let seen = peek_one(case, store, "b", now).await;
    assert_eq!(
        (seen.state, seen.parked_reason.as_deref()),
        (RecordState::Parked, Some("NeedsReview")),
        "[{case}] an edited parked record stays parked"
    );
    assert_eq!(peek_one(case, store, "a", now).await.deliveries, 1, "[{case}] deliveries kept");
    // Filters see the new content (stores that index the sitekey or labels keep them in step).
    let by_new = Filter { sitekey: Some("6Le-RIGHT".into()), ..Filter::default() };
    assert_eq!(ok(case, "count new sitekey", store.count(&by_new, now).await), 2, "[{case}] by the new sitekey");
    let by_old = Filter { sitekey: Some("6Le-SITEKEY".into()), ..Filter::default() };
    assert_eq!(ok(case, "count old sitekey", store.count(&by_old, now).await), 0, "[{case}] by the old sitekey");
    let by_label = Filter { labels: BTreeMap::from([("fixed".into(), "yes".into())]), ..Filter::default() };
    assert_eq!(ok(case, "count by label", store.count(&by_label, now).await), 2, "[{case}] by the new label");
    // The edited task is what a replayer gets.
    let replayed = receive_one(case, store, LEASE, now).await;
    assert_eq!(replayed.record.task.sitekey(), Some("6Le-RIGHT"), "[{case}] the replayer gets the edited task");
    let stats = ok(case, "stats", store.stats(now).await);
    assert_eq!((stats.total, stats.parked, stats.abandoned), (2, 1, 1), "[{case}] stats (total, parked, abandoned)");
}

#[cfg(feature = "edit")]
async fn replace_edited_refuses_leases_replays_and_stale_reads<S: DlqStore>(store: &S) {
    let case = "replace_edited_refuses_leases_replays_and_stale_reads";
    push_all(case, store, &[sample_record("a", 0), sample_record("b", 1), sample_record("c", 2)]).await;
    let now = at(600);
    let before_a = peek_one(case, store, "a", now).await;
    let leased = receive_one(case, store, LEASE, now).await;
    assert_eq!(leased.record.id, "a", "[{case}] oldest first");
    let after_a = edited(case, &before_a, "6Le-RIGHT", now);
    let wrote = ok(case, "edit leased", store.replace_edited(&after_a, now).await);
    assert_eq!(wrote, EditWrite::Leased, "[{case}] a record under a live lease is not edited");
    // Being replayed: its id has a journal entry (a replay in flight, or one recover finishes).
    ok(case, "journal_upsert", store.journal_upsert(&sample_journal_entry("b", 1)).await);
    let before_b = peek_one(case, store, "b", now).await;
    let after_b = edited(case, &before_b, "6Le-RIGHT", now);
    let wrote = ok(case, "edit replaying", store.replace_edited(&after_b, now).await);
    assert_eq!(wrote, EditWrite::Leased, "[{case}] a record being replayed is not edited");
    // Read before a change made meanwhile (here: an import pushed it again with more history).
    let before_c = peek_one(case, store, "c", now).await;
    let mut pushed = before_c.clone();
    pushed.history.truncate(1);
    push_all(case, store, core::slice::from_ref(&pushed)).await;
    let after_c = edited(case, &before_c, "6Le-RIGHT", now);
    let wrote = ok(case, "edit stale", store.replace_edited(&after_c, now).await);
    assert_eq!(wrote, EditWrite::Changed, "[{case}] an edit made from an old read is not written");
    let mut gone = after_c.clone();
    gone.record.id = "zz".into();
    let wrote = ok(case, "edit gone", store.replace_edited(&gone, now).await);
    assert_eq!(wrote, EditWrite::Gone, "[{case}] no such record");
    for id in ["a", "b", "c"] {
        let seen = peek_one(case, store, id, now).await;
        assert_eq!(seen.task.sitekey(), Some("6Le-SITEKEY"), "[{case}] refused edit of {id} changed nothing");
    }
    // Once the lease is over and the record is settled back, it can be edited.
    ok(case, "abandon", store.abandon(&leased.token, None, now.add(Duration::from_secs(1))).await);
    let before_a = peek_one(case, store, "a", now.add(Duration::from_secs(2))).await;
    let after_a = edited(case, &before_a, "6Le-RIGHT", now);
    let wrote = ok(case, "edit after abandon", store.replace_edited(&after_a, now.add(LEASE)).await);
    assert_eq!(wrote, EditWrite::Written, "[{case}] a record back from its lease is edited");
}

/// The audit trail's cases.
#[cfg(feature = "audit")]
mod audit {
    use serde_json::json;

    use super::{at, ok};
    use crate::dlq::audit::{AuditAction, AuditEntry};
    use crate::dlq::store::DlqStore;

    /// An entry as the client appends it (`id` 0: the store gives it).
    pub fn sample_entry(n: u64) -> AuditEntry {
        AuditEntry {
            id: 0,
            at: at(n),
            operator: format!("operator-{n}"),
            action: AuditAction::ALL[(n as usize) % AuditAction::ALL.len()],
            filter: json!({"reasons": ["ERROR_CAPTCHA_UNSOLVABLE"], "labels": {"team": "growth"}}),
            count: n * 3,
            detail: format!("detail {n}"),
            error: (n % 2 == 0).then(|| format!("the store failed after {n} records")),
            stage: if n % 3 == 0 {
                crate::dlq::audit::AuditStage::Intent
            } else {
                crate::dlq::audit::AuditStage::Result
            },
            intent: (n % 3 == 1).then_some(n.saturating_sub(1)),
        }
    }

    fn numbered(n: u64) -> AuditEntry {
        AuditEntry { id: n, ..sample_entry(n) }
    }

    pub async fn lists_newest_first_before_a_cursor<S: DlqStore>(store: &S) {
        let case = "audit_lists_newest_first_before_a_cursor";
        assert_eq!(ok(case, "list of an empty trail", store.audit_list(10, None).await), vec![], "[{case}] empty");
        for n in 1..=3 {
            let id = ok(case, "append", store.audit_append(&sample_entry(n)).await);
            assert_eq!(id, n, "[{case}] the store numbered entry {n} as {id}");
        }
        let all = ok(case, "list", store.audit_list(10, None).await);
        assert_eq!(all, vec![numbered(3), numbered(2), numbered(1)], "[{case}] newest first, as written");
        let first = ok(case, "list 2", store.audit_list(2, None).await);
        assert_eq!(first, vec![numbered(3), numbered(2)], "[{case}] limit");
        let next = ok(case, "list before 2", store.audit_list(2, Some(2)).await);
        assert_eq!(next, vec![numbered(1)], "[{case}] the page before entry 2");
        assert_eq!(ok(case, "list before 1", store.audit_list(2, Some(1)).await), vec![], "[{case}] nothing before 1");
    }

    pub async fn keeps_every_entry_as_written<S: DlqStore>(store: &S) {
        let case = "audit_keeps_every_entry_as_written";
        // An id given by the caller is the store's to replace, not to trust.
        let mut claimed = sample_entry(1);
        claimed.id = 77;
        assert_eq!(ok(case, "append", store.audit_append(&claimed).await), 1, "[{case}] the caller's id was kept");
        for n in 2..=40 {
            ok(case, "append", store.audit_append(&sample_entry(n)).await);
        }
        let all = ok(case, "list", store.audit_list(1000, None).await);
        let expected: Vec<AuditEntry> = (1..=40).rev().map(numbered).collect();
        assert_eq!(all, expected, "[{case}] an entry was lost, reordered or changed");
    }
}
