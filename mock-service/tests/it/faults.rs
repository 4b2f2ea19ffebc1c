//! Injected faults: each kind really happens on the wire, is counted, and is reproducible from the seed.

use crate::common;
use common::{client, get, get_json, start, submit_ok, KEY};

fn poll_url(base: &str) -> String {
    format!("{base}/res.php?key={KEY}&action=getbalance&json=1")
}

#[tokio::test]
async fn http_5xx_answers_a_server_error() {
    let mock = start(r#"{"faults": {"http_5xx": 1.0}}"#).await;
    for _ in 0..5 {
        let (status, _) = get(&poll_url(&mock.base_url())).await;
        assert!((500..=504).contains(&status), "{status}");
    }
    assert_eq!(mock.counters().faults_of("http_5xx"), 5);
    assert_eq!(mock.counters().balance_checks, 0, "a 5xx happens before the request takes effect");
    let counters = get_json(&format!("{}/mock/counters", mock.base_url())).await;
    assert_eq!(counters["faults"]["http_5xx"], 5, "control paths are never faulted");
}

#[tokio::test]
async fn html_502_is_an_nginx_page() {
    let mock = start(r#"{"faults": {"html_502": 1.0}}"#).await;
    let response = client().get(poll_url(&mock.base_url())).send().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status().as_u16(), 502);
    let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert_eq!(content_type, "text/html");
    let body = response.text().await.unwrap_or_else(|e| panic!("{e}"));
    assert!(body.contains("<title>502 Bad Gateway</title>") && body.contains("nginx"), "{body}");
    assert_eq!(mock.counters().faults_of("html_502"), 1);
}

#[tokio::test]
async fn truncated_json_is_unparseable_but_the_request_took_effect() {
    let mock = start(r#"{"faults": {"truncated_json": 1.0}}"#).await;
    let base = mock.base_url();
    let (status, body) =
        get(&format!("{base}/in.php?key={KEY}&method=userrecaptcha&googlekey=k&pageurl=https://a&json=1")).await;
    assert_eq!(status, 200);
    assert!(!body.is_empty());
    assert!(serde_json::from_str::<serde_json::Value>(&body).is_err(), "{body}");
    // Plain answers are truncated too, and never into a shorter but valid-looking answer.
    let (_, body) = get(&format!("{base}/in.php?key={KEY}&method=userrecaptcha&googlekey=k&pageurl=https://a")).await;
    assert!(!body.starts_with("OK|"), "{body}");
    assert!(serde_json::from_str::<serde_json::Value>(&body).is_err(), "{body}");
    let counters = mock.counters();
    assert_eq!(counters.tasks_created, 2);
    assert_eq!(counters.faults_of("truncated_json"), 2);
}

#[tokio::test]
async fn connection_reset_gives_the_client_a_connection_error() {
    let mock = start(r#"{"faults": {"connection_reset": 1.0}}"#).await;
    for _ in 0..3 {
        let outcome = client().get(poll_url(&mock.base_url())).send().await;
        let error = match outcome {
            Ok(response) => panic!("expected a connection error, got HTTP {}", response.status()),
            Err(error) => error,
        };
        assert!(!error.is_status() && !error.is_timeout(), "{error:?}");
        assert!(is_reset(&error), "expected a TCP reset, got {error:?}");
    }
    assert_eq!(mock.counters().faults_of("connection_reset"), 3);
    // The mock keeps serving after resets.
    mock.set_script(captcha_dlq_mock::MockConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(get(&poll_url(&mock.base_url())).await.0, 200);
}

/// Whether an error was caused by the peer resetting the connection (an RST, not a clean close).
fn is_reset(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionReset) {
            return true;
        }
        current = e.source();
    }
    false
}

#[tokio::test]
async fn slow_answers_still_answer_and_are_counted() {
    let mock = start(r#"{"faults": {"slow_ms": 30}}"#).await;
    let id = submit_ok(&mock, "https://a").await;
    assert!(common::poll(&mock, &id).await.starts_with("OK|"));
    assert_eq!(mock.counters().faults_of("slow"), 2);
}

#[tokio::test]
async fn the_seed_makes_fault_sequences_reproducible() {
    let script = r#"{"faults": {"seed": 42, "http_5xx": 0.5}}"#;
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mock = start(script).await;
        let mut statuses = Vec::new();
        for _ in 0..30 {
            statuses.push(get(&poll_url(&mock.base_url())).await.0 >= 500);
        }
        runs.push(statuses);
    }
    assert_eq!(runs[0], runs[1]);
    let faulted = runs[0].iter().filter(|f| **f).count();
    assert!(faulted > 0 && faulted < 30, "a 50% rate faults some but not all of 30 requests: {faulted}");
}

#[tokio::test]
async fn faults_can_be_limited_to_endpoints_and_never_hit_control_paths() {
    let mock = start(r#"{"faults": {"http_5xx": 1.0, "endpoints": ["/res.php"]}}"#).await;
    let id = submit_ok(&mock, "https://a").await;
    assert!(get(&format!("{}/res.php?key={KEY}&action=get&id={id}", mock.base_url())).await.0 >= 500);
    let counters = get_json(&format!("{}/mock/counters", mock.base_url())).await;
    assert_eq!(counters["faults"]["http_5xx"], 1);
}

#[tokio::test]
async fn fault_rates_are_validated() {
    for script in [r#"{"faults": {"http_5xx": 1.5}}"#, r#"{"faults": {"http_5xx": 0.6, "html_502": 0.6}}"#] {
        let error = captcha_dlq_mock::MockConfig::from_json(script).err().unwrap_or_default();
        assert!(error.contains("faults"), "{script}: {error}");
    }
}

#[tokio::test]
async fn a_mistyped_or_unknown_field_is_named_by_its_path() {
    let cases = [
        (r#"{"faults": {"slow_ms": "200"}}"#, "faults.slow_ms: invalid type"),
        (r#"{"faults": {"slow": 200}}"#, "faults.slow: unknown field"),
        (
            r#"{"rules": [{"match": {}, "behavior": {"outcome": "later"}}]}"#,
            "rules[0].behavior.outcome: unknown variant",
        ),
    ];
    for (script, named) in cases {
        let error = captcha_dlq_mock::MockConfig::from_json(script).err().unwrap_or_default();
        assert!(error.contains(named), "{script}: expected {named:?} in {error:?}");
    }
    // A syntax error before any field has no path to name.
    let error = captcha_dlq_mock::MockConfig::from_json(r#"{"port": 1"#).err().unwrap_or_default();
    assert!(error.starts_with("invalid mock config: EOF while parsing"), "{error}");
}
