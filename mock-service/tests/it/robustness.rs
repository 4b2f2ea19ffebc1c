//! Counters, bounded memory, client garbage, the blocking handle and the `captcha-dlq-mock` binary.

use crate::common;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Command, Stdio};

use captcha_dlq_mock::{MockConfig, MockSolver};
use common::{client, get, get_json, poll, post_form, start, submit_ok, KEY};
use serde_json::json;

#[tokio::test]
async fn counters_count_each_endpoint_poll_kind_and_key() {
    let mock = start("{}").await;
    let base = mock.base_url();
    let a = submit_ok(&mock, "https://a").await;
    let b = submit_ok(&mock, "https://b").await;
    poll(&mock, &a).await;
    poll(&mock, &a).await;
    get(&format!("{base}/res.php?key={KEY}&action=get&ids={a},{b}")).await;
    get(&format!("{base}/in.php?key=other&method=userrecaptcha&googlekey=k&pageurl=https://c")).await;
    common::post_json(&format!("{base}/getBalance"), &json!({"clientKey": "other"})).await;
    get(&format!("{base}/nowhere")).await;

    let counters = mock.counters();
    assert_eq!(counters.requests_to("/in.php"), 3);
    assert_eq!(counters.requests_to("/res.php"), 3);
    assert_eq!(counters.requests_to("/getBalance"), 1);
    assert_eq!(counters.requests_to("other"), 1);
    assert_eq!((counters.submits, counters.tasks_created, counters.tasks_solved), (3, 3, 2));
    assert_eq!((counters.polls_single, counters.polls_batch, counters.ids_polled), (2, 1, 4));
    assert_eq!(counters.by_key[KEY].submits, 2);
    assert_eq!(counters.by_key[KEY].polls, 3);
    assert_eq!(counters.by_key[KEY].requests, 5);
    assert_eq!(counters.by_key["other"].requests, 2);
    assert_eq!((counters.by_key[KEY].tasks_created, counters.by_key[KEY].tasks_solved), (2, 2));
    assert_eq!((counters.by_key["other"].tasks_created, counters.by_key["other"].tasks_solved), (1, 0));
    assert_eq!(counters.faults_total(), 0);

    let over_http: captcha_dlq_mock::Counters =
        serde_json::from_value(get_json(&format!("{base}/mock/counters")).await).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(over_http, counters);
}

#[tokio::test]
async fn old_tasks_are_evicted_beyond_max_tasks() {
    let mock = start(r#"{"max_tasks": 2}"#).await;
    let first = submit_ok(&mock, "https://a").await;
    let second = submit_ok(&mock, "https://a").await;
    let third = submit_ok(&mock, "https://a").await;
    assert_eq!(poll(&mock, &first).await, "ERROR_WRONG_CAPTCHA_ID");
    assert!(poll(&mock, &second).await.starts_with("OK|"));
    assert!(poll(&mock, &third).await.starts_with("OK|"));
    assert_eq!(mock.counters().tasks_evicted, 1);
}

#[tokio::test]
async fn garbage_never_gets_a_500_and_the_mock_keeps_serving() {
    let mock = start("{}").await;
    let base = mock.base_url();
    let http = client();
    let requests = [
        http.get(format!("{base}/in.php?%zz=%ff&key=%00&method=%c3%28")),
        http.post(format!("{base}/in.php"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(vec![0xff, 0xfe, b'=', b'&', b'&']),
        http.post(format!("{base}/res.php")).header("content-type", "multipart/form-data; boundary=x").body("--x--"),
        http.put(format!("{base}/in.php")),
        http.delete(format!("{base}/getTaskResult")),
        http.post(format!("{base}/getTaskResult")).body(vec![0xff; 64]),
        http.post(format!("{base}/createTask")).body("null"),
        http.post(format!("{base}/createTask")).body(r#"{"clientKey": 5, "task": {"type": 7}}"#),
        http.post(format!("{base}/mock/script")).body("[]"),
        http.get(format!("{base}/mock/script")),
        http.get(format!("{base}/../../etc/passwd")),
        http.post(format!("{base}/in.php")).body(vec![b'a'; 3 * 1024 * 1024]),
        http.get(format!("{base}/res.php?key={KEY}&action=get&id=99999999999999999999999999")),
        http.get(format!("{base}/res.php?key={KEY}&action=get&ids=-1,1e9,0x10,{}", "9".repeat(40))),
    ];
    for request in requests {
        let response = request.send().await.unwrap_or_else(|e| panic!("{e}"));
        let status = response.status().as_u16();
        assert!(status < 500, "client garbage got HTTP {status}");
    }
    assert!(submit_ok(&mock, "https://a").await.parse::<u64>().is_ok());
}

#[tokio::test]
async fn oversized_bodies_are_refused_with_413() {
    let mock = start("{}").await;
    let response = client()
        .post(format!("{}/createTask", mock.base_url()))
        .body(vec![b' '; 3 * 1024 * 1024])
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status().as_u16(), 413);
}

#[tokio::test]
async fn cors_headers_let_browsers_call_the_mock() {
    let mock = start("{}").await;
    let response = client()
        .request(reqwest::Method::OPTIONS, format!("{}/createTask", mock.base_url()))
        .header("origin", "http://localhost:8000")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status().as_u16(), 204);
    let headers = response.headers();
    assert_eq!(headers.get("access-control-allow-origin").and_then(|v| v.to_str().ok()), Some("*"));
    assert!(headers
        .get("access-control-allow-methods")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|m| m.contains("POST")));
    let (_, answer) = post_form(&format!("{}/in.php", mock.base_url()), &[("key", KEY)]).await;
    assert_eq!(answer, "ERROR_BAD_PARAMETERS");
}

#[tokio::test]
async fn shutdown_stops_serving() {
    let mock = start("{}").await;
    let base = mock.base_url();
    assert_eq!(get(&format!("{base}/mock/counters")).await.0, 200);
    let addr = mock.addr();
    mock.shutdown().await;
    assert!(tokio::task::spawn_blocking(move || eventually_refused(addr)).await.unwrap_or(false));
}

/// Whether connecting to `addr` is refused within a few seconds. Not at once: a child process spawned by a
/// parallel test may briefly hold a copy of the listening socket between its fork and exec.
fn eventually_refused(addr: std::net::SocketAddr) -> bool {
    (0..200).any(|_| {
        let refused = std::net::TcpStream::connect(addr).is_err();
        if !refused {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        refused
    })
}

#[test]
fn blocking_handle_serves_without_a_runtime() {
    let mock = MockSolver::start_blocking(MockConfig { balance: 7.0, ..MockConfig::default() })
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = mock.addr().unwrap_or_else(|| panic!("no address"));
    let mut stream = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("{e}"));
    let request =
        format!("GET /res.php?key={KEY}&action=getbalance HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap_or_else(|e| panic!("{e}"));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("7.00000"), "{answer}");
    assert_eq!(mock.counters().balance_checks, 1);
    mock.shutdown();
    assert!(eventually_refused(addr), "the port is closed after shutdown");
}

#[test]
fn binary_prints_one_listening_line_and_serves_the_script() {
    let script = r#"{"balance": 12.5, "faults": {"seed": 3}}"#;
    let mut child = Command::new(env!("CARGO_BIN_EXE_captcha-dlq-mock"))
        .args(["--port", "0", "--config", script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let mut line = String::new();
    let read = BufReader::new(stdout).read_line(&mut line);
    let addr = line.trim().strip_prefix("listening http://").map(str::to_string);
    let balance = addr.as_ref().map(|addr| {
        let mut stream = std::net::TcpStream::connect(addr.as_str()).unwrap_or_else(|e| panic!("{e}"));
        let request =
            format!("GET /res.php?key=k&action=getbalance HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap_or_else(|e| panic!("{e}"));
        answer
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(read.is_ok(), "{read:?}");
    assert!(addr.is_some_and(|a| a.starts_with("127.0.0.1:")), "{line:?}");
    assert!(balance.is_some_and(|b| b.ends_with("12.50000")));
}

#[test]
fn binary_rejects_a_bad_config_with_a_message() {
    let output = Command::new(env!("CARGO_BIN_EXE_captcha-dlq-mock"))
        .args(["--config", r#"{"faults": {"http_5xx": 3}}"#])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("faults.http_5xx"));
    let output = Command::new(env!("CARGO_BIN_EXE_captcha-dlq-mock"))
        .args(["--config", "/no/such/file.json"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/no/such/file.json"));
}
