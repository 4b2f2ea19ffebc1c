//! Helpers shared by the mock's HTTP tests: start a mock from a JSON script and talk to it with reqwest.
#![allow(dead_code)]

use captcha_dlq_mock::{MockConfig, MockHandle, MockSolver};
use serde_json::Value;

pub const KEY: &str = "test-key";

/// Starts a mock from a JSON script on a free loopback port.
pub async fn start(script: &str) -> MockHandle {
    let config = MockConfig::from_json(script).unwrap_or_else(|e| panic!("test script rejected: {e}"));
    MockSolver::start(config).await.unwrap_or_else(|e| panic!("mock did not start: {e}"))
}

/// A client without connection reuse, so that one test's faults never leak into the next request.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap_or_else(|e| panic!("client: {e}"))
}

/// GET `url`, returning status and body text.
pub async fn get(url: &str) -> (u16, String) {
    let response = client().get(url).send().await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_else(|e| panic!("GET {url} body: {e}")))
}

/// POST a form to `url`, returning status and body text.
pub async fn post_form(url: &str, form: &[(&str, &str)]) -> (u16, String) {
    let response = client().post(url).form(form).send().await.unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_else(|e| panic!("POST {url} body: {e}")))
}

/// POST JSON to `url`, returning status and the parsed JSON answer.
pub async fn post_json(url: &str, body: &Value) -> (u16, Value) {
    let response = client().post(url).json(body).send().await.unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_else(|e| panic!("POST {url} body: {e}"));
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("POST {url}: not JSON ({e}): {text}"));
    (status, value)
}

/// GET `url` and parse the answer as JSON.
pub async fn get_json(url: &str) -> Value {
    let (status, text) = get(url).await;
    assert_eq!(status, 200, "GET {url}: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {url}: not JSON ({e}): {text}"))
}

/// Submits a reCAPTCHA v2 task through `in.php` (plain answers) and returns the raw answer.
pub async fn submit_recaptcha(mock: &MockHandle, page_url: &str) -> String {
    let url = format!("{}/in.php", mock.base_url());
    let form = [("key", KEY), ("method", "userrecaptcha"), ("googlekey", "6Le-SITEKEY"), ("pageurl", page_url)];
    let (status, body) = post_form(&url, &form).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// Submits a reCAPTCHA v2 task that must be accepted, returning its id.
pub async fn submit_ok(mock: &MockHandle, page_url: &str) -> String {
    let body = submit_recaptcha(mock, page_url).await;
    match body.strip_prefix("OK|") {
        Some(id) => id.to_string(),
        None => panic!("submit refused: {body}"),
    }
}

/// Polls one id through `res.php` (plain answers).
pub async fn poll(mock: &MockHandle, id: &str) -> String {
    let (status, body) = get(&format!("{}/res.php?key={KEY}&action=get&id={id}", mock.base_url())).await;
    assert_eq!(status, 200, "{body}");
    body
}
