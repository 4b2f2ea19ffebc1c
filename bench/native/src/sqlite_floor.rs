//! The floor the SQLite store is measured against: raw SQLite through rusqlite
//! doing the same work as the store's push, receive, complete and journal
//! write, with nothing else.
//!
//! What makes it a floor (every choice is in the floor's favour):
//! - the same rows (the same columns and the same JSON bytes per record) and
//!   the same pragmas (WAL, `synchronous = NORMAL`, or `FULL` beside a store synced at each
//!   commit, a busy timeout), but only
//!   the indexes the operations need: the primary keys and the oldest-first
//!   order `(dead_lettered_at, id)`;
//! - the fewest statements that keep the contract: push tells whether it
//!   replaces a record, upserts it, removes its journal entry and settles that
//!   entry's key; receive selects
//!   the oldest ready records that have no journal entry and leases them;
//!   complete deletes the leased record by id and nonce and counts it; journal
//!   writes upsert (id, key, JSON); forget removes the entry, settles its key
//!   and removes a replayed record of the same id;
//! - statements prepared once; records encoded to JSON before the clock
//!   starts, and received bodies are not decoded; it runs on the calling
//!   thread (no hop to another thread, no async runtime).
//!
//! "One by one" is one `BEGIN IMMEDIATE … COMMIT` per operation, as the
//! store's one-by-one path; "grouped" puts `n` operations in one transaction,
//! the best group commit can do for that group size.

use std::path::Path;
use std::time::Duration;

use captcha_dlq_core::dlq::DeadLetterRecord;
use captcha_dlq_core::JournalEntry;
use rusqlite::{params, Connection, OptionalExtension};

use crate::FloorLease;

const SCHEMA: &str = "
CREATE TABLE records (
    id TEXT PRIMARY KEY NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL, class TEXT NOT NULL,
    sitekey TEXT, page_host TEXT, dead_lettered_at INTEGER NOT NULL, lease_until INTEGER,
    lease_nonce TEXT, deliveries INTEGER NOT NULL DEFAULT 0, parked_reason TEXT, json TEXT NOT NULL
);
CREATE INDEX records_age ON records(dead_lettered_at, id);
CREATE TABLE journal (id TEXT PRIMARY KEY NOT NULL, key TEXT, json TEXT NOT NULL);
CREATE TABLE settled (key TEXT PRIMARY KEY NOT NULL, id TEXT NOT NULL, outcome TEXT NOT NULL, at INTEGER NOT NULL);
CREATE TABLE counters (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
INSERT INTO counters (name, value) VALUES ('dropped', 0), ('completed', 0), ('abandoned', 0);
";

/// A record's column values, encoded before the clock starts.
#[derive(Debug, Clone)]
pub struct EncodedRecord {
    id: String,
    reason: String,
    class: String,
    sitekey: Option<String>,
    page_host: Option<String>,
    dead_lettered_at: i64,
    json: String,
}

impl EncodedRecord {
    pub fn new(record: &DeadLetterRecord) -> Result<Self, String> {
        Ok(EncodedRecord {
            id: record.id.clone(),
            reason: record.reason.clone(),
            class: record.class.as_str().to_string(),
            sitekey: record.task.sitekey().map(str::to_string),
            page_host: record.page_host(),
            dead_lettered_at: i64::try_from(record.dead_lettered_at.as_unix_millis()).unwrap_or(i64::MAX),
            json: serde_json::to_string(record).map_err(|e| e.to_string())?,
        })
    }
}

/// A journal entry's column values, encoded before the clock starts.
#[derive(Debug, Clone)]
pub struct EncodedEntry {
    id: String,
    key: Option<String>,
    json: String,
}

impl EncodedEntry {
    pub fn new(entry: &JournalEntry) -> Result<Self, String> {
        let json = serde_json::to_string(entry).map_err(|e| e.to_string())?;
        Ok(EncodedEntry { id: entry.id.clone(), key: entry.key.clone(), json })
    }
}

#[derive(Debug)]
pub struct SqliteFloor {
    conn: Connection,
    nonces: u64,
}

fn err(e: rusqlite::Error) -> String {
    format!("sqlite floor: {e}")
}

/// Deletes the journal entry `id` and returns its task key (`None`: no entry, or one without a key), as the
/// store does it: a look-up, then a delete by primary key (`DELETE … RETURNING` opens an ephemeral B-tree
/// per call).
fn forget_journal_entry(conn: &Connection, id: &str) -> Result<Option<String>, String> {
    let key: Option<Option<String>> = conn
        .prepare_cached("SELECT key FROM journal WHERE id = ?1")
        .and_then(|mut s| s.query_row([id], |row| row.get(0)).optional())
        .map_err(err)?;
    let Some(key) = key else { return Ok(None) };
    conn.prepare_cached("DELETE FROM journal WHERE id = ?1").and_then(|mut s| s.execute([id])).map_err(err)?;
    Ok(key)
}

impl SqliteFloor {
    /// A fresh database at `path` with the store's pragmas; `sync_each_commit`: `synchronous =
    /// FULL` (the store's power-loss durability) instead of `NORMAL`.
    pub fn create(path: &Path, sync_each_commit: bool) -> Result<Self, String> {
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(err)?;
        let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0)).map_err(err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(format!("sqlite floor: journal_mode is {mode}, not WAL"));
        }
        conn.pragma_update(None, "synchronous", if sync_each_commit { "FULL" } else { "NORMAL" }).map_err(err)?;
        conn.execute_batch(SCHEMA).map_err(err)?;
        Ok(SqliteFloor { conn, nonces: 0 })
    }

    fn begin(&self) -> Result<(), String> {
        self.conn.prepare_cached("BEGIN IMMEDIATE").and_then(|mut s| s.execute([])).map_err(err)?;
        Ok(())
    }

    fn commit(&self) -> Result<(), String> {
        self.conn.prepare_cached("COMMIT").and_then(|mut s| s.execute([])).map_err(err)?;
        Ok(())
    }

    fn push_body(&self, r: &EncodedRecord) -> Result<(), String> {
        // `PushOutcome::replaced` is part of the contract.
        let mut exists = self.conn.prepare_cached("SELECT 1 FROM records WHERE id = ?1").map_err(err)?;
        let _replaced = exists.exists([&r.id]).map_err(err)?;
        let mut upsert = self
            .conn
            .prepare_cached(
                "INSERT INTO records (id, state, reason, class, sitekey, page_host, dead_lettered_at, deliveries, json) \
                 VALUES (?1, 'ready', ?2, ?3, ?4, ?5, ?6, 0, ?7) ON CONFLICT(id) DO UPDATE SET \
                 reason = excluded.reason, class = excluded.class, sitekey = excluded.sitekey, \
                 page_host = excluded.page_host, dead_lettered_at = excluded.dead_lettered_at, json = excluded.json",
            )
            .map_err(err)?;
        upsert
            .execute(params![r.id, r.reason, r.class, r.sitekey, r.page_host, r.dead_lettered_at, r.json])
            .map_err(err)?;
        if let Some(key) = forget_journal_entry(&self.conn, &r.id)? {
            let mut settle = self
                .conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO settled (key, id, outcome, at) VALUES (?1, ?2, 'dead_lettered', ?3)",
                )
                .map_err(err)?;
            settle.execute(params![key, r.id, r.dead_lettered_at]).map_err(err)?;
        }
        Ok(())
    }

    /// `records` pushed in one transaction (one by one: a slice of one).
    pub fn push(&self, records: &[EncodedRecord]) -> Result<(), String> {
        self.begin()?;
        for r in records {
            self.push_body(r)?;
        }
        self.commit()
    }

    /// Leases up to `max` of the oldest ready records without a journal entry, in one transaction.
    pub fn receive(&mut self, max: usize, now_ms: i64, lease_ms: i64) -> Result<Vec<FloorLease>, String> {
        self.begin()?;
        let mut picked: Vec<(String, String)> = Vec::with_capacity(max);
        {
            let mut select = self
                .conn
                .prepare_cached(
                    "SELECT id, json FROM records WHERE (state = 'ready' OR (state = 'leased' AND lease_until <= ?1)) \
                     AND NOT EXISTS (SELECT 1 FROM journal WHERE journal.id = records.id) \
                     ORDER BY dead_lettered_at, id LIMIT ?2",
                )
                .map_err(err)?;
            let mut rows = select.query(params![now_ms, i64::try_from(max).unwrap_or(i64::MAX)]).map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                // The body is read (as the store must, to return it) but not decoded.
                picked.push((row.get(0).map_err(err)?, row.get(1).map_err(err)?));
            }
        }
        let mut out = Vec::with_capacity(picked.len());
        let mut lease = self
            .conn
            .prepare_cached(
                "UPDATE records SET state = 'leased', lease_until = ?2, lease_nonce = ?3, deliveries = deliveries + 1 \
                 WHERE id = ?1",
            )
            .map_err(err)?;
        for (id, _body) in picked {
            self.nonces += 1;
            let nonce = format!("{:032x}", self.nonces);
            lease.execute(params![id, now_ms + lease_ms, nonce]).map_err(err)?;
            out.push(FloorLease { id, nonce });
        }
        drop(lease);
        self.commit()?;
        Ok(out)
    }

    /// Completes `leases` in one transaction (one by one: a slice of one).
    pub fn complete(&self, leases: &[FloorLease]) -> Result<(), String> {
        self.begin()?;
        let mut delete = self
            .conn
            .prepare_cached("DELETE FROM records WHERE id = ?1 AND state = 'leased' AND lease_nonce = ?2")
            .map_err(err)?;
        let mut done = 0i64;
        for l in leases {
            if delete.execute(params![l.id, l.nonce]).map_err(err)? != 1 {
                return Err(format!("sqlite floor: lease on {} lost", l.id));
            }
            done += 1;
        }
        let mut count =
            self.conn.prepare_cached("UPDATE counters SET value = value + ?1 WHERE name = 'completed'").map_err(err)?;
        count.execute([done]).map_err(err)?;
        drop((delete, count));
        self.commit()
    }

    /// Forgets the journal entries `ids` (each settling its key, and removing a replayed record
    /// with the same id) in one transaction (one by one: a slice of one).
    pub fn journal_forget(&self, ids: &[String], now_ms: i64) -> Result<(), String> {
        self.begin()?;
        let mut settle = self
            .conn
            .prepare_cached("INSERT OR REPLACE INTO settled (key, id, outcome, at) VALUES (?1, ?2, 'solved', ?3)")
            .map_err(err)?;
        let mut replayed = self.conn.prepare_cached("DELETE FROM records WHERE id = ?1").map_err(err)?;
        let mut completed = 0i64;
        for id in ids {
            if let Some(key) = forget_journal_entry(&self.conn, id)? {
                settle.execute(params![key, id, now_ms]).map_err(err)?;
            }
            completed += replayed.execute([id]).map_err(err)? as i64;
        }
        if completed > 0 {
            let mut count = self
                .conn
                .prepare_cached("UPDATE counters SET value = value + ?1 WHERE name = 'completed'")
                .map_err(err)?;
            count.execute([completed]).map_err(err)?;
        }
        drop((settle, replayed));
        self.commit()
    }

    /// Writes `entries` to the journal in one transaction (one by one: a slice of one).
    pub fn journal_upsert(&self, entries: &[EncodedEntry]) -> Result<(), String> {
        self.begin()?;
        let mut upsert = self
            .conn
            .prepare_cached(
                "INSERT INTO journal (id, key, json) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(id) DO UPDATE SET key = excluded.key, json = excluded.json",
            )
            .map_err(err)?;
        for e in entries {
            upsert.execute(params![e.id, e.key, e.json]).map_err(err)?;
        }
        drop(upsert);
        self.commit()
    }
}
