//! Several PROCESSES on one SQLite file: four writers push distinct records
//! (each through a keyed journal entry, as a driver does, with several tasks
//! of a process writing at once so that their writes share transactions while
//! the processes contend for the file), then four receivers drain the queue;
//! every record must be stored exactly once, its key settled once, and every
//! record leased exactly once.
//!
//! The test binary re-runs itself as the children (`CHILD_MODE` selects what a
//! child does), so it has its own `main` instead of the libtest harness.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use captcha_dlq::store::SqliteStore;
use captcha_dlq_core::dlq::testkit::{at, sample_journal_entry, sample_record};
use captcha_dlq_core::dlq::{DlqStore, Filter, Page, Settlement};

const CHILD_MODE: &str = "CAPTCHA_DLQ_TEST_CHILD";
const CHILD_PATH: &str = "CAPTCHA_DLQ_TEST_PATH";
const CHILD_PREFIX: &str = "CAPTCHA_DLQ_TEST_PREFIX";
const PROCESSES: usize = 4;
const PER_WRITER: usize = 60;
/// Tasks of one writer process writing at once.
const WRITER_TASKS: usize = 12;

/// The one test this binary holds, as test runners list it.
const TEST_NAME: &str = "four_writers_then_four_receivers_share_one_file";

fn main() -> ExitCode {
    // cargo-nextest lists a binary's tests (`--list --format terse`, once more with `--ignored`) before it runs
    // each by name, as it does with libtest's harness.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        if !args.iter().any(|a| a == "--ignored") {
            println!("{TEST_NAME}: test");
        }
        return ExitCode::SUCCESS;
    }
    let result = match std::env::var(CHILD_MODE).as_deref() {
        Ok("write") => child(write),
        Ok("receive") => child(receive),
        Ok(other) => Err(format!("unknown child mode {other:?}")),
        Err(_) => parent(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("store_sqlite_processes: {e}");
            ExitCode::FAILURE
        }
    }
}

fn child(body: fn(SqliteStore, String) -> Result<(), String>) -> Result<(), String> {
    let path = std::env::var(CHILD_PATH).map_err(|_| format!("{CHILD_PATH} not set"))?;
    let prefix = std::env::var(CHILD_PREFIX).unwrap_or_default();
    let store = SqliteStore::open(&path).map_err(|e| e.to_string())?;
    body(store, prefix)
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())
}

/// Child: journal (keyed `key-<id>`) then dead-letter `PER_WRITER` records named
/// `<prefix>-<i>`, `WRITER_TASKS` tasks at once.
fn write(store: SqliteStore, prefix: String) -> Result<(), String> {
    runtime()?.block_on(async {
        let tasks = (0..WRITER_TASKS).map(|t| {
            let (store, prefix) = (store.clone(), prefix.clone());
            async move {
                for i in (t..PER_WRITER).step_by(WRITER_TASKS) {
                    let id = format!("{prefix}-{i:03}");
                    let mut entry = sample_journal_entry(&id, 1);
                    entry.key = Some(format!("key-{id}"));
                    store.journal_upsert(&entry).await.map_err(|e| e.to_string())?;
                    store.push(sample_record(&id, i as u64)).await.map_err(|e| e.to_string())?;
                }
                Ok::<(), String>(())
            }
        });
        futures::future::try_join_all(tasks).await.map(drop)
    })
}

/// Child: receive in small batches until the queue is empty; print one leased id per line.
fn receive(store: SqliteStore, _prefix: String) -> Result<(), String> {
    runtime()?.block_on(async {
        loop {
            let batch = store
                .receive(&Filter::all(), 2, Duration::from_secs(3600), at(100_000))
                .await
                .map_err(|e| e.to_string())?;
            if batch.is_empty() {
                return Ok(());
            }
            for leased in batch {
                println!("{}", leased.record.id);
            }
        }
    })
}

/// Start `PROCESSES` children in `mode` at once and collect their stdout.
fn run_children(mode: &str, path: &Path) -> Result<Vec<String>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut children = Vec::new();
    for p in 0..PROCESSES {
        let child = Command::new(&exe)
            .env(CHILD_MODE, mode)
            .env(CHILD_PATH, path)
            .env(CHILD_PREFIX, format!("p{p}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("spawn {mode} child: {e}"))?;
        children.push(child);
    }
    let mut lines = Vec::new();
    for child in children {
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("a {mode} child failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr)));
        }
        lines.extend(String::from_utf8_lossy(&out.stdout).lines().map(str::to_string));
    }
    Ok(lines)
}

fn check(cond: bool, what: String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(what)
    }
}

fn parent() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("shared.db");
    let want: BTreeSet<String> =
        (0..PROCESSES).flat_map(|p| (0..PER_WRITER).map(move |i| format!("p{p}-{i:03}"))).collect();

    println!("4 writer processes on one file ...");
    run_children("write", &path)?;
    let store = SqliteStore::open(&path).map_err(|e| e.to_string())?;
    let rt = runtime()?;
    let (records, journal) = rt.block_on(async {
        let records = store.peek(&Filter::all(), Page { offset: 0, limit: 10_000 }, at(0)).await;
        (records, store.journal_entries().await)
    });
    let records = records.map_err(|e| e.to_string())?;
    let ids: Vec<String> = records.into_iter().map(|r| r.id).collect();
    let distinct: BTreeSet<String> = ids.iter().cloned().collect();
    check(ids.len() == distinct.len(), format!("{} records stored but {} distinct", ids.len(), distinct.len()))?;
    check(distinct == want, format!("stored ids differ from written ids: {} vs {}", distinct.len(), want.len()))?;
    let journal = journal.map_err(|e| e.to_string())?;
    check(journal.is_empty(), format!("push left {} journal entries behind", journal.len()))?;
    let settled = rt.block_on(store.settled("key-")).map_err(|e| e.to_string())?;
    let settled_ids: BTreeSet<String> = settled.iter().map(|s| s.id.clone()).collect();
    check(settled.len() == want.len() && settled_ids == want, format!("{} keys settled", settled.len()))?;
    check(
        settled.iter().all(|s| s.outcome == Settlement::DeadLettered && s.key == format!("key-{}", s.id)),
        "a settled key has the wrong id or outcome".into(),
    )?;
    println!("  ok: {} records, each exactly once, journal empty, every key settled once", ids.len());

    println!("4 receiver processes on one file ...");
    let leased = run_children("receive", &path)?;
    let distinct: BTreeSet<String> = leased.iter().cloned().collect();
    check(leased.len() == distinct.len(), format!("{} leases for {} records", leased.len(), distinct.len()))?;
    check(distinct == want, format!("leased {} records of {}", distinct.len(), want.len()))?;
    let stats = rt.block_on(store.stats(at(100_000))).map_err(|e| e.to_string())?;
    check(stats.leased == want.len() as u64, format!("stats.leased = {}", stats.leased))?;
    println!("  ok: {} leases, each record exactly once", leased.len());
    Ok(())
}
