//! What an operator's harness checks, run as an operator would: SIGKILL during `batch` and
//! during `recover` (again and again), a batch file run again after a kill, an immutable
//! DLQ, a lock held by another process, a paused and a killed Redis, an unreachable
//! provider. Every task is counted at the mock (submits, tasks created), in the output, in
//! the DLQ and in the journal: none lost, none delivered twice unless a kill fell between
//! printing an answer and letting its journal entry go, none paid twice, every failure
//! visible with its exit code.

use crate::support;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use captcha_dlq::core::dlq::{DlqStore, Filter, Page};
use captcha_dlq::store::SqliteStore;
use captcha_dlq_mock::redis_server::RedisServer;
use captcha_dlq_mock::MockHandle;
use serde_json::Value;
use support::{mock, now, tasks_file};

const KEY: &str = "CLIKEY0123456789abcdef0123456789";

/// Polling scaled down; store calls time out after 1 s and are retried for `retry_for_ms`.
fn config(retry_for_ms: u64) -> String {
    format!(
        r#"{{"polling":{{"first_poll_ms":100,"interval_ms":80,"max_polls":400}},"rate":{{"submits_per_second":500}},"retry":{{"transient_min_delay_ms":10,"backoff":{{"kind":"full_jitter","base_ms":20,"cap_ms":200}}}},"store":{{"timeout_ms":1000,"retry_for_ms":{retry_for_ms}}}}}"#
    )
}

fn cli(args: &[&str]) -> Command {
    support::command(args, Some(KEY))
}

fn run(args: &[&str]) -> Output {
    support::run(args, Some(KEY))
}

fn spawn(args: &[&str], out: &Path) -> Child {
    let file = std::fs::OpenOptions::new().create(true).append(true).open(out).unwrap();
    cli(args).stdout(file).stderr(Stdio::null()).spawn().unwrap()
}

/// Lines of JSON output: `line`-keyed answers and failures, by the line's `key`.
#[derive(Debug, Default)]
struct Tally {
    /// Per key: every (record id, token, provider task id) printed for it.
    solved: BTreeMap<String, Vec<(String, String, String)>>,
    failed: BTreeMap<String, Value>,
}

impl Tally {
    fn read(&mut self, text: &str) {
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            let Some(key) = v["key"].as_str() else { continue };
            if v["ok"] == true {
                let s = &v["solution"];
                let answer = (
                    v["id"].as_str().unwrap_or_default().to_string(),
                    s["text"].as_str().unwrap_or_default().to_string(),
                    s["provider_task_id"].as_str().unwrap_or_default().to_string(),
                );
                self.solved.entry(key.to_string()).or_default().push(answer);
            } else {
                self.failed.insert(key.to_string(), v);
            }
        }
    }

    /// Answers printed more than once; each repeat must be the very same answer.
    fn repeats(&self) -> usize {
        let mut repeats = 0;
        for (key, answers) in &self.solved {
            let distinct: BTreeSet<_> = answers.iter().collect();
            assert_eq!(distinct.len(), 1, "{key} was delivered with different answers: {answers:?}");
            repeats += answers.len() - 1;
        }
        repeats
    }
}

/// The line numbers (`t7` → 7) of keys.
fn lines(keys: impl IntoIterator<Item = String>) -> BTreeSet<usize> {
    keys.into_iter().filter_map(|k| k.rsplit("id:t").next().and_then(|n| n.parse().ok())).collect()
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(60), "{what} did not happen within a minute");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn journal_len(dlq: &str) -> usize {
    SqliteStore::open(dlq).unwrap().journal_entries().await.unwrap().len()
}

/// Kills `child`, waits until the mock has handled every request the process had sent, then counts
/// the submissions the mock accepted that the store does not know were accepted: neither a journal
/// entry with a provider task id nor a settled key. Counted after the kill, so nothing moves under
/// the count: the store is the dead process's last word, and the mock has nothing left to read.
async fn kill_and_count_unconfirmed(child: &mut Child, mock: &MockHandle, dlq: &str) -> u64 {
    child.kill().unwrap();
    child.wait().unwrap();
    // The kernel closed the process's connections; the mock reads what they still held, then sees
    // them end. A connection still in the listen queue would be accepted (and counted) later.
    let port = mock.addr().port();
    let drained = || mock.open_connections() == 0 && listen_queue(port) == 0;
    wait_until("the mock to handle what the killed process sent", drained).await;
    let created = mock.counters().tasks_created;
    let store = SqliteStore::open(dlq).unwrap();
    let known = journaled_ids(dlq).await as u64 + store.settled("").await.unwrap().len() as u64;
    created.saturating_sub(known)
}

/// Connections waiting in the accept queue of the IPv4 socket listening on `port` (Linux's
/// `/proc/net/tcp`: a listening socket's `rx_queue` is its accept queue).
fn listen_queue(port: u16) -> u64 {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp is readable");
    let local = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 4 && f[1].ends_with(&local) && f[3] == "0A")
        .and_then(|f| f[4].split(':').nth(1).map(|rx| u64::from_str_radix(rx, 16).unwrap()))
        .unwrap_or_else(|| panic!("no socket listens on port {port} in /proc/net/tcp"))
}

/// Journal entries that name their provider task (submitted, and known to be).
async fn journaled_ids(dlq: &str) -> usize {
    let entries = SqliteStore::open(dlq).unwrap().journal_entries().await.unwrap();
    entries.iter().filter(|e| e.provider_task_id.is_some()).count()
}

async fn dlq_len(dlq: &str) -> u64 {
    SqliteStore::open(dlq).unwrap().count(&Filter::all(), now()).await.unwrap()
}

/// A mock taking `solve_after_ms` a task, and `lines` tasks in a file of a temporary directory
/// (kept while `_dir` lives), beside the DLQ `d.sqlite` and the output `out.jsonl`.
struct Run {
    mock: MockHandle,
    _dir: tempfile::TempDir,
    input: String,
    dlq: String,
    out: PathBuf,
    base: String,
}

impl Run {
    async fn start(solve_after_ms: u64, lines: usize) -> Run {
        let mock = mock(solve_after_ms).await;
        let dir = tempfile::tempdir().unwrap();
        let input = tasks_file(dir.path(), lines).to_str().unwrap().to_string();
        let dlq = dir.path().join("d.sqlite").to_str().unwrap().to_string();
        let out = dir.path().join("out.jsonl");
        let base = mock.base_url();
        Run { mock, _dir: dir, input, dlq, out, base }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_killed_and_run_again_pays_for_each_line_once() {
    let Run { mock, _dir, input, dlq, out, base } = Run::start(1500, 60).await;
    let cfg = config(30_000);
    let args = ["batch", &input, "--dlq", &dlq, "--base-url", &base, "--config", &cfg, "--json"];
    let mut child = spawn(&args, &out);
    wait_until("20 submissions", || mock.counters().tasks_created >= 20).await;
    let unconfirmed = kill_and_count_unconfirmed(&mut child, &mock, &dlq).await;
    let killed_at = mock.counters().tasks_created;
    let again = support::run_blocking(&args, Some(KEY)).await;
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let mut tally = Tally::default();
    tally.read(&std::fs::read_to_string(&out).unwrap_or_default());
    tally.read(&String::from_utf8_lossy(&again.stdout));
    assert_eq!(lines(tally.solved.keys().cloned()), (1..=60).collect(), "every line solved");
    assert!(tally.repeats() <= 1, "a kill delivers an answer again at most once");
    // A submission accepted in the few ms before its task id reached the journal cannot be
    // known after a kill (no provider takes an idempotency key): it is the one thing paid twice.
    let created = mock.counters().tasks_created;
    assert_eq!(created, 60 + unconfirmed, "each line submitted once but the unconfirmed (killed after {killed_at})");
    assert!(unconfirmed <= 20, "{unconfirmed} submissions without a durable id at the kill");

    // A third run has nothing left to do.
    let third = run(&args);
    assert!(third.status.success());
    assert!(String::from_utf8_lossy(&third.stdout).trim().is_empty(), "nothing printed again");
    assert!(String::from_utf8_lossy(&third.stderr).contains("60 line(s) already finished"));
    assert_eq!(mock.counters().tasks_created, created, "the third run submits nothing");
    assert_eq!((journal_len(&dlq).await, dlq_len(&dlq).await), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_recover_again_and_again_loses_no_answer_and_pays_nothing_twice() {
    let Run { mock, _dir, input, dlq, out, base } = Run::start(2500, 50).await;
    let cfg = config(30_000);
    let mut child = spawn(&["batch", &input, "--dlq", &dlq, "--base-url", &base, "--config", &cfg], &out);
    wait_until("50 submissions", || mock.counters().tasks_created >= 50).await;
    let unconfirmed = kill_and_count_unconfirmed(&mut child, &mock, &dlq).await;

    let recover = ["recover", "--json", "--dlq", &dlq, "--base-url", &base, "--config", &cfg];
    let mut kills = 0;
    for round in 0..30u64 {
        let mut child = spawn(&recover, &out);
        // Kill it at moments spread over its work: while it polls, while it prints.
        tokio::time::sleep(Duration::from_millis(150 + (round * 137) % 900)).await;
        if child.try_wait().unwrap().is_some() {
            break;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        kills += 1;
    }
    let last = run(&recover);
    assert!(last.status.success(), "{}", String::from_utf8_lossy(&last.stderr));
    let mut tally = Tally::default();
    tally.read(&std::fs::read_to_string(&out).unwrap());
    tally.read(&String::from_utf8_lossy(&last.stdout));
    assert_eq!(lines(tally.solved.keys().cloned()), (1..=50).collect(), "no answer lost over {kills} kills");
    assert!(tally.repeats() <= kills, "{} repeats over {kills} kills", tally.repeats());
    // Every recover after the first kill polls what was submitted; only the batch's unconfirmed
    // submissions (see above) are sent again, once.
    assert_eq!(
        mock.counters().tasks_created,
        50 + unconfirmed,
        "recover polled what was submitted: nothing paid twice"
    );
    assert_eq!((journal_len(&dlq).await, dlq_len(&dlq).await), (0, 0));
}

/// Removes the immutable flag even when the test fails.
struct Immutable(PathBuf);

impl Immutable {
    fn set(path: &Path) -> Immutable {
        let ok = Command::new("chattr").arg("+i").arg(path).status().is_ok_and(|s| s.success());
        assert!(ok, "chattr +i {} failed: this test needs root and a file system with attributes", path.display());
        Immutable(path.to_path_buf())
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_immutable_dlq_fails_the_run_with_exit_4_and_submits_nothing() {
    let mock = mock(30).await;
    let dir = tempfile::tempdir().unwrap();
    let input = tasks_file(dir.path(), 5);
    let dlq = dir.path().join("d.sqlite");
    drop(SqliteStore::open(dlq.to_str().unwrap()).unwrap()); // a valid, empty DLQ
    let _guard = Immutable::set(&dlq);
    let cfg = config(1500);
    let base = mock.base_url();
    let out =
        run(&["batch", input.to_str().unwrap(), "--dlq", dlq.to_str().unwrap(), "--base-url", &base, "--config", &cfg]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("given up") || stderr.contains("store"), "{stderr}");
    assert_eq!(mock.counters().submits, 0, "nothing paid for that could not be recovered");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(printed.lines().count(), 5, "each line says why: {printed}");
    assert!(printed.lines().all(|l| l.contains("STORE_ERROR") && l.contains("not submitted")), "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_held_past_the_busy_timeout_pauses_the_batch_and_nothing_is_delivered_twice() {
    let Run { mock, _dir, input, dlq, out, base } = Run::start(300, 30).await;
    drop(SqliteStore::open(&dlq).unwrap());
    let cfg = config(60_000);
    // Another process takes the database for 12 s, past SQLite's 10 s busy timeout.
    let holder = Command::new("python3")
        .args(["-c", "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(12); c.execute('COMMIT')", &dlq])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut holder = holder;
    {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(holder.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "locked");
    }
    let started = Instant::now();
    let result =
        support::run_blocking(&["batch", &input, "--dlq", &dlq, "--base-url", &base, "--config", &cfg], Some(KEY))
            .await;
    holder.wait().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "the lock was released in time: {stderr}");
    assert!(stderr.contains("not answering"), "the stall was reported: {stderr}");
    assert!(started.elapsed() >= Duration::from_secs(10), "the batch really waited for the lock");
    std::fs::write(&out, &result.stdout).unwrap();
    let mut tally = Tally::default();
    tally.read(&String::from_utf8_lossy(&result.stdout));
    assert_eq!(lines(tally.solved.keys().cloned()), (1..=30).collect());
    assert_eq!(tally.repeats(), 0);
    let again = run(&["recover", "--json", "--dlq", &dlq, "--base-url", &base, "--config", &cfg]);
    let mut later = Tally::default();
    later.read(&String::from_utf8_lossy(&again.stdout));
    assert!(later.solved.is_empty(), "recover delivers nothing twice: {:?}", later.solved);
    assert_eq!(mock.counters().tasks_created, 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_redis_is_reported_and_the_batch_goes_on_when_it_is_back() {
    let Some(redis) = RedisServer::for_tests() else { return };
    let mock = mock(300).await;
    let dir = tempfile::tempdir().unwrap();
    let input = tasks_file(dir.path(), 30);
    let cfg = config(60_000);
    let base = mock.base_url();
    let url = redis.url();
    let args: Vec<String> =
        ["batch", input.to_str().unwrap(), "--dlq", &url, "--base-url", &base, "--config", &cfg, "-v"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let batch = tokio::task::spawn_blocking(move || {
        cli(&args.iter().map(String::as_str).collect::<Vec<_>>()).output().unwrap()
    });
    wait_until("a few submissions", || mock.counters().tasks_created >= 5).await;
    redis.pause().unwrap();
    tokio::time::sleep(Duration::from_secs(6)).await;
    redis.resume().unwrap();
    let result = batch.await.unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{stderr}");
    assert!(stderr.contains("not answering"), "a hung Redis is reported within seconds: {stderr}");
    let mut tally = Tally::default();
    tally.read(&String::from_utf8_lossy(&result.stdout));
    assert_eq!(lines(tally.solved.keys().cloned()), (1..=30).collect());
    assert_eq!(mock.counters().tasks_created, 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_killed_mid_run_fails_the_run_with_exit_4_and_stops_submitting() {
    let Some(mut redis) = RedisServer::for_tests() else { return };
    let mock = mock(400).await;
    let dir = tempfile::tempdir().unwrap();
    let input = tasks_file(dir.path(), 200);
    let cfg = config(2000);
    let base = mock.base_url();
    let url = redis.url();
    let args: Vec<String> =
        ["batch", input.to_str().unwrap(), "--dlq", &url, "--base-url", &base, "--config", &cfg, "--concurrency", "20"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let batch = tokio::task::spawn_blocking(move || {
        cli(&args.iter().map(String::as_str).collect::<Vec<_>>()).output().unwrap()
    });
    wait_until("a few submissions", || mock.counters().tasks_created >= 10).await;
    redis.kill().unwrap();
    let submitted_at_kill = mock.counters().tasks_created;
    let result = batch.await.unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("given up"), "{stderr}");
    let created = mock.counters().tasks_created;
    assert!(created <= submitted_at_kill + 20, "submissions stopped with the store: {submitted_at_kill} → {created}");
    let mut tally = Tally::default();
    tally.read(&String::from_utf8_lossy(&result.stdout));
    let answered = tally.solved.len() + tally.failed.len();
    assert_eq!(answered, 200, "every line says how it ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_provider_exits_5_with_every_task_dead_lettered_as_network() {
    let dir = tempfile::tempdir().unwrap();
    let input = tasks_file(dir.path(), 20);
    let dlq = dir.path().join("d.sqlite").to_str().unwrap().to_string();
    let cfg = config(30_000);
    let out =
        run(&["batch", input.to_str().unwrap(), "--dlq", &dlq, "--provider", "http://127.0.0.1:1", "--config", &cfg]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("cannot be reached"), "one clear line about it: {stderr}");
    let mut tally = Tally::default();
    tally.read(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(tally.failed.len(), 20);
    assert!(tally.failed.values().all(|v| v["reason"] == "Network" && v["class"] == "transient"), "{:?}", tally.failed);
    let store = SqliteStore::open(&dlq).unwrap();
    assert_eq!(store.count(&Filter::all(), now()).await.unwrap(), 20);
    let records = store.peek(&Filter::all(), Page::default(), now()).await.unwrap();
    assert!(records.iter().all(|r| r.description.contains("cannot be reached") || r.description.contains("refused")));
}

/// The dashboard's Recover on a killed batch finishes its tasks and keeps each answer for the
/// batch run again (it used to acknowledge them into nothing, and the run again then skipped
/// those lines as finished): every line is printed solved once, nothing is submitted twice, the
/// journal and the DLQ end empty, and the recovery is in the audit trail with its counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dashboard_recover_of_a_killed_batch_keeps_every_answer_for_the_batch_run_again() {
    use std::io::BufRead;
    let Run { mock, _dir, input, dlq, out, base } = Run::start(1500, 20).await;
    let cfg = config(30_000);
    let args = ["batch", &input, "--dlq", &dlq, "--base-url", &base, "--config", &cfg, "--json"];
    let mut child = spawn(&args, &out);
    wait_until("every line submitted", || mock.counters().tasks_created >= 20).await;
    let unconfirmed = kill_and_count_unconfirmed(&mut child, &mock, &dlq).await;
    let entries = SqliteStore::open(&dlq).unwrap().journal_entries().await.unwrap();
    let owners: BTreeSet<String> = entries.iter().filter_map(|e| e.owner.clone()).collect();
    assert_eq!(owners.len(), 1, "the killed batch owns its entries: {owners:?}");
    let owner = owners.into_iter().next().unwrap();
    let in_flight = entries.len();

    let dashboard =
        cli(&["dashboard", "--dlq", &dlq, "--base-url", &base, "--config", &cfg, "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
    let mut dashboard = support::Running(dashboard);
    let mut stdout = std::io::BufReader::new(dashboard.0.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let addr = first.split("http://").nth(1).expect("the URL is printed").trim().trim_end_matches('/').to_string();
    let get = |path: &str| support::get(&addr, path);
    let (status, page) = get("/journal");
    assert_eq!(status, 200, "{page}");
    let csrf = page.split("name=\"csrf-token\" content=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
    let (status, answer) = support::post(&addr, "/actions/recover", &format!("owner={owner}&resume=true&csrf={csrf}"));
    assert_eq!(status, 303, "the recovery starts: {answer}");
    wait_until("the dashboard's recovery to finish", || get("/journal").1.contains(">finished<")).await;
    let page = get("/journal").1;
    let kept = page.split("data-field=\"kept\">").nth(1).and_then(|rest| rest.split('<').next()).unwrap_or_default();
    assert_eq!(kept, in_flight.to_string(), "every answer is kept for whoever resumes: {page}");
    drop(dashboard);

    let again = support::run_blocking(&args, Some(KEY)).await;
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let mut tally = Tally::default();
    tally.read(&std::fs::read_to_string(&out).unwrap_or_default());
    tally.read(&String::from_utf8_lossy(&again.stdout));
    assert_eq!(lines(tally.solved.keys().cloned()), (1..=20).collect(), "every line solved: {tally:?}");
    assert!(tally.failed.is_empty(), "{:?}", tally.failed);
    assert_eq!(tally.repeats(), 0, "each answer printed once");
    assert_eq!(mock.counters().tasks_created, 20 + unconfirmed, "nothing submitted again but the unconfirmed");
    assert_eq!((journal_len(&dlq).await, dlq_len(&dlq).await), (0, 0));

    let trail = SqliteStore::open(&dlq).unwrap().audit_list(10, None).await.unwrap();
    let recovery = trail.iter().find(|e| e.action.as_str() == "recover").expect("the recovery is audited");
    assert_eq!(recovery.count, in_flight as u64, "{recovery:?}");
    assert!(!recovery.operator.is_empty() && recovery.error.is_none(), "{recovery:?}");
    assert!(recovery.detail.contains(&format!("({in_flight} kept)")), "{recovery:?}");
}
