//! The audit trail in SQLite: table `audit` (schema 5), one row per entry, its id the row's
//! AUTOINCREMENT number (so ids follow the order of appends and are never given twice) and
//! the entry as JSON. Rows are never deleted.

use captcha_dlq_core::dlq::audit::AuditEntry;
use captcha_dlq_core::dlq::StoreError;
use rusqlite::{params, Connection};

use super::errors::db_error;

pub(super) fn append(conn: &Connection, loc: &str, json: &str) -> Result<u64, StoreError> {
    let err = db_error(loc);
    conn.prepare_cached("INSERT INTO audit (json) VALUES (?1)")
        .and_then(|mut s| s.execute(params![json]))
        .map_err(&err)?;
    Ok(conn.last_insert_rowid() as u64)
}

pub(super) fn list(
    conn: &Connection,
    loc: &str,
    limit: usize,
    before: Option<u64>,
) -> Result<Vec<AuditEntry>, StoreError> {
    let err = db_error(loc);
    let before = before.map_or(i64::MAX, |b| i64::try_from(b).unwrap_or(i64::MAX));
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut stmt =
        conn.prepare_cached("SELECT id, json FROM audit WHERE id < ?1 ORDER BY id DESC LIMIT ?2").map_err(&err)?;
    let rows =
        stmt.query_map(params![before, limit], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).map_err(&err)?;
    let mut out = Vec::new();
    for row in rows {
        let (id, json) = row.map_err(&err)?;
        let mut entry: AuditEntry =
            serde_json::from_str(&json).map_err(|e| StoreError::Decode(format!("{loc}: audit entry {id}: {e}")))?;
        entry.id = id as u64;
        out.push(entry);
    }
    Ok(out)
}
