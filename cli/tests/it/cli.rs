//! The `captcha-dlq` binary as a user runs it: the demo, bad input, the DLQ
//! commands, and a batch killed with SIGKILL then recovered without loss.

use crate::support;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use captcha_dlq::core::dlq::{DlqStore, Filter, Page};
use captcha_dlq::store::SqliteStore;
use serde_json::Value;
use support::{mock, now, run, BIN};

const KEY: &str = "CLIKEY0123456789abcdef0123456789";

const FAST: &str = r#"{"polling":{"first_poll_ms":{"image":60,"recaptcha_v2":60,"recaptcha_v3":60,"turnstile":60,"geetest_v3":60,"geetest_v4":60,"funcaptcha":60,"hcaptcha":60,"raw":60},"interval_ms":50,"max_polls":200,"coalesce_ms":20},"rate":{"submits_per_second":500,"max_in_flight":200},"retry":{"transient_min_delay_ms":10,"backoff":{"kind":"full_jitter","base_ms":20,"cap_ms":200}}}"#;

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn demo_prints_the_seeds_expected_output() {
    let out = run(&["demo"], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.matches("Solved: 03AGdBq2").count(), 3, "{stdout}");
    assert!(stdout.contains("[dlq] Added: ERROR_CAPTCHA_UNSOLVABLE (attempts: 4)"), "{stdout}");
    assert!(stdout.contains("[dlq] Added: Timeout (attempts: 4)"), "{stdout}");
    assert!(stdout.contains("DLQ size: 2"), "{stdout}");
    assert!(stdout.contains("[dlq] Retried: 2, Recovered: 2"), "{stdout}");
    assert!(stdout.contains("DLQ size after replay: 0"), "{stdout}");
    let json = run(&["demo", "--json"], None);
    let v: Value = serde_json::from_slice(&json.stdout).expect("--json prints one JSON document");
    assert_eq!(v["dlq_size"], 2);
    assert_eq!(v["replay"]["recovered"], 2);
}

#[test]
fn bad_input_gets_a_clear_error_and_a_documented_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let dlq = dir.path().join("d.sqlite");
    let dlq = dlq.to_str().unwrap();

    let out = run(&["balance", "--dlq", dlq], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("api_key"), "{:?}", text(&out));

    let out = run(&["balance", "--dlq", dlq, "--provider", "no-such-solver"], Some(KEY));
    assert_eq!(out.status.code(), Some(2));
    let (o, e) = text(&out);
    assert!(e.contains("no-such-solver"), "{e}");
    assert!(!o.contains(KEY) && !e.contains(KEY));

    let corrupt = dir.path().join("corrupt.sqlite");
    std::fs::write(&corrupt, vec![0x42u8; 8192]).unwrap();
    let out = run(&["dlq", "list", "--dlq", corrupt.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(4));
    assert!(text(&out).1.contains("corrupt.sqlite"), "{:?}", text(&out));

    // --durability: power_loss for a SQLite DLQ; refused for any other, and unknown values named.
    let out = run(&["dlq", "list", "--dlq", dlq, "--durability", "power_loss"], None);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let out = run(&["dlq", "list", "--dlq", "memory", "--durability", "power_loss"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("store.durability") && text(&out).1.contains("SQLite DLQ only"), "{:?}", text(&out));
    let out = run(&["balance", "--dlq", "memory", "--durability", "power_loss"], Some(KEY));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("store.durability"), "{:?}", text(&out));
    let out = run(&["dlq", "list", "--dlq", dlq, "--durability", "disk"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--durability") && text(&out).1.contains("power_loss"), "{:?}", text(&out));

    // The commands that only open the store read --config as every command does: a broken one is
    // named, and its store section applies (no key needed).
    let missing = dir.path().join("missing.json");
    let missing = format!("@{}", missing.display());
    for (args, code, said) in [
        (vec!["dlq", "stats", "--config", "{not json"], 2, "--config"),
        (vec!["dlq", "list", "--config", r#"{"store": {"durabilty": "process"}}"#], 2, "store.durabilty"),
        (vec!["dlq", "purge", "--all", "--config", r#"{"retry": {"max_atempts": 3}}"#], 2, "retry.max_atempts"),
        (vec!["dlq", "list", "--config", missing.as_str()], 2, "missing.json"),
        (vec!["spend", "--with-dlq", "--config", r#"["retry"]"#], 2, "--config"),
    ] {
        let out = run(&[args.as_slice(), &["--dlq", dlq]].concat(), None);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {:?}", text(&out));
        assert!(text(&out).1.contains(said), "{args:?}: {:?}", text(&out));
    }
    let power_loss = r#"{"store": {"durability": "power_loss"}}"#;
    let out = run(&["dlq", "list", "--dlq", "memory", "--config", power_loss], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("store.durability") && text(&out).1.contains("SQLite DLQ only"), "{:?}", text(&out));
    let out = run(&["dlq", "stats", "--dlq", dlq, "--config", power_loss], None);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));

    let out = run(
        &["solve", "--dlq", dlq, "--task", r#"{"type":"recaptcha_v2","sitekey":"k","page_url":"not a url"}"#],
        Some(KEY),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("page_url"), "{:?}", text(&out));

    // Unreachable host: dead-lettered as Network, exit 1, key never printed.
    let cfg =
        r#"{"retry":{"max_request_retries":1,"transient_min_delay_ms":1,"backoff":{"kind":"fixed","delay_ms":1}}}"#;
    let out = run(
        &[
            "solve",
            "--dlq",
            dlq,
            "--base-url",
            "http://127.0.0.1:9",
            "--config",
            cfg,
            "--sitekey",
            "6Le-S",
            "--page-url",
            "https://example.com/",
        ],
        Some(KEY),
    );
    let (o, e) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{o}{e}");
    assert!(e.contains("Network"), "{e}");
    assert!(!o.contains(KEY) && !e.contains(KEY), "key echoed");
    let listed = run(&["dlq", "list", "--json", "--dlq", dlq], None);
    let record: Value = serde_json::from_slice(listed.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(record["reason"], "Network");
    assert!(!String::from_utf8_lossy(&listed.stdout).contains(KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_streams_results_and_names_bad_lines() {
    let mock = mock(30).await;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tasks.jsonl");
    std::fs::write(
        &input,
        "{\"type\":\"recaptcha_v2\",\"sitekey\":\"6Le-S\",\"page_url\":\"https://example.com/1\"}\n\
         {\"task\":{\"type\":\"turnstile\",\"sitekey\":\"0x4AAA\",\"pageUrl\":\"https://example.com/2\"},\"labels\":{\"job\":\"j\"}}\n\
         {\"type\":\"recaptcha_v2\",\"sitekey\":\"\",\"page_url\":\"https://example.com/3\"}\n\
         not json\n",
    )
    .unwrap();
    let dlq = dir.path().join("d.sqlite").to_str().unwrap().to_string();
    let base = mock.base_url();
    let input = input.to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        run(&["batch", &input, "--dlq", &dlq, "--base-url", &base, "--config", FAST], Some(KEY))
    })
    .await
    .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "bad lines make the run exit 2: {stdout}{stderr}");
    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    let by_line: BTreeMap<u64, &Value> = lines.iter().map(|v| (v["line"].as_u64().unwrap(), v)).collect();
    assert_eq!(by_line[&1]["ok"], true);
    assert_eq!(by_line[&2]["ok"], true);
    assert_eq!(by_line[&2]["labels"]["job"], "j");
    assert!(by_line[&3]["error"].as_str().unwrap().contains("sitekey"), "{}", by_line[&3]);
    assert!(by_line[&4]["error"].as_str().unwrap().contains("line 4"), "{}", by_line[&4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dlq_commands_import_list_stats_export_park_purge() {
    let dir = tempfile::tempdir().unwrap();
    let dlq = dir.path().join("d.sqlite");
    let dlq = dlq.to_str().unwrap().to_string();
    // The seeds' JavaScript file format.
    let seeds = dir.path().join("captcha-dlq.json");
    std::fs::write(
        &seeds,
        r#"[{"sitekey":"6Le-SITEKEY","pageurl":"https://example.com/page/2","error":"ERROR_CAPTCHA_UNSOLVABLE","attempts":4,"timestamp":1763719231000},
            {"sitekey":"6Le-SITEKEY","pageurl":"https://example.com/page/4","error":"Task 71823460 timed out","attempts":4,"timestamp":1763719260000}]"#,
    )
    .unwrap();
    let d = dlq.clone();
    let s = seeds.to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || run(&["dlq", "import", &s, "--dlq", &d], None)).await.unwrap();
    assert!(out.status.success(), "{:?}", text(&out));

    let out = run(&["dlq", "stats", "--json", "--dlq", &dlq], None);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stats"]["total"], 2);
    let out = run(&["dlq", "list", "--dlq", &dlq, "--reason", "Timeout"], None);
    assert!(text(&out).0.contains("example.com/page/4"), "{:?}", text(&out));

    let export = dir.path().join("out.jsonl");
    let out = run(&["dlq", "export", export.to_str().unwrap(), "--format", "jsonl", "--dlq", &dlq], None);
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&export).unwrap().lines().count(), 2);

    let store = SqliteStore::open(&dlq).unwrap();
    let ids: Vec<String> =
        store.peek(&Filter::all(), Page::default(), now()).await.unwrap().into_iter().map(|r| r.id).collect();
    let out = run(&["dlq", "park", &ids[0], "--reason", "wrong sitekey", "--dlq", &dlq], None);
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(store.stats(now()).await.unwrap().parked, 1);
    let out = run(&["dlq", "purge", "--dlq", &dlq], None);
    assert_eq!(out.status.code(), Some(2), "purge without a filter is refused");
    let out = run(&["dlq", "purge", "--reason", "Timeout", "--dlq", &dlq], None);
    assert!(text(&out).0.contains("purged 1"), "{:?}", text(&out));
    assert_eq!(store.count(&Filter::all(), now()).await.unwrap(), 1);
}

/// Waits until the child has journaled at least `n` tasks (and, with `submitted`, got provider ids).
async fn wait_for_journal(store: &SqliteStore, n: usize, submitted: bool) {
    let start = Instant::now();
    loop {
        let entries = store.journal_entries().await.unwrap();
        let count = entries.iter().filter(|e| !submitted || e.provider_task_id.is_some()).count();
        if count >= n {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "child journaled only {count} of {n}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn lines_of(stdout: &str, key: &str) -> Vec<u64> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["ok"] == true)
        .filter_map(|v| v[key]["line"].as_str().and_then(|s| s.parse().ok()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_killed_with_sigkill_loses_no_task() {
    let mock = mock(800).await;
    let dir = tempfile::tempdir().unwrap();
    let total = 40u64;
    // Kill at three moments: while accepting, once all are submitted, and while some are being solved.
    for (round, (n, submitted, extra_ms)) in
        [(5usize, false, 0u64), (40, true, 0), (40, true, 700)].into_iter().enumerate()
    {
        let dlq = dir.path().join(format!("kill-{round}.sqlite"));
        let dlq_s = dlq.to_str().unwrap().to_string();
        let input = dir.path().join(format!("tasks-{round}.jsonl"));
        let body: String = (1..=total)
            .map(|i| {
                format!(
                    "{{\"type\":\"recaptcha_v2\",\"sitekey\":\"6Le-S\",\"page_url\":\"https://example.com/{i}\"}}\n"
                )
            })
            .collect();
        std::fs::write(&input, body).unwrap();
        let out_path = dir.path().join(format!("out-{round}.jsonl"));
        // Create the store first so the test can watch the journal.
        let store = SqliteStore::open(&dlq).unwrap();
        let mut child = Command::new(BIN)
            .args(["batch", input.to_str().unwrap(), "--out", out_path.to_str().unwrap(), "--dlq", &dlq_s])
            .args(["--base-url", &mock.base_url(), "--config", FAST])
            .env("CAPTCHA_DLQ_API_KEY", KEY)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_journal(&store, n, submitted).await;
        tokio::time::sleep(Duration::from_millis(extra_ms)).await;
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let before_kill = std::fs::read_to_string(&out_path).unwrap_or_default();
        let solved_before = lines_of(&before_kill, "labels");
        let base = mock.base_url();
        let d = dlq_s.clone();
        let out = tokio::task::spawn_blocking(move || {
            run(&["recover", "--json", "--dlq", &d, "--base-url", &base, "--config", FAST], Some(KEY))
        })
        .await
        .unwrap();
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stdout} {stderr}");
        // One JSON line per recovered task as it ends, then a summary line.
        let recovered: Vec<u64> = lines_of(&stdout, "labels");
        let dead: Vec<u64> = store
            .peek(&Filter::all(), Page { offset: 0, limit: 1000 }, now())
            .await
            .unwrap()
            .iter()
            .filter_map(|r| r.labels.get("line").and_then(|l| l.parse().ok()))
            .collect();
        assert!(store.journal_entries().await.unwrap().is_empty(), "round {round}: journal settled");
        let accounted: BTreeSet<u64> = solved_before.iter().chain(&recovered).chain(&dead).copied().collect();
        // Tasks the child never accepted are not lost either: they are still in the input file and the
        // batch reported none of them. Everything it accepted must be accounted for.
        let accepted = n.max(accounted.len()) as u64;
        assert!(accounted.len() as u64 >= accepted.min(total), "round {round}: lost tasks");
        for line in &accounted {
            assert!((1..=total).contains(line));
        }
        if submitted {
            assert_eq!(accounted.len() as u64, total, "round {round}: every task solved or dead-lettered");
        }
        assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
        assert!(Path::new(&dlq).exists());
    }
}
