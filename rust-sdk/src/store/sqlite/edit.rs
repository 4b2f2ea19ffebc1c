//! An operator's edit of a record (`DlqStore::replace_edited`) in SQLite: read, check and
//! write in the writer's one transaction, so no replayer can lease or settle the record in
//! between. The columns derived from the task (`sitekey`, `page_host`) follow the new task,
//! so filters by them see the edit.

use captcha_dlq_core::dlq::{EditWrite, Edited, StoreError};
use captcha_dlq_core::Timestamp;
use rusqlite::{params, Connection, OptionalExtension};

use super::errors::db_error;
use super::ops::ms;

pub(super) fn replace_edited(
    conn: &Connection,
    loc: &str,
    edit: &Edited,
    now: Timestamp,
) -> Result<EditWrite, StoreError> {
    let (before, edited) = (&edit.before, &edit.record);
    let err = db_error(loc);
    let id = &edited.id;
    let row: Option<(String, Option<i64>, String, bool)> = conn
        .prepare_cached(
            "SELECT state, lease_until, json, EXISTS (SELECT 1 FROM journal WHERE journal.id = records.id) \
             FROM records WHERE id = ?1",
        )
        .and_then(|mut s| s.query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).optional())
        .map_err(&err)?;
    let Some((state, lease_until, json, replaying)) = row else { return Ok(EditWrite::Gone) };
    let leased = state == "leased" && lease_until.is_some_and(|until| until > ms(now));
    if leased || replaying {
        return Ok(EditWrite::Leased);
    }
    let mut stored = crate::store::decode_record(id, &json)?;
    if (&stored.task, &stored.labels, &stored.history) != (&before.task, &before.labels, &before.history) {
        return Ok(EditWrite::Changed);
    }
    stored.task = edited.task.clone();
    stored.labels = edited.labels.clone();
    stored.history = edited.history.clone();
    let json = super::encode(&stored, || format!("record {id}"))?;
    conn.prepare_cached("UPDATE records SET sitekey = ?2, page_host = ?3, json = ?4 WHERE id = ?1")
        .and_then(|mut s| s.execute(params![id, stored.task.sitekey(), stored.page_host(), json]))
        .map_err(&err)?;
    Ok(EditWrite::Written)
}
