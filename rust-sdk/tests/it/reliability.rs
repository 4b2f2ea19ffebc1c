//! Nothing lost, nothing paid twice, never silent — the client over real HTTP on loopback
//! against the mock solver, with a store that can be made to fail or hang on demand.
//! (The same failures with real SQLite locks, immutable files and a paused Redis are in
//! the CLI's tests.)

use crate::support;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use captcha_dlq::core::class::reason;
use captcha_dlq::core::dlq::interpose::{Call, Interpose, Interposed};
use captcha_dlq::core::dlq::{DlqStore, Filter, MemoryStore, StoreError};
use captcha_dlq::core::engine::EngineConfig;
use captcha_dlq::core::Event;
use captcha_dlq::{Client, Error, Outcome, RecoverOptions, SolveInput};
use captcha_dlq_mock::{Behavior, Matcher, MockConfig, MockHandle, MockSolver, Outcome as MockOutcome, Rule};
use futures::StreamExt;
use serde_json::json;

fn fast_config() -> EngineConfig {
    support::fast_retries(50)
}

fn never_ready(page: &str) -> Rule {
    Rule {
        matcher: Matcher { page_url_contains: Some(page.into()), ..Matcher::default() },
        behavior: Behavior { outcome: MockOutcome::NeverReady, ..Behavior::default() },
    }
}

/// Guards a test against a hang (a liveness check, not a speed check).
async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(Duration::from_secs(120), f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} did not finish within two minutes"),
    }
}

const OK: u8 = 0;
const FAIL: u8 = 1;
const HANG: u8 = 2;
/// Fails after a moment, as a store across a thread or a network does.
const FAIL_SLOWLY: u8 = 3;

/// What makes a memory store fail, or hang, on demand: its writes (reads always answer).
#[derive(Debug, Default)]
struct Faults {
    mode: AtomicU8,
    /// `journal_forget` waits a while first, without holding the store, so that a
    /// read made meanwhile runs before it (a store that does not keep call order).
    slow_forget: AtomicBool,
}

type Faulty = Interposed<Faults>;

fn faulty() -> Arc<Faulty> {
    Arc::new(Interposed { store: Arc::new(MemoryStore::default()), hooks: Faults::default() })
}

#[async_trait::async_trait]
impl Interpose for Faults {
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        if call.reads_only() {
            return Ok(());
        }
        match self.mode.load(Ordering::SeqCst) {
            FAIL => return Err(StoreError::Backend("disk I/O error (injected)".into())),
            FAIL_SLOWLY => {
                tokio::time::sleep(Duration::from_millis(30)).await;
                return Err(StoreError::Backend("disk I/O error (injected, slowly)".into()));
            }
            HANG => {
                while self.mode.load(Ordering::SeqCst) == HANG {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
            _ => {}
        }
        if call == Call::JournalForget && self.slow_forget.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(120)).await;
        }
        Ok(())
    }
}

async fn client_over(mock: &MockHandle, store: Arc<dyn DlqStore>, events: Option<Arc<Mutex<Vec<Event>>>>) -> Client {
    let mut builder = captcha_dlq::builder()
        .api_key("test-key")
        .base_url(mock.base_url())
        .dlq_store(store)
        .config(fast_config())
        .option("store", json!({"timeout_ms": 300, "retry_for_ms": 1500}));
    if let Some(seen) = events {
        builder = builder.on_event(move |e| seen.lock().unwrap().push(e.clone()));
    }
    builder.build().await.unwrap()
}

/// A DLQ location that cannot hold a store fails the build at its first try, naming the
/// problem: the store retry (`retry_for_ms`, here a minute) is for a store that is locked or
/// restarting, not for a path or a URL that waiting does not fix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dlq_location_that_cannot_hold_a_store_fails_the_build_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-directory").join("dlq.sqlite");
    let too_long = dir.path().join("x".repeat(300));
    let unusable = [
        (missing.display().to_string(), "No such file or directory"),
        (dir.path().display().to_string(), "it is a directory"),
        (too_long.display().to_string(), "File name too long"),
        ("redis://[::1".to_string(), "not a valid URL"),
    ];
    let build = |location: &str| {
        captcha_dlq::builder()
            .api_key("test-key")
            .dlq(location)
            .option("store", json!({"timeout_ms": 300, "retry_for_ms": 60_000}))
            .build()
    };
    for (location, problem) in unusable {
        match within("the build", build(&location)).await {
            Err(Error::Store(e @ StoreError::Unusable { .. })) => {
                assert!(!e.is_transient(), "{e}");
                assert!(e.to_string().contains(problem), "{location}: {e}");
            }
            Err(other) => panic!("{location}: expected an unusable location, got {other}"),
            Ok(_) => panic!("{location}: the build succeeded"),
        }
    }
    for (location, problem) in [("", "is empty"), ("dlq\0.sqlite", "NUL")] {
        match within("the build", build(location)).await {
            Err(Error::Config(e)) => assert!(e.field == "dlq" && e.problem.contains(problem), "{location:?}: {e}"),
            Err(other) => panic!("{location:?}: expected a config error, got {other}"),
            Ok(_) => panic!("{location:?}: the build succeeded"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_that_cannot_be_written_means_nothing_is_submitted() {
    let mock = support::mock(30, vec![]).await;
    let store = faulty();
    store.hooks.mode.store(FAIL, Ordering::SeqCst);
    let client = client_over(&mock, store.clone(), None).await;
    let err = within("solve", client.solve(support::task(0))).await.unwrap_err();
    match &err {
        Error::Store(e) => assert!(e.to_string().contains("not submitted"), "{e}"),
        other => panic!("expected a store error, got {other}"),
    }
    assert_eq!(mock.counters().requests_to("/in.php"), 0, "nothing was paid for");
    let health = client.store_health();
    assert!(health.failures >= 1 && !health.available, "{health:?}");
    assert!(health.last_error.as_deref().unwrap_or("").contains("disk I/O error"), "{health:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_keeps_failing_slowly_is_retried_then_given_up() {
    let mock = support::mock(30, vec![]).await;
    let store = faulty();
    store.hooks.mode.store(FAIL_SLOWLY, Ordering::SeqCst);
    let client = client_over(&mock, store.clone(), None).await;
    // Each retry is scheduled when a failure arrives, between two timer wake-ups: the driver
    // must re-arm its timer for it (it used to sleep on, and the task hung).
    for page in 0..3 {
        let err = within("solve", client.solve(support::task(page))).await.unwrap_err();
        assert!(matches!(&err, Error::Store(e) if e.to_string().contains("not submitted")), "{err}");
    }
    assert_eq!(mock.counters().requests_to("/in.php"), 0);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_store_is_reported_and_the_work_resumes_when_it_is_back() {
    let mock = support::mock(30, vec![]).await;
    let store = faulty();
    let events = Arc::new(Mutex::new(Vec::new()));
    let client = client_over(&mock, store.clone(), Some(events.clone())).await;
    store.hooks.mode.store(HANG, Ordering::SeqCst);
    let running = {
        let client = client.clone();
        tokio::spawn(async move {
            client.solve_many((0..5).map(|i| SolveInput::new(support::task(i))).collect(), None).await
        })
    };
    // The hang is noticed (the per-call timeout is 300 ms here) and nothing is submitted meanwhile.
    within("the outage to be reported", async {
        while !events.lock().unwrap().iter().any(|e| matches!(e, Event::StoreUnavailable { .. })) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(mock.counters().requests_to("/in.php"), 0, "no task goes out while its journal cannot be written");
    // The status counts the five journal entries waiting for the store.
    within("the five journal writes to show in the status", async {
        while client.status().await.unwrap().store_writes != 5 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    store.hooks.mode.store(OK, Ordering::SeqCst);
    let results = within("the batch", running).await.unwrap();
    assert!(results.iter().all(|r| r.outcome.is_ok()), "{results:?}");
    client.flush().await.unwrap();
    assert_eq!(client.status().await.unwrap().store_writes, 0, "every write ended");
    assert!(events.lock().unwrap().iter().any(|e| matches!(e, Event::StoreAvailable { .. })));
    assert_eq!(client.store_health().failures, 0, "nothing was given up: the store came back in time");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_stays_in_the_journal_until_its_caller_takes_it() {
    let mock = support::mock(30, vec![]).await;
    let store: Arc<dyn DlqStore> = Arc::new(MemoryStore::new());
    let client = client_over(&mock, store.clone(), None).await;
    let handle = client.submit(support::task(0), BTreeMap::new(), None).await.unwrap();
    let id = handle.id().to_string();
    let Outcome::Solved(delivery) = within("solve", handle.outcome()).await.unwrap() else { panic!("not solved") };
    let journal = store.journal_entries().await.unwrap();
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0].solution.as_ref(), Some(&delivery.solution), "durable before it was handed over");
    // The caller dies before using it (the receipt is dropped, not acknowledged).
    let first = delivery.solution.clone();
    drop(delivery);
    client.close().await;
    let polls_before = mock.counters().requests_to("/res.php");
    let again = client_over(&mock, store.clone(), None).await;
    let report = within("recover", again.recover(RecoverOptions::default())).await.unwrap();
    assert_eq!(report.solved.len(), 1);
    assert_eq!(
        (report.solved[0].id.as_str(), &report.solved[0].solution),
        (id.as_str(), &first),
        "recognisably the same"
    );
    assert_eq!(mock.counters().requests_to("/res.php"), polls_before, "handed over from the journal, not asked again");
    again.close().await;
    assert!(store.journal_entries().await.unwrap().is_empty(), "acknowledged by recover: gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_end_once_the_store_holds_what_their_items_say() {
    let unsolvable = Rule {
        matcher: Matcher { page_url_contains: Some("/page/2".into()), ..Matcher::default() },
        behavior: Behavior { outcome: MockOutcome::Unsolvable, ..Behavior::default() },
    };
    let mock = support::mock(30, vec![unsolvable]).await;
    let store = faulty();
    store.hooks.slow_forget.store(true, Ordering::SeqCst);
    let client = client_over(&mock, store.clone(), None).await;

    // Answers are acknowledged as the consumer takes them (as the bindings do); their journal
    // entries are removed by writes that take a while. The stream's end waits for them.
    let inputs = [0, 1, 3].into_iter().map(|i| SolveInput::new(support::task(i))).collect();
    let mut stream = client.solve_stream(inputs, None).with_receipts();
    let mut solved = 0;
    within("the batch", async {
        while let Some(result) = stream.next().await {
            if let Some(receipt) = result.receipt {
                receipt.ack();
                solved += 1;
            }
        }
    })
    .await;
    assert_eq!(solved, 3);
    assert_eq!(store.journal_entries().await.unwrap(), vec![], "answers' entries gone when the stream ended");
    let failed = within("page 2", client.solve(support::task(2))).await;
    assert!(matches!(failed, Err(Error::SolveFailed { stored: true, .. })), "{failed:?}");
    assert_eq!(client.dlq().count(&Filter::default()).await.unwrap(), 1);

    // A replay as the bindings run it: each answer acknowledged as it comes, then a read.
    mock.set_script(MockConfig {
        default_behavior: Behavior { solve_after_ms: 30, ..Behavior::default() },
        ..MockConfig::default()
    })
    .unwrap();
    let mut replay = client.replay_stream(Default::default());
    let mut recovered = 0;
    within("the replay", async {
        while let Some(item) = replay.next().await {
            if let captcha_dlq::ReplayOutcome::Recovered(delivery) = item.unwrap().outcome {
                delivery.receipt.ack();
                recovered += 1;
            }
        }
    })
    .await;
    assert_eq!(recovered, 1);
    assert_eq!(client.dlq().count(&Filter::default()).await.unwrap(), 0, "the replayed record is gone");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_stream_in_as_they_come_while_one_task_never_completes() {
    let mock = support::mock(30, vec![never_ready("/page/7")]).await;
    let client = client_over(&mock, Arc::new(MemoryStore::new()), None).await;
    let mut stream = client.solve_stream((0..20).map(|i| SolveInput::new(support::task(i))).collect(), Some(20));
    let mut got = Vec::new();
    within("19 results", async {
        while got.len() < 19 {
            got.push(stream.next().await.expect("more results"));
        }
    })
    .await;
    assert!(got.iter().all(|r| r.outcome.is_ok() && r.index != 7), "the 19 that can be solved came first");
    // Stopping here cancels task 7, which the provider has: it runs on without a waiter.
    drop(stream);
    let status = client.status().await.unwrap();
    assert_eq!(status.detached, 1, "{status:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_runs_on_and_recover_hands_its_answer_over_without_a_second_submission() {
    let mock = support::mock(400, vec![]).await;
    let client = client_over(&mock, Arc::new(MemoryStore::new()), None).await;
    let handle = client.submit(support::task(3), BTreeMap::new(), None).await.unwrap();
    let id = handle.id().to_string();
    within("the submission", async {
        while mock.counters().requests_to("/in.php") == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    handle.cancel();
    assert!(matches!(handle.wait().await, Err(Error::Cancelled { runs_on: true, .. })));
    let report = within("recover", client.recover(RecoverOptions::default())).await.unwrap();
    assert_eq!(report.solved.len(), 1, "{report:?}");
    assert_eq!(report.solved[0].id, id);
    assert_eq!(mock.counters().requests_to("/in.php"), 1, "never submitted twice because the caller cancelled");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_provider_fails_fast_as_network() {
    let client = captcha_dlq::builder()
        .api_key("test-key")
        .base_url("http://127.0.0.1:1")
        .dlq("memory")
        .config(fast_config())
        .build()
        .await
        .unwrap();
    let results =
        within("20 tasks", client.solve_many((0..20).map(|i| SolveInput::new(support::task(i))).collect(), None)).await;
    for r in &results {
        match &r.outcome {
            Err(Error::SolveFailed { record, stored: true }) => {
                assert_eq!(record.reason, reason::NETWORK, "{record:?}");
                assert_eq!(record.class, captcha_dlq::core::ErrorClass::Transient, "replayable");
            }
            other => panic!("expected a Network dead letter, got {other:?}"),
        }
    }
    assert!(client.status().await.unwrap().unreachable_episodes >= 1);
    client.close().await;
}

/// A server that answers every request with a body that never ends, or one whose declared length
/// is 1 GB; counts the bytes it managed to write before the client hung up.
async fn endless_answers(declared: bool) -> (String, Arc<std::sync::atomic::AtomicU64>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let written = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let count = written.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let head = if declared {
                    "HTTP/1.1 200 OK\r\ncontent-length: 1000000000\r\n\r\n"
                } else {
                    "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n"
                };
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 64 * 1024];
                while socket.write_all(&chunk).await.is_ok() {
                    count.fetch_add(chunk.len() as u64, Ordering::SeqCst);
                }
            });
        }
    });
    (url, written)
}

/// An answer longer than any solving service sends is not read to its end (nor into memory):
/// the request fails as a lost answer naming the limit, and the task ends in the DLQ saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_never_ends_is_cut_off_at_the_limit() {
    for declared in [false, true] {
        let (url, written) = endless_answers(declared).await;
        let mut config = fast_config();
        config.retry.max_attempts = 1;
        let client = captcha_dlq::builder()
            .api_key("test-key")
            .base_url(url)
            .dlq("memory")
            .config(config)
            .build()
            .await
            .unwrap();
        match within("the solve", client.solve(support::task(0))).await {
            Err(Error::SolveFailed { record, .. }) => {
                assert!(record.description.contains("longer than 4 MiB"), "{record:?}");
            }
            other => panic!("expected a dead letter, got {other:?}"),
        }
        // The client hung up at the limit: the server could write at most what the socket
        // buffers held beyond it (a few MiB on loopback), never the whole stream.
        let sent = written.load(Ordering::SeqCst);
        assert!(sent < 64 << 20, "{sent} bytes were written to a client that should have stopped at 4 MiB");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_means_what_it_says() {
    // Nothing is answered before all 300 are submitted: with room for fewer than 300 at once the
    // batch could never finish, so finishing means all 300 were with the provider at once,
    // however long submitting them takes on a loaded machine.
    let script = MockConfig {
        default_behavior: Behavior { ready_after_created: 300, ..Behavior::default() },
        ..MockConfig::default()
    };
    let mock = MockSolver::start(script).await.expect("mock starts");
    let client = client_over(&mock, Arc::new(MemoryStore::new()), None).await;
    let batch = client.solve_many((0..300).map(|i| SolveInput::new(support::task(i))).collect(), Some(300));
    let results = within("300 tasks held until all are submitted", batch).await;
    assert!(results.iter().all(|r| r.outcome.is_ok()), "{results:?}");
    assert_eq!(mock.counters().tasks_created, 300, "each submitted once");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_dropped_before_its_caller_heard_of_it_is_cancelled_not_sent() {
    let mock = support::mock(30, vec![]).await;
    let store = faulty();
    let client = client_over(&mock, store.clone(), None).await;
    // The journal holds every job before its submission, so none can go out before the drops.
    store.hooks.mode.store(HANG, Ordering::SeqCst);
    for page in 0..20 {
        // Polled once (the command is sent), then dropped: a cancelled future, Ctrl-C. The
        // driver may have answered by then or not; either way the job must be cancelled.
        let mut submit = Box::pin(client.submit(support::task(page), BTreeMap::new(), None));
        drop(futures::poll!(&mut submit));
        drop(submit);
    }
    // Commands are handled in order: the cancellations came before this question.
    assert_eq!(client.status().await.unwrap().jobs, 0, "every dropped submission was cancelled");
    store.hooks.mode.store(OK, Ordering::SeqCst);
    let cancelled = Filter { reasons: vec!["Cancelled".into()], ..Filter::default() };
    within("the cancellations", async {
        while client.dlq().count(&cancelled).await.unwrap() < 20 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert_eq!(mock.counters().requests_to("/in.php"), 0, "nothing sent after its caller went away");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hold_mode_waits_out_a_zero_balance_and_resumes_after_a_top_up() {
    let mut script = MockConfig {
        default_behavior: Behavior { solve_after_ms: 30, ..Behavior::default() },
        ..MockConfig::default()
    };
    script.account_errors.insert("test-key".into(), "ERROR_ZERO_BALANCE".into());
    let mock = MockSolver::start(script).await.unwrap();
    let mut config = fast_config();
    config.circuit.account_hold_ms = 60_000;
    config.circuit.account_probe_ms = 200;
    config.rate.submits_per_second = 50.0;
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    // 2captcha's ERROR_ZERO_BALANCE is an account error (CaptchaAI's means "no free worker").
    let client = captcha_dlq::builder()
        .api_key("test-key")
        .provider("2captcha")
        .base_url(mock.base_url())
        .dlq("memory")
        .config(config)
        .on_event(move |e| seen.lock().unwrap().push(e.clone()))
        .build()
        .await
        .unwrap();
    let running = {
        let client = client.clone();
        tokio::spawn(async move {
            client.solve_many((0..5).map(|i| SolveInput::new(support::task(i))).collect(), None).await
        })
    };
    within("the hold", async {
        while !events.lock().unwrap().iter().any(|e| matches!(e, Event::AccountHold { .. })) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // Probes go on while the account is empty. The submissions refused are counted once a probe has
    // answered: a submit sent before the hold may still be reaching the mock when the hold is seen.
    let probes = &mock;
    let balance_checks = |n: u64| async move {
        while probes.counters().requests_to("/res.php") < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    within("a balance check", balance_checks(1)).await;
    let refused = mock.counters().requests_to("/in.php");
    within("two more balance checks", balance_checks(3)).await;
    assert_eq!(mock.counters().requests_to("/in.php"), refused, "no submission while the balance is zero");
    let mut topped_up = mock.config();
    topped_up.account_errors.clear();
    mock.set_script(topped_up).unwrap();
    let results = within("the batch", running).await.unwrap();
    assert!(results.iter().all(|r| r.outcome.is_ok()), "{results:?}");
    assert_eq!(mock.counters().requests_to("/in.php"), refused + 5, "each task submitted once after the top-up");
    client.close().await;
}
