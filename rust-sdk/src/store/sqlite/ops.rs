//! The store's operations as SQL on the connection thread.
//!
//! Each function is the body of one call: writes run inside the group's
//! transaction (see `writer.rs`), reads on their own. They take JSON already
//! encoded and hand back rows still encoded: serde work happens on the
//! caller's task, so the one thread that writes spends its time in SQLite.
//! Every statement is prepared once per connection (`prepare_cached`).
//!
//! The store rules are `captcha_dlq_core::dlq::rules`: a decision made on a row read here is
//! that module's function (delivery, abandon, the state a row shows). Where a rule is a pure
//! `WHERE` filter (lease eligibility, the journal's fence and claim, a push keeping a lease) it
//! stays SQL, so that one statement does the work in the writer's transaction; the rule function
//! is its documented source, and `dlq::rule_cases` runs the rules' case table against this
//! store (`store_sqlite::the_rules_case_table_holds`) to check the filter against it.

use captcha_dlq_core::class::reason;
use captcha_dlq_core::dlq::rules::{self, Abandoned, Delivery, EntryEnd};
use captcha_dlq_core::dlq::{
    DeadLetterRecord, Filter, LeaseToken, PushOutcome, RecordState, SettledKey, Settlement, StoreError,
};
use captcha_dlq_core::Timestamp;
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};

use super::errors::db_error;
use crate::store::{decode_record, new_nonce, prefix_end};

/// The record's state as the query sees it at `?` (= now): an expired lease is ready again
/// (`rules::visible_state`).
const EFFECTIVE_STATE: &str = "(CASE WHEN state = 'parked' THEN 'parked' \
     WHEN state = 'leased' AND lease_until > ? THEN 'leased' ELSE 'ready' END)";

const ROW_COLUMNS: &str = "id, state, lease_until, deliveries, parked_reason, json";

/// A record ready, or a lease that expired by `?` (= now), and not being replayed (no journal
/// entry with its id): `rules::lease_eligible`.
const RECEIVABLE: &str = "AND (state = 'ready' OR (state = 'leased' AND lease_until <= ?)) \
     AND NOT EXISTS (SELECT 1 FROM journal WHERE journal.id = records.id)";

pub(super) fn ms(t: Timestamp) -> i64 {
    i64::try_from(t.as_unix_millis()).unwrap_or(i64::MAX)
}

fn from_ms(v: i64) -> Timestamp {
    Timestamp::from_unix_millis(u64::try_from(v).unwrap_or(0))
}

fn count(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// One `records` row as read back, its JSON not yet decoded.
#[derive(Debug)]
pub(super) struct RawRow {
    id: String,
    state: String,
    lease_until: Option<i64>,
    deliveries: i64,
    parked_reason: Option<String>,
    json: String,
}

impl RawRow {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
        Ok(RawRow {
            id: r.get(0)?,
            state: r.get(1)?,
            lease_until: r.get(2)?,
            deliveries: r.get(3)?,
            parked_reason: r.get(4)?,
            json: r.get(5)?,
        })
    }

    fn effective_state(&self, now: Timestamp) -> Result<RecordState, StoreError> {
        // Only a `leased` row's `lease_until` is a lease (abandon and park clear it with the state).
        let (stored, lease_until) = match self.state.as_str() {
            "parked" => (RecordState::Parked, None),
            "leased" => (RecordState::Leased, self.lease_until.map(from_ms)),
            "ready" => (RecordState::Ready, None),
            other => return Err(StoreError::Decode(format!("record {} has unknown state {other:?}", self.id))),
        };
        Ok(rules::visible_state(stored, lease_until, now))
    }

    fn deliveries(&self) -> u32 {
        u32::try_from(self.deliveries).unwrap_or(0)
    }

    /// The stored record with the store-managed fields (state, deliveries, parked reason) filled in.
    pub(super) fn into_record(self, state: RecordState) -> Result<DeadLetterRecord, StoreError> {
        let mut record = decode_record(&self.id, &self.json)?;
        record.state = state;
        record.deliveries = self.deliveries();
        record.parked_reason = if state == RecordState::Parked { self.parked_reason } else { None };
        Ok(record)
    }
}

/// The part of `filter` that maps onto columns, as SQL with its arguments. Labels are checked in Rust.
pub(super) fn where_sql(filter: &Filter, now: Timestamp) -> (String, Vec<Value>) {
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

/// Visits rows matching `filter` (plus an `extra` condition taking `now` for each `?`), oldest
/// first, until `visit` returns `false`. Bodies are decoded only when the filter has labels.
pub(super) fn scan(
    conn: &Connection,
    loc: &str,
    filter: &Filter,
    extra: &str,
    now: Timestamp,
    mut visit: impl FnMut(RawRow, RecordState) -> Result<bool, StoreError>,
) -> Result<(), StoreError> {
    let err = db_error(loc);
    let (cond, mut args) = where_sql(filter, now);
    args.extend(extra.matches('?').map(|_| Value::Integer(ms(now))));
    // Walk the age index in order so a scan that needs only `max` rows stops after them,
    // instead of sorting every matching row first.
    let sql = format!(
        "SELECT {ROW_COLUMNS} FROM records INDEXED BY records_age WHERE {cond} {extra} ORDER BY dead_lettered_at, id"
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(&err)?;
    let mut rows = stmt.query(params_from_iter(args)).map_err(&err)?;
    while let Some(r) = rows.next().map_err(&err)? {
        let row = RawRow::read(r).map_err(&err)?;
        let state = row.effective_state(now)?;
        let selected = filter.labels.is_empty() || {
            let record = decode_record(&row.id, &row.json)?;
            filter.labels.iter().all(|(k, v)| record.labels.get(k) == Some(v))
        };
        if selected && !visit(row, state)? {
            break;
        }
    }
    Ok(())
}

fn bump(conn: &Connection, loc: &str, counter: &str, by: u64) -> Result<(), StoreError> {
    if by > 0 {
        conn.prepare_cached("UPDATE counters SET value = value + ?1 WHERE name = ?2")
            .and_then(|mut s| s.execute(params![i64::try_from(by).unwrap_or(i64::MAX), counter]))
            .map_err(db_error(loc))?;
    }
    Ok(())
}

/// Removes the journal entry `id` as `end` does and settles its key (if it had one) as that end
/// settles it (`rules::settles_as`) at `at`.
fn forget_entry(conn: &Connection, loc: &str, id: &str, end: EntryEnd, at: Timestamp) -> Result<(), StoreError> {
    let err = db_error(loc);
    // A look-up, then a delete by primary key only when there is an entry: `DELETE … RETURNING`
    // gathers its rows in an ephemeral table, a B-tree opened and zeroed on every call, which was
    // a third of a push's instructions on the connection thread (callgrind).
    let key: Option<Option<String>> = conn
        .prepare_cached("SELECT key FROM journal WHERE id = ?1")
        .and_then(|mut s| s.query_row([id], |r| r.get(0)).optional())
        .map_err(&err)?;
    let Some(key) = key else { return Ok(()) };
    conn.prepare_cached("DELETE FROM journal WHERE id = ?1").and_then(|mut s| s.execute([id])).map_err(&err)?;
    if let (Some(key), Some(outcome)) = (key, rules::settles_as(end)) {
        conn.prepare_cached(
            "INSERT INTO settled (key, id, outcome, at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(key) DO UPDATE SET id = excluded.id, outcome = excluded.outcome, at = excluded.at",
        )
        .and_then(|mut s| s.execute(params![key, id, outcome.as_str(), ms(at)]))
        .map_err(&err)?;
    }
    Ok(())
}

/// A record as its row stores it, worked out on the caller's task (the JSON, and the filter
/// columns, whose page host needs the page URL parsed) so the connection thread only writes.
#[derive(Debug)]
pub(super) struct RecordColumns {
    id: String,
    state: RecordState,
    parked_reason: Option<String>,
    reason: String,
    class: &'static str,
    sitekey: Option<String>,
    page_host: Option<String>,
    dead_lettered_at: i64,
    deliveries: u32,
    json: String,
}

impl RecordColumns {
    /// `record` as pushed: a lease is the store's, not something a caller can push.
    pub(super) fn of(record: &DeadLetterRecord) -> Result<RecordColumns, StoreError> {
        let json = super::encode(record, || format!("record {}", record.id))?;
        Ok(RecordColumns {
            id: record.id.clone(),
            state: rules::pushed_state(record.state),
            parked_reason: rules::pushed_parked_reason(record.state, record.parked_reason.clone()),
            reason: record.reason.clone(),
            class: record.class.as_str(),
            sitekey: record.task.sitekey().map(str::to_string),
            page_host: record.page_host(),
            dead_lettered_at: ms(record.dead_lettered_at),
            deliveries: record.deliveries,
            json,
        })
    }
}

/// Inserts or replaces the record; a replaced record under a lease keeps it unless the new
/// state is parked.
/// Inserts or replaces the record; a replaced record keeps its lease unless the pushed one is
/// parked (`rules::push_keeps_lease`, here the `CASE`s of one statement).
fn write_record(conn: &Connection, loc: &str, r: &RecordColumns) -> Result<(), StoreError> {
    conn.prepare_cached(
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
    )
    .and_then(|mut s| {
        s.execute(params![
            r.id,
            r.state.as_str(),
            r.reason,
            r.class,
            r.sitekey,
            r.page_host,
            r.dead_lettered_at,
            r.deliveries,
            r.parked_reason,
            r.json,
        ])
    })
    .map_err(db_error(loc))?;
    Ok(())
}

pub(super) fn push(
    conn: &Connection,
    loc: &str,
    record: &RecordColumns,
    capacity: Option<u64>,
) -> Result<PushOutcome, StoreError> {
    let err = db_error(loc);
    let replaced = conn
        .prepare_cached("SELECT 1 FROM records WHERE id = ?1")
        .and_then(|mut s| s.exists([&record.id]))
        .map_err(&err)?;
    write_record(conn, loc, record)?;
    forget_entry(conn, loc, &record.id, EntryEnd::Pushed, from_ms(record.dead_lettered_at))?;
    let mut evicted = Vec::new();
    if let Some(cap) = capacity {
        let total: i64 = conn
            .prepare_cached("SELECT COUNT(*) FROM records")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(&err)?;
        let excess = count(total).saturating_sub(cap);
        if excess > 0 {
            // Oldest ready records first, then oldest parked ones, walking the age index (the cost
            // follows the records passed over). Never one a replayer may hold: push has no
            // clock, so every unsettled lease counts.
            for state in ["ready", "parked"] {
                let still = excess - evicted.len() as u64;
                if still == 0 {
                    break;
                }
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT id FROM records INDEXED BY records_age WHERE state = ?1 \
                         ORDER BY dead_lettered_at, id LIMIT ?2",
                    )
                    .map_err(&err)?;
                let rows = stmt
                    .query_map(params![state, i64::try_from(still).unwrap_or(i64::MAX)], |r| r.get::<_, String>(0))
                    .map_err(&err)?;
                for id in rows {
                    evicted.push(id.map_err(&err)?);
                }
            }
            let mut delete = conn.prepare_cached("DELETE FROM records WHERE id = ?1").map_err(&err)?;
            for id in &evicted {
                delete.execute([id]).map_err(&err)?;
            }
            bump(conn, loc, "dropped", evicted.len() as u64)?;
        }
    }
    Ok(PushOutcome { replaced, evicted })
}

/// A lease handed out: the row as stored (deliveries already counting this lease) and its nonce.
#[derive(Debug)]
pub(super) struct RawLease {
    pub row: RawRow,
    pub nonce: String,
}

pub(super) fn receive(
    conn: &Connection,
    loc: &str,
    filter: &Filter,
    max: usize,
    lease_until: Timestamp,
    now: Timestamp,
    max_deliveries: u32,
) -> Result<Vec<RawLease>, StoreError> {
    let err = db_error(loc);
    // Each row chosen, with its delivery count once leased.
    let mut chosen: Vec<(RawRow, u32)> = Vec::new();
    let mut exhausted: Vec<RawRow> = Vec::new();
    scan(conn, loc, filter, RECEIVABLE, now, |row, _| {
        match rules::on_delivery(row.deliveries(), max_deliveries) {
            Delivery::Deliver { deliveries } => chosen.push((row, deliveries)),
            // Its last lease expired without an abandon: park it as abandon would have.
            Delivery::Park => exhausted.push(row),
        }
        Ok(chosen.len() < max)
    })?;
    let expired = chosen.iter().map(|(r, _)| r).chain(&exhausted).filter(|r| r.state == "leased").count();
    if !exhausted.is_empty() {
        let mut park = conn
            .prepare_cached(
                "UPDATE records SET state = 'parked', lease_until = NULL, lease_nonce = NULL, \
                 parked_reason = ?2 WHERE id = ?1",
            )
            .map_err(&err)?;
        for row in &exhausted {
            park.execute(params![row.id, reason::MAX_DELIVERY_COUNT_EXCEEDED]).map_err(&err)?;
        }
    }
    let mut lease = conn
        .prepare_cached(
            "UPDATE records SET state = 'leased', lease_until = ?2, lease_nonce = ?3, deliveries = ?4 WHERE id = ?1",
        )
        .map_err(&err)?;
    let mut out = Vec::with_capacity(chosen.len());
    for (mut row, deliveries) in chosen {
        let nonce = new_nonce();
        row.deliveries = i64::from(deliveries);
        lease.execute(params![row.id, ms(lease_until), nonce, row.deliveries]).map_err(&err)?;
        out.push(RawLease { row, nonce });
    }
    bump(conn, loc, "abandoned", expired as u64)?;
    Ok(out)
}

const COMPLETE: &str = "DELETE FROM records WHERE id = ?1 AND state = 'leased' AND lease_nonce = ?2";

pub(super) fn complete(conn: &Connection, loc: &str, token: &LeaseToken) -> Result<(), StoreError> {
    let removed = conn
        .prepare_cached(COMPLETE)
        .and_then(|mut s| s.execute(params![token.id, token.nonce]))
        .map_err(db_error(loc))?;
    if removed == 0 {
        return Err(StoreError::LeaseLost { id: token.id.clone() });
    }
    bump(conn, loc, "completed", 1)
}

/// `complete` of each token in turn, in the caller's transaction: a lost lease is that token's
/// answer (nothing else changes for it); a database error fails the whole call.
pub(super) fn complete_many(
    conn: &Connection,
    loc: &str,
    tokens: &[LeaseToken],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let err = db_error(loc);
    let mut delete = conn.prepare_cached(COMPLETE).map_err(&err)?;
    let mut completed = 0u64;
    let mut out = Vec::with_capacity(tokens.len());
    for token in tokens {
        if delete.execute(params![token.id, token.nonce]).map_err(&err)? == 0 {
            out.push(Err(StoreError::LeaseLost { id: token.id.clone() }));
        } else {
            completed += 1;
            out.push(Ok(()));
        }
    }
    bump(conn, loc, "completed", completed)?;
    Ok(out)
}

/// The replacement an `abandon` stores (its id already the token's), and whether the replayer
/// asked to park it, with what reason.
#[derive(Debug)]
pub(super) struct Update {
    pub row: RecordColumns,
    pub park: Option<String>,
}

pub(super) fn abandon(
    conn: &Connection,
    loc: &str,
    token: &LeaseToken,
    update: Option<&Update>,
    max_deliveries: u32,
) -> Result<RecordState, StoreError> {
    let err = db_error(loc);
    let deliveries: Option<i64> = conn
        .prepare_cached("SELECT deliveries FROM records WHERE id = ?1 AND state = 'leased' AND lease_nonce = ?2")
        .and_then(|mut s| s.query_row(params![token.id, token.nonce], |r| r.get(0)).optional())
        .map_err(&err)?;
    let Some(deliveries) = deliveries else {
        return Err(StoreError::LeaseLost { id: token.id.clone() });
    };
    let deliveries = u32::try_from(deliveries).unwrap_or(0);
    let parked_reason = match rules::after_abandon(deliveries, max_deliveries, update.and_then(|u| u.park.as_deref())) {
        Abandoned::Parked(why) => Some(why),
        Abandoned::Ready => None,
    };
    let state = if parked_reason.is_some() { RecordState::Parked } else { RecordState::Ready };
    match update.map(|u| &u.row) {
        Some(u) => conn
            .prepare_cached(
                "UPDATE records SET state = ?2, reason = ?3, class = ?4, sitekey = ?5, page_host = ?6, \
                 dead_lettered_at = ?7, lease_until = NULL, lease_nonce = NULL, parked_reason = ?8, json = ?9 \
                 WHERE id = ?1",
            )
            .and_then(|mut s| {
                s.execute(params![
                    token.id,
                    state.as_str(),
                    u.reason,
                    u.class,
                    u.sitekey,
                    u.page_host,
                    u.dead_lettered_at,
                    parked_reason,
                    u.json,
                ])
            }),
        None => conn
            .prepare_cached(
                "UPDATE records SET state = ?2, lease_until = NULL, lease_nonce = NULL, parked_reason = ?3 \
                 WHERE id = ?1",
            )
            .and_then(|mut s| s.execute(params![token.id, state.as_str(), parked_reason])),
    }
    .map_err(&err)?;
    // A failed replay is over: its journal entry goes with the lease.
    conn.prepare_cached("DELETE FROM journal WHERE id = ?1").and_then(|mut s| s.execute([&token.id])).map_err(&err)?;
    bump(conn, loc, "abandoned", 1)?;
    Ok(state)
}

pub(super) fn park(conn: &Connection, loc: &str, id: &str, why: &str) -> Result<bool, StoreError> {
    let n = conn
        .prepare_cached(
            "UPDATE records SET state = 'parked', parked_reason = ?2, lease_until = NULL, lease_nonce = NULL \
             WHERE id = ?1",
        )
        .and_then(|mut s| s.execute(params![id, why]))
        .map_err(db_error(loc))?;
    Ok(n > 0)
}

pub(super) fn unpark(conn: &Connection, loc: &str, id: &str) -> Result<bool, StoreError> {
    let n = conn
        .prepare_cached(
            "UPDATE records SET state = 'ready', parked_reason = NULL, deliveries = 0 WHERE id = ?1 AND state = 'parked'",
        )
        .and_then(|mut s| s.execute([id]))
        .map_err(db_error(loc))?;
    Ok(n > 0)
}

/// Rows matching `filter`, oldest first, `offset` skipped, at most `limit`, with their state at `now`.
pub(super) fn peek(
    conn: &Connection,
    loc: &str,
    filter: &Filter,
    offset: usize,
    limit: usize,
    now: Timestamp,
) -> Result<Vec<(RawRow, RecordState)>, StoreError> {
    let mut out = Vec::new();
    if limit == 0 {
        return Ok(out);
    }
    let mut skip = offset;
    scan(conn, loc, filter, "", now, |row, state| {
        if skip > 0 {
            skip -= 1;
        } else {
            out.push((row, state));
        }
        Ok(out.len() < limit)
    })?;
    Ok(out)
}

pub(super) fn count_matching(conn: &Connection, loc: &str, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
    if filter.labels.is_empty() {
        // Everything else maps onto columns: let SQLite count.
        let (cond, args) = where_sql(filter, now);
        let n: i64 = conn
            .prepare_cached(&format!("SELECT COUNT(*) FROM records WHERE {cond}"))
            .and_then(|mut s| s.query_row(params_from_iter(args), |r| r.get(0)))
            .map_err(db_error(loc))?;
        return Ok(count(n));
    }
    let mut n = 0u64;
    scan(conn, loc, filter, "", now, |_, _| {
        n += 1;
        Ok(true)
    })?;
    Ok(n)
}

pub(super) fn purge(conn: &Connection, loc: &str, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
    delete_unleased(conn, loc, filter, now, |_| Ok(true))
}

/// Deletes the records `filter` selects that are not under a lease live at `now` and that
/// `chosen` accepts; returns how many went. The rule both purges apply: a lease is never broken.
fn delete_unleased(
    conn: &Connection,
    loc: &str,
    filter: &Filter,
    now: Timestamp,
    mut chosen: impl FnMut(&RawRow) -> Result<bool, StoreError>,
) -> Result<u64, StoreError> {
    let mut ids = Vec::new();
    scan(conn, loc, filter, "", now, |row, state| {
        if state != RecordState::Leased && chosen(&row)? {
            ids.push(row.id);
        }
        Ok(true)
    })?;
    let mut delete = conn.prepare_cached("DELETE FROM records WHERE id = ?1").map_err(db_error(loc))?;
    for id in &ids {
        delete.execute([id]).map_err(db_error(loc))?;
    }
    Ok(ids.len() as u64)
}

/// Retention's compare-and-delete (issue 44, finding 8): each of `records` that is still the
/// version given and not under a lease live at `now` (the file's host's clock, which is the
/// store's), in the caller's write transaction.
pub(super) fn purge_unchanged(
    conn: &Connection,
    loc: &str,
    records: &[DeadLetterRecord],
    now: Timestamp,
) -> Result<u64, StoreError> {
    let by_id = Filter { ids: records.iter().map(|r| r.id.clone()).collect(), ..Filter::default() };
    delete_unleased(conn, loc, &by_id, now, |row| {
        let stored = decode_record(&row.id, &row.json)?;
        Ok(records.iter().any(|given| given.same_version(&stored)))
    })
}

/// (total, parked, leased at `now`, oldest), (dropped, completed, abandoned), in flight: one snapshot.
pub(super) type RawStats = ((u64, u64, u64, Option<Timestamp>), (u64, u64, u64), u64);

pub(super) fn stats(conn: &mut Connection, loc: &str, now: Timestamp) -> Result<RawStats, StoreError> {
    let err = db_error(loc);
    // One read transaction, so the numbers agree with each other.
    let tx = conn.transaction().map_err(&err)?;
    // Each count from an index rather than one pass over every row: the rows hold the records'
    // JSON, and dashboards ask every few seconds. Parked records from their partial index
    // (their number); live leases from the age order, which carries state and lease end (its
    // entries are a few dozen bytes, so some milliseconds per 100,000 records), because a
    // partial index of leases would cost every lease and complete a page more.
    let count_rows = |sql: &str, args: &[i64]| -> Result<i64, StoreError> {
        tx.prepare_cached(sql).and_then(|mut s| s.query_row(params_from_iter(args), |r| r.get(0))).map_err(&err)
    };
    let total = count_rows("SELECT COUNT(*) FROM records", &[])?;
    let parked = count_rows("SELECT COUNT(*) FROM records INDEXED BY records_parked WHERE state = 'parked'", &[])?;
    let leased = count_rows(
        "SELECT COUNT(*) FROM records INDEXED BY records_age WHERE state = 'leased' AND lease_until > ?1",
        &[ms(now)],
    )?;
    let oldest: Option<i64> = tx
        .prepare_cached("SELECT MIN(dead_lettered_at) FROM records")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(&err)?;
    let counter = |name: &str| -> Result<u64, StoreError> {
        let v: Option<i64> = tx
            .prepare_cached("SELECT value FROM counters WHERE name = ?1")
            .and_then(|mut s| s.query_row([name], |r| r.get(0)).optional())
            .map_err(&err)?;
        Ok(count(v.unwrap_or(0)))
    };
    let counters = (counter("dropped")?, counter("completed")?, counter("abandoned")?);
    let in_flight: i64 = tx
        .prepare_cached("SELECT COUNT(*) FROM journal")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(&err)?;
    Ok(((count(total), count(parked), count(leased), oldest.map(from_ms)), counters, count(in_flight)))
}

/// Inserts the entry (unless `must_exist`), or replaces it if it is still `owner`'s (the fence:
/// an entry another owner claimed, or one gone when it must exist, is left alone and the write
/// fails with `Taken`): `rules::journal_write_allowed`, as the statement's `WHERE`.
pub(super) fn journal_write(
    conn: &Connection,
    loc: &str,
    id: &str,
    key: Option<&str>,
    owner: Option<&str>,
    json: &str,
    must_exist: bool,
) -> Result<(), StoreError> {
    let sql = if must_exist {
        "UPDATE journal SET key = ?2, json = ?3 WHERE id = ?1 AND json_extract(json, '$.owner') IS ?4"
    } else {
        "INSERT INTO journal (id, key, json) VALUES (?1, ?2, ?3) \
         ON CONFLICT(id) DO UPDATE SET key = excluded.key, json = excluded.json \
         WHERE json_extract(journal.json, '$.owner') IS ?4"
    };
    let written =
        conn.prepare_cached(sql).and_then(|mut s| s.execute(params![id, key, json, owner])).map_err(db_error(loc))?;
    if written == 0 {
        return Err(StoreError::Taken { id: id.to_string() });
    }
    Ok(())
}

pub(super) fn journal_forget(conn: &Connection, loc: &str, id: &str, now: Timestamp) -> Result<(), StoreError> {
    forget_entry(conn, loc, id, EntryEnd::Forgotten, now)?;
    // A replayed task that is now solved leaves no dead letter behind.
    let removed = conn
        .prepare_cached("DELETE FROM records WHERE id = ?1")
        .and_then(|mut s| s.execute([id]))
        .map_err(db_error(loc))?;
    bump(conn, loc, "completed", removed as u64)
}

/// Sets the `owner` of entry `id` to `to` (removes it for `None`) if it is
/// `from` (absent for `None`), in one statement; returns the entry's JSON as claimed,
/// or `None` when the entry is gone or someone else owns it. The JSON functions edit the text
/// in place, so every other field reads back as it was written. `rules::journal_claim_allowed`,
/// as the statement's `WHERE`.
pub(super) fn journal_claim(
    conn: &Connection,
    loc: &str,
    id: &str,
    from: Option<&str>,
    to: Option<&str>,
) -> Result<Option<String>, StoreError> {
    conn.prepare_cached(
        "UPDATE journal SET json = CASE WHEN ?3 IS NULL THEN json_remove(json, '$.owner') \
                                   ELSE json_set(json, '$.owner', ?3) END \
         WHERE id = ?1 AND json_extract(json, '$.owner') IS ?2 RETURNING json",
    )
    .and_then(|mut s| s.query_row(params![id, from, to], |r| r.get(0)).optional())
    .map_err(db_error(loc))
}

/// (id, JSON) of every journal entry, by id.
pub(super) fn journal_entries(conn: &Connection, loc: &str) -> Result<Vec<(String, String)>, StoreError> {
    let err = db_error(loc);
    let mut stmt = conn.prepare_cached("SELECT id, json FROM journal ORDER BY id").map_err(&err)?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(&err)?;
    rows.collect::<Result<_, _>>().map_err(&err)
}

/// `WHERE` for the settled keys starting with `prefix`, with its arguments.
fn prefix_range(prefix: &str) -> (&'static str, Vec<String>) {
    match prefix_end(prefix) {
        Some(end) => ("key >= ?1 AND key < ?2", vec![prefix.to_string(), end]),
        None => ("key >= ?1", vec![prefix.to_string()]),
    }
}

pub(super) fn settled(conn: &Connection, loc: &str, prefix: &str) -> Result<Vec<SettledKey>, StoreError> {
    let err = db_error(loc);
    let (cond, args) = prefix_range(prefix);
    let mut stmt = conn
        .prepare_cached(&format!("SELECT key, id, outcome, at FROM settled WHERE {cond} ORDER BY key"))
        .map_err(&err)?;
    let rows = stmt
        .query_map(params_from_iter(args), |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?))
        })
        .map_err(&err)?;
    let mut out = Vec::new();
    for row in rows {
        let (key, id, outcome, at) = row.map_err(&err)?;
        let outcome = match outcome.as_str() {
            "solved" => Settlement::Solved,
            "dead_lettered" => Settlement::DeadLettered,
            other => return Err(StoreError::Decode(format!("settled key {key:?} has unknown outcome {other:?}"))),
        };
        out.push(SettledKey { key, id, outcome, at: from_ms(at) });
    }
    Ok(out)
}

pub(super) fn clear_settled(conn: &Connection, loc: &str, prefix: &str) -> Result<u64, StoreError> {
    let (cond, args) = prefix_range(prefix);
    let n = conn
        .prepare_cached(&format!("DELETE FROM settled WHERE {cond}"))
        .and_then(|mut s| s.execute(params_from_iter(args)))
        .map_err(db_error(loc))?;
    Ok(n as u64)
}
