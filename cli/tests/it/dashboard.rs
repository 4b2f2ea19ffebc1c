//! `captcha-dlq dashboard` and `demo --keep` as an operator runs them: a
//! public address without a token is refused with the reason; the demo's
//! kept DLQ is served, read-only refuses actions, and a key-less dashboard
//! answers without ever needing one.

use crate::support;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use support::{get, post, Running};

const BIN: &str = env!("CARGO_BIN_EXE_captcha-dlq");

fn command(tmp: &std::path::Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_remove("CAPTCHA_DLQ_API_KEY")
        .env_remove("CAPTCHA_DLQ_PATH")
        .env_remove("CAPTCHA_DLQ_DASHBOARD_TOKEN")
        .env("TMPDIR", tmp);
    cmd
}

#[test]
fn a_public_address_without_a_token_refuses_to_start_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let out = command(tmp.path()).args(["dashboard", "--dlq", "memory", "--listen", "0.0.0.0:8787"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("refusing to listen on 0.0.0.0:8787 without a token"), "{stderr}");
    assert!(stderr.contains("--token"), "{stderr}");
    let out = command(tmp.path())
        .args(["dashboard", "--dlq", "memory", "--listen", "0.0.0.0:8787", "--token", "short"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16 characters"));
}

#[test]
fn the_demos_kept_dlq_is_served_and_read_only_refuses_actions() {
    let tmp = tempfile::tempdir().unwrap();
    let out = command(tmp.path()).args(["demo", "--keep"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    let kept = tmp.path().join("captcha-dlq-demo.sqlite");
    let open = format!("Open it: captcha-dlq dashboard --dlq {}", kept.display());
    assert!(stdout.contains(&open), "the demo prints where its DLQ is and how to open it: {stdout}");
    assert!(stdout.contains("DLQ size: 2"), "{stdout}");

    let child = command(tmp.path())
        .args(["dashboard", "--dlq", &kept.to_string_lossy(), "--listen", "127.0.0.1:0", "--read-only"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut running = Running(child);
    let mut first = String::new();
    // Kept open to the end: a pipe closed after the first line makes the dashboard's next line
    // fail with EPIPE, and `println!` then ends the process (whether it has printed it by then
    // is a race with this read).
    let mut stdout = BufReader::new(running.0.stdout.take().unwrap());
    stdout.read_line(&mut first).unwrap();
    let addr = first.split("http://").nth(1).expect("the URL is printed").trim().trim_end_matches('/').to_string();
    let (status, summary) = get(&addr, "/api/summary");
    assert_eq!(status, 200, "{summary}");
    assert!(summary.contains("\"total\":\"2\""), "{summary}");
    let (status, page) = get(&addr, "/groups");
    assert_eq!(status, 200);
    assert!(page.contains("Timeout") && page.contains("ERROR_CAPTCHA_UNSOLVABLE"), "{page}");
    let csrf = page.split("name=\"csrf-token\" content=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
    let (status, body) = post(&addr, "/actions/purge", &format!("filter=&confirm=purge&csrf={csrf}"));
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("read-only"));
    let (_, summary) = get(&addr, "/api/summary");
    assert!(summary.contains("\"total\":\"2\""), "nothing was purged: {summary}");
}

/// Issue 44, finding 4: `--tls-cert` and `--tls-key` go together, and a file that cannot be
/// used stops the dashboard before it listens, naming the file (the HTTPS exchange itself is
/// the dashboard crate's `https` test).
#[test]
fn finding_4_tls_files_are_taken_together_and_checked_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let cert = tmp.path().join("cert.pem");
    let out = command(tmp.path())
        .args(["dashboard", "--dlq", "memory", "--listen", "127.0.0.1:0", "--tls-cert"])
        .arg(&cert)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tls-key"), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(&cert, "not a certificate").unwrap();
    let key = tmp.path().join("key.pem");
    std::fs::write(&key, "not a key").unwrap();
    let out = command(tmp.path())
        .args(["dashboard", "--dlq", "memory", "--listen", "127.0.0.1:0", "--behind-https-proxy", "--tls-cert"])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("tls_cert") && stderr.contains("cert.pem"), "{stderr}");
}
