//! Issue 44, finding 12: `captcha-dlq batch` with tasks that dead-letter at once and
//! `alerts.webhooks` set exited before its alert was sent (a message gathers for `gather_ms`,
//! and the process was gone). Closing the client now sends what alerts hold and waits for the
//! deliveries, so the alert is at the receiver (a real HTTP server on loopback) by the time the
//! process has exited.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::routing::post;
use captcha_dlq_mock::{Behavior, MockConfig, MockSolver, Outcome};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_captcha-dlq");
const KEY: &str = "CLI-ALERTS-KEY-0123456789abcdef";
const SECRET: &str = "cli-webhook-secret";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_12_a_fast_failing_batch_sends_its_alert_before_exit() {
    let received: Arc<Mutex<Vec<(HeaderMap, Bytes)>>> = Arc::default();
    let store = received.clone();
    let app = axum::Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: Bytes| {
            let store = store.clone();
            async move {
                store.lock().unwrap().push((headers, body));
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let script = MockConfig {
        default_behavior: Behavior { outcome: Outcome::Unsolvable, solve_after_ms: 10, ..Behavior::default() },
        ..MockConfig::default()
    };
    let mock = MockSolver::start(script).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tasks.jsonl");
    let lines: String = (1..=3)
        .map(|i| json!({"type": "recaptcha_v2", "sitekey": "6Le-S", "page_url": format!("https://example.com/{i}")}))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&input, lines).unwrap();
    // A gathering far longer than the batch: the alert can only arrive through the close.
    let config = json!({
        "polling": {"first_poll_ms": 20, "interval_ms": 20, "coalesce_ms": 5},
        "alerts": {"webhooks": [{"url": hook, "secret": SECRET, "events": ["new_reason"]}], "gather_ms": 600_000},
    });
    let args = [
        "batch".to_string(),
        input.to_str().unwrap().to_string(),
        "--dlq".into(),
        dir.path().join("d.sqlite").to_str().unwrap().to_string(),
        "--base-url".into(),
        mock.base_url(),
        "--config".into(),
        config.to_string(),
    ];
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(BIN).args(&args).env("CAPTCHA_DLQ_API_KEY", KEY).output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stdout.matches("ERROR_CAPTCHA_UNSOLVABLE").count(), 3, "three dead letters: {stdout}\n{stderr}");
    assert!(!stderr.contains("not sent"), "{stderr}");

    let got = received.lock().unwrap().clone();
    let alerts: Vec<Value> = got.iter().map(|(_, body)| serde_json::from_slice(body).unwrap()).collect();
    let new_reason = alerts.iter().find(|a| a["event"] == "new_reason").unwrap_or_else(|| panic!("{alerts:?}"));
    assert!(new_reason.to_string().contains("ERROR_CAPTCHA_UNSOLVABLE"), "{new_reason}");
    let (headers, body) = &got[0];
    let signature = headers["x-captcha-dlq-signature"].to_str().unwrap();
    captcha_dlq::verify_webhook(body, signature, SECRET, captcha_dlq::DEFAULT_WEBHOOK_TOLERANCE)
        .expect("signed with the webhook's secret");
    assert!(!String::from_utf8_lossy(body).contains(KEY));
    mock.shutdown().await;
}
