//! SqliteStore: the shared conformance suite (in memory and on files), plus
//! what only a file store has: permissions, schema versions and the migration
//! of an old file, foreign or damaged files, persistence across reopen,
//! concurrent connections, group commit (calls arriving together share a
//! transaction; a call that fails alone fails alone; a locked database fails
//! the whole group, transiently), and lone writes on the caller's thread
//! (never waiting there for a lock; the WAL still checkpointed).

use crate::support;
use std::path::Path;
use std::time::Duration;

use captcha_dlq::store::{Durability, LimitedStore, SqliteStore, SQLITE_SCHEMA_VERSION};
use captcha_dlq_core::dlq::rule_cases::{run_rule_cases, store_case_count};
use captcha_dlq_core::dlq::testkit::{at, run_store_suite, sample_journal_entry, sample_record, CASES};
use captcha_dlq_core::dlq::{DlqStore, Filter, LeaseToken, Page, RecordState, Settlement, StoreError};

const LEASE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn conformance_suite_in_memory() {
    let ran = run_store_suite(|| async { SqliteStore::open_in_memory().expect("open in memory") }).await;
    assert_eq!(ran, CASES.len());
}

/// The store rules' case table (`dlq::rules::cases`) against SQLite: its SQL filters (lease
/// eligibility, the journal's fence and claim, a push keeping a lease) answer as the rules do.
#[tokio::test]
async fn the_rules_case_table_holds() {
    let ran = run_rule_cases(|max| async move {
        SqliteStore::open_in_memory().expect("open in memory").with_max_deliveries(max).expect("a limit of at least 1")
    })
    .await;
    assert_eq!(ran, store_case_count());
}

/// Runs the suite on a fresh file per case, opened with `durability`; how many cases ran.
async fn suite_on_files(durability: Durability) -> usize {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut n = 0;
    run_store_suite(|| {
        n += 1;
        let path = dir.path().join(format!("case-{n}.db"));
        async move {
            SqliteStore::open(&path)
                .and_then(|s| s.with_durability(durability))
                .unwrap_or_else(|e| panic!("open file store ({}): {e}", durability.as_str()))
        }
    })
    .await
}

#[tokio::test]
async fn conformance_suite_on_files() {
    assert_eq!(suite_on_files(Durability::Process).await, CASES.len());
}

/// With power-loss durability (`synchronous = FULL`) every write goes through the connection
/// thread; the store keeps every promise of the suite.
#[tokio::test]
async fn conformance_suite_on_files_synced_at_each_commit() {
    assert_eq!(suite_on_files(Durability::PowerLoss).await, CASES.len());
}

/// A path for a database file in a directory of its own, removed when the directory is dropped.
fn db_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dlq.db");
    (dir, path)
}

#[cfg(unix)]
#[tokio::test]
async fn new_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, path) = db_file();
    let store = SqliteStore::open(&path).expect("open");
    store.push(sample_record("a", 0)).await.expect("push");
    let mode = std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the store file must be created owner-only, got {mode:o}");
    // SQLite creates the WAL beside it with the database's permissions.
    let wal = dir.path().join("dlq.db-wal");
    let wal_mode = std::fs::metadata(&wal).expect("stat wal").permissions().mode() & 0o777;
    assert_eq!(wal_mode, 0o600, "the WAL file must be owner-only too, got {wal_mode:o}");
}

#[tokio::test]
async fn file_of_random_bytes_is_corrupt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("random.db");
    let bytes: Vec<u8> = (0..8192).map(|_| fastrand::u8(..)).collect();
    std::fs::write(&path, &bytes).expect("write");
    match SqliteStore::open(&path) {
        Err(StoreError::Corrupt { location, problem }) => {
            assert_eq!(location, path.display().to_string());
            assert!(problem.contains("not a SQLite database"), "problem: {problem}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert_eq!(std::fs::read(&path).expect("read"), bytes, "a refused file must be left untouched");
}

#[tokio::test]
async fn sqlite_file_of_another_application_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("app.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'x');",
        )
        .expect("foreign schema");
    }
    match SqliteStore::open(&path) {
        Err(StoreError::Corrupt { location, problem }) => {
            assert_eq!(location, path.display().to_string());
            assert!(problem.contains("users"), "problem should name the foreign tables: {problem}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    let conn = rusqlite::Connection::open(&path).expect("reopen");
    let n: i64 = conn.query_row("SELECT COUNT(*) FROM users", [], |r| r.get(0)).expect("users still there");
    assert_eq!(n, 1);
    let tables: i64 =
        conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'records'", [], |r| r.get(0)).expect("query");
    assert_eq!(tables, 0, "no table of ours may be added to a foreign database");
}

#[tokio::test]
async fn foreign_application_id_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.pragma_update(None, "application_id", 0x1234_5678).expect("app id");
    }
    match SqliteStore::open(&path) {
        Err(StoreError::Corrupt { problem, .. }) => assert!(problem.contains("another application"), "{problem}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[tokio::test]
async fn newer_schema_is_refused() {
    let (_dir, path) = db_file();
    drop(SqliteStore::open(&path).expect("create"));
    {
        let conn = rusqlite::Connection::open(&path).expect("raw open");
        let v: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).expect("version");
        assert_eq!(v, SQLITE_SCHEMA_VERSION, "a new store records its schema version");
        conn.pragma_update(None, "user_version", SQLITE_SCHEMA_VERSION + 1).expect("bump");
    }
    match SqliteStore::open(&path) {
        Err(StoreError::NewerSchema { location, found, supported }) => {
            assert_eq!(location, path.display().to_string());
            assert_eq!((found, supported), (SQLITE_SCHEMA_VERSION + 1, SQLITE_SCHEMA_VERSION));
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
}

#[tokio::test]
async fn empty_existing_file_becomes_a_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").expect("touch");
    let store = SqliteStore::open(&path).expect("an empty file is a fresh database");
    store.push(sample_record("a", 0)).await.expect("push");
    assert_eq!(store.count(&Filter::all(), at(60)).await.expect("count"), 1);
}

async fn fill(path: &Path) {
    let store = SqliteStore::open(path).expect("open");
    for i in 0..5 {
        store.push(sample_record(&format!("r{i}"), i)).await.expect("push");
    }
    store.journal_upsert(&sample_journal_entry("in-flight", 2)).await.expect("journal");
    let leased = store.receive(&Filter::all(), 2, LEASE, at(600)).await.expect("receive");
    assert_eq!(leased.len(), 2);
    store.complete(&leased[0].token, at(601)).await.expect("complete");
    assert_eq!(store.abandon(&leased[1].token, None, at(602)).await.expect("abandon"), RecordState::Ready);
    assert!(store.park("r4", "NeedsReview", at(603)).await.expect("park"));
}

#[tokio::test]
async fn a_store_opens_and_reads_while_another_process_holds_the_write_lock() {
    // An operator's `count` or `peek` (or a rerun's first reads) while a batch is inside a long
    // write transaction, or frozen in one: opening needs no write lock when the schema is current.
    let (_dir, path) = db_file();
    fill(&path).await;
    let writer = rusqlite::Connection::open(&path).expect("raw open");
    writer.execute_batch("BEGIN IMMEDIATE").expect("hold the write lock");
    let store = SqliteStore::open(&path).expect("open while another connection holds the write lock");
    assert_eq!(store.count(&Filter::all(), at(700)).await.expect("count"), 4);
    assert_eq!(store.journal_entries().await.expect("journal"), vec![sample_journal_entry("in-flight", 2)]);
    writer.execute_batch("COMMIT").expect("release");
}

#[tokio::test]
async fn everything_survives_reopen() {
    let (_dir, path) = db_file();
    fill(&path).await;
    let store = SqliteStore::open(&path).expect("reopen");
    let now = at(700);
    let all = store.peek(&Filter::all(), Page::default(), now).await.expect("peek");
    let ids: Vec<&str> = all.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["r1", "r2", "r3", "r4"]);
    let r1 = &all[0];
    assert_eq!((r1.state, r1.deliveries), (RecordState::Ready, 1), "abandoned record keeps its delivery");
    let r4 = &all[3];
    assert_eq!((r4.state, r4.parked_reason.as_deref()), (RecordState::Parked, Some("NeedsReview")));
    assert_eq!(all[1], sample_record("r2", 2), "a record reads back exactly as pushed");
    let stats = store.stats(now).await.expect("stats");
    assert_eq!(
        (stats.total, stats.ready, stats.parked, stats.completed, stats.abandoned, stats.in_flight),
        (4, 3, 1, 1, 1, 1)
    );
    let journal = store.journal_entries().await.expect("journal");
    assert_eq!(journal, vec![sample_journal_entry("in-flight", 2)]);
}

#[tokio::test]
async fn capacity_evicts_oldest_ready_and_counts_it() {
    let store = SqliteStore::open_in_memory().expect("open").with_capacity(3).expect("capacity");
    for i in 0..3 {
        let outcome = store.push(sample_record(&format!("r{i}"), i)).await.expect("push");
        assert!(outcome.evicted.is_empty());
    }
    let now = at(600);
    let leased = store.receive(&Filter::all(), 1, LEASE, now).await.expect("receive");
    assert_eq!(leased[0].record.id, "r0");
    assert!(store.park("r1", "x", now).await.expect("park"));
    // r0 is leased and r1 parked: the oldest ready record (r2) goes first.
    let outcome = store.push(sample_record("r3", 3)).await.expect("push");
    assert_eq!(outcome.evicted, ["r2"]);
    let outcome = store.push(sample_record("r4", 4)).await.expect("push");
    assert_eq!(outcome.evicted, ["r3"]);
    let stats = store.stats(now).await.expect("stats");
    assert_eq!((stats.total, stats.dropped), (3, 2));
    assert!(SqliteStore::open_in_memory().expect("open").with_capacity(0).is_err());
}

#[tokio::test]
async fn max_deliveries_is_configurable() {
    let store = SqliteStore::open_in_memory().expect("open").with_max_deliveries(2).expect("limit");
    store.push(sample_record("a", 0)).await.expect("push");
    let first = store.receive(&Filter::all(), 1, LEASE, at(60)).await.expect("receive");
    assert_eq!(store.abandon(&first[0].token, None, at(61)).await.expect("abandon"), RecordState::Ready);
    let second = store.receive(&Filter::all(), 1, LEASE, at(62)).await.expect("receive");
    assert_eq!(store.abandon(&second[0].token, None, at(63)).await.expect("abandon"), RecordState::Parked);
    assert!(SqliteStore::open_in_memory().expect("open").with_max_deliveries(0).is_err());
}

#[tokio::test]
async fn undecodable_row_is_a_decode_error_naming_the_record() {
    let (_dir, path) = db_file();
    let store = SqliteStore::open(&path).expect("open");
    store.push(sample_record("a", 0)).await.expect("push");
    {
        let conn = rusqlite::Connection::open(&path).expect("raw");
        conn.execute("UPDATE records SET json = '{\"schema\": 1' WHERE id = 'a'", []).expect("damage");
    }
    match store.peek(&Filter::all(), Page::default(), at(60)).await {
        Err(StoreError::Decode(msg)) => assert!(msg.contains("record a"), "{msg}"),
        other => panic!("expected Decode, got {other:?}"),
    }
}

/// Four connections to one file (as four processes would have) receive at
/// once: every record is leased exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_connections_never_lease_the_same_record() {
    let (_dir, path) = db_file();
    let store = SqliteStore::open(&path).expect("open");
    let workers = (0..4).map(|_| SqliteStore::open(&path).expect("open another connection")).collect();
    support::drain_at_once(&store, workers).await;
}

/// Schema version 1 as the build before settled keys wrote it: the fixture of the migration test.
const SCHEMA_V1_FIXTURE: &str = "
CREATE TABLE records (
    id TEXT PRIMARY KEY NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL, class TEXT NOT NULL,
    sitekey TEXT, page_host TEXT, dead_lettered_at INTEGER NOT NULL, lease_until INTEGER,
    lease_nonce TEXT, deliveries INTEGER NOT NULL DEFAULT 0, parked_reason TEXT, json TEXT NOT NULL
);
CREATE INDEX records_reason ON records(reason);
CREATE INDEX records_age ON records(dead_lettered_at, id);
CREATE INDEX records_state ON records(state, dead_lettered_at, id);
CREATE TABLE journal (id TEXT PRIMARY KEY NOT NULL, json TEXT NOT NULL);
CREATE TABLE counters (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
INSERT INTO counters (name, value) VALUES ('dropped', 0), ('completed', 3), ('abandoned', 1);
PRAGMA application_id = 1128549457;
PRAGMA user_version = 1;
";

#[tokio::test]
async fn a_version_1_file_is_migrated_and_keeps_working() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("v1.db");
    let old = sample_record("old", 0);
    let mut keyed = sample_journal_entry("keyed", 1);
    keyed.key = Some("line-1".into());
    let plain = sample_journal_entry("plain", 1);
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.pragma_update(None, "journal_mode", "WAL").expect("wal");
        conn.execute_batch(SCHEMA_V1_FIXTURE).expect("schema v1");
        conn.execute(
            "INSERT INTO records (id, state, reason, class, sitekey, page_host, dead_lettered_at, deliveries, json) \
             VALUES (?1, 'ready', ?2, ?3, ?4, ?5, ?6, 0, ?7)",
            rusqlite::params![
                old.id,
                old.reason,
                old.class.as_str(),
                old.task.sitekey(),
                old.page_host(),
                old.dead_lettered_at.as_unix_millis() as i64,
                serde_json::to_string(&old).expect("json"),
            ],
        )
        .expect("record");
        for entry in [&keyed, &plain] {
            let json = serde_json::to_string(entry).expect("json");
            conn.execute("INSERT INTO journal (id, json) VALUES (?1, ?2)", rusqlite::params![entry.id, json])
                .expect("journal entry");
        }
    }
    let store = SqliteStore::open(&path).expect("a version 1 file opens");
    let version: u32 = rusqlite::Connection::open(&path)
        .and_then(|c| c.pragma_query_value(None, "user_version", |r| r.get(0)))
        .expect("version");
    assert_eq!(version, SQLITE_SCHEMA_VERSION, "the file is migrated to the current schema");
    let now = at(600);
    assert_eq!(store.peek(&Filter::all(), Page::default(), now).await.expect("peek"), vec![old.clone()]);
    assert_eq!(store.journal_entries().await.expect("journal"), vec![keyed.clone(), plain.clone()]);
    let stats = store.stats(now).await.expect("stats");
    assert_eq!((stats.total, stats.completed, stats.abandoned, stats.in_flight), (1, 3, 1, 2), "counters kept");
    // The old entry's key was read out of its JSON: dead-lettering it settles the key.
    store.push(sample_record("keyed", 1)).await.expect("push");
    let settled = store.settled("").await.expect("settled");
    assert_eq!(settled.len(), 1);
    assert_eq!((settled[0].key.as_str(), settled[0].id.as_str()), ("line-1", "keyed"));
    assert_eq!(settled[0].outcome, Settlement::DeadLettered);
    let leased = store.receive(&Filter::all(), 10, LEASE, now).await.expect("receive");
    assert_eq!(leased.iter().map(|l| l.record.id.as_str()).collect::<Vec<_>>(), ["old", "keyed"]);
    store.journal_forget("plain", now).await.expect("forget");
    drop(store);
    let store = SqliteStore::open(&path).expect("reopen a migrated file");
    assert_eq!(store.stats(now).await.expect("stats").in_flight, 0);
}

/// Holds SQLite's write lock on `path` (as another process would) until dropped or released.
struct WriteLock(rusqlite::Connection);

impl WriteLock {
    fn take(path: &Path) -> WriteLock {
        let conn = rusqlite::Connection::open(path).expect("second connection");
        conn.execute_batch("BEGIN IMMEDIATE").expect("take the write lock");
        WriteLock(conn)
    }

    fn release(self) {
        self.0.execute_batch("ROLLBACK").expect("release the write lock");
    }
}

/// Starts the calls `spawn` makes while another process holds the write lock, releases it once
/// every one of them waits on the store's thread (a readiness wait with a generous bound, not a
/// timing assertion), and returns their results in order with the transactions and writes they
/// took.
async fn behind_a_lock<T: Send + 'static>(
    store: &SqliteStore,
    path: &Path,
    spawn: impl FnOnce() -> Vec<tokio::task::JoinHandle<T>>,
) -> (Vec<T>, u64, u64) {
    let before = store.group_commit_stats();
    let lock = WriteLock::take(path);
    let tasks = spawn();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while store.group_commit_stats().queued < tasks.len() as u64 {
        assert!(std::time::Instant::now() < deadline, "{} calls never reached the store's thread", tasks.len());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    lock.release();
    let mut results = Vec::with_capacity(tasks.len());
    for task in tasks {
        results.push(task.await.expect("task"));
    }
    let after = store.group_commit_stats();
    (results, after.transactions - before.transactions, after.writes - before.writes)
}

/// A store whose thread waits for a held write lock as long as a slow machine may need.
fn patient_store(path: &Path) -> SqliteStore {
    SqliteStore::open(path).expect("open").with_busy_timeout(Duration::from_secs(120))
}

/// Writes queued behind one lock share transactions: the first group is taken when the first
/// call arrives, and everything that queued behind it is the next (up to 128 writes each).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_that_arrive_together_share_a_transaction() {
    let (_dir, path) = db_file();
    let store = patient_store(&path);
    let (upserted, transactions, writes) = behind_a_lock(&store, &path, || {
        (0..100u64)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let id = format!("task-{i:03}");
                    let mut entry = sample_journal_entry(&id, 1);
                    entry.key = Some(format!("key-{i:03}"));
                    store.journal_upsert(&entry).await
                })
            })
            .collect()
    })
    .await;
    upserted.into_iter().for_each(|r| r.expect("the write lands"));
    assert_eq!(writes, 100, "every call is one write");
    assert!(transactions <= 2, "100 queued writes in {transactions} transactions: no grouping");
    let (pushed, transactions, writes) = behind_a_lock(&store, &path, || {
        (0..100u64)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move { store.push(sample_record(&format!("task-{i:03}"), i)).await })
            })
            .collect()
    })
    .await;
    pushed.into_iter().for_each(|r| drop(r.expect("the write lands")));
    assert_eq!(writes, 100, "every call is one write");
    assert!(transactions <= 2, "100 queued writes in {transactions} transactions: no grouping");
    let now = at(100_000);
    assert_eq!(store.count(&Filter::all(), now).await.expect("count"), 100);
    assert!(store.journal_entries().await.expect("journal").is_empty(), "each push removed its entry");
    let settled = store.settled("key-").await.expect("settled");
    assert_eq!(settled.len(), 100);
    assert!(settled.iter().all(|s| s.outcome == Settlement::DeadLettered && s.key.replace("key", "task") == s.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_lease_in_a_group_fails_only_its_caller() {
    let (_dir, path) = db_file();
    let store = patient_store(&path);
    for i in 0..10 {
        store.push(sample_record(&format!("r{i}"), i)).await.expect("push");
    }
    let leased = store.receive(&Filter::all(), 10, LEASE, at(600)).await.expect("receive");
    assert_eq!(leased.len(), 10);
    let stale = LeaseToken { id: "r3".into(), nonce: "not-the-nonce".into() };
    let tokens: Vec<LeaseToken> = leased.iter().map(|l| l.token.clone()).chain([stale]).collect();
    let (completed, transactions, writes) = behind_a_lock(&store, &path, || {
        tokens
            .into_iter()
            .map(|token| {
                let store = store.clone();
                tokio::spawn(async move { (token.nonce.clone(), store.complete(&token, at(601)).await) })
            })
            .collect()
    })
    .await;
    for outcome in completed {
        match outcome {
            (nonce, Err(StoreError::LeaseLost { id })) if nonce == "not-the-nonce" => assert_eq!(id, "r3"),
            (nonce, result) if nonce != "not-the-nonce" => result.expect("a valid token completes"),
            other => panic!("the stale token must lose its lease: {other:?}"),
        }
    }
    assert_eq!(writes, 11);
    assert!(transactions <= 2, "the completes were not grouped");
    let stats = store.stats(at(602)).await.expect("stats");
    assert_eq!((stats.total, stats.completed), (0, 10), "the failed call did not undo the others");
}

/// Calls made together from one task (a client's driver polls its store calls side by side)
/// go to the store's thread, where they can share transactions, even with nothing holding the
/// lock: at most the last of them, finding the others answered, commits alone on the caller's
/// thread. (How many transactions the thread then makes depends on how fast the calls arrive;
/// `bench/` measures it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_polled_together_go_to_the_store_thread_without_a_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(dir.path().join("dlq.db")).expect("open");
    let before = store.group_commit_stats();
    let pushes = (0..100u64).map(|i| store.push(sample_record(&format!("r{i:03}"), i)));
    for pushed in futures::future::join_all(pushes).await {
        pushed.expect("push");
    }
    let after = store.group_commit_stats();
    assert_eq!(after.writes - before.writes, 100);
    let alone = after.on_callers_threads - before.on_callers_threads;
    assert!(alone <= 1, "{alone} of 100 calls polled together committed alone on the caller's thread");
    assert_eq!(store.count(&Filter::all(), at(1_000)).await.expect("count"), 100);
}

/// A write made alone runs on its caller's thread, but never waits there for another
/// process's lock: it goes to the store's thread, and the caller's runtime (here a single
/// thread) keeps running other tasks meanwhile.
#[tokio::test(flavor = "current_thread")]
async fn a_lone_write_behind_another_process_lock_does_not_block_the_runtime() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let (_dir, path) = db_file();
    let store = SqliteStore::open(&path).expect("open").with_busy_timeout(Duration::from_secs(60));
    store.push(sample_record("first", 0)).await.expect("a lone write with the file free");
    let before = store.group_commit_stats();
    let ticked = Arc::new(AtomicBool::new(false));
    let ticker = tokio::spawn({
        let ticked = Arc::clone(&ticked);
        async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            ticked.store(true, Ordering::Release);
        }
    });
    // Another process holds the write lock until this runtime has run the ticker (or, if the
    // push blocked the runtime's only thread, until it gives up waiting, failing the test).
    let lock = WriteLock::take(&path);
    let releaser = std::thread::spawn({
        let ticked = Arc::clone(&ticked);
        move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while !ticked.load(Ordering::Acquire) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            lock.release();
            ticked.load(Ordering::Acquire)
        }
    });
    store.push(sample_record("second", 1)).await.expect("the push lands once the lock is free");
    assert!(releaser.join().expect("releaser"), "the runtime was blocked while the push waited for the lock");
    ticker.await.expect("ticker");
    let after = store.group_commit_stats();
    assert_eq!((after.transactions - before.transactions, after.writes - before.writes), (1, 1));
    assert_eq!(store.count(&Filter::all(), at(1_000)).await.expect("count"), 2);
}

/// Writes made one by one commit on their callers' threads, which do not checkpoint the WAL
/// themselves (that syncs the file): the store's thread does, so the WAL stays short.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lone_writes_keep_the_wal_short() {
    let (dir, path) = db_file();
    let store = SqliteStore::open(&path).expect("open");
    for i in 0..3_000u64 {
        store.push(sample_record(&format!("r{i:04}"), i)).await.expect("push");
    }
    let stats = store.group_commit_stats();
    assert_eq!(stats.transactions, stats.writes, "one by one: a transaction each");
    let wal = std::fs::metadata(dir.path().join("dlq.db-wal")).expect("the WAL").len();
    // Each push appends at least one 4 KiB page (the record's, besides its indexes'): without
    // checkpoints every one of them would still be in the WAL.
    assert!(wal < 3_000 * 4096, "the WAL grew to {wal} B: no checkpoints");
    drop(store);
    let n: i64 = rusqlite::Connection::open(&path)
        .and_then(|c| c.query_row("SELECT COUNT(*) FROM records", [], |r| r.get(0)))
        .expect("count");
    assert_eq!(n, 3_000);
}

/// `complete_many` is one write: its completes share one transaction, a stale token fails alone,
/// and a database that stays locked fails every token with the (transient) cause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn complete_many_is_one_transaction_that_answers_each_token() {
    let (_dir, path) = db_file();
    let store = SqliteStore::open(&path).expect("open").with_busy_timeout(Duration::from_millis(200));
    for i in 0..10 {
        store.push(sample_record(&format!("r{i}"), i)).await.expect("push");
    }
    let leased = store.receive(&Filter::all(), 10, LEASE, at(600)).await.expect("receive");
    let held = leased.iter().find(|l| l.record.id == "r3").map(|l| l.token.clone()).expect("r3 leased");
    let tokens: Vec<LeaseToken> = leased
        .iter()
        .map(|l| {
            if l.record.id == "r3" {
                LeaseToken { nonce: "stale".into(), ..l.token.clone() }
            } else {
                l.token.clone()
            }
        })
        .collect();
    let before = store.group_commit_stats();
    let results = store.complete_many(&tokens, at(601)).await;
    let after = store.group_commit_stats();
    assert_eq!(
        (after.transactions - before.transactions, after.writes - before.writes),
        (1, 1),
        "one write, one transaction"
    );
    assert_eq!(results.len(), 10);
    for (token, result) in tokens.iter().zip(results) {
        match result {
            Err(StoreError::LeaseLost { id }) if token.nonce == "stale" => assert_eq!(id, "r3"),
            Ok(()) if token.nonce != "stale" => {}
            other => panic!("token {token:?}: unexpected {other:?}"),
        }
    }
    let stats = store.stats(at(602)).await.expect("stats");
    assert_eq!((stats.total, stats.leased, stats.completed), (1, 1, 9), "only the held leases were completed");

    let lock = WriteLock::take(&path);
    let forged = LeaseToken { id: "nope".into(), nonce: "n".into() };
    let results = store.complete_many(&[held.clone(), forged], at(603)).await;
    assert_eq!(results.len(), 2, "each token is answered");
    for result in results {
        match result {
            Err(e @ StoreError::Backend(_)) => {
                assert!(e.to_string().contains("locked"), "the error names the lock: {e}");
                assert!(e.is_transient());
            }
            other => panic!("a complete behind a held lock must fail, got {other:?}"),
        }
    }
    lock.release();
    let results = store.complete_many(&[held], at(604)).await;
    assert!(matches!(results.as_slice(), [Ok(())]), "the lock is gone: {results:?}");
    assert_eq!(store.count(&Filter::all(), at(605)).await.expect("count"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_database_fails_every_caller_of_the_group_transiently() {
    let (_dir, path) = db_file();
    let store = SqliteStore::open(&path).expect("open").with_busy_timeout(Duration::from_millis(200));
    let lock = WriteLock::take(&path);
    for pushed in support::push_at_once(&store, 20).await {
        match pushed {
            Err(e @ StoreError::Backend(_)) => {
                let message = e.to_string();
                assert!(message.contains("locked"), "the error must name the lock: {message}");
                assert!(message.contains(&path.display().to_string()), "and the file: {message}");
                assert!(e.is_transient(), "a lock is transient");
            }
            other => panic!("a push behind a held lock must fail, got {other:?}"),
        }
    }
    lock.release();
    assert_eq!(store.count(&Filter::all(), at(0)).await.expect("count"), 0, "nothing was half-written");
    store.push(sample_record("after", 0)).await.expect("the lock is gone: writes work again");
}

/// A store dropped while its thread still waits for another process's lock (its caller gave up
/// on the call) does not block the dropping task: the thread finishes the write once the lock
/// is free, then closes the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_store_that_waits_for_a_lock_does_not_block() {
    let (_dir, path) = db_file();
    let store = SqliteStore::open(&path).expect("open").with_busy_timeout(Duration::from_secs(60));
    let lock = WriteLock::take(&path);
    let gave_up = tokio::time::timeout(Duration::from_millis(200), store.push(sample_record("late", 0))).await;
    assert!(gave_up.is_err(), "the push cannot finish while the lock is held");
    drop(store); // must return although the push still waits for the lock
    lock.release();
    // Readiness wait, not a timing assertion: the write lands once the lock is free.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let n: i64 = rusqlite::Connection::open(&path)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM records", [], |r| r.get(0)))
            .expect("count");
        if n == 1 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the abandoned push never landed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The dashboard asks for `stats` every few seconds: its count of parked records reads their
/// partial index, and its count of live leases the age order as a covering index (state and
/// lease end are in it), never a row's JSON.
#[tokio::test]
async fn stats_count_parked_and_leased_records_from_indexes() {
    let (_dir, path) = db_file();
    fill(&path).await;
    let store = SqliteStore::open(&path).expect("reopen");
    let leased = store.receive(&Filter::all(), 1, LEASE, at(700)).await.expect("receive");
    assert_eq!(leased.len(), 1);
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    for (query, index) in [
        ("SELECT COUNT(*) FROM records INDEXED BY records_parked WHERE state = 'parked'", "records_parked"),
        (
            "SELECT COUNT(*) FROM records INDEXED BY records_age WHERE state = 'leased' AND lease_until > 0",
            "COVERING INDEX records_age",
        ),
    ] {
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {query}"))
            .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(3))?.collect())
            .expect("plan");
        assert!(plan.iter().any(|step| step.contains(index)), "{query}: {plan:?}");
    }
    let stats = store.stats(at(701)).await.expect("stats");
    assert_eq!((stats.parked, stats.leased, stats.ready), (1, 1, 2));
}
