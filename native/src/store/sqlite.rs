//! The SQLite dead-letter store: one file holding the records, their leases,
//! the in-flight journal and the lifetime counters.
//!
//! Several processes may share a file: it runs in WAL mode with a busy
//! timeout, and every write (including `receive`, which selects and leases in
//! one step) is a `BEGIN IMMEDIATE` transaction, so two processes never lease
//! the same record and "record written, journal entry removed" is atomic.
//! rusqlite is blocking, so each call runs on tokio's blocking pool.
//!
//! The schema version lives in `PRAGMA user_version` and the file is marked as
//! ours with `PRAGMA application_id`; a file written by a newer build is
//! refused rather than misread.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use captcha_dlq_core::class::reason;
use captcha_dlq_core::dlq::{
    DeadLetterRecord, DlqStore, Filter, LeaseToken, Leased, Page, PushOutcome, RecordState, StoreError, StoreStats,
};
use captcha_dlq_core::{JournalEntry, Timestamp};
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, ErrorCode, OptionalExtension, Transaction, TransactionBehavior};

use captcha_dlq_core::dlq::memory::{DEFAULT_MAX_DELIVERIES, PARKED_BY_REPLAYER};
use captcha_dlq_core::ConfigError;

use super::{decode_record, new_nonce};

/// Schema version this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;
/// `PRAGMA application_id` of our files: "CDLQ".
const APPLICATION_ID: i64 = 0x4344_4c51;
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA_V1: &str = "
CREATE TABLE records (
    id TEXT PRIMARY KEY NOT NULL,
    state TEXT NOT NULL,
    reason TEXT NOT NULL,
    class TEXT NOT NULL,
    sitekey TEXT,
    page_host TEXT,
    dead_lettered_at INTEGER NOT NULL,
    lease_until INTEGER,
    lease_nonce TEXT,
    deliveries INTEGER NOT NULL DEFAULT 0,
    parked_reason TEXT,
    json TEXT NOT NULL
);
CREATE INDEX records_reason ON records(reason);
CREATE INDEX records_age ON records(dead_lettered_at, id);
CREATE INDEX records_state ON records(state, dead_lettered_at, id);
CREATE TABLE journal (id TEXT PRIMARY KEY NOT NULL, json TEXT NOT NULL);
CREATE TABLE counters (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
INSERT INTO counters (name, value) VALUES ('dropped', 0), ('completed', 0), ('abandoned', 0);
";

/// The record's state as the query sees it at `?` (= now): an expired lease is ready again.
const EFFECTIVE_STATE: &str = "(CASE WHEN state = 'parked' THEN 'parked' \
     WHEN state = 'leased' AND lease_until > ? THEN 'leased' ELSE 'ready' END)";

const ROW_COLUMNS: &str = "id, state, lease_until, lease_nonce, deliveries, parked_reason, json";

/// A [`DlqStore`] in one SQLite file (or in memory).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    location: Arc<str>,
    max_deliveries: u32,
    capacity: Option<u64>,
}

impl SqliteStore {
    /// Open (creating with mode 0600 if missing) the store at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let location: Arc<str> = path.display().to_string().into();
        create_private(path, &location)?;
        let conn = Connection::open(path).map_err(|e| open_error(&location, e))?;
        Self::init(conn, location, true)
    }

    /// A private store that lives as long as this value (tests, short scripts).
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let location: Arc<str> = ":memory:".into();
        let conn = Connection::open_in_memory().map_err(|e| open_error(&location, e))?;
        Self::init(conn, location, false)
    }

    /// Park a record once it has been delivered this many times (default 10, as Service Bus).
    pub fn with_max_deliveries(mut self, max: u32) -> Result<Self, ConfigError> {
        if max == 0 {
            return Err(ConfigError::new("max_deliveries", "must be at least 1"));
        }
        self.max_deliveries = max;
        Ok(self)
    }

    /// Keep at most `capacity` records: a push that goes over evicts the oldest
    /// ready record, else the oldest parked one (never a leased one), and counts
    /// it in `dropped`. Unbounded by default.
    pub fn with_capacity(mut self, capacity: u64) -> Result<Self, ConfigError> {
        if capacity == 0 {
            return Err(ConfigError::new("capacity", "must be at least 1"));
        }
        self.capacity = Some(capacity);
        Ok(self)
    }

    /// Where the store lives, for messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    fn init(mut conn: Connection, location: Arc<str>, wal: bool) -> Result<Self, StoreError> {
        let loc = &*location;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| open_error(loc, e))?;
        // The first read of the header is where a non-SQLite file shows itself.
        let app_id: i64 =
            conn.pragma_query_value(None, "application_id", |r| r.get(0)).map_err(|e| open_error(loc, e))?;
        if app_id != 0 && app_id != APPLICATION_ID {
            return Err(corrupt(loc, format!("it belongs to another application (application_id {app_id:#x})")));
        }
        if wal {
            let mode = switch_to_wal(&conn).map_err(|e| open_error(loc, e))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError::Backend(format!("{loc}: could not switch to WAL (journal_mode is {mode})")));
            }
        }
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| open_error(loc, e))?;
        migrate(&mut conn, loc)?;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            location,
            max_deliveries: DEFAULT_MAX_DELIVERIES,
            capacity: None,
        })
    }

    /// Run blocking database work off the async runtime.
    async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &str) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        let location = Arc::clone(&self.location);
        tokio::task::spawn_blocking(move || {
            let mut guard =
                conn.lock().map_err(|_| StoreError::Backend(format!("{location}: a previous operation panicked")))?;
            f(&mut guard, &location)
        })
        .await
        .map_err(|e| StoreError::Backend(format!("sqlite worker failed: {e}")))?
    }
}

/// Create the file readable by its owner only; an existing file keeps its mode.
fn create_private(path: &Path, location: &str) -> Result<(), StoreError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Backend(format!("cannot create {location}: {e}"))),
    }
}

/// `PRAGMA journal_mode = WAL`, retried while another process holds the file.
///
/// Switching needs an exclusive lock; when several processes open a fresh file
/// at once, SQLite may answer busy without calling the busy handler, or leave
/// the old mode and return its name, so the busy timeout alone does not cover it.
fn switch_to_wal(conn: &Connection) -> rusqlite::Result<String> {
    let mut attempt = 0u32;
    loop {
        let result = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0));
        let retry = match &result {
            Ok(mode) => !mode.eq_ignore_ascii_case("wal"),
            Err(e) => e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy),
        };
        if !retry || attempt >= 200 {
            return result;
        }
        attempt += 1;
        std::thread::sleep(Duration::from_millis(5 + fastrand::u64(..45)));
    }
}

fn corrupt(location: &str, problem: impl Into<String>) -> StoreError {
    StoreError::Corrupt { location: location.to_string(), problem: problem.into() }
}

fn open_error(location: &str, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => corrupt(location, "the file is not a SQLite database"),
        Some(ErrorCode::DatabaseCorrupt) => corrupt(location, format!("the database is damaged: {e}")),
        _ => StoreError::Backend(format!("{location}: {e}")),
    }
}

fn db_error(location: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| open_error(location, e)
}

fn migrate(conn: &mut Connection, loc: &str) -> Result<(), StoreError> {
    let err = db_error(loc);
    // Immediate: two processes creating the same file migrate one after the other.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(&err)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(&err)?;
    let version = u32::try_from(version).map_err(|_| corrupt(loc, format!("invalid schema version {version}")))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema { location: loc.to_string(), found: version, supported: SCHEMA_VERSION });
    }
    let app_id: i64 = tx.pragma_query_value(None, "application_id", |r| r.get(0)).map_err(&err)?;
    if version == 0 {
        let tables: Vec<String> = {
            let mut stmt =
                tx.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map_err(&err)?;
            let rows = stmt.query_map([], |r| r.get(0)).map_err(&err)?;
            rows.collect::<Result<_, _>>().map_err(&err)?
        };
        if !tables.is_empty() {
            return Err(corrupt(
                loc,
                format!("it is a SQLite database of something else (tables: {})", tables.join(", ")),
            ));
        }
        tx.execute_batch(SCHEMA_V1).map_err(&err)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID).map_err(&err)?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(&err)?;
    } else if app_id != APPLICATION_ID {
        return Err(corrupt(loc, format!("schema version {version} but not marked as a captcha-dlq store")));
    }
    tx.commit().map_err(&err)
}

fn ms(t: Timestamp) -> i64 {
    i64::try_from(t.as_unix_millis()).unwrap_or(i64::MAX)
}

fn from_ms(v: i64) -> Timestamp {
    Timestamp::from_unix_millis(u64::try_from(v).unwrap_or(0))
}

/// One `records` row as read back.
struct Row {
    id: String,
    state: String,
    lease_until: Option<i64>,
    lease_nonce: Option<String>,
    deliveries: i64,
    parked_reason: Option<String>,
    json: String,
}

impl Row {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        Ok(Row {
            id: r.get(0)?,
            state: r.get(1)?,
            lease_until: r.get(2)?,
            lease_nonce: r.get(3)?,
            deliveries: r.get(4)?,
            parked_reason: r.get(5)?,
            json: r.get(6)?,
        })
    }

    fn effective_state(&self, now: Timestamp) -> Result<RecordState, StoreError> {
        match self.state.as_str() {
            "parked" => Ok(RecordState::Parked),
            "leased" if self.lease_until.is_some_and(|u| u > ms(now)) => Ok(RecordState::Leased),
            "leased" | "ready" => Ok(RecordState::Ready),
            other => Err(StoreError::Decode(format!("record {} has unknown state {other:?}", self.id))),
        }
    }

    fn deliveries(&self) -> u32 {
        u32::try_from(self.deliveries).unwrap_or(0)
    }

    /// The stored record with the store-managed fields (state, deliveries, parked reason) filled in.
    fn record(&self, state: RecordState) -> Result<DeadLetterRecord, StoreError> {
        let mut record = decode_record(&self.id, &self.json)?;
        record.state = state;
        record.deliveries = self.deliveries();
        record.parked_reason = if state == RecordState::Parked { self.parked_reason.clone() } else { None };
        Ok(record)
    }
}

/// The part of `filter` that maps onto columns, as SQL with its arguments. Labels are checked in Rust.
fn where_sql(filter: &Filter, now: Timestamp) -> (String, Vec<Value>) {
    let mut sql = String::from("1 = 1");
    let mut args: Vec<Value> = Vec::new();
    fn any_of(sql: &mut String, args: &mut Vec<Value>, column: &str, values: Vec<Value>) {
        if values.is_empty() {
            return;
        }
        let marks = vec!["?"; values.len()].join(", ");
        sql.push_str(&format!(" AND {column} IN ({marks})"));
        args.extend(values);
    }
    any_of(&mut sql, &mut args, "id", filter.ids.iter().map(|s| Value::Text(s.clone())).collect());
    any_of(&mut sql, &mut args, "reason", filter.reasons.iter().map(|s| Value::Text(s.clone())).collect());
    let classes = filter.classes.iter().map(|c| Value::Text(c.as_str().to_string())).collect();
    any_of(&mut sql, &mut args, "class", classes);
    if !filter.states.is_empty() {
        let states = filter.states.iter().map(|s| Value::Text(s.as_str().to_string())).collect();
        args.push(Value::Integer(ms(now)));
        any_of(&mut sql, &mut args, EFFECTIVE_STATE, states);
    }
    if let Some(s) = &filter.sitekey {
        sql.push_str(" AND sitekey = ?");
        args.push(Value::Text(s.clone()));
    }
    if let Some(h) = &filter.page_host {
        sql.push_str(" AND page_host = ?");
        args.push(Value::Text(h.clone()));
    }
    if let Some(t) = filter.dead_lettered_before {
        sql.push_str(" AND dead_lettered_at < ?");
        args.push(Value::Integer(ms(t)));
    }
    if let Some(t) = filter.dead_lettered_after {
        sql.push_str(" AND dead_lettered_at >= ?");
        args.push(Value::Integer(ms(t)));
    }
    (sql, args)
}

/// Visit rows matching `filter` (plus an `extra` condition taking `now` for each `?`), oldest
/// first, until `visit` returns `false`.
fn scan(
    tx: &Connection,
    loc: &str,
    filter: &Filter,
    extra: &str,
    now: Timestamp,
    mut visit: impl FnMut(Row, RecordState, DeadLetterRecord) -> Result<bool, StoreError>,
) -> Result<(), StoreError> {
    let err = db_error(loc);
    let (cond, mut args) = where_sql(filter, now);
    args.extend(extra.matches('?').map(|_| Value::Integer(ms(now))));
    // Walk the age index in order so a scan that needs only `max` rows stops after them, instead of
    // sorting every matching row first (the planner would pick `records_state` for the OR and sort).
    let sql = format!(
        "SELECT {ROW_COLUMNS} FROM records INDEXED BY records_age WHERE {cond} {extra} ORDER BY dead_lettered_at, id"
    );
    let mut stmt = tx.prepare(&sql).map_err(&err)?;
    let mut rows = stmt.query(params_from_iter(args)).map_err(&err)?;
    while let Some(r) = rows.next().map_err(&err)? {
        let row = Row::read(r).map_err(&err)?;
        let state = row.effective_state(now)?;
        let record = row.record(state)?;
        if filter.matches(&record, state) && !visit(row, state, record)? {
            break;
        }
    }
    Ok(())
}

fn bump(tx: &Transaction<'_>, loc: &str, counter: &str, by: u64) -> Result<(), StoreError> {
    if by > 0 {
        tx.execute(
            "UPDATE counters SET value = value + ?1 WHERE name = ?2",
            params![i64::try_from(by).unwrap_or(i64::MAX), counter],
        )
        .map_err(db_error(loc))?;
    }
    Ok(())
}

fn write_record(
    tx: &Transaction<'_>,
    loc: &str,
    record: &DeadLetterRecord,
    state: RecordState,
    deliveries: u32,
    parked_reason: Option<&str>,
) -> Result<(), StoreError> {
    let json = serde_json::to_string(record).map_err(|e| StoreError::Decode(format!("record {}: {e}", record.id)))?;
    tx.execute(
        "INSERT INTO records (id, state, reason, class, sitekey, page_host, dead_lettered_at, lease_until, \
         lease_nonce, deliveries, parked_reason, json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, NULL, ?8, ?9, ?10) \
         ON CONFLICT(id) DO UPDATE SET \
         state = CASE WHEN records.state = 'leased' AND excluded.state != 'parked' THEN 'leased' ELSE excluded.state END, \
         lease_until = CASE WHEN records.state = 'leased' AND excluded.state != 'parked' THEN records.lease_until END, \
         lease_nonce = CASE WHEN records.state = 'leased' AND excluded.state != 'parked' THEN records.lease_nonce END, \
         reason = excluded.reason, class = excluded.class, \
         sitekey = excluded.sitekey, page_host = excluded.page_host, dead_lettered_at = excluded.dead_lettered_at, \
         deliveries = excluded.deliveries, \
         parked_reason = excluded.parked_reason, json = excluded.json",
        params![
            record.id,
            state.as_str(),
            record.reason,
            record.class.as_str(),
            record.task.sitekey(),
            record.page_host(),
            ms(record.dead_lettered_at),
            deliveries,
            parked_reason,
            json,
        ],
    )
    .map_err(db_error(loc))?;
    Ok(())
}

/// The row under `token`'s lease, or `LeaseLost` if the token is stale.
fn leased_row(tx: &Transaction<'_>, loc: &str, token: &LeaseToken) -> Result<Row, StoreError> {
    let row = tx
        .query_row(&format!("SELECT {ROW_COLUMNS} FROM records WHERE id = ?1"), [&token.id], Row::read)
        .optional()
        .map_err(db_error(loc))?;
    match row {
        Some(row) if row.state == "leased" && row.lease_nonce.as_deref() == Some(token.nonce.as_str()) => Ok(row),
        _ => Err(StoreError::LeaseLost { id: token.id.clone() }),
    }
}

fn immediate<'c>(conn: &'c mut Connection, loc: &str) -> Result<Transaction<'c>, StoreError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db_error(loc))
}

#[async_trait]
impl DlqStore for SqliteStore {
    // PLACEHOLDER(stores helper): settled keys are being implemented on the `stores` branch.
    async fn settled(&self, _prefix: &str) -> Result<Vec<captcha_dlq_core::dlq::SettledKey>, StoreError> {
        Err(StoreError::Backend("settled keys are not implemented by this store yet".into()))
    }

    async fn clear_settled(&self, _prefix: &str) -> Result<u64, StoreError> {
        Err(StoreError::Backend("settled keys are not implemented by this store yet".into()))
    }

    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        let capacity = self.capacity;
        self.run(move |conn, loc| {
            let err = db_error(loc);
            let tx = immediate(conn, loc)?;
            let replaced = tx
                .query_row("SELECT 1 FROM records WHERE id = ?1", [&record.id], |_| Ok(()))
                .optional()
                .map_err(&err)?
                .is_some();
            let (state, parked_reason) = match record.state {
                RecordState::Parked => (RecordState::Parked, record.parked_reason.as_deref()),
                RecordState::Ready | RecordState::Leased => (RecordState::Ready, None),
            };
            write_record(&tx, loc, &record, state, record.deliveries, parked_reason)?;
            tx.execute("DELETE FROM journal WHERE id = ?1", [&record.id]).map_err(&err)?;
            let mut evicted = Vec::new();
            if let Some(cap) = capacity {
                let total: i64 = tx.query_row("SELECT COUNT(*) FROM records", [], |r| r.get(0)).map_err(&err)?;
                let excess = u64::try_from(total).unwrap_or(0).saturating_sub(cap);
                if excess > 0 {
                    // Never drop one a replayer may hold: push has no clock, so every unsettled lease counts.
                    let mut stmt = tx
                        .prepare(
                            "SELECT id FROM records WHERE state != 'leased' \
                             ORDER BY state = 'parked', dead_lettered_at, id LIMIT ?1",
                        )
                        .map_err(&err)?;
                    let rows = stmt
                        .query_map(params![i64::try_from(excess).unwrap_or(i64::MAX)], |r| r.get::<_, String>(0))
                        .map_err(&err)?;
                    evicted = rows.collect::<Result<Vec<_>, _>>().map_err(&err)?;
                    drop(stmt);
                    for id in &evicted {
                        tx.execute("DELETE FROM records WHERE id = ?1", [id]).map_err(&err)?;
                    }
                    bump(&tx, loc, "dropped", evicted.len() as u64)?;
                }
            }
            tx.commit().map_err(&err)?;
            Ok(PushOutcome { replaced, evicted })
        })
        .await
    }

    async fn receive(
        &self,
        filter: &Filter,
        max: usize,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Vec<Leased>, StoreError> {
        if max == 0 {
            return Ok(Vec::new());
        }
        // `receive` ignores the state filter: it only ever hands out ready records.
        let filter = Filter { states: Vec::new(), ..filter.clone() };
        let max_deliveries = self.max_deliveries;
        self.run(move |conn, loc| {
            let err = db_error(loc);
            let tx = immediate(conn, loc)?;
            let lease_until = now.add(lease);
            let mut chosen: Vec<(Row, DeadLetterRecord)> = Vec::new();
            let mut exhausted: Vec<Row> = Vec::new();
            let receivable = "AND (state = 'ready' OR (state = 'leased' AND lease_until <= ?))";
            scan(&tx, loc, &filter, receivable, now, |row, _, record| {
                if row.deliveries() >= max_deliveries {
                    // Its last lease expired without an abandon: park it as abandon would have.
                    exhausted.push(row);
                } else {
                    chosen.push((row, record));
                }
                Ok(chosen.len() < max)
            })?;
            let expired = chosen.iter().filter(|(r, _)| r.state == "leased").count()
                + exhausted.iter().filter(|r| r.state == "leased").count();
            for Row { id, .. } in &exhausted {
                tx.execute(
                    "UPDATE records SET state = 'parked', lease_until = NULL, lease_nonce = NULL, \
                     parked_reason = ?2 WHERE id = ?1",
                    params![id, reason::MAX_DELIVERY_COUNT_EXCEEDED],
                )
                .map_err(&err)?;
            }
            let mut out = Vec::with_capacity(chosen.len());
            for (row, mut record) in chosen {
                let nonce = new_nonce();
                let deliveries = row.deliveries().saturating_add(1);
                tx.execute(
                    "UPDATE records SET state = 'leased', lease_until = ?2, lease_nonce = ?3, deliveries = ?4 \
                     WHERE id = ?1",
                    params![row.id, ms(lease_until), nonce, deliveries],
                )
                .map_err(&err)?;
                record.state = RecordState::Leased;
                record.deliveries = deliveries;
                record.parked_reason = None;
                out.push(Leased { token: LeaseToken { id: row.id, nonce }, record, lease_until });
            }
            bump(&tx, loc, "abandoned", expired as u64)?;
            tx.commit().map_err(&err)?;
            Ok(out)
        })
        .await
    }

    async fn complete(&self, token: &LeaseToken, _now: Timestamp) -> Result<(), StoreError> {
        let token = token.clone();
        self.run(move |conn, loc| {
            let tx = immediate(conn, loc)?;
            leased_row(&tx, loc, &token)?;
            tx.execute("DELETE FROM records WHERE id = ?1", [&token.id]).map_err(db_error(loc))?;
            bump(&tx, loc, "completed", 1)?;
            tx.commit().map_err(db_error(loc))
        })
        .await
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        _now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        if let Some(u) = &update {
            if u.id != token.id {
                return Err(StoreError::Backend(format!(
                    "abandon: the update is for record {} but the lease is on record {}",
                    u.id, token.id
                )));
            }
        }
        let token = token.clone();
        let max_deliveries = self.max_deliveries;
        self.run(move |conn, loc| {
            let tx = immediate(conn, loc)?;
            let row = leased_row(&tx, loc, &token)?;
            let (record, asked_to_park) = match update {
                // The token names the record.
                Some(u) => (DeadLetterRecord { id: token.id.clone(), ..u }, true),
                None => (row.record(RecordState::Ready)?, false),
            };
            // The store owns the delivery count; the update may carry a stale copy.
            let deliveries = row.deliveries();
            let parked_reason = if asked_to_park && record.state == RecordState::Parked {
                Some(record.parked_reason.clone().unwrap_or_else(|| PARKED_BY_REPLAYER.to_string()))
            } else if deliveries >= max_deliveries {
                Some(reason::MAX_DELIVERY_COUNT_EXCEEDED.to_string())
            } else {
                None
            };
            let state = if parked_reason.is_some() { RecordState::Parked } else { RecordState::Ready };
            tx.execute(
                "UPDATE records SET state = 'ready', lease_until = NULL, lease_nonce = NULL WHERE id = ?1",
                [&token.id],
            )
            .map_err(db_error(loc))?;
            write_record(&tx, loc, &record, state, deliveries, parked_reason.as_deref())?;
            bump(&tx, loc, "abandoned", 1)?;
            tx.commit().map_err(db_error(loc))?;
            Ok(state)
        })
        .await
    }

    async fn park(&self, id: &str, reason: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let (id, reason) = (id.to_string(), reason.to_string());
        self.run(move |conn, loc| {
            let tx = immediate(conn, loc)?;
            let n = tx
                .execute(
                    "UPDATE records SET state = 'parked', parked_reason = ?2, lease_until = NULL, lease_nonce = NULL \
                     WHERE id = ?1",
                    params![id, reason],
                )
                .map_err(db_error(loc))?;
            tx.commit().map_err(db_error(loc))?;
            Ok(n > 0)
        })
        .await
    }

    async fn unpark(&self, id: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.run(move |conn, loc| {
            let tx = immediate(conn, loc)?;
            let n = tx
                .execute(
                    "UPDATE records SET state = 'ready', parked_reason = NULL, deliveries = 0 \
                     WHERE id = ?1 AND state = 'parked'",
                    [&id],
                )
                .map_err(db_error(loc))?;
            tx.commit().map_err(db_error(loc))?;
            Ok(n > 0)
        })
        .await
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        let filter = filter.clone();
        self.run(move |conn, loc| {
            let mut out = Vec::new();
            if page.limit == 0 {
                return Ok(out);
            }
            let mut skip = page.offset;
            scan(conn, loc, &filter, "", now, |_, _, record| {
                if skip > 0 {
                    skip -= 1;
                } else {
                    out.push(record);
                }
                Ok(out.len() < page.limit)
            })?;
            Ok(out)
        })
        .await
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let filter = filter.clone();
        self.run(move |conn, loc| {
            if filter.labels.is_empty() {
                // Everything else maps onto columns: let SQLite count.
                let (cond, args) = where_sql(&filter, now);
                let n: i64 = conn
                    .query_row(&format!("SELECT COUNT(*) FROM records WHERE {cond}"), params_from_iter(args), |r| {
                        r.get(0)
                    })
                    .map_err(db_error(loc))?;
                return Ok(u64::try_from(n).unwrap_or(0));
            }
            let mut n = 0u64;
            scan(conn, loc, &filter, "", now, |_, _, _| {
                n += 1;
                Ok(true)
            })?;
            Ok(n)
        })
        .await
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let filter = filter.clone();
        self.run(move |conn, loc| {
            let tx = immediate(conn, loc)?;
            let mut ids = Vec::new();
            scan(&tx, loc, &filter, "", now, |row, state, _| {
                if state != RecordState::Leased {
                    ids.push(row.id);
                }
                Ok(true)
            })?;
            for id in &ids {
                tx.execute("DELETE FROM records WHERE id = ?1", [id]).map_err(db_error(loc))?;
            }
            tx.commit().map_err(db_error(loc))?;
            Ok(ids.len() as u64)
        })
        .await
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        self.run(move |conn, loc| {
            let err = db_error(loc);
            // One read transaction, so the numbers agree with each other.
            let tx = conn.transaction().map_err(&err)?;
            // Each count from an index (state, age) rather than one pass over every row: the
            // rows hold the records' JSON, and dashboards ask for these numbers every few seconds.
            let count = |sql: &str, args: &[i64]| -> Result<i64, StoreError> {
                tx.query_row(sql, params_from_iter(args), |r| r.get(0)).map_err(&err)
            };
            let total = count("SELECT COUNT(*) FROM records", &[])?;
            let parked = count("SELECT COUNT(*) FROM records WHERE state = 'parked'", &[])?;
            let leased = count("SELECT COUNT(*) FROM records WHERE state = 'leased' AND lease_until > ?1", &[ms(now)])?;
            let oldest: Option<i64> =
                tx.query_row("SELECT MIN(dead_lettered_at) FROM records", [], |r| r.get(0)).map_err(&err)?;
            let counter = |name: &str| -> Result<u64, StoreError> {
                let v: i64 = tx
                    .query_row("SELECT value FROM counters WHERE name = ?1", [name], |r| r.get(0))
                    .optional()
                    .map_err(&err)?
                    .unwrap_or(0);
                Ok(u64::try_from(v).unwrap_or(0))
            };
            let in_flight: i64 = tx.query_row("SELECT COUNT(*) FROM journal", [], |r| r.get(0)).map_err(&err)?;
            let n = |v: i64| u64::try_from(v).unwrap_or(0);
            Ok(StoreStats {
                total: n(total),
                ready: n(total - parked - leased),
                leased: n(leased),
                parked: n(parked),
                dropped: counter("dropped")?,
                completed: counter("completed")?,
                abandoned: counter("abandoned")?,
                oldest_dead_lettered_at: oldest.map(from_ms),
                in_flight: n(in_flight),
            })
        })
        .await
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        let id = entry.id.clone();
        let json = serde_json::to_string(entry).map_err(|e| StoreError::Decode(format!("journal entry {id}: {e}")))?;
        self.run(move |conn, loc| {
            conn.execute(
                "INSERT INTO journal (id, json) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET json = excluded.json",
                params![id, json],
            )
            .map_err(db_error(loc))?;
            Ok(())
        })
        .await
    }

    async fn journal_forget(&self, id: &str, _now: Timestamp) -> Result<(), StoreError> {
        let id = id.to_string();
        self.run(move |conn, loc| {
            conn.execute("DELETE FROM journal WHERE id = ?1", [&id]).map_err(db_error(loc))?;
            Ok(())
        })
        .await
    }

    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        self.run(move |conn, loc| {
            let err = db_error(loc);
            let mut stmt = conn.prepare("SELECT id, json FROM journal ORDER BY id").map_err(&err)?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).map_err(&err)?;
            let mut out = Vec::new();
            for row in rows {
                let (id, json) = row.map_err(&err)?;
                out.push(
                    serde_json::from_str(&json).map_err(|e| StoreError::Decode(format!("journal entry {id}: {e}")))?,
                );
            }
            Ok(out)
        })
        .await
    }
}
