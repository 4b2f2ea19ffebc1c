//! `captcha-dlq fleet` as a user runs it: the clients sharing a SQLite DLQ and their account,
//! never the key; a store that keeps no fleet is refused with the reason.

use std::process::Command;

use captcha_dlq_mock::{MockConfig, MockSolver};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_captcha-dlq");
const KEY: &str = "FLEETKEY0123456789abcdef01234567";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_lists_the_clients_on_the_store_and_their_account() {
    let mock = MockSolver::start(MockConfig::default()).await.expect("mock");
    let dir = tempfile::tempdir().expect("tempdir");
    let dlq = dir.path().join("fleet.sqlite");
    let dlq = dlq.to_str().expect("utf-8 path");
    let client = captcha_dlq::builder().api_key(KEY).base_url(mock.base_url()).dlq(dlq).build().await.expect("client");
    let task = captcha_dlq::Task::from_json_str(
        r#"{"type":"recaptcha_v2","sitekey":"6Le-SITEKEY","page_url":"https://example.com/"}"#,
    )
    .expect("task");
    client.solve(task).await.expect("solved");

    let out = Command::new(BIN).args(["fleet", "--json", "--dlq", dlq]).env_remove("CAPTCHA_DLQ_API_KEY").output();
    let out = out.expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!stdout.contains(KEY), "the key never appears: {stdout}");
    let v: Value = serde_json::from_str(stdout.trim()).expect("one JSON document");
    let owners = v["fleet"]["owners"].as_array().expect("owners");
    let me = owners.iter().find(|o| o["owner"] == client.owner()).expect("this client is listed");
    assert_eq!(me["pid"], std::process::id());
    assert_eq!(me["alive"], true);
    assert_eq!(v["fleet"]["accounts"].as_object().map(|a| a.len()), Some(1), "{stdout}");

    let text = Command::new(BIN).args(["fleet", "--dlq", dlq]).output().expect("runs");
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.contains("clients: 1 live, 0 gone") && text.contains(client.owner()), "{text}");
    client.close().await;

    let memory = Command::new(BIN).args(["fleet", "--dlq", "memory"]).output().expect("runs");
    assert_eq!(memory.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&memory.stderr).contains("keeps no fleet"));
}
