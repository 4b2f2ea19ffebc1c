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

/// Issue 43, item 8: `captcha-dlq accounts resume` ends a held account for the whole fleet: the
/// ledger's account error (another member's zero balance) is gone once the command returns, a
/// running client on the store resumes, and the audit trail names `--as`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_resume_ends_the_fleets_hold_and_is_audited() {
    use captcha_dlq::core::fleet::{FleetReport, OwnerInfo, SharedAccountError};
    use captcha_dlq::core::Timestamp;

    let mock = MockSolver::start(MockConfig::default()).await.expect("mock");
    let dir = tempfile::tempdir().expect("tempdir");
    let dlq = dir.path().join("fleet.sqlite");
    let dlq = dlq.to_str().expect("utf-8 path");
    let client = captcha_dlq::builder().api_key(KEY).base_url(mock.base_url()).dlq(dlq).build().await.expect("client");
    let [(_, account)] = client.fleet_accounts().try_into().expect("one provider");
    let store = client.backends().store.clone();
    let ledger = store.fleet_ledger().expect("a SQLite file keeps a fleet ledger");
    let now = Timestamp::from_unix_millis(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64,
    );
    let other = OwnerInfo { owner: "worker-9/99/x".into(), host: "worker-9".into(), pid: 99, started_at: now };
    let error = SharedAccountError {
        code: "ERROR_ZERO_BALANCE".into(),
        description: "the account has no money left".into(),
        hold_ms: 1_200_000,
    };
    let report = FleetReport { rate: 10.0, window_max: 20, account_error: Some(error), ..FleetReport::default() };
    ledger.sync(&account, &other, &report, now).await.expect("another member's zero balance");
    let held = ledger.view(now).await.expect("view");
    assert!(held.accounts.get(&account).is_some_and(|a| a.account_error.is_some()), "the fleet holds");

    let out = Command::new(BIN)
        .args(["accounts", "resume", "--json", "--dlq", dlq, "--base-url", &mock.base_url(), "--as", "alice"])
        .env("CAPTCHA_DLQ_API_KEY", KEY)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!stdout.contains(KEY), "the key never appears: {stdout}");
    let v: Value = serde_json::from_str(stdout.trim()).expect("one JSON document");
    assert_eq!((v["ok"].as_bool(), v["operator"].as_str()), (Some(true), Some("alice")), "{stdout}");

    let later = Timestamp::from_unix_millis(now.as_unix_millis() + 1000);
    let view = ledger.view(later).await.expect("view");
    let ours = view.accounts.get(&account).expect("the account");
    assert!(ours.account_error.is_none(), "the hold is over for every client: {ours:?}");
    let trail = store.audit_list(10, None).await.expect("audit");
    let entry = trail.iter().find(|e| e.action.as_str() == "resume_accounts").expect("audited");
    assert_eq!(entry.operator, "alice");

    let unknown = Command::new(BIN)
        .args(["accounts", "resume", "--only", "nope", "--dlq", dlq, "--base-url", &mock.base_url()])
        .env("CAPTCHA_DLQ_API_KEY", KEY)
        .output()
        .expect("runs");
    assert_eq!(unknown.status.code(), Some(2), "bad arguments");
    let said = String::from_utf8_lossy(&unknown.stderr).into_owned();
    assert!(said.contains("no provider is named"), "it names the problem: {said}");
    client.close().await;
}
