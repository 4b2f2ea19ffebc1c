//! `captcha-dlq dlq retain [--dry-run]`: the `dlq_retention` limits of `--config` applied once,
//! as cron would, over a SQLite DLQ; the evicted records are appended to the archive first.

use crate::support;
use std::process::Output;

use serde_json::Value;

fn run(args: &[&str]) -> Output {
    support::run(args, None)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn retain_counts_then_archives_and_evicts_the_oldest() {
    let dir = tempfile::tempdir().unwrap();
    let dlq = dir.path().join("dlq.sqlite").display().to_string();
    let seeds = dir.path().join("seeds.json");
    std::fs::write(
        &seeds,
        r#"[{"sitekey":"6Le-SITEKEY","pageurl":"https://example.com/page/1","error":"ERROR_CAPTCHA_UNSOLVABLE","attempts":4,"timestamp":1763719231000},
            {"sitekey":"6Le-SITEKEY","pageurl":"https://example.com/page/2","error":"ERROR_CAPTCHA_UNSOLVABLE","attempts":4,"timestamp":1763719232000},
            {"sitekey":"6Le-SITEKEY","pageurl":"https://example.com/page/3","error":"ERROR_CAPTCHA_UNSOLVABLE","attempts":4,"timestamp":1763719233000}]"#,
    )
    .unwrap();
    assert!(run(&["dlq", "import", seeds.to_str().unwrap(), "--dlq", &dlq]).status.success());
    let archive = dir.path().join("evicted.jsonl").display().to_string();
    let config = format!(r#"{{"dlq_retention": {{"max_count": 1, "archive": "{archive}"}}}}"#);

    let dry = run(&["dlq", "retain", "--dry-run", "--dlq", &dlq, "--config", &config]);
    assert!(dry.status.success(), "{dry:?}");
    assert_eq!(stdout(&dry).trim(), format!("would evict 2 record(s) (max_count), archived to {archive}"));
    assert!(!std::path::Path::new(&archive).exists());

    let done = run(&["dlq", "retain", "--json", "--dlq", &dlq, "--config", &config]);
    let v: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(v["retention"]["evictions"][0]["count"], 2);
    let archived = std::fs::read_to_string(&archive).unwrap();
    assert_eq!(archived.lines().count(), 2);
    assert!(
        archived.contains("page/1") && archived.contains("page/2") && !archived.contains("page/3"),
        "the oldest go"
    );
    let stats: Value = serde_json::from_slice(&run(&["dlq", "stats", "--json", "--dlq", &dlq]).stdout).unwrap();
    assert_eq!(stats["stats"]["total"], 1);

    let none = run(&["dlq", "retain", "--dlq", &dlq]);
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("dlq_retention"));
    let bad = run(&["dlq", "retain", "--dlq", &dlq, "--config", r#"{"dlq_retention": {"max_cnt": 1}}"#]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("dlq_retention.max_cnt"), "{bad:?}");
}
