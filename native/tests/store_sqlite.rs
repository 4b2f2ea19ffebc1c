//! SqliteStore: the shared conformance suite (in memory and on files), plus
//! what only a file store has: permissions, schema versions, foreign or
//! damaged files, persistence across reopen, and concurrent connections.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use captcha_dlq::store::{SqliteStore, SQLITE_SCHEMA_VERSION};
use captcha_dlq_core::dlq::testkit::{at, run_store_suite, sample_journal_entry, sample_record, CASES};
use captcha_dlq_core::dlq::{DlqStore, Filter, Page, RecordState, StoreError};

const LEASE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn conformance_suite_in_memory() {
    let ran = run_store_suite(|| async { SqliteStore::open_in_memory().expect("open in memory") }).await;
    assert_eq!(ran, CASES.len());
}

#[tokio::test]
async fn conformance_suite_on_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut n = 0;
    let ran = run_store_suite(|| {
        n += 1;
        let path = dir.path().join(format!("case-{n}.db"));
        async move { SqliteStore::open(&path).expect("open file store") }
    })
    .await;
    assert_eq!(ran, CASES.len());
}

#[cfg(unix)]
#[tokio::test]
async fn new_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dlq.db");
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
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dlq.db");
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
async fn everything_survives_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dlq.db");
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
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dlq.db");
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
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("dlq.db");
    let store = SqliteStore::open(&path).expect("open");
    let want: BTreeSet<String> = (0..120).map(|i| format!("r{i:03}")).collect();
    for (i, id) in want.iter().enumerate() {
        store.push(sample_record(id, i as u64)).await.expect("push");
    }
    let mut workers = Vec::new();
    for _ in 0..4 {
        let store = SqliteStore::open(&path).expect("open another connection");
        workers.push(tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                let batch = store.receive(&Filter::all(), 3, Duration::from_secs(3600), at(100_000)).await;
                let batch = batch.expect("receive");
                if batch.is_empty() {
                    return got;
                }
                got.extend(batch.into_iter().map(|l| l.record.id));
            }
        }));
    }
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.await.expect("worker"));
    }
    let distinct: BTreeSet<String> = all.iter().cloned().collect();
    assert_eq!(all.len(), distinct.len(), "a record was leased twice");
    assert_eq!(distinct, want);
}
