//! `--config '{"traces": …}'`: the CLI exports a trace per task to an OTLP/HTTP receiver on
//! loopback, with the batch line's labels, and never the key.

use crate::support;
use captcha_dlq_mock::{Behavior, MockConfig, MockSolver};
use serde_json::{json, Value};

const KEY: &str = "CLI-TRACES-KEY-0123456789abcdef";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_exports_its_tasks_spans_with_their_labels() {
    let (collector, received) = support::receiver("/v1/traces", "{}").await;
    let script = MockConfig {
        default_behavior: Behavior { solve_after_ms: 20, ..Behavior::default() },
        ..MockConfig::default()
    };
    let mock = MockSolver::start(script).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tasks.jsonl");
    let line = json!({"task": {"type": "turnstile", "sitekey": "0x4AAA", "page_url": "https://example.com/t"}, "labels": {"job": "nightly"}});
    std::fs::write(&input, format!("{line}\n")).unwrap();
    let config = json!({
        "polling": {"first_poll_ms": 30, "interval_ms": 30, "coalesce_ms": 10},
        "traces": {"otlp_endpoint": collector, "protocol": "http/json", "service_name": "cli-batch"},
    });
    let out = support::batch_with_config(&input, &dir.path().join("d.sqlite"), &mock.base_url(), &config, KEY).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let bodies = received.lock().unwrap().clone();
    assert!(!bodies.is_empty(), "the batch's spans were exported before it exited");
    let mut tasks = Vec::new();
    for (_, body) in &bodies {
        assert!(!String::from_utf8_lossy(body).contains(KEY), "the key is in an export");
        let export: Value = serde_json::from_slice(body).unwrap();
        for resource in export["resourceSpans"].as_array().unwrap() {
            for scope in resource["scopeSpans"].as_array().unwrap() {
                tasks.extend(
                    scope["spans"].as_array().unwrap().iter().filter(|s| s["name"] == "captcha_dlq.task").cloned(),
                );
            }
        }
    }
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    let attribute = |key: &str| {
        tasks[0]["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == key)
            .map(|a| a["value"]["stringValue"].clone())
    };
    assert_eq!(attribute("captcha_dlq.label.job"), Some(json!("nightly")));
    assert_eq!(attribute("captcha_dlq.task.type"), Some(json!("turnstile")));
    assert_eq!(attribute("captcha_dlq.outcome"), Some(json!("solved")));
    mock.shutdown().await;
}
