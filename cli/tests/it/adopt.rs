//! A fleet heals by itself: a `captcha-dlq batch` killed (SIGKILL) with its tasks in flight,
//! and another client running on the same SQLite DLQ and key adopts them once the killed run's
//! heartbeat row goes silent. With an `on_adopted` hook each answer goes to the hook, once, and
//! the run started again has nothing left to print; without one the adopter keeps each answer
//! in the journal, released, and the run started again prints each once. Counted at the mock:
//! nothing is submitted twice. Waits are bounded (a minute); nothing asserts on time.

use crate::support;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use captcha_dlq::core::dlq::DlqStore;
use captcha_dlq::store::SqliteStore;
use captcha_dlq::{AdoptedAnswer, Client};
use captcha_dlq_mock::MockHandle;
use serde_json::Value;
use support::mock;

const KEY: &str = "ADOPTCLIKEY0123456789abcdef01234";
const LINES: usize = 10;
const CONFIG: &str = r#"{"polling":{"first_poll_ms":100,"interval_ms":100,"max_polls":2000}}"#;

fn cli(args: &[String]) -> Command {
    support::command(args, Some(KEY))
}

fn batch_args(input: &Path, dlq: &str, mock: &MockHandle) -> Vec<String> {
    let input = input.to_str().expect("utf-8 path");
    ["batch", input, "--dlq", dlq, "--base-url", &mock.base_url(), "--config", CONFIG, "--json"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

async fn run_again(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || cli(&args).output().expect("the binary runs")).await.expect("join")
}

async fn until(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !done().await {
        assert!(start.elapsed() < Duration::from_secs(60), "{what} did not happen within a minute");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts the batch and waits until every line is submitted with its provider task id in the
/// journal, so that the kill leaves nothing unconfirmed.
async fn start_batch(args: &[String], out: &Path, store: &SqliteStore) -> Child {
    let file = std::fs::File::create(out).expect("output file");
    let child = cli(args).stdout(file).stderr(Stdio::null()).spawn().expect("batch starts");
    until("every line submitted and journaled", async || {
        let entries = store.journal_entries().await.expect("journal");
        entries.iter().filter(|e| e.provider_task_id.is_some()).count() == LINES
    })
    .await;
    child
}

fn kill(mut child: Child) {
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
}

/// Answers printed by a run, by line key.
fn printed(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        if v["ok"] == true {
            *out.entry(v["key"].as_str().unwrap_or_default().to_string()).or_default() += 1;
        }
    }
    out
}

async fn adopter(mock: &MockHandle, dlq: &str, taken: Option<Arc<Mutex<Vec<AdoptedAnswer>>>>) -> Client {
    let mut builder = captcha_dlq::builder().api_key(KEY).base_url(mock.base_url()).dlq(dlq);
    if let Some(taken) = taken {
        builder = builder.on_adopted(move |answer| {
            taken.lock().map_err(|e| e.to_string())?.push(answer.clone());
            Ok(())
        });
    }
    builder.build().await.expect("adopter builds")
}

/// A batch of `LINES` tasks over a SQLite DLQ in a temporary directory, against a mock that
/// takes 6 s a task (so that a kill finds them all in flight).
struct Batch {
    mock: MockHandle,
    dir: tempfile::TempDir,
    dlq: String,
    store: SqliteStore,
    args: Vec<String>,
}

async fn batch() -> Batch {
    let mock = mock(6_000).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let input = support::tasks_file(dir.path(), LINES);
    let dlq = dir.path().join("d.sqlite").to_str().expect("utf-8").to_string();
    let store = SqliteStore::open(&dlq).expect("open");
    let args = batch_args(&input, &dlq, &mock);
    Batch { mock, dir, dlq, store, args }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_batch_is_adopted_and_its_answers_go_to_the_hook_once() {
    let Batch { mock, dir, dlq, store, args } = batch().await;
    let child = start_batch(&args, &dir.path().join("out1.jsonl"), &store).await;
    let taken = Arc::new(Mutex::new(Vec::new()));
    let client = adopter(&mock, &dlq, Some(taken.clone())).await;
    kill(child);

    until("every answer reached the hook", async || taken.lock().expect("lock").len() >= LINES).await;
    client.flush().await.expect("flush");
    let answers = taken.lock().expect("lock").clone();
    let mut keys: Vec<String> = answers.iter().filter_map(|a| a.key.clone()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!((answers.len(), keys.len()), (LINES, LINES), "each line's answer once: {answers:?}");
    assert!(keys.iter().all(|k| k.starts_with("batch:")), "{keys:?}");
    assert!(answers.iter().all(|a| a.solution.provider_task_id.is_some() && !a.solution.text.is_empty()));
    assert_eq!(client.adoption_stats().handed_to_hook, LINES as u64);
    assert!(store.journal_entries().await.expect("journal").is_empty(), "each taken answer's entry is gone");
    assert_eq!(store.settled("batch:").await.expect("settled").len(), LINES, "each line settled as solved");

    // The run started again finds every line settled: it prints and submits nothing.
    let again = run_again(args).await;
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(printed(&String::from_utf8_lossy(&again.stdout)).is_empty(), "the hook was the one consumer");
    assert_eq!(mock.counters().tasks_created, LINES as u64, "no line was submitted again");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_hook_the_batch_run_again_prints_each_adopted_answer_once() {
    let Batch { mock, dir, dlq, store, args } = batch().await;
    let first_out = dir.path().join("out1.jsonl");
    let child = start_batch(&args, &first_out, &store).await;
    let client = adopter(&mock, &dlq, None).await;
    kill(child);

    until("every answer fetched and released", async || client.adoption_stats().released >= LINES as u64).await;
    let entries = store.journal_entries().await.expect("journal");
    assert_eq!(entries.len(), LINES);
    assert!(entries.iter().all(|e| e.owner.is_none() && e.solution.is_some()), "released with their answers");
    assert_eq!(mock.counters().tasks_created, LINES as u64);

    let again = run_again(args).await;
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let mut seen = printed(&std::fs::read_to_string(&first_out).unwrap_or_default());
    for (key, n) in printed(&String::from_utf8_lossy(&again.stdout)) {
        *seen.entry(key).or_default() += n;
    }
    assert_eq!(seen.len(), LINES, "every line's answer printed: {seen:?}");
    assert!(seen.values().all(|n| *n == 1), "each printed once: {seen:?}");
    assert!(store.journal_entries().await.expect("journal").is_empty());
    assert_eq!(mock.counters().tasks_created, LINES as u64, "no line was submitted again");
    client.close().await;
}
