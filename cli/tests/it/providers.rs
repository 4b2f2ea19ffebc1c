//! Several providers from the shell, as a new user would try them: two independent mock
//! services, each its own `captcha-dlq mock-server` process on loopback — one runs out of
//! money (`ERROR_ZERO_BALANCE`) after 100 tasks, the other is slow — a batch over both, then
//! the spend report checked against what the mocks counted.

use crate::support;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use serde_json::{json, Value};

use support::BIN;

const FAST: &str = r#"{"polling":{"first_poll_ms":60,"interval_ms":50,"max_polls":400,"coalesce_ms":20},"rate":{"submits_per_second":500,"max_in_flight":300},"retry":{"transient_min_delay_ms":10,"backoff":{"kind":"full_jitter","base_ms":20,"cap_ms":200}}}"#;

/// A mock service in its own process; killed when dropped.
struct MockProcess {
    child: Child,
    base_url: String,
}

impl MockProcess {
    fn start(script: &Value) -> MockProcess {
        let mut child = Command::new(BIN)
            .args(["mock-server", "--config", &script.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the mock server starts");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped");
        BufReader::new(stdout).read_line(&mut line).expect("it says where it listens");
        let base_url = line.trim().strip_prefix("listening ").expect("listening URL").to_string();
        MockProcess { child, base_url }
    }

    /// `GET /mock/counters`.
    fn counters(&self) -> Value {
        let addr = self.base_url.trim_start_matches("http://");
        let mut stream = TcpStream::connect(addr).expect("the mock answers");
        write!(stream, "GET /mock/counters HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).expect("an HTTP answer");
        serde_json::from_str(body).expect("counters as JSON")
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(args: &[&str]) -> Output {
    support::command(args, None)
        .env_remove("CAPTCHA_DLQ_PROVIDER")
        .env_remove("CAPTCHA_DLQ_PROVIDERS")
        .output()
        .expect("the binary runs")
}

fn tasks_file(dir: &Path, n: usize) -> String {
    let path = dir.join("tasks.jsonl");
    let body: String = (1..=n)
        .map(|i| {
            format!(
                "{{\"id\":\"t{i}\",\"task\":{{\"type\":\"recaptcha_v2\",\"sitekey\":\"6Le-S\",\"page_url\":\"https://example.com/{i}\"}},\"labels\":{{\"shop\":\"{}\"}}}}\n",
                if i % 2 == 0 { "even" } else { "odd" }
            )
        })
        .collect();
    std::fs::write(&path, body).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn a_batch_over_two_mock_services_loses_nothing_and_spend_matches_their_counts() {
    let dry = MockProcess::start(&json!({
        "balance": 0.1, "task_cost": 0.001, "charge": true, "default": {"solve_after_ms": 40}
    }));
    let slow = MockProcess::start(&json!({"default": {"solve_after_ms": 400}}));
    let providers = json!([
        {"provider": "anti-captcha", "api_key": "KEY-A-0123456789", "base_url": dry.base_url},
        {"provider": "2captcha", "api_key": "KEY-B-0123456789", "base_url": slow.base_url, "price": 0.003},
    ])
    .to_string();
    let dir = tempfile::tempdir().unwrap();
    let tasks = tasks_file(dir.path(), 150);
    let results = dir.path().join("results.jsonl");
    let results = results.to_str().unwrap();
    let out = run(&[
        "batch",
        &tasks,
        "--providers",
        &providers,
        "--dlq",
        "memory",
        "--config",
        FAST,
        "--concurrency",
        "150",
        "--out",
        results,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("KEY-A-0123456789") && !stderr.contains("KEY-B-0123456789"));

    let lines: Vec<Value> =
        std::fs::read_to_string(results).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 150);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(results).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "results hold answers and labels: owner-only (issue 44, finding 2)");
    }
    assert!(lines.iter().all(|l| l["ok"] == true), "no task lost or dead-lettered");
    let at = |name: &str| lines.iter().filter(|l| l["solution"]["provider"] == name).count();
    assert_eq!((at("anti-captcha"), at("2captcha")), (100, 50));
    assert!(lines.iter().all(|l| l["kind"] == "recaptcha_v2" && l["solution"]["cost"].is_number()));
    let (a, b) = (dry.counters(), slow.counters());
    assert_eq!(a["tasks_created"], 100, "the first service until its balance ran out");
    assert_eq!(a["tasks_created"].as_u64().unwrap() + b["tasks_created"].as_u64().unwrap(), 150, "no task paid twice");

    let spend = run(&["spend", results, "--json"]);
    assert!(spend.status.success(), "{}", String::from_utf8_lossy(&spend.stderr));
    let report: Value = serde_json::from_slice(&spend.stdout).unwrap();
    let row = |key: &str| report["spend"]["by_provider"].as_array().unwrap().iter().find(|r| r["key"] == key).cloned();
    let (ra, rb) = (row("anti-captcha").expect("a row"), row("2captcha").expect("a row"));
    assert_eq!((&ra["solved"], &rb["solved"]), (&a["tasks_solved"], &b["tasks_solved"]));
    let cost_a = ra["cost"].as_f64().unwrap();
    let cost_b = rb["cost"].as_f64().unwrap();
    assert!((cost_a - a["tasks_solved"].as_f64().unwrap() * 0.001).abs() < 1e-9, "reported costs: {cost_a}");
    assert!((cost_b - b["tasks_solved"].as_f64().unwrap() * 0.003).abs() < 1e-9, "configured price: {cost_b}");
    let shop = report["spend"]["by_label"].as_array().unwrap();
    assert!(shop.iter().any(|r| r["key"] == "shop=even" && r["solved"] == 75), "{shop:?}");
    let table = run(&["spend", results]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("on 150 solved task(s)") && table.contains("anti-captcha"), "{table}");

    let balance = run(&["balance", "--providers", &providers, "--dlq", "memory", "--json"]);
    let balance: Value = serde_json::from_slice(&balance.stdout).unwrap();
    assert_eq!(balance["balances"]["anti-captcha"]["balance"], 0.0);
    assert_eq!(balance["balances"]["2captcha"]["balance"], 10.0);

    let mixed = run(&["balance", "--providers", &providers, "--api-key", "K", "--dlq", "memory"]);
    assert_eq!(mixed.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&mixed.stderr).contains("--api-key"));
}
