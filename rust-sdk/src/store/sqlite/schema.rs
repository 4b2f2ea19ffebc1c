//! Opening a store file: the checks that it is ours, WAL mode, and the schema
//! with its migrations.
//!
//! The schema version lives in `PRAGMA user_version` and the file is marked as
//! ours with `PRAGMA application_id`; a file written by a newer build is
//! refused rather than misread. A new file gets version 1 and then every
//! migration, so a new file and a migrated old one are the same database.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::Path;
use std::time::Duration;

use captcha_dlq_core::dlq::StoreError;
use rusqlite::{Connection, ErrorCode, TransactionBehavior};

use super::errors::{corrupt, db_error};

/// Schema version this build writes and reads.
pub const SCHEMA_VERSION: u32 = 5;
/// `PRAGMA application_id` of our files: "CDLQ".
const APPLICATION_ID: i64 = 0x4344_4c51;

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

/// `MIGRATIONS[i]` takes a database from version `i + 1` to `i + 2`.
const MIGRATIONS: [&str; 4] = [
    // 1 → 2: the journal keeps each entry's task key in a column, so that push and
    // journal_forget settle it in their transaction without parsing JSON; settled keys.
    // records_state and records_reason go: no query but a count by reason used them, and
    // every push, lease and complete paid for them (a page more per commit each). A partial
    // index of the records that are not ready keeps the dashboard's counts of parked and
    // leased records off the full table (pushes, the bulk of writes, do not touch it).
    "
ALTER TABLE journal ADD COLUMN key TEXT;
UPDATE journal SET key = json_extract(json, '$.key')
    WHERE json_valid(json) AND json_type(json, '$.key') = 'text';
CREATE TABLE settled (
    key TEXT PRIMARY KEY NOT NULL,
    id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    at INTEGER NOT NULL
) WITHOUT ROWID;
DROP INDEX records_state;
DROP INDEX records_reason;
CREATE INDEX records_unready ON records(state) WHERE state <> 'ready';
",
    // 2 → 3: leases leave the partial index. Every lease put a row into `records_unready` and
    // every complete took it out again: one more page written per complete, about a fifth of
    // its commit. The age order now carries each record's state and lease end, so the
    // dashboard's count of live leases reads that index alone (never the rows' JSON), and a
    // partial index of parked records (which push, lease and complete never touch) keeps
    // their count to the parked rows.
    "
DROP INDEX records_unready;
DROP INDEX records_age;
CREATE INDEX records_age ON records(dead_lettered_at, id, state, lease_until);
CREATE INDEX records_parked ON records(state) WHERE state = 'parked';
",
    // 3 → 4: the fleet ledger (`crate::store::sqlite::fleet`): each provider account's shared
    // state, and each client's heartbeat row.
    "
CREATE TABLE fleet_accounts (account TEXT PRIMARY KEY NOT NULL, json TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE fleet_owners (
    owner TEXT PRIMARY KEY NOT NULL,
    heartbeat_ms INTEGER NOT NULL,
    json TEXT NOT NULL
) WITHOUT ROWID;
",
    // 4 → 5: the audit trail (`crate::store::sqlite::audit`): entries numbered in the order
    // they were appended (AUTOINCREMENT: a number is never given twice), never deleted.
    "
CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, json TEXT NOT NULL);
",
];

/// Create the file readable by its owner only; an existing file keeps its mode.
pub(super) fn create_private(path: &Path, location: &str) -> Result<(), StoreError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        // `create_new` on a directory fails as "exists" too; SQLite would then fail to open it.
        Err(e) if e.kind() == ErrorKind::AlreadyExists && path.is_dir() => Err(StoreError::Unusable {
            location: location.to_string(),
            problem: "it is a directory: name a file in it".into(),
        }),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) if cannot_hold_a_file(e.kind()) => Err(StoreError::Unusable {
            location: location.to_string(),
            problem: format!("cannot create the file: {e}"),
        }),
        Err(e) => Err(StoreError::Backend(format!("cannot create {location}: {e}"))),
    }
}

/// Whether a failure to create the file is about the path itself (no such directory, a
/// directory in the way, a name the file system refuses, no permission), which waiting does
/// not change, rather than about the moment (too many open files, a full disk).
fn cannot_hold_a_file(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::NotFound
            | ErrorKind::InvalidInput
            | ErrorKind::InvalidFilename
            | ErrorKind::IsADirectory
            | ErrorKind::NotADirectory
            | ErrorKind::PermissionDenied
            | ErrorKind::ReadOnlyFilesystem
    )
}

/// Checks the file is ours (or empty), sets the pragmas and brings the schema up to date.
pub(super) fn prepare(conn: &mut Connection, loc: &str, wal: bool, busy_timeout: Duration) -> Result<(), StoreError> {
    let err = db_error(loc);
    conn.busy_timeout(busy_timeout).map_err(&err)?;
    // The first read of the header is where a non-SQLite file shows itself.
    let app_id: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0)).map_err(&err)?;
    if app_id != 0 && app_id != APPLICATION_ID {
        return Err(corrupt(loc, format!("it belongs to another application (application_id {app_id:#x})")));
    }
    if wal {
        let mode = switch_to_wal(conn).map_err(&err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Backend(format!("{loc}: could not switch to WAL (journal_mode is {mode})")));
        }
    }
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(&err)?;
    migrate(conn, loc)
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

fn migrate(conn: &mut Connection, loc: &str) -> Result<(), StoreError> {
    let err = db_error(loc);
    // A file already at this version needs no write lock: a process opening it (an operator's
    // `count`, a second batch) does not wait for another one inside a long write transaction.
    let read = |conn: &Connection, pragma: &str| conn.pragma_query_value(None, pragma, |r| r.get::<_, i64>(0));
    let (version, app_id) = (read(conn, "user_version").map_err(&err)?, read(conn, "application_id").map_err(&err)?);
    if checked_version(loc, version, app_id)? == SCHEMA_VERSION {
        return Ok(());
    }
    // Immediate: two processes opening the same file migrate one after the other; the version
    // is read again under the lock, since the other may have migrated it meanwhile.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(&err)?;
    let (version, app_id) = (read(&tx, "user_version").map_err(&err)?, read(&tx, "application_id").map_err(&err)?);
    let version = checked_version(loc, version, app_id)?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
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
    }
    let from = version.max(1);
    for (i, step) in MIGRATIONS.iter().enumerate().skip(usize::try_from(from - 1).unwrap_or(usize::MAX)) {
        tx.execute_batch(step)
            .map_err(|e| StoreError::Backend(format!("{loc}: migrating the schema to version {}: {e}", i + 2)))?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(&err)?;
    tx.commit().map_err(&err)
}

/// The schema version of a file, if this build can open it: not newer than it knows, and marked
/// as a captcha-dlq store unless it is still empty (version 0).
fn checked_version(loc: &str, version: i64, app_id: i64) -> Result<u32, StoreError> {
    let version = u32::try_from(version).map_err(|_| corrupt(loc, format!("invalid schema version {version}")))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema { location: loc.to_string(), found: version, supported: SCHEMA_VERSION });
    }
    if version != 0 && app_id != APPLICATION_ID {
        return Err(corrupt(loc, format!("schema version {version} but not marked as a captcha-dlq store")));
    }
    Ok(version)
}
