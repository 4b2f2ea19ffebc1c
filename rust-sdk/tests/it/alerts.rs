//! Webhook alerts end to end: clients against the mock solver over loopback HTTP, and a real
//! HTTP receiver on loopback (a few lines over tokio's TCP, so each test can make it fail).
//! Every kind arrives, signed with its time (checked with ring's HMAC, not the code that signs,
//! and with `verify_webhook`, the receivers' check); a burst is
//! one message with its count; a failing receiver gets the message once it recovers; a dead
//! one never stops a solve (its alerts are counted failed); no body holds the key.

use crate::support;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use captcha_dlq::core::dlq::interpose::{Call, Interpose, Interposed};
use captcha_dlq::core::dlq::{DlqStore, MemoryStore, StoreError};
use captcha_dlq::core::engine::EngineConfig;
use captcha_dlq::core::{Task, ValidTask};
use captcha_dlq::{Client, SolveInput};
use captcha_dlq_mock::{Behavior, Matcher, MockConfig, MockHandle, MockSolver, Outcome, Rule};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const KEY: &str = "KEY-must-never-reach-a-webhook-7f3a";
const SECRET: &str = "webhook-signing-secret";

/// One request the receiver took.
#[derive(Clone, Debug)]
struct Received {
    signature: Option<String>,
    body: Vec<u8>,
    /// The status it was answered with.
    status: u16,
}

impl Received {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// A webhook receiver on loopback that answers 500 to its first `fail_first` requests.
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    async fn start(fail_first: usize) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook/path-token", listener.local_addr().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let failures = Arc::new(AtomicUsize::new(fail_first));
        let state = got.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, state.clone(), failures.clone()));
            }
        });
        Receiver { url, got }
    }

    /// The requests answered 2xx.
    fn delivered(&self) -> Vec<Received> {
        self.got.lock().unwrap().iter().filter(|r| r.status == 200).cloned().collect()
    }

    fn all(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// The delivered messages of `kind`, as JSON.
    fn of_kind(&self, kind: &str) -> Vec<Value> {
        self.delivered().iter().map(Received::json).filter(|v| v["event"] == kind).collect()
    }

    /// Waits (at most a minute: a bound for a broken build, not a measurement) until `done`.
    async fn wait_for(&self, what: &str, done: impl Fn(&Receiver) -> bool) {
        for _ in 0..600 {
            if done(self) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{what} never arrived; got {:?}", self.all().iter().map(Received::json).collect::<Vec<_>>());
    }
}

/// HTTP/1.1 requests on one connection, kept alive.
async fn serve(mut stream: tokio::net::TcpStream, got: Arc<Mutex<Vec<Received>>>, failures: Arc<AtomicUsize>) {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let header = |name: &str| {
            head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_string())
            })
        };
        let length: usize = header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        while buf.len() < head_end + length {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = buf[head_end..head_end + length].to_vec();
        buf.drain(..head_end + length);
        let fail = failures.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
        let status = if fail { 500 } else { 200 };
        got.lock().unwrap().push(Received { signature: header("x-captcha-dlq-signature"), body, status });
        let answer = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\n\r\n");
        if stream.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// `t=<t>,v1=<hex>`, the hex being the HMAC-SHA256 of `<t>.<body>` under the test's secret,
/// by ring, for the `t` the header names (which must be within a minute of now).
fn expected_signature(body: &[u8], header: &str) -> String {
    let t: u64 = header.strip_prefix("t=").and_then(|rest| rest.split(',').next()).unwrap().parse().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert!(now.abs_diff(t) < 60, "signed at the time it was sent: {t} vs {now}");
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
    let tag = ring::hmac::sign(&key, &[format!("{t}.").as_bytes(), body].concat());
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("t={t},v1={hex}")
}

fn fast_config() -> EngineConfig {
    let mut c = support::fast_retries(6);
    c.rate.max_in_flight = 500;
    c.circuit.unreachable_after_failures = 2;
    c
}

fn task(page: usize) -> ValidTask {
    Task::from_json_value(
        json!({"type": "recaptcha_v2", "sitekey": "6Le-SITEKEY", "page_url": format!("https://example.com/{page}")}),
    )
    .unwrap()
}

fn inputs(n: usize, page: &str) -> Vec<SolveInput> {
    (0..n)
        .map(|i| {
            let t = Task::from_json_value(json!({"type": "recaptcha_v2", "sitekey": "6Le-SITEKEY", "page_url": format!("https://example.com/{page}/{i}")}))
                .unwrap();
            SolveInput { task: Ok(t), labels: BTreeMap::new(), key: None, ttl_ms: None }
        })
        .collect()
}

async fn mock() -> MockHandle {
    let mut script = MockConfig::default();
    script.rules.push(Rule {
        matcher: Matcher { page_url_contains: Some("unsolvable".into()), ..Matcher::default() },
        behavior: Behavior { outcome: Outcome::Unsolvable, solve_after_ms: 0, ..Behavior::default() },
    });
    script.account_errors.insert("KEY-wrong".into(), "ERROR_WRONG_USER_KEY".into());
    MockSolver::start(script).await.unwrap()
}

fn alerts(receiver: &Receiver, extra: Value) -> Value {
    let mut a = json!({"webhooks": [{"url": receiver.url, "secret": SECRET}], "dead_letters_per_minute": 1, "budget_fraction": 0.25});
    for (k, v) in extra.as_object().unwrap() {
        a[k] = v.clone();
    }
    a
}

async fn client(base_url: &str, key: &str, alerts: Value, store: Option<Arc<dyn DlqStore>>) -> Client {
    let mut b = captcha_dlq::builder()
        .api_key(key)
        .base_url(base_url)
        .dlq("memory")
        .config(fast_config())
        .option("alerts", alerts)
        .option("price", json!(0.001))
        .option("budget", json!(0.01))
        .option("store", json!({"timeout_ms": 300, "retry_for_ms": 300}));
    if let Some(store) = store {
        b = b.dlq_store(store);
    }
    b.build().await.expect("client builds")
}

/// A memory store whose writes all fail.
#[derive(Debug)]
struct BrokenWrites;

#[async_trait::async_trait]
impl Interpose for BrokenWrites {
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        if call.reads_only() {
            Ok(())
        } else {
            Err(StoreError::Backend("disk I/O error (injected)".into()))
        }
    }
}

fn assert_signed_and_keyless(receiver: &Receiver) {
    for r in receiver.all() {
        let text = String::from_utf8_lossy(&r.body);
        assert!(!text.contains(KEY) && !text.contains("KEY-wrong"), "a body holds a key: {text}");
        let header = r.signature.as_deref().expect("signed");
        assert_eq!(header, expected_signature(&r.body, header), "{text}");
        let tolerance = captcha_dlq::DEFAULT_WEBHOOK_TOLERANCE;
        assert_eq!(captcha_dlq::verify_webhook(&r.body, header, SECRET, tolerance), Ok(()), "the receivers' check");
        let other_body = [r.body.as_slice(), b" "].concat();
        assert!(captcha_dlq::verify_webhook(&other_body, header, SECRET, tolerance).is_err());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_arrives_signed_and_without_the_key() {
    let mock = mock().await;
    let receiver = Receiver::start(0).await;
    let a = alerts(&receiver, json!({}));

    // Dead letters: a reason seen for the first time, and more than one a minute.
    let c = client(&mock.base_url(), KEY, a.clone(), None).await;
    let results = c.solve_many(inputs(3, "unsolvable"), Some(3)).await;
    assert!(results.iter().all(|r| r.outcome.is_err()));
    // The budget (0.01 at 0.001 a task, alert at 25%): the third of four solved tasks reaches it.
    let solved = c.solve_many(inputs(4, "fine"), Some(1)).await;
    assert!(solved.iter().all(|r| r.outcome.is_ok()));
    receiver
        .wait_for("new_reason, dead_letter_rate and budget", |r| {
            !r.of_kind("new_reason").is_empty()
                && !r.of_kind("dead_letter_rate").is_empty()
                && !r.of_kind("budget").is_empty()
        })
        .await;
    let new = &receiver.of_kind("new_reason")[0];
    assert_eq!((new["subject"].as_str(), new["client"].as_str()), (Some("ERROR_CAPTCHA_UNSOLVABLE"), Some(c.owner())));
    assert_eq!(receiver.of_kind("budget")[0]["details"]["budget"], 0.01);
    c.close().await;

    // An account error (a wrong key).
    let wrong = client(&mock.base_url(), "KEY-wrong", a.clone(), None).await;
    assert!(wrong.solve(task(1)).await.is_err());
    receiver.wait_for("account_error", |r| !r.of_kind("account_error").is_empty()).await;
    assert_eq!(receiver.of_kind("account_error")[0]["details"]["code"], "ERROR_WRONG_USER_KEY");
    wrong.close().await;

    // A circuit opening: a provider nobody answers at.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let nobody = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let unreachable = client(&nobody, KEY, a.clone(), None).await;
    assert!(unreachable.solve(task(2)).await.is_err());
    receiver.wait_for("circuit_open", |r| !r.of_kind("circuit_open").is_empty()).await;
    unreachable.close().await;

    // A store giving up a write.
    let broken: Arc<dyn DlqStore> =
        Arc::new(Interposed { store: Arc::new(MemoryStore::default()), hooks: BrokenWrites });
    let storeless = client(&mock.base_url(), KEY, a, Some(broken)).await;
    assert!(storeless.solve(task(3)).await.is_err(), "its journal entry cannot be written");
    receiver.wait_for("store_gave_up", |r| !r.of_kind("store_gave_up").is_empty()).await;
    storeless.close().await;

    assert_signed_and_keyless(&receiver);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_dead_letters_is_one_message_with_its_count() {
    let mock = mock().await;
    let receiver = Receiver::start(0).await;
    // Gathering longer than the test: everything is held until the client closes.
    let mut a = alerts(&receiver, json!({"gather_ms": 600_000}));
    // The same receiver as a Slack-style webhook too: `{"text"}` bodies, for the rate only.
    a["webhooks"]
        .as_array_mut()
        .unwrap()
        .push(json!({"url": receiver.url, "secret": SECRET, "format": "slack", "events": ["dead_letter_rate"]}));
    let c = client(&mock.base_url(), KEY, a, None).await;
    let results = c.solve_many(inputs(200, "unsolvable"), Some(200)).await;
    assert_eq!(results.iter().filter(|r| r.outcome.is_err()).count(), 200);
    let sent_before = receiver.all().len();
    c.close().await;
    receiver
        .wait_for("the gathered messages", |r| {
            !r.of_kind("dead_letter_rate").is_empty() && !r.of_kind("new_reason").is_empty()
        })
        .await;
    assert_eq!(sent_before, 0, "nothing went before the gathering ended");
    let rate = receiver.of_kind("dead_letter_rate");
    assert_eq!(rate.len(), 1, "{rate:?}");
    assert_eq!(rate[0]["count"], 199, "every dead letter above the first in the minute");
    assert_eq!(rate[0]["details"]["per_minute"], 200);
    let new = receiver.of_kind("new_reason");
    assert_eq!((new.len(), new[0]["count"].as_u64()), (1, Some(200)), "one new reason, 200 dead letters with it");
    receiver.wait_for("the Slack message", |r| r.delivered().iter().any(|m| m.json().get("text").is_some())).await;
    let slack: Vec<Value> =
        receiver.delivered().iter().map(Received::json).filter(|v| v.get("text").is_some()).collect();
    assert_eq!(slack.len(), 1, "{slack:?}");
    let text = slack[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("captcha-dlq dead_letter_rate: 200 dead letters in the last minute")
            && text.contains("(199 times since"),
        "{text}"
    );
    assert_signed_and_keyless(&receiver);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_failing_then_recovering_gets_the_retried_message() {
    let mock = mock().await;
    let receiver = Receiver::start(2).await;
    let c = client(&mock.base_url(), KEY, alerts(&receiver, json!({"attempts": 4})), None).await;
    assert!(c.solve(task(9)).await.is_ok());
    let _ = c.solve_many(inputs(1, "unsolvable"), Some(1)).await;
    receiver.wait_for("the retried message", |r| !r.of_kind("new_reason").is_empty()).await;
    let tries = receiver.all();
    assert_eq!(tries.iter().filter(|r| r.status == 500).count(), 2);
    assert_eq!(tries[0].body, tries[2].body, "the same message, tried again");
    let ops = c.ops_metrics();
    assert_eq!((ops.alerts_sent, ops.alerts_failed), (1, 0));
    assert!(c.prometheus_text().await.contains("captcha_dlq_alerts_sent_total 1\n"));
    c.close().await;
    assert_signed_and_keyless(&receiver);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_receiver_never_stops_a_solve_and_its_alerts_are_counted_failed() {
    let mock = mock().await;
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = format!("http://{}/hook", closed.local_addr().unwrap());
    drop(closed);
    let a =
        json!({"webhooks": [{"url": dead}], "dead_letters_per_minute": 1, "gather_ms": 1, "attempts": 2, "queue": 1});
    let c = client(&mock.base_url(), KEY, a, None).await;
    let failed = c.solve_many(inputs(50, "unsolvable"), Some(50)).await;
    let solved = c.solve_many(inputs(3, "fine"), Some(3)).await;
    assert_eq!(failed.iter().filter(|r| r.outcome.is_err()).count(), 50, "every task ended");
    assert!(solved.iter().all(|r| r.outcome.is_ok()), "solves go on while the webhook is dead");
    for _ in 0..600 {
        if c.ops_metrics().alerts_failed > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ops = c.ops_metrics();
    assert!(ops.alerts_failed > 0 && ops.alerts_sent == 0, "{ops:?}");
    c.close().await;
}

/// Issue 44, finding 6: reqwest followed a webhook's redirects (up to 10, anywhere). A 307 is
/// now a failed delivery, counted and not tried again, and nothing reaches where it points.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_answering_a_redirect_is_a_failed_delivery_never_followed() {
    let mock = mock().await;
    let servers = support::Redirects::start().await;
    for (i, path) in ["/same", "/elsewhere"].into_iter().enumerate() {
        let hook = format!("{}{path}", servers.redirector);
        let a = json!({"webhooks": [{"url": hook, "secret": SECRET}], "gather_ms": 1, "attempts": 3});
        let c = client(&mock.base_url(), KEY, a, None).await;
        let failed = c.solve_many(inputs(1, "unsolvable"), Some(1)).await;
        assert!(failed[0].outcome.is_err(), "a new reason, so an alert");
        for _ in 0..600 {
            if c.ops_metrics().alerts_failed > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let ops = c.ops_metrics();
        assert_eq!((ops.alerts_failed, ops.alerts_sent), (1, 0), "{path}: {ops:?}");
        assert_eq!(servers.redirector_hits(), i + 1, "{path}: one attempt, a redirect is not tried again");
        c.close().await;
    }
    assert_eq!(servers.target_hits(), 0, "no alert reached where the redirects pointed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_are_checked_like_provider_urls() {
    let build =
        |url: &str| captcha_dlq::builder().api_key(KEY).option("alerts", json!({"webhooks": [{"url": url}]})).options();
    let e = build("http://hooks.example.com/x").unwrap_err().to_string();
    assert!(e.contains("alerts.webhooks[0].url") && e.contains("plain http"), "{e}");
    assert!(build("https://hooks.example.com/x").is_ok());
    assert!(build("ftp://hooks.example.com").unwrap_err().to_string().contains("not an http(s) URL"));
}
