//! The audit trail from the command line: `dlq import`, `park`, `unpark` and `purge` (as
//! `--as NAME`, or as `cli:$USER@HOST` by default), then `dlq audit --json` shows who did what
//! to how many; and the dashboard's `--tokens-file`, whose errors name a token's holder, never
//! the token.

use crate::support;
use std::process::Output;

use serde_json::Value;

/// The binary as user `tester`, with none of the tester's operator or dashboard settings.
fn run(args: &[&str]) -> Output {
    support::command(args, None)
        .env_remove("CAPTCHA_DLQ_OPERATOR")
        .env_remove("CAPTCHA_DLQ_DASHBOARD_TOKEN")
        .env_remove("CAPTCHA_DLQ_DASHBOARD_TOKENS_FILE")
        .env("USER", "tester")
        .output()
        .expect("the binary runs")
}

fn ok(out: &Output) -> String {
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout.into_owned()
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default()
}

#[test]
fn every_dlq_action_is_in_the_trail_with_who_what_and_how_many() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dlq = dir.path().join("d.sqlite");
    let dlq = dlq.to_str().expect("utf-8");
    let seeds = dir.path().join("captcha-dlq.json");
    std::fs::write(
        &seeds,
        r#"[{"sitekey":"6Le-SITEKEY","pageurl":"https://example.com/page/2","error":"ERROR_CAPTCHA_UNSOLVABLE","attempts":4,"timestamp":1763719231000},
            {"sitekey":"6Le-SITEKEY","pageurl":"https://example.com/page/4","error":"Task 71823460 timed out","attempts":4,"timestamp":1763719260000}]"#,
    )
    .expect("seeds file");
    ok(&run(&["dlq", "import", seeds.to_str().expect("utf-8"), "--dlq", dlq, "--as", "importer"]));
    let listed = ok(&run(&["dlq", "list", "--json", "--dlq", dlq, "--reason", "Timeout"]));
    let timeout: Value = serde_json::from_str(listed.lines().next().expect("a record")).expect("a JSON record");
    let id = timeout["id"].as_str().expect("an id");
    ok(&run(&["dlq", "park", id, "--reason", "wrong sitekey", "--dlq", dlq]));
    ok(&run(&["dlq", "unpark", id, "--dlq", dlq, "--as", "bob"]));
    assert!(ok(&run(&["dlq", "purge", "--reason", "Timeout", "--dlq", dlq, "--as", "bob"])).contains("purged 1"));
    // A failed action is recorded too: nothing to park.
    let missing = run(&["dlq", "park", "no-such-id", "--dlq", dlq, "--as", "bob"]);
    assert!(!missing.status.success());

    let out = ok(&run(&["dlq", "audit", "--json", "--dlq", dlq]));
    let all: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).expect("one JSON entry a line")).collect();
    // Each action's intent is written before it runs, its result after (pointing at it).
    assert_eq!(all.iter().filter(|e| e["stage"] == "intent").count(), 5, "{out}");
    let entries: Vec<Value> = all.into_iter().filter(|e| e["stage"] == "result").collect();
    let seen: Vec<(&str, &str, u64)> = entries
        .iter()
        .map(|e| (e["operator"].as_str().unwrap(), e["action"].as_str().unwrap(), e["count"].as_u64().unwrap()))
        .collect();
    let me = format!("cli:tester@{}", host());
    assert_eq!(
        seen,
        vec![
            ("bob", "park", 0),
            ("bob", "purge", 1),
            ("bob", "unpark", 1),
            (me.as_str(), "park", 1),
            ("importer", "import", 2)
        ]
    );
    assert_eq!(entries[1]["filter"], serde_json::json!({"reasons": ["Timeout"]}));
    assert_eq!(entries[3]["detail"], "wrong sitekey");
    assert_eq!(entries[3]["filter"]["ids"][0], id);
    assert!(entries.iter().all(|e| e["at"].as_str().is_some_and(|t| t.starts_with("20"))));

    let page = ok(&run(&["dlq", "audit", "--json", "--limit", "2", "--before", "3", "--dlq", dlq]));
    let ids: Vec<u64> =
        page.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, vec![2, 1]);
    let table = ok(&run(&["dlq", "audit", "--dlq", dlq]));
    assert!(table.contains("importer") && table.contains("wrong sitekey"), "{table}");
    let refused = run(&["dlq", "audit", "--limit", "0", "--dlq", dlq]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    let refused = run(&["dlq", "purge", "--all", "--dlq", dlq, "--as", ""]);
    assert_eq!(refused.status.code(), Some(2), "an empty operator name");
}

#[test]
fn a_bad_tokens_file_is_refused_naming_the_holder_never_the_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("tokens.json");
    let cases = [
        (r#"[{"name": "vic", "token": "short-secret", "role": "viewer"}]"#, "\"vic\"", "short-secret"),
        (r#"[{"name": "vic", "token": "a-long-enough-secret-1", "role": "admin"}]"#, "role", "a-long-enough-secret-1"),
        (r#"[{"name": "vic", "token": "a-long-enough-secret-2"}]"#, "role", "a-long-enough-secret-2"),
        (r#"[{"name": "vic", "token": "a-long-enough-secret-3", "role": "viewer""#, "JSON", "a-long-enough-secret-3"),
    ];
    for (text, named, secret) in cases {
        std::fs::write(&file, text).expect("tokens file");
        let out =
            run(&["dashboard", "--tokens-file", file.to_str().unwrap(), "--dlq", "memory", "--listen", "127.0.0.1:0"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {stderr}");
        assert!(stderr.contains(named) && !stderr.contains(secret), "{text}: {stderr}");
    }
}

/// Issue 44, finding 9: a park reason with control characters reached `dlq audit`'s terminal
/// output raw (an escape sequence clears the screen or forges a line). The CLI refuses such a
/// reason, and `dlq audit` escapes what an older entry (or another program) left in the trail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_9_dlq_audit_never_prints_raw_control_characters() {
    use captcha_dlq::core::dlq::audit::{AuditAction, AuditEntry, AuditStage};

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("d.sqlite");
    let dlq = path.to_str().expect("utf-8").to_string();
    let refused = run(&["dlq", "park", "any-id", "--reason", "ok\u{1b}[2J", "--dlq", &dlq, "--as", "bob"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("U+001B"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let refused = run(&["dlq", "purge", "--all", "--dlq", &dlq, "--as", "ev\u{202E}il"]);
    assert_eq!(refused.status.code(), Some(2), "a name with a bidi override");

    // An entry written by an older version, straight into the store.
    let store = captcha_dlq::open_store(&dlq).await.expect("the SQLite DLQ");
    let old = AuditEntry {
        id: 0,
        at: support::now(),
        operator: "mallory\u{202E}\u{1b}[31m".into(),
        action: AuditAction::Park,
        filter: serde_json::json!({"ids": ["x\u{7}"]}),
        count: 1,
        detail: "reason\u{1b}[2J\rforged line\u{9b}".into(),
        error: Some("err\u{1b}]0;title\u{7}".into()),
        stage: AuditStage::Result,
        intent: None,
    };
    store.audit_append(&old).await.expect("append");
    drop(store);
    let table = ok(&run(&["dlq", "audit", "--dlq", &dlq]));
    assert!(!table.chars().any(|c| c.is_control() && c != '\n'), "raw control characters: {table:?}");
    assert!(!table.contains('\u{202E}'), "a raw bidi override: {table:?}");
    assert!(table.contains("\\u{001B}[2J") && table.contains("\\u{202E}"), "{table}");
}
