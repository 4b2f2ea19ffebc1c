//! What the CLI's integration tests share: the binary run apart from the tester's environment
//! (no `CAPTCHA_DLQ_API_KEY` or `CAPTCHA_DLQ_PATH` of theirs), a `batch` run with a `--config`, a
//! mock solver with a default delay, a task file, the wall clock as a `Timestamp`, an HTTP
//! receiver that keeps what the CLI posts to it (webhooks, trace exports), and HTTP exchanges
//! with a dashboard the test started (killed when the test ends).
//!
//! Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::HeaderMap;
use captcha_dlq::core::Timestamp;
use captcha_dlq_mock::{Behavior, MockConfig, MockHandle, MockSolver};
use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_captcha-dlq");

/// The binary with `args`, without the tester's API key and DLQ path; `key` is its API key
/// (through `CAPTCHA_DLQ_API_KEY`) when given.
pub fn command(args: &[impl AsRef<OsStr>], key: Option<&str>) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("CAPTCHA_DLQ_API_KEY").env_remove("CAPTCHA_DLQ_PATH");
    if let Some(key) = key {
        cmd.env("CAPTCHA_DLQ_API_KEY", key);
    }
    cmd
}

/// [`command`] run to its end.
pub fn run(args: &[&str], key: Option<&str>) -> Output {
    command(args, key).output().expect("the binary runs")
}

/// [`run`] on a thread of its own, so the test's runtime (and a mock solver on it) goes on
/// meanwhile.
pub async fn run_blocking(args: &[&str], key: Option<&str>) -> Output {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let key = key.map(str::to_string);
    tokio::task::spawn_blocking(move || command(&args, key.as_deref()).output().expect("the binary runs"))
        .await
        .expect("join")
}

/// `captcha-dlq batch INPUT --dlq DLQ --base-url BASE_URL --config CONFIG` with `key`, run to its
/// end on a thread of its own ([`run_blocking`]).
pub async fn batch_with_config(input: &Path, dlq: &Path, base_url: &str, config: &Value, key: &str) -> Output {
    let (input, dlq, config) = (input.to_str().unwrap(), dlq.to_str().unwrap(), config.to_string());
    run_blocking(&["batch", input, "--dlq", dlq, "--base-url", base_url, "--config", &config], Some(key)).await
}

/// Each request a [`receiver`] took: its headers and body, in arrival order.
pub type Received = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

/// An HTTP server on loopback that keeps every POST to `path` and answers it with `reply` (a
/// webhook's receiver, an OTLP collector). Returns its origin (`http://127.0.0.1:PORT`, no path)
/// and what it took. It serves until the test's runtime ends.
pub async fn receiver(path: &str, reply: &'static str) -> (String, Received) {
    let received = Received::default();
    let kept = received.clone();
    let app = axum::Router::new().route(
        path,
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let kept = kept.clone();
            async move {
                kept.lock().unwrap().push((headers, body));
                reply
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (origin, received)
}

pub fn now() -> Timestamp {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    Timestamp::from_unix_millis(ms as u64)
}

/// A mock solver whose tasks are ready `solve_after_ms` after they were created.
pub async fn mock(solve_after_ms: u64) -> MockHandle {
    let script =
        MockConfig { default_behavior: Behavior { solve_after_ms, ..Behavior::default() }, ..MockConfig::default() };
    MockSolver::start(script).await.expect("mock starts")
}

/// A task file of `n` reCAPTCHA v2 lines, each with an `id` (`t1`…), so lines are easy to count.
pub fn tasks_file(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("tasks.jsonl");
    let body: String = (1..=n)
        .map(|i| {
            format!(
                "{{\"id\":\"t{i}\",\"type\":\"recaptcha_v2\",\"sitekey\":\"6Le-S\",\"page_url\":\"https://example.com/{i}\"}}\n"
            )
        })
        .collect();
    std::fs::write(&path, body).expect("task file");
    path
}

/// One HTTP/1.1 exchange on loopback; the status and body.
pub fn exchange(addr: &str, request: &str) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(addr).expect("the dashboard accepts connections");
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

pub fn get(addr: &str, path: &str) -> (u16, String) {
    exchange(addr, &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"))
}

/// A form `body` posted to `path`.
pub fn post(addr: &str, path: &str, body: &str) -> (u16, String) {
    exchange(
        addr,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// Kills a child process (a dashboard) when the test ends, however it ends.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
