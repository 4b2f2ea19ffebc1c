//! The SQLite dead-letter store: one file holding the records, their leases,
//! the in-flight journal, the settled task keys and the lifetime counters.
//!
//! Several processes may share a file: it runs in WAL mode with a busy
//! timeout, and every write (including `receive`, which selects and leases in
//! one step) is a `BEGIN IMMEDIATE` transaction, so two processes never lease
//! the same record and "record written, journal entry removed, key settled" is
//! atomic. rusqlite is blocking, so each store owns one thread holding its
//! connection; writes that arrive together share one transaction (group
//! commit, `writer.rs`), a write made alone commits on its caller's thread
//! when the connection is idle (no hop; it never waits there for a lock or a
//! sync), and JSON is encoded and decoded on the caller's task.
//! `complete_many` is one write: the completes of a receive batch share one
//! transaction and one hop to the thread.
//!
//! Files: `schema.rs` (opening, version checks, migrations), `writer.rs` (the
//! connection thread and group commit), `ops.rs` (the SQL of each call), `audit.rs` (the
//! audit trail),
//! `errors.rs` (SQLite errors naming their cause).

mod audit;
mod edit;
mod errors;
mod fleet;
mod ops;
mod schema;
mod writer;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use captcha_dlq_client::options::Durability;
use captcha_dlq_core::dlq::audit::AuditEntry;
use captcha_dlq_core::dlq::rules;
use captcha_dlq_core::dlq::{
    Claimed, DeadLetterRecord, DlqStore, EditWrite, Edited, Filter, LeaseToken, Leased, Page, PushOutcome, ReadyAsk,
    RecordState, SettledKey, StoreError, StoreStats,
};
use captcha_dlq_core::dlq::{LimitedStore, StoreLimits};
use captcha_dlq_core::{JournalEntry, Timestamp};
use rusqlite::Connection;

use self::errors::db_error;
pub use self::schema::SCHEMA_VERSION;
pub use self::writer::GroupCommitStats;
use self::writer::Writer;

/// How long a write waits for another connection's write lock before failing (transiently).
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A [`DlqStore`] in one SQLite file (or in memory). Clones share the connection.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    writer: Arc<Writer>,
    location: Arc<str>,
    limits: StoreLimits,
}

/// `value` as JSON, into a buffer sized for a typical record or journal entry (about 1 KB) so
/// that encoding does not grow it step by step.
fn encode<T: serde::Serialize>(value: &T, what: impl Fn() -> String) -> Result<String, StoreError> {
    let mut buf = Vec::with_capacity(2048);
    serde_json::to_writer(&mut buf, value).map_err(|e| StoreError::Decode(format!("{}: {e}", what())))?;
    String::from_utf8(buf).map_err(|e| StoreError::Decode(format!("{}: {e}", what())))
}

impl SqliteStore {
    /// Open (creating with mode 0600 if missing) the store at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let location: Arc<str> = path.display().to_string().into();
        schema::create_private(path, &location)?;
        let conn = Connection::open(path).map_err(db_error(&location))?;
        Self::start(conn, location, true)
    }

    /// A private store that lives as long as this value (tests, short scripts).
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let location: Arc<str> = ":memory:".into();
        let conn = Connection::open_in_memory().map_err(db_error(&location))?;
        Self::start(conn, location, false)
    }

    fn start(mut conn: Connection, location: Arc<str>, wal: bool) -> Result<Self, StoreError> {
        schema::prepare(&mut conn, &location, wal, DEFAULT_BUSY_TIMEOUT)?;
        let writer = Writer::start(conn, Arc::clone(&location), DEFAULT_BUSY_TIMEOUT)?;
        Ok(SqliteStore { writer: Arc::new(writer), location, limits: StoreLimits::default() })
    }

    /// How long a write waits for another process's write lock before failing with a
    /// (transient) `Backend` error naming the lock; default [`DEFAULT_BUSY_TIMEOUT`]. Applies
    /// to the connection every clone of this store shares.
    pub fn with_busy_timeout(self, timeout: Duration) -> Self {
        self.writer.set_busy_timeout(timeout);
        self
    }

    /// What a committed write survives: [`Durability::Process`] (the default,
    /// `synchronous = NORMAL`) or [`Durability::PowerLoss`] (`synchronous = FULL`: every
    /// commit syncs the write-ahead log before its caller hears of it). With `PowerLoss` no
    /// write commits on its caller's async thread (each goes to the connection thread, which
    /// waits for the disk), and writes that arrive together share one sync. Applies to the
    /// connection every clone of this store shares; waits while a transaction runs on it.
    pub fn with_durability(self, durability: Durability) -> Result<Self, StoreError> {
        self.writer.set_durability(durability)?;
        Ok(self)
    }

    /// `journal_upsert`, or with `must_exist` `journal_update`.
    async fn journal_write(&self, entry: &JournalEntry, must_exist: bool) -> Result<(), StoreError> {
        let json = encode(entry, || format!("journal entry {}", entry.id))?;
        let (id, key, owner) = (entry.id.clone(), entry.key.clone(), entry.owner.clone());
        self.writer
            .write(Box::new(move |conn, loc| {
                ops::journal_write(conn, loc, &id, key.as_deref(), owner.as_deref(), &json, must_exist)
            }))
            .await
    }

    /// Where the store lives, for messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Write transactions run so far and the write calls they held (their ratio is the
    /// group size group commit achieved).
    pub fn group_commit_stats(&self) -> GroupCommitStats {
        self.writer.stats()
    }
}

#[async_trait]
impl DlqStore for SqliteStore {
    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        let row = ops::RecordColumns::of(&record)?;
        let capacity = self.limits.capacity();
        self.writer.write(Box::new(move |conn, loc| ops::push(conn, loc, &row, capacity))).await
    }

    async fn receive_ready(&self, ask: ReadyAsk) -> Result<Vec<Leased>, StoreError> {
        let ReadyAsk { filter, max, lease_until, now } = ask;
        let max = max.get();
        let max_deliveries = self.limits.max_deliveries();
        let leases = self
            .writer
            .write(Box::new(move |conn, loc| ops::receive(conn, loc, &filter, max, lease_until, now, max_deliveries)))
            .await?;
        leases
            .into_iter()
            .map(|ops::RawLease { row, nonce }| {
                let record = row.into_record(RecordState::Leased)?;
                Ok(Leased { token: LeaseToken { id: record.id.clone(), nonce }, record, lease_until })
            })
            .collect()
    }

    async fn complete(&self, token: &LeaseToken, _now: Timestamp) -> Result<(), StoreError> {
        let token = token.clone();
        self.writer.write(Box::new(move |conn, loc| ops::complete(conn, loc, &token))).await
    }

    /// One write call, so the whole batch shares one transaction (and one hop to the thread).
    async fn complete_many(&self, tokens: &[LeaseToken], _now: Timestamp) -> Vec<Result<(), StoreError>> {
        if tokens.is_empty() {
            return Vec::new();
        }
        let owned = tokens.to_vec();
        match self.writer.write(Box::new(move |conn, loc| ops::complete_many(conn, loc, &owned))).await {
            Ok(results) => results,
            Err(e) => tokens.iter().map(|_| Err(e.clone())).collect(),
        }
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        _now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        let update = match update.map(|u| rules::returned_record(&token.id, u)) {
            Some(r) => Some(ops::Update { row: ops::RecordColumns::of(&r.record)?, park: r.asked_park }),
            None => None,
        };
        let token = token.clone();
        let max_deliveries = self.limits.max_deliveries();
        self.writer
            .write(Box::new(move |conn, loc| ops::abandon(conn, loc, &token, update.as_ref(), max_deliveries)))
            .await
    }

    async fn park(&self, id: &str, reason: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let (id, reason) = (id.to_string(), reason.to_string());
        self.writer.write(Box::new(move |conn, loc| ops::park(conn, loc, &id, &reason))).await
    }

    async fn unpark(&self, id: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.writer.write(Box::new(move |conn, loc| ops::unpark(conn, loc, &id))).await
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        let filter = filter.clone();
        let rows = self
            .writer
            .read(Box::new(move |conn, loc| ops::peek(conn, loc, &filter, page.offset, page.limit, now)))
            .await?;
        rows.into_iter().map(|(row, state)| row.into_record(state)).collect()
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let filter = filter.clone();
        self.writer.read(Box::new(move |conn, loc| ops::count_matching(conn, loc, &filter, now))).await
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let filter = filter.clone();
        self.writer.write(Box::new(move |conn, loc| ops::purge(conn, loc, &filter, now))).await
    }

    async fn purge_unchanged(&self, records: &[DeadLetterRecord], now: Timestamp) -> Result<u64, StoreError> {
        let records = records.to_vec();
        self.writer.write(Box::new(move |conn, loc| ops::purge_unchanged(conn, loc, &records, now))).await
    }

    async fn replace_edited(&self, edit: &Edited, now: Timestamp) -> Result<EditWrite, StoreError> {
        let edit = edit.clone();
        self.writer.write(Box::new(move |conn, loc| edit::replace_edited(conn, loc, &edit, now))).await
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        let ((total, parked, leased, oldest), (dropped, completed, abandoned), in_flight) =
            self.writer.read(Box::new(move |conn, loc| ops::stats(conn, loc, now))).await?;
        Ok(StoreStats {
            total,
            ready: total.saturating_sub(parked).saturating_sub(leased),
            leased,
            parked,
            dropped,
            completed,
            abandoned,
            oldest_dead_lettered_at: oldest,
            in_flight,
        })
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.journal_write(entry, false).await
    }

    async fn journal_update(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.journal_write(entry, true).await
    }

    async fn journal_forget(&self, id: &str, now: Timestamp) -> Result<(), StoreError> {
        let id = id.to_string();
        self.writer.write(Box::new(move |conn, loc| ops::journal_forget(conn, loc, &id, now))).await
    }

    /// One `UPDATE … RETURNING` in a write transaction: SQLite runs one writer at a time over
    /// the file, so of two processes' claims the second sees the first's owner.
    async fn journal_claim(&self, id: &str, from: Option<&str>, to: Option<&str>) -> Claimed {
        let (owned_id, expected, new) = (id.to_string(), from.map(str::to_string), to.map(str::to_string));
        let claimed = self
            .writer
            .write(Box::new(move |conn, loc| {
                ops::journal_claim(conn, loc, &owned_id, expected.as_deref(), new.as_deref())
            }))
            .await?;
        claimed
            .map(|json| serde_json::from_str(&json).map_err(|e| StoreError::Decode(format!("journal entry {id}: {e}"))))
            .transpose()
    }

    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        let rows = self.writer.read(Box::new(|conn, loc| ops::journal_entries(conn, loc))).await?;
        rows.into_iter()
            .map(|(id, json)| {
                serde_json::from_str(&json).map_err(|e| StoreError::Decode(format!("journal entry {id}: {e}")))
            })
            .collect()
    }

    async fn settled(&self, prefix: &str) -> Result<Vec<SettledKey>, StoreError> {
        let prefix = prefix.to_string();
        self.writer.read(Box::new(move |conn, loc| ops::settled(conn, loc, &prefix))).await
    }

    async fn clear_settled(&self, prefix: &str) -> Result<u64, StoreError> {
        let prefix = prefix.to_string();
        self.writer.write(Box::new(move |conn, loc| ops::clear_settled(conn, loc, &prefix))).await
    }

    async fn audit_append(&self, entry: &AuditEntry) -> Result<u64, StoreError> {
        let json = encode(entry, || "an audit entry".to_string())?;
        self.writer.write(Box::new(move |conn, loc| audit::append(conn, loc, &json))).await
    }

    async fn audit_list(&self, limit: usize, before: Option<u64>) -> Result<Vec<AuditEntry>, StoreError> {
        self.writer.read(Box::new(move |conn, loc| audit::list(conn, loc, limit, before))).await
    }

    /// Several processes on this host may share the file: they share their accounts' limits.
    fn fleet_ledger(&self) -> Option<Arc<dyn captcha_dlq_core::fleet::FleetLedger>> {
        Some(self.as_fleet_ledger())
    }
}

impl LimitedStore for SqliteStore {
    fn limits_mut(&mut self) -> &mut StoreLimits {
        &mut self.limits
    }
}

#[cfg(test)]
mod tests {
    use captcha_dlq_core::dlq::testkit::{at, sample_record};

    use super::*;

    /// Power-loss durability sets `synchronous = FULL` and keeps every write off the callers'
    /// threads (a lone write would otherwise commit there, and its sync would hold an async
    /// worker); the default is `NORMAL` with lone writes on the caller's thread.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn power_loss_durability_syncs_each_commit_on_the_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let normal = SqliteStore::open(dir.path().join("normal.db")).expect("open");
        let full = SqliteStore::open(dir.path().join("full.db"))
            .and_then(|s| s.with_durability(Durability::PowerLoss))
            .expect("open synced");
        assert_eq!(normal.writer.synchronous(), 1, "the default is synchronous = NORMAL");
        assert_eq!(full.writer.synchronous(), 2, "power-loss durability is synchronous = FULL");
        for i in 0..5 {
            normal.push(sample_record(&format!("r{i}"), i)).await.expect("push");
            full.push(sample_record(&format!("r{i}"), i)).await.expect("push");
        }
        assert_eq!(
            normal.group_commit_stats().on_callers_threads,
            5,
            "one-by-one writes commit on the caller's thread"
        );
        assert_eq!(full.group_commit_stats().on_callers_threads, 0, "no write commits on a caller's thread");
        assert_eq!(full.group_commit_stats().writes, 5);
        assert_eq!(full.count(&Filter::all(), at(0)).await.expect("count"), 5);
        let back = full.with_durability(Durability::Process).expect("back to NORMAL");
        assert_eq!(back.writer.synchronous(), 1);
        back.push(sample_record("r5", 5)).await.expect("push");
        assert_eq!(back.group_commit_stats().on_callers_threads, 1, "lone writes return to the caller's thread");
    }

    /// A connection that may not write (as a read-only file or mount would make it): every
    /// write of a group fails with its own clear, transient error, and none is committed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_only_database_fails_each_write_and_commits_none() {
        let store = SqliteStore::open_in_memory().expect("open");
        let query_only = |on: bool| -> writer::ReadWork<()> {
            Box::new(move |conn, loc| conn.pragma_update(None, "query_only", on).map_err(db_error(loc)))
        };
        store.writer.read(query_only(true)).await.expect("query_only on");
        let mut pushes = Vec::new();
        for i in 0..20 {
            let store = store.clone();
            pushes.push(tokio::spawn(async move { store.push(sample_record(&format!("r{i}"), i)).await }));
        }
        for push in pushes {
            match push.await.expect("task") {
                Err(e @ StoreError::Backend(_)) => {
                    assert!(e.to_string().contains("read-only"), "the error must name the cause: {e}");
                    assert!(e.is_transient());
                }
                other => panic!("a write to a read-only database must fail, got {other:?}"),
            }
        }
        store.writer.read(query_only(false)).await.expect("query_only off");
        assert_eq!(store.count(&Filter::all(), at(0)).await.expect("count"), 0, "nothing was committed");
    }

    /// A write the database refuses after it changed rows fails alone: its changes are undone,
    /// and the writes that shared its transaction commit.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_the_database_refuses_fails_alone_and_undoes_itself() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("dlq.db");
        let store = SqliteStore::open(&path).expect("open").with_busy_timeout(Duration::from_secs(120));
        // Hold the write lock so that the calls below queue up into one group.
        let lock = Connection::open(&path).expect("second connection");
        lock.execute_batch("BEGIN IMMEDIATE").expect("lock");
        let mut pushes = Vec::new();
        for i in 0..10 {
            let store = store.clone();
            pushes.push(tokio::spawn(async move { store.push(sample_record(&format!("r{i}"), i)).await }));
        }
        let poison = {
            let store = store.clone();
            tokio::spawn(async move {
                let work: writer::WriteWork<()> = Box::new(|conn, loc| {
                    conn.execute("INSERT INTO journal (id, key, json) VALUES ('poison', NULL, '{}')", [])
                        .map_err(db_error(loc))?;
                    conn.execute("INSERT INTO no_such_table VALUES (1)", []).map_err(db_error(loc))?;
                    Ok(())
                });
                store.writer.write(work).await
            })
        };
        // A readiness wait with a generous bound, not a timing assertion: all 11 calls queued.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while store.group_commit_stats().queued < 11 {
            assert!(std::time::Instant::now() < deadline, "the calls never reached the store's thread");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        lock.execute_batch("ROLLBACK").expect("unlock");
        for push in pushes {
            push.await.expect("task").expect("the other writes commit");
        }
        match poison.await.expect("task") {
            Err(StoreError::Backend(message)) => assert!(message.contains("no_such_table"), "{message}"),
            other => panic!("the refused write must fail with its cause, got {other:?}"),
        }
        assert!(store.journal_entries().await.expect("journal").is_empty(), "the refused write was undone");
        assert_eq!(store.count(&Filter::all(), at(0)).await.expect("count"), 10);
        let stats = store.group_commit_stats();
        assert!(stats.transactions < stats.writes, "the writes were not grouped: {stats:?}");
    }
}
