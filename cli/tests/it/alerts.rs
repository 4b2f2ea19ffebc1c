//! Issue 44, finding 12: `captcha-dlq batch` with tasks that dead-letter at once and
//! `alerts.webhooks` set exited before its alert was sent (a message gathers for `gather_ms`,
//! and the process was gone). Closing the client now sends what alerts hold and waits for the
//! deliveries, so the alert is at the receiver (a real HTTP server on loopback) by the time the
//! process has exited.

use crate::support;
use captcha_dlq_mock::{Behavior, MockConfig, MockSolver, Outcome};
use serde_json::{json, Value};

const KEY: &str = "CLI-ALERTS-KEY-0123456789abcdef";
const SECRET: &str = "cli-webhook-secret";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_12_a_fast_failing_batch_sends_its_alert_before_exit() {
    let (origin, received) = support::receiver("/hook", "").await;
    let hook = format!("{origin}/hook");
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
    let out = support::batch_with_config(&input, &dir.path().join("d.sqlite"), &mock.base_url(), &config, KEY).await;
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
