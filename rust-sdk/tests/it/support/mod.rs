//! What the native integration tests share: the task they solve, a quick polling schedule,
//! a mock solver with a default delay, bounded waits, the concurrent drain every shareable
//! store must pass, and a runtime whose clock the test sets off from the host's.
//!
//! Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use captcha_dlq::core::dlq::testkit::{at, sample_record};
use captcha_dlq::core::dlq::{DlqStore, Filter, PushOutcome, StoreError};
use captcha_dlq::core::engine::{Backoff, EngineConfig, FirstPoll};
use captcha_dlq::core::{Task, Timestamp, ValidTask};
use captcha_dlq::runtime::TokioRuntime;
use captcha_dlq::{BoxFuture, Runtime};
use captcha_dlq_mock::{Behavior, MockConfig, MockHandle, MockSolver, Rule};
use serde_json::json;

/// A reCAPTCHA v2 task on page `page` of example.com (the mock's rules match on the page).
pub fn task(page: usize) -> ValidTask {
    Task::from_json_value(json!({
        "type": "recaptcha_v2",
        "sitekey": "6Le-SITEKEY",
        "page_url": format!("https://example.com/page/{page}"),
    }))
    .expect("valid task")
}

/// The first poll after 60 ms, then every `interval_ms`, with `submits_per_second`: the seeds'
/// schedule scaled down so a test's tasks end in a second or two. Files change what they test.
pub fn quick_polling(interval_ms: u64, submits_per_second: f64) -> EngineConfig {
    let mut c = EngineConfig::default();
    c.polling.first_poll_ms = FirstPoll::uniform(60);
    c.polling.interval_ms = interval_ms;
    c.rate.submits_per_second = submits_per_second;
    c
}

/// [`quick_polling`] at 40 ms and 2000 submits a second, at most `max_polls` polls, with
/// coalescing, backoff and the circuit's break scaled down the same way: the schedule of the
/// files that test failures (retries, failover, alerts).
pub fn fast_retries(max_polls: u32) -> EngineConfig {
    let mut c = quick_polling(40, 2000.0);
    c.polling.max_polls = max_polls;
    c.polling.coalesce_ms = 20;
    c.retry.backoff = Backoff::FullJitter { base_ms: 20, cap_ms: 200 };
    c.retry.transient_min_delay_ms = 10;
    c.circuit.break_ms = 200;
    c
}

/// A mock solver whose tasks are ready `solve_after_ms` after they were created, unless a rule
/// says otherwise.
pub async fn mock(solve_after_ms: u64, rules: Vec<Rule>) -> MockHandle {
    let script = MockConfig {
        default_behavior: Behavior { solve_after_ms, ..Behavior::default() },
        rules,
        ..MockConfig::default()
    };
    MockSolver::start(script).await.expect("mock starts")
}

/// Pushes records `r0`, `r1`… from `n` tasks at once (so a backend may group them into one
/// write) and answers each push's result, in order.
pub async fn push_at_once<S: DlqStore + Clone + 'static>(store: &S, n: u64) -> Vec<Result<PushOutcome, StoreError>> {
    let pushes: Vec<_> = (0..n)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.push(sample_record(&format!("r{i}"), i)).await })
        })
        .collect();
    let mut results = Vec::new();
    for push in pushes {
        results.push(push.await.expect("task"));
    }
    results
}

/// Polls `done` every 50 ms for at most a minute (a readiness wait, not a timing assertion).
pub async fn until<F: std::future::Future<Output = bool>>(what: &str, mut done: impl FnMut() -> F) {
    let start = Instant::now();
    while !done().await {
        assert!(start.elapsed() < Duration::from_secs(60), "{what} did not happen within a minute");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Pushes 120 records into `store`, then `workers` (other connections to the same data) drain
/// them at once, three a receive: each record must be leased exactly once. Returns the ids.
pub async fn drain_at_once<S: DlqStore + 'static>(store: &S, workers: Vec<S>) -> BTreeSet<String> {
    let want: BTreeSet<String> = (0..120).map(|i| format!("r{i:03}")).collect();
    for (i, id) in want.iter().enumerate() {
        store.push(sample_record(id, i as u64)).await.expect("push");
    }
    let mut running = Vec::new();
    for worker in workers {
        running.push(tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                let batch = worker.receive(&Filter::all(), 3, Duration::from_secs(3600), at(100_000)).await;
                let batch = batch.expect("receive");
                if batch.is_empty() {
                    return got;
                }
                got.extend(batch.into_iter().map(|l| l.record.id));
            }
        }));
    }
    let mut all = Vec::new();
    for w in running {
        all.extend(w.await.expect("worker"));
    }
    let distinct: BTreeSet<String> = all.iter().cloned().collect();
    assert_eq!(all.len(), distinct.len(), "a record was leased twice");
    assert_eq!(distinct, want);
    distinct
}

/// The current tokio runtime with its clock `offset_ms` off the host's (negative: behind). A
/// fixed offset is a host whose clock is wrong; an offset the test raises moves time forward,
/// so nothing sleeps for a token's life.
pub struct OffsetClock {
    inner: TokioRuntime,
    offset_ms: Arc<AtomicI64>,
}

impl OffsetClock {
    /// Off by what `offset_ms` holds at each reading (the test keeps a clone to move it).
    pub fn moved_by(offset_ms: Arc<AtomicI64>) -> Self {
        OffsetClock { inner: TokioRuntime::current().expect("tokio"), offset_ms }
    }

    /// Off by `offset_ms` for good.
    pub fn skewed(offset_ms: i64) -> Self {
        Self::moved_by(Arc::new(AtomicI64::new(offset_ms)))
    }
}

impl Runtime for OffsetClock {
    fn now(&self) -> Timestamp {
        let ms = self.inner.now().as_unix_millis() as i64 + self.offset_ms.load(Ordering::SeqCst);
        Timestamp::from_unix_millis(ms as u64)
    }
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        self.inner.sleep(duration)
    }
    fn spawn(&self, future: BoxFuture<'static, ()>) {
        self.inner.spawn(future);
    }
    fn random_seed(&self) -> u64 {
        self.inner.random_seed()
    }
}

/// Two loopback servers for redirect tests: `redirector` answers `/elsewhere` (any method)
/// with a 307 to `target` on another host (`localhost` rather than `127.0.0.1`, another port),
/// `/same` with a 307 to its own `/final`, which answers 200; `target` only counts what reaches it.
pub struct Redirects {
    pub redirector: String,
    pub target: String,
    /// Requests each server took: (redirector, target).
    hits: std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]>,
}

impl Redirects {
    pub async fn start() -> Redirects {
        use axum::http::{header, StatusCode};
        use axum::response::IntoResponse;
        use std::sync::atomic::Ordering;
        let hits: std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]> = std::sync::Arc::default();
        let target = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target_url = format!("http://localhost:{}/", target.local_addr().unwrap().port());
        let counted = hits.clone();
        let target_app = axum::Router::new().fallback(move || {
            counted[1].fetch_add(1, Ordering::SeqCst);
            async { "reached" }
        });
        tokio::spawn(async move { axum::serve(target, target_app).await });
        let redirector = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let redirector_url = format!("http://{}", redirector.local_addr().unwrap());
        let (counted, elsewhere) = (hits.clone(), target_url.clone());
        let redirector_app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
            counted[0].fetch_add(1, Ordering::SeqCst);
            let location = match uri.path() {
                "/final" => None,
                "/same" => Some("/final".to_string()),
                _ => Some(elsewhere.clone()),
            };
            async move {
                match location {
                    Some(to) => (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)]).into_response(),
                    None => "final".into_response(),
                }
            }
        });
        tokio::spawn(async move { axum::serve(redirector, redirector_app).await });
        Redirects { redirector: redirector_url, target: target_url, hits }
    }

    /// Requests the redirector took (each redirect followed to `/final` is one more).
    pub fn redirector_hits(&self) -> usize {
        self.hits[0].load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Requests that reached the other host.
    pub fn target_hits(&self) -> usize {
        self.hits[1].load(std::sync::atomic::Ordering::SeqCst)
    }
}
