//! Retention without silent loss over memory, SQLite and a real `redis-server`: the age and
//! count limits take the oldest ready or parked records and never a leased one; the archive
//! holds exactly what was evicted, written before the purge; an archive that cannot be
//! written removes nothing; a dry run removes nothing; a client applies its `dlq_retention`
//! by itself and counts the evictions in its metrics.

use std::sync::Arc;
use std::time::Duration;

use captcha_dlq::core::dlq::retention::{EvictionReason, RetentionOptions};
use captcha_dlq::core::dlq::testkit::{at, sample_record};
use captcha_dlq::core::dlq::{export_jsonl, DlqStore, Filter, MemoryStore, Page, RecordState};
use captcha_dlq::retention::apply;
use captcha_dlq::store::{RedisStore, SqliteStore};
use captcha_dlq_mock::redis_server::RedisServer;
use serde_json::json;

const YEARS: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// Ten records dead-lettered a minute apart (r0 the oldest); r0 is leased, r1 parked.
async fn fill(store: &Arc<dyn DlqStore>) {
    for i in 0..10u64 {
        store.push(sample_record(&format!("r{i}"), i + 1)).await.unwrap();
    }
    let leased = store
        // A lease of years: live at the test's `now` and by Redis' own clock, which retention
        // judges leases by there (issue 44, finding 8).
        .receive(&Filter { ids: vec!["r0".into()], ..Filter::default() }, 1, YEARS, at(700))
        .await;
    assert_eq!(leased.unwrap().len(), 1);
    assert!(store.park("r1", "kept for review", at(700)).await.unwrap());
}

async fn ids(store: &Arc<dyn DlqStore>) -> Vec<String> {
    let records = store.peek(&Filter::all(), Page { offset: 0, limit: 100 }, at(700)).await.unwrap();
    records.into_iter().map(|r| r.id).collect()
}

/// The records `wanted` as they are in the store now, in the store's order.
async fn records(store: &Arc<dyn DlqStore>, wanted: &[&str]) -> Vec<captcha_dlq::core::dlq::DeadLetterRecord> {
    let filter = Filter { ids: wanted.iter().map(|s| s.to_string()).collect(), ..Filter::default() };
    store.peek(&filter, Page { offset: 0, limit: 100 }, at(700)).await.unwrap()
}

async fn limits_archive_and_leases(store: Arc<dyn DlqStore>) {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("evicted.jsonl");
    fill(&store).await;
    let now = at(700);

    // A dry run counts and removes nothing.
    let age = RetentionOptions {
        max_age_ms: Some(350_000),
        archive: Some(archive.display().to_string()),
        ..RetentionOptions::default()
    };
    let dry = apply(&store, &age, now, true, None).await.unwrap();
    assert_eq!(
        (dry.total(), ids(&store).await.len()),
        (4, 10),
        "r1 parked, r2, r3, r4 are older than 350 s; r0 is leased"
    );
    assert!(!archive.exists());

    // The age limit: records dead-lettered before 700 - 350 = 350 s (minutes 1 to 5 are 60..300 s).
    let expected = records(&store, &["r1", "r2", "r3", "r4"]).await;
    let report = apply(&store, &age, now, false, None).await.unwrap();
    assert_eq!(report.evictions.len(), 1);
    assert_eq!((report.evictions[0].reason, report.evictions[0].count), (EvictionReason::MaxAge, 4));
    assert_eq!(ids(&store).await, ["r0", "r5", "r6", "r7", "r8", "r9"], "the leased record stays");
    assert_eq!(
        std::fs::read_to_string(&archive).unwrap(),
        export_jsonl(&expected),
        "the archive holds what was evicted"
    );

    // The count limit: 6 records, at most 3; the leased r0 counts but stays, so r5, r6, r7 go.
    let count = RetentionOptions {
        max_count: Some(3),
        archive: Some(archive.display().to_string()),
        ..RetentionOptions::default()
    };
    let expected_more = records(&store, &["r5", "r6", "r7"]).await;
    let report = apply(&store, &count, now, false, None).await.unwrap();
    assert_eq!((report.evictions[0].reason, report.total()), (EvictionReason::MaxCount, 3));
    assert_eq!(ids(&store).await, ["r0", "r8", "r9"]);
    let mut all = expected;
    all.extend(expected_more);
    assert_eq!(std::fs::read_to_string(&archive).unwrap(), export_jsonl(&all), "appended, not rewritten");

    // An archive that cannot be written removes nothing.
    let unwritable = RetentionOptions {
        max_count: Some(1),
        archive: Some(dir.path().join("missing-dir").join("a.jsonl").display().to_string()),
        ..RetentionOptions::default()
    };
    let e = apply(&store, &unwritable, now, false, None).await.unwrap_err().to_string();
    assert!(e.contains("nothing was removed"), "{e}");
    assert_eq!(ids(&store).await, ["r0", "r8", "r9"]);
    let state =
        store.peek(&Filter { ids: vec!["r0".into()], ..Filter::default() }, Page::default(), now).await.unwrap();
    assert_eq!(state[0].state, RecordState::Leased);
}

#[tokio::test]
async fn memory() {
    limits_archive_and_leases(Arc::new(MemoryStore::default())).await;
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    limits_archive_and_leases(Arc::new(SqliteStore::open(dir.path().join("dlq.sqlite")).unwrap())).await;
}

#[tokio::test]
async fn redis() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = RedisStore::connect(&server.url(), "retention").await.unwrap();
    limits_archive_and_leases(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_applies_its_retention_and_counts_the_evictions() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("evicted.jsonl");
    let store: Arc<dyn DlqStore> = Arc::new(MemoryStore::default());
    for i in 0..5u64 {
        store.push(sample_record(&format!("r{i}"), i + 1)).await.unwrap();
    }
    let client = captcha_dlq::builder()
        .api_key("K")
        .base_url("http://127.0.0.1:9")
        .dlq_store(store.clone())
        .option("dlq_retention", json!({"max_count": 2, "archive": archive.display().to_string(), "interval_ms": 50}))
        .build()
        .await
        .unwrap();
    for _ in 0..600 {
        if client.ops_metrics().evicted_max_count == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(client.ops_metrics().evicted_max_count, 3);
    assert_eq!(ids(&store).await, ["r3", "r4"]);
    assert_eq!(std::fs::read_to_string(&archive).unwrap().lines().count(), 3);
    let text = client.prometheus_text().await;
    assert!(text.contains("captcha_dlq_dlq_evicted_total{reason=\"max_count\"} 3\n"), "{text}");
    assert_eq!(client.dlq().retain(true).await.unwrap().total(), 0, "nothing more to evict");
    client.close().await;
}

/// Issue 44, finding 2: record files were world-readable. The archive holds whole records (page
/// URLs, labels, proxy credentials): it is created owner-only whatever the umask, and an archive
/// that was readable by others is narrowed when appended to.
#[cfg(unix)]
#[tokio::test]
async fn record_files_world_readable_the_archive_is_created_0600() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn DlqStore> = Arc::new(MemoryStore::default());
    fill(&store).await;
    let created = dir.path().join("created.jsonl");
    let options = |path: &std::path::Path| RetentionOptions {
        max_count: Some(8),
        archive: Some(path.display().to_string()),
        ..RetentionOptions::default()
    };
    apply(&store, &options(&created), at(700), false, None).await.unwrap();
    assert!(!std::fs::read_to_string(&created).unwrap().is_empty());
    assert_eq!(mode(&created), 0o600, "a new archive is owner-only");
    let existing = dir.path().join("existing.jsonl");
    std::fs::write(&existing, "").unwrap();
    std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o644)).unwrap();
    let one_more = RetentionOptions { max_count: Some(1), ..options(&existing) };
    apply(&store, &one_more, at(700), false, None).await.unwrap();
    assert!(!std::fs::read_to_string(&existing).unwrap().is_empty());
    assert_eq!(mode(&existing), 0o600, "an archive readable by others is narrowed");
}

/// Stores again, in the store it wraps, the record it holds, changed, just before retention's
/// first delete runs: the moment between the archive's write and the purge.
struct ChangeBeforeTheDelete {
    inner: Arc<dyn DlqStore>,
    changed: captcha_dlq::core::dlq::DeadLetterRecord,
    done: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl captcha_dlq::core::dlq::interpose::Interpose for ChangeBeforeTheDelete {
    async fn before(
        &self,
        call: captcha_dlq::core::dlq::interpose::Call,
    ) -> Result<(), captcha_dlq::core::dlq::StoreError> {
        let delete = call == captcha_dlq::core::dlq::interpose::Call::PurgeUnchanged;
        if delete && !self.done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.inner.push(self.changed.clone()).await?;
        }
        Ok(())
    }
}

/// Issue 44, finding 8: retention purged by id after reading, so a record stored again (or
/// edited) between the archive's write and the purge was deleted, and the archive kept only its
/// older copy. Now the changed record survives that pass, and the next pass archives its newer
/// content before it goes: the archive holds every version that left.
async fn a_record_changed_after_its_archive_stays(inner: Arc<dyn DlqStore>) {
    inner.push(sample_record("old", 1)).await.unwrap();
    inner.push(sample_record("moving", 2)).await.unwrap();
    let mut changed = sample_record("moving", 2);
    changed.attempts += 3;
    changed.labels.insert("replayed".into(), "again".into());
    let hooks = ChangeBeforeTheDelete { inner: inner.clone(), changed: changed.clone(), done: Default::default() };
    let store: Arc<dyn DlqStore> =
        Arc::new(captcha_dlq::core::dlq::interpose::Interposed { store: inner.clone(), hooks });
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("evicted.jsonl");
    let options = RetentionOptions {
        max_count: Some(0),
        archive: Some(archive.display().to_string()),
        ..RetentionOptions::default()
    };
    let report = apply(&store, &options, at(700), false, None).await.unwrap();
    assert_eq!(report.total(), 2);
    assert!(records(&inner, &["old", "moving"]).await.is_empty());
    let archived: Vec<serde_json::Value> =
        std::fs::read_to_string(&archive).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let moving: Vec<u64> =
        archived.iter().filter(|r| r["id"] == "moving").map(|r| r["attempts"].as_u64().unwrap()).collect();
    assert_eq!(
        moving,
        [u64::from(changed.attempts) - 3, u64::from(changed.attempts)],
        "both versions of the changed record are archived"
    );
    assert_eq!(archived.last().unwrap()["labels"]["replayed"], "again", "the newer content was kept, then archived");
}

#[tokio::test]
async fn finding_8_retention_deletes_only_the_version_it_archived_memory() {
    a_record_changed_after_its_archive_stays(Arc::new(MemoryStore::new())).await;
}

#[tokio::test]
async fn finding_8_retention_deletes_only_the_version_it_archived_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("d.sqlite")).unwrap();
    a_record_changed_after_its_archive_stays(Arc::new(store)).await;
}

#[tokio::test]
async fn finding_8_retention_deletes_only_the_version_it_archived_redis() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = RedisStore::connect(&server.url(), "finding-8").await.unwrap();
    a_record_changed_after_its_archive_stays(Arc::new(store)).await;
}

/// Issue 44, finding 8: the lease check used the evicting host's clock. On Redis, shared by
/// hosts, a host whose clock runs a day ahead saw a live lease as ended; retention's delete now
/// judges it by the server's clock.
#[tokio::test]
async fn finding_8_redis_judges_leases_by_its_own_clock() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store: Arc<dyn DlqStore> = Arc::new(RedisStore::connect(&server.url(), "finding-8-clock").await.unwrap());
    let now = captcha_dlq::runtime::now();
    store.push(sample_record("held", 1)).await.unwrap();
    let read = records(&store, &["held"]).await;
    let only = Filter { ids: vec!["held".into()], ..Filter::default() };
    assert_eq!(store.receive(&only, 1, Duration::from_secs(600), now).await.unwrap().len(), 1);
    let a_day_ahead = now.add(Duration::from_secs(24 * 3600));
    assert_eq!(store.purge_unchanged(&read, a_day_ahead).await.unwrap(), 0, "live by the server's clock");
    assert_eq!(records(&store, &["held"]).await.len(), 1);
}
