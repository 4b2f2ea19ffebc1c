//! Answers expire, with real parts (issue 43, item 3): the client over real SQLite and the mock
//! solver on loopback, its clock a runtime whose time the test moves (time as an argument: no
//! test sleeps for a token's life). A recover three minutes after a kill hands over no token
//! as good, each is a dead letter `TTLExpired` with its answer and cost; `resolve_expired`
//! solves them again; an answer its caller takes after its life is a dead letter too; and a
//! task's `ttl_ms` ends it as `TTLExpired` without another submission.
//!
//! Waits are bounded (a minute) and never asserted on: the outcomes and the mock's counters are.

use crate::support;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use captcha_dlq::core::class::reason;
use captcha_dlq::core::dlq::{DlqStore, Filter, Page};
use captcha_dlq::liveness::ProcessLiveness;
use captcha_dlq::store::SqliteStore;
use captcha_dlq::transport::ReqwestTransport;
use captcha_dlq::{Backends, Client, Error, RecoverOptions, SolveInput};
use captcha_dlq_mock::MockHandle;
use futures::StreamExt;
use serde_json::json;

const PRICE: f64 = 0.00299;

async fn client(mock: &MockHandle, file: &std::path::Path, ahead_ms: &Arc<AtomicI64>) -> Client {
    let options = captcha_dlq::builder()
        .api_key("test-key")
        .base_url(mock.base_url())
        .config(support::quick_polling(40, 2000.0))
        .option("price", json!({"recaptcha_v2": PRICE}))
        .options()
        .expect("options");
    let backends = Backends {
        runtime: Arc::new(support::OffsetClock::moved_by(ahead_ms.clone())),
        transport: Arc::new(ReqwestTransport::new(options.secrets(), None).expect("transport")),
        liveness: Arc::new(ProcessLiveness),
        store: Arc::new(SqliteStore::open(file).expect("open SQLite")),
    };
    Client::start_with(options, backends, None, None).expect("client starts")
}

/// Guards a test against a hang (a liveness check, not a speed check).
async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f).await.unwrap_or_else(|_| panic!("{what} did not finish"))
}

/// Solves `n` tokens with a client that then stops without handing them over (as a kill right
/// after the answers were written): each answer stays in the journal. Returns the ids.
async fn killed_with_answers(mock: &MockHandle, file: &std::path::Path, n: usize) -> Vec<String> {
    let clock = Arc::new(AtomicI64::new(0));
    let c = client(mock, file, &clock).await;
    let mut ids = Vec::new();
    for page in 0..n {
        let handle = c.submit(support::task(page), BTreeMap::new(), None).await.expect("accepted");
        ids.push(handle.id().to_string());
        let outcome = within("a solve", handle.outcome()).await.expect("an outcome");
        // Dropped unacknowledged: the answer stays in its journal entry, as after a kill.
        let delivery = outcome.into_delivery().expect("solved");
        assert!(delivery.solution.expires_at.is_some(), "a token carries its expiry");
        drop(delivery);
    }
    c.close().await;
    let left = SqliteStore::open(file).unwrap().journal_entries().await.unwrap();
    assert_eq!(left.iter().filter(|e| e.solution.is_some()).count(), n, "the answers are in the journal");
    ids
}

/// Issue 43's check: a recover three minutes after a kill hands over 0 reCAPTCHA tokens as good;
/// each is `TTLExpired`, with its cost and its answer kept in the record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recover_three_minutes_after_a_kill_hands_over_no_token_as_good() {
    let mock = support::mock(50, Vec::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dlq.sqlite");
    let ids = killed_with_answers(&mock, &file, 3).await;
    let submits = mock.counters().submits;

    let three_minutes = Arc::new(AtomicI64::new(180_000));
    let later = client(&mock, &file, &three_minutes).await;
    let result = within("recover", later.recover(RecoverOptions::default())).await.expect("recover");
    assert!(result.solved.is_empty(), "no token handed over as good: {:?}", result.solved);
    assert_eq!((result.report.dead_lettered, result.report.expired), (3, 3));
    let store = later.backends().store.clone();
    let now = later.backends().runtime.now();
    let records = store.peek(&Filter::default(), Page { offset: 0, limit: 10 }, now).await.unwrap();
    assert_eq!(records.len(), 3);
    for record in &records {
        assert!(ids.contains(&record.id), "the task's own id");
        assert_eq!(record.reason, reason::TTL_EXPIRED);
        let kept = record.solution.as_ref().expect("the answer kept in the record");
        assert_eq!(kept.cost, Some(PRICE), "with what it cost");
        assert!(kept.expires_at.is_some_and(|at| at <= now.as_unix_millis()));
    }
    assert!(store.journal_entries().await.unwrap().is_empty(), "nothing left in the journal");
    assert_eq!(mock.counters().submits, submits, "nothing paid again");
    later.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recover_with_resolve_expired_solves_each_expired_token_again() {
    let mock = support::mock(50, Vec::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dlq.sqlite");
    killed_with_answers(&mock, &file, 2).await;
    let submits = mock.counters().submits;

    let clock = Arc::new(AtomicI64::new(180_000));
    let later = client(&mock, &file, &clock).await;
    let options = RecoverOptions { resolve_expired: true, ..RecoverOptions::default() };
    let result = within("recover", later.recover(options)).await.expect("recover");
    assert_eq!(result.solved.len(), 2, "{:?}", result.failed);
    let now = later.backends().runtime.now().as_unix_millis();
    for answer in &result.solved {
        assert!(answer.solution.expires_at.is_some_and(|at| at > now), "a fresh token, good now");
    }
    assert_eq!(mock.counters().submits, submits + 2, "each solved once more, by the caller's choice");
    later.close().await;
}

/// A consumer that takes an answer after its life (a stream read slowly) gets its dead letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_taken_after_its_life_is_its_dead_letter_not_a_good_answer() {
    let mock = support::mock(50, Vec::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(AtomicI64::new(0));
    let c = client(&mock, &dir.path().join("dlq.sqlite"), &clock).await;
    let handle = c.submit(support::task(1), BTreeMap::new(), None).await.expect("accepted");
    within("the answer", async {
        while c.status().await.expect("status").jobs > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    // Solved and waiting for its consumer, who comes back three minutes later.
    clock.store(180_000, Ordering::SeqCst);
    match within("the outcome", handle.wait()).await {
        Err(Error::SolveFailed { record, stored }) => {
            assert!(stored);
            assert_eq!(record.reason, reason::TTL_EXPIRED);
            assert_eq!(record.solution.and_then(|s| s.cost), Some(PRICE));
        }
        other => panic!("expected the dead letter, got {other:?}"),
    }
    assert!(c.backends().store.journal_entries().await.unwrap().is_empty());
    c.close().await;
}

/// A batch item's `ttl_ms`: the task never solved within it is `TTLExpired`, submitted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_past_its_ttl_goes_to_the_dlq_without_another_submission() {
    let never = captcha_dlq_mock::Rule {
        matcher: captcha_dlq_mock::Matcher { page_url_contains: Some("/page/9".into()), ..Default::default() },
        behavior: captcha_dlq_mock::Behavior {
            outcome: captcha_dlq_mock::Outcome::NeverReady,
            ..captcha_dlq_mock::Behavior::default()
        },
    };
    let mock = support::mock(50, vec![never]).await;
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(AtomicI64::new(0));
    let c = client(&mock, &dir.path().join("dlq.sqlite"), &clock).await;
    let tasks = json!([{"task": {"type": "recaptcha_v2", "sitekey": "6Le-SITEKEY",
                                 "page_url": "https://example.com/page/9"}, "ttl_ms": 300}]);
    let options = captcha_dlq::api_values::BatchOptions::default();
    let inputs: Vec<SolveInput> =
        captcha_dlq::api_values::batch(tasks, &options, captcha_dlq::core::support::json_read::Casing::Snake).unwrap();
    assert_eq!(inputs[0].ttl_ms, Some(300));
    let results: Vec<_> = within("the batch", c.solve_stream(inputs, None).collect()).await;
    match &results[0].outcome {
        Err(Error::SolveFailed { record, .. }) => {
            assert_eq!(record.reason, reason::TTL_EXPIRED);
            assert_eq!(record.attempts, 1);
        }
        other => panic!("expected TTLExpired, got {other:?}"),
    }
    assert_eq!(mock.counters().submits, 1, "submitted once, never again");
    c.close().await;
}
