//! Helpers shared by the browser test binaries: promises, property access,
//! the mock solver's address (baked in at build time by `test.sh`), and the
//! seeds' batch scenario, run the same way in a page, a worker and a service worker.

#![allow(dead_code)] // each test binary uses a different subset

use js_sys::{Promise, Reflect};
use serde_json::{json, Value};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use captcha_dlq_wasm::WasmClient;

/// The mock solver started by `test.sh` (`captcha-dlq-mock --port 0`).
pub fn mock_url() -> &'static str {
    match option_env!("CAPTCHA_DLQ_MOCK_URL") {
        Some(url) => url,
        None => panic!("build the browser tests with CAPTCHA_DLQ_MOCK_URL set (bindings-wasm/test.sh does)"),
    }
}

pub async fn wait(p: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(p).await
}

pub fn js(v: &Value) -> JsValue {
    js_sys::JSON::parse(&v.to_string()).expect("test JSON parses")
}

pub fn json(v: &JsValue) -> Value {
    let text = js_sys::JSON::stringify(v).expect("stringify").as_string().unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

pub fn prop(v: &JsValue, name: &str) -> JsValue {
    Reflect::get(v, &name.into()).unwrap_or(JsValue::UNDEFINED)
}

pub fn prop_str(v: &JsValue, name: &str) -> String {
    prop(v, name).as_string().unwrap_or_default()
}

/// A database name no earlier run used.
pub fn fresh_db(tag: &str) -> String {
    format!("captcha-dlq-test-{tag}-{}-{}", js_sys::Date::now() as u64, (js_sys::Math::random() * 1e9) as u64)
}

/// Replaces the mock's script.
pub async fn script(config: Value) {
    let resp = gloo_net::http::Request::post(&format!("{}/mock/script", mock_url()))
        .header("content-type", "application/json")
        .body(config.to_string())
        .expect("request builds")
        .send()
        .await
        .expect("the mock answers");
    assert_eq!(resp.status(), 200, "the mock refused the script");
}

/// The mock's counters (`GET /mock/counters`).
pub async fn counters() -> Value {
    let resp =
        gloo_net::http::Request::get(&format!("{}/mock/counters", mock_url())).send().await.expect("the mock answers");
    serde_json::from_str(&resp.text().await.expect("a body")).expect("counters are JSON")
}

/// Polling fast enough that the seeds' batch (24 polls in the seeds) takes well under a second.
pub fn fast_options(dlq: &str) -> Value {
    json!({
        "apiKey": "test-key",
        "provider": "captchaai",
        "baseUrl": mock_url(),
        "dlq": dlq,
        "retry": {"backoff": {"kind": "fixed", "delay_ms": 10}, "transientMinDelayMs": 10, "requestTimeoutMs": 5000},
        "polling": {"firstPollMs": {"recaptchaV2": 20}, "intervalMs": 20, "maxPolls": 3, "coalesceMs": 5},
        "rate": {"submitsPerSecond": 1000.0}
    })
}

pub fn page_task(n: u32) -> Value {
    json!({"type": "recaptcha_v2", "sitekey": "6Le-SITEKEY", "pageUrl": format!("https://example.com/page/{n}")})
}

/// The seeds' batch: pages 1..=5, page 2 unsolvable, page 4 never ready → 3 solved, 2 dead-lettered
/// with 4 attempts; then the service recovers and `replay()` solves both.
pub async fn seeds_batch(dlq: &str) {
    script(json!({"rules": [
        {"match": {"page_url_contains": "/page/2"}, "behavior": {"outcome": "unsolvable"}},
        {"match": {"page_url_contains": "/page/4"}, "behavior": {"outcome": "never_ready"}}
    ]}))
    .await;
    let client = WasmClient::create(js(&fast_options(dlq))).await.expect("client opens");
    let tasks = js(&Value::Array((1..=5).map(page_task).collect()));
    let results = wait(client.solve_many(tasks, js(&json!({"concurrency": 5})))).await.expect("solveMany resolves");
    let results = js_sys::Array::from(&results);
    assert_eq!(results.length(), 5);
    let mut solved = 0;
    for (i, r) in results.iter().enumerate() {
        let page = i + 1;
        if page == 2 || page == 4 {
            assert_eq!(prop_str(&r, "status"), "rejected", "page {page}");
            let reason = prop(&r, "reason");
            assert_eq!(prop_str(&reason, "code"), "SOLVE_FAILED", "page {page}");
            let record = json(&prop(&reason, "record"));
            assert_eq!(record["attempts"], 4, "page {page}: {record}");
            assert_eq!(record["state"], "ready");
            let expected = if page == 2 { "ERROR_CAPTCHA_UNSOLVABLE" } else { "Timeout" };
            assert_eq!(record["reason"], expected, "page {page}");
            assert!(!record.to_string().contains("test-key"), "the key leaked into a record");
        } else {
            assert_eq!(prop_str(&r, "status"), "fulfilled", "page {page}");
            let text = prop_str(&prop(&r, "value"), "text");
            assert!(text.starts_with("03AGdBq2"), "page {page}: token {text}");
            solved += 1;
        }
    }
    assert_eq!(solved, 3);
    assert_eq!(wait(client.count(JsValue::UNDEFINED)).await.expect("count").as_f64(), Some(2.0));
    let stats = json(&wait(client.stats()).await.expect("stats"));
    assert_eq!(stats["in_flight"], 0, "the journal is empty once every task ended: {stats}");

    script(json!({})).await;
    let report = json(&wait(client.replay(JsValue::UNDEFINED)).await.expect("replay resolves"));
    assert_eq!(report["received"], 2, "{report}");
    assert_eq!(report["recovered"], 2, "{report}");
    assert_eq!(wait(client.count(JsValue::UNDEFINED)).await.expect("count").as_f64(), Some(0.0));
    wait(client.close()).await.expect("close");
}

pub fn error_of(r: Result<JsValue, JsValue>) -> JsValue {
    match r {
        Ok(v) => panic!("expected a rejection, got {}", json(&v)),
        Err(e) => {
            assert!(e.is_instance_of::<js_sys::Error>(), "errors are Error objects");
            e
        }
    }
}
