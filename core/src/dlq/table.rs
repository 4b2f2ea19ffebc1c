//! The DLQ store contract written once, over a minimal table backend.
//!
//! [`TableStore`] implements every rule of [`DlqStore`] (leases, delivery
//! limits, parking, capacity, the journal, settled keys) on top of a
//! [`TableBackend`] that only knows how to get, scan and atomically write rows
//! of four tables (six for a store that several processes share and that so
//! keeps the fleet ledger: see [`fleet`]), and the audit trail's (`audit`, feature `audit`, not in the browser). The memory store ([`MemoryTable`]), the browser's
//! IndexedDB store and every store an application writes in Python or
//! JavaScript are table backends; SQLite calls the same rule functions (keeping
//! a rule as SQL only where it is a `WHERE` filter) and Redis (Lua) keeps atomic
//! server-side versions checked against the rules' case table; all of them run
//! the conformance suite (`dlq::testkit`).
//!
//! Lease rules (decided by the pure functions of [`rules`](crate::dlq::rules), which SQLite
//! calls too and against whose case table every backend, Redis's Lua included, is tested):
//! - a lease is live while `now < lease_until`; while live the record shows as
//!   `leased` and no other receiver gets it;
//! - an expired lease makes the record receivable again, but its token stays
//!   valid until the record is actually delivered again (the token is then
//!   stale), so a slow replayer that finishes before anyone else took over
//!   may still settle it;
//! - a record is never delivered more than `max_deliveries` times: `abandon`
//!   parks it at the limit, and `receive` parks (instead of delivering) a
//!   record whose expired lease was its last allowed delivery;
//! - a record whose id has a journal entry is being replayed and is never
//!   received;
//! - `push` of an id that is under a lease replaces the content but keeps the
//!   lease (the record is not handed to a second replayer), unless the pushed
//!   record is parked;
//! - `abandon(update)` stores the update under the token's id with the store's
//!   own delivery count: the store, not the replayer, counts deliveries.
//!
//! Atomicity: each operation reads what it needs, then commits all its
//! changes with one [`TableBackend::write`]. Operations of one store are
//! serialised in process; backends shared by several processes provide
//! [`TableBackend::lock`] (the browser uses a Web Lock).

use core::sync::atomic::AtomicBool;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::class::reason;
#[cfg(feature = "audit")]
use crate::dlq::audit::AuditEntry;
use crate::dlq::record::{DeadLetterRecord, RecordState};
use crate::dlq::rules::{self, Abandoned, Delivery, EntryEnd};
#[cfg(feature = "edit")]
use crate::dlq::store::EditWrite;
use crate::dlq::store::{
    Claimed, DlqStore, Filter, LeaseToken, Leased, Page, PushOutcome, ReadyAsk, SettledKey, StoreError, StoreStats,
};
#[cfg(feature = "edit")]
use crate::dlq::Edited;
use crate::journal::JournalEntry;
use crate::support::cased;
use crate::support::json_read::{read_fields, Casing, FieldError, FromJson};
use crate::support::time::Timestamp;

#[cfg(feature = "fleet")]
pub use fleet::{AccountNaming, FleetAccountRow};

pub use crate::dlq::limits::DEFAULT_MAX_DELIVERIES;
use crate::dlq::limits::{LimitedStore, StoreLimits};

pub use crate::dlq::rules::PARKED_BY_REPLAYER;

/// The key of the one row of [`Table::Meta`].
pub const COUNTERS_KEY: &str = "counters";

/// The tables a backend keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// [`RecordRow`]s by record id.
    Records,
    /// [`JournalEntry`]s by id.
    Journal,
    /// [`SettledKey`]s by key.
    Settled,
    /// One [`Counters`] row, [`COUNTERS_KEY`].
    Meta,
    /// [`FleetAccountRow`]s by account id: only in a store keeping the fleet ledger. Feature
    /// `fleet`, not in the browser build, which keeps none (`docs/decisions/0049-host-stores-join-the-fleet.md`).
    #[cfg(feature = "fleet")]
    FleetAccounts,
    /// [`OwnerRow`](crate::fleet::OwnerRow)s by owner id: only in a store keeping the fleet ledger.
    #[cfg(feature = "fleet")]
    FleetOwners,
    /// [`AuditEntry`](crate::dlq::audit::AuditEntry)s by [`row_key`](crate::dlq::audit::row_key)
    /// of their id: the audit trail. Feature `audit`, not in the browser build (item 54).
    #[cfg(feature = "audit")]
    Audit,
}

impl Table {
    /// Every table of this build; a store that keeps no fleet ledger is never asked about the
    /// fleet's two.
    pub const ALL: &'static [Table] = &[
        Table::Records,
        Table::Journal,
        Table::Settled,
        Table::Meta,
        #[cfg(feature = "fleet")]
        Table::FleetAccounts,
        #[cfg(feature = "fleet")]
        Table::FleetOwners,
        #[cfg(feature = "audit")]
        Table::Audit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Table::Records => "records",
            Table::Journal => "journal",
            Table::Settled => "settled",
            Table::Meta => "meta",
            #[cfg(feature = "fleet")]
            Table::FleetAccounts => "fleet_accounts",
            #[cfg(feature = "fleet")]
            Table::FleetOwners => "fleet_owners",
            #[cfg(feature = "audit")]
            Table::Audit => "audit",
        }
    }

    pub fn parse(name: &str) -> Option<Table> {
        Table::ALL.iter().copied().find(|t| t.as_str() == name)
    }
}

/// A dead-letter record as a table keeps it: its stored state is `ready` or
/// `parked`; `leased` is derived from the lease.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecordRow {
    pub record: DeadLetterRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_nonce: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until: Option<Timestamp>,
}

/// Totals a store keeps besides its rows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub dropped: u64,
    pub completed: u64,
    pub abandoned: u64,
    /// Deliveries handed out, ever: makes every lease nonce unique.
    pub sequence: u64,
}

/// One row of one table.
#[derive(Clone, Debug, PartialEq)]
pub enum Row {
    Record(RecordRow),
    Journal(JournalEntry),
    Settled(SettledKey),
    Meta(Counters),
    #[cfg(feature = "fleet")]
    FleetAccount(FleetAccountRow),
    #[cfg(feature = "fleet")]
    FleetOwner(crate::fleet::OwnerRow),
    #[cfg(feature = "audit")]
    Audit(AuditRow),
}

/// An audit entry with its row key (the entry's id, zero-padded).
#[cfg(feature = "audit")]
#[derive(Clone, Debug, PartialEq)]
pub struct AuditRow {
    pub key: String,
    pub entry: crate::dlq::audit::AuditEntry,
}

#[cfg(feature = "audit")]
impl AuditRow {
    pub fn new(entry: crate::dlq::audit::AuditEntry) -> Self {
        AuditRow { key: crate::dlq::audit::row_key(entry.id), entry }
    }
}

impl Row {
    pub fn table(&self) -> Table {
        match self {
            Row::Record(_) => Table::Records,
            Row::Journal(_) => Table::Journal,
            Row::Settled(_) => Table::Settled,
            Row::Meta(_) => Table::Meta,
            #[cfg(feature = "fleet")]
            Row::FleetAccount(_) => Table::FleetAccounts,
            #[cfg(feature = "fleet")]
            Row::FleetOwner(_) => Table::FleetOwners,
            #[cfg(feature = "audit")]
            Row::Audit(_) => Table::Audit,
        }
    }

    /// The row's key in its table.
    pub fn key(&self) -> &str {
        match self {
            Row::Record(r) => &r.record.id,
            Row::Journal(e) => &e.id,
            Row::Settled(s) => &s.key,
            Row::Meta(_) => COUNTERS_KEY,
            #[cfg(feature = "fleet")]
            Row::FleetAccount(a) => &a.account,
            #[cfg(feature = "fleet")]
            Row::FleetOwner(o) => &o.owner,
            #[cfg(feature = "audit")]
            Row::Audit(a) => &a.key,
        }
    }

    /// The row as JSON (the shape host backends store).
    pub fn to_json(&self) -> Value {
        let value = match self {
            Row::Record(r) => cased::to_value(r, Casing::Snake),
            Row::Journal(e) => cased::to_value(e, Casing::Snake),
            Row::Settled(s) => cased::to_value(s, Casing::Snake),
            Row::Meta(c) => cased::to_value(c, Casing::Snake),
            #[cfg(feature = "fleet")]
            Row::FleetAccount(a) => cased::to_value(a, Casing::Snake),
            #[cfg(feature = "fleet")]
            Row::FleetOwner(o) => cased::to_value(o, Casing::Snake),
            #[cfg(feature = "audit")]
            Row::Audit(a) => cased::to_value(&a.entry, Casing::Snake),
        };
        value.unwrap_or(Value::Null)
    }

    /// Reads a row of `table` back from its JSON, naming the bad field.
    pub fn from_json(table: Table, value: Value) -> Result<Row, FieldError> {
        Ok(match table {
            Table::Records => Row::Record(RecordRow::from_json(value)?),
            Table::Journal => Row::Journal(JournalEntry::from_json(value)?),
            Table::Settled => Row::Settled(SettledKey::from_json(value)?),
            Table::Meta => Row::Meta(Counters::from_json(value)?),
            #[cfg(feature = "fleet")]
            Table::FleetAccounts => Row::FleetAccount(FleetAccountRow::from_json(value)?),
            #[cfg(feature = "fleet")]
            Table::FleetOwners => Row::FleetOwner(crate::fleet::OwnerRow::from_json(value)?),
            #[cfg(feature = "audit")]
            Table::Audit => Row::Audit(AuditRow::new(crate::dlq::audit::AuditEntry::from_json(value)?)),
        })
    }
}

read_fields!(
    RecordRow, open, record: req, lease_nonce: opt, lease_until: opt
);

read_fields!(
    Counters, open, dropped: or_default, completed: or_default, abandoned: or_default, sequence: or_default
);

/// A change committed by [`TableBackend::write`].
// A short-lived batch item: boxing every row would cost an allocation per write for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// Insert or replace the row under its own key.
    Put(Row),
    Delete(Table, String),
}

/// What a store keeps its rows in. Implementations only move rows; every
/// rule is [`TableStore`]'s.
#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
pub trait TableBackend: crate::dlq::store::MaybeSendSync {
    async fn get(&self, table: Table, key: &str) -> Result<Option<Row>, StoreError>;
    /// Every row of `table` for which `keep` is true, in any order.
    async fn scan(&self, table: Table, keep: &(dyn for<'r> Fn(&'r Row) -> bool + Sync))
        -> Result<Vec<Row>, StoreError>;
    /// Applies every write, or none.
    async fn write(&self, writes: Vec<Write>) -> Result<(), StoreError>;
    /// Exclusive access against other processes sharing the same storage, held
    /// until [`unlock`](Self::unlock). Backends private to one process need none.
    async fn lock(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Releases the lock, or a `lock` request still waiting. Also called when nothing
    /// is held: after an operation was dropped between its `lock` and its `unlock`
    /// (a caller's timeout), the store's next operation unlocks first; then it does
    /// what it can (cancel the waiting request) or nothing.
    async fn unlock(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// The DLQ store over a table backend. See the module documentation.
#[derive(Debug)]
pub struct TableStore<B> {
    backend: B,
    limits: StoreLimits,
    /// Fair (FIFO): operations run in the order they asked for it, as SQLite's connection thread and
    /// Redis's connection run calls, so a busy caller cannot starve another. (With futures' unfair
    /// `Mutex` the browser's seeds batch once counted a replayed record after `replay()`: the result
    /// streams ended before their acknowledgements were written, which call order had hidden. They
    /// now end after a flush, `client/src/stream_end.rs`.)
    serial: async_lock::Mutex<()>,
    /// Set from an operation's `lock` until its `unlock` returned: still set when that
    /// operation was dropped in between (its caller timed out), so the backend may hold
    /// or be waiting for a lock nobody will release. The next operation unlocks first.
    lock_unreleased: AtomicBool,
    /// Set when several processes share the backend: the store then keeps the fleet ledger.
    #[cfg(feature = "fleet")]
    fleet: Option<fleet::Fleet<B>>,
}

impl<B> LimitedStore for TableStore<B> {
    fn limits_mut(&mut self) -> &mut StoreLimits {
        &mut self.limits
    }
}

impl<B: TableBackend> TableStore<B> {
    /// An unbounded store over `backend` with the default delivery limit (10).
    pub fn over(backend: B) -> Self {
        TableStore {
            backend,
            limits: StoreLimits::default(),
            serial: async_lock::Mutex::new(()),
            lock_unreleased: AtomicBool::new(false),
            #[cfg(feature = "fleet")]
            fleet: None,
        }
    }

    /// The limits it was built with ([`LimitedStore`]).
    pub fn limits(&self) -> StoreLimits {
        self.limits
    }

    pub fn backend(&self) -> &B {
        &self.backend
    }

    async fn record(&self, id: &str) -> Result<Option<RecordRow>, StoreError> {
        match self.backend.get(Table::Records, id).await? {
            Some(Row::Record(r)) => Ok(Some(r)),
            Some(other) => Err(wrong_row(Table::Records, &other)),
            None => Ok(None),
        }
    }

    async fn journal_entry(&self, id: &str) -> Result<Option<JournalEntry>, StoreError> {
        match self.backend.get(Table::Journal, id).await? {
            Some(Row::Journal(e)) => Ok(Some(e)),
            Some(other) => Err(wrong_row(Table::Journal, &other)),
            None => Ok(None),
        }
    }

    async fn counters(&self) -> Result<Counters, StoreError> {
        match self.backend.get(Table::Meta, COUNTERS_KEY).await? {
            Some(Row::Meta(c)) => Ok(c),
            Some(other) => Err(wrong_row(Table::Meta, &other)),
            None => Ok(Counters::default()),
        }
    }

    async fn records(&self, keep: &(dyn Fn(&RecordRow) -> bool + Sync)) -> Result<Vec<RecordRow>, StoreError> {
        let keep_row = |row: &Row| matches!(row, Row::Record(r) if keep(r));
        let rows = self.backend.scan(Table::Records, &keep_row).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            match row {
                Row::Record(r) => out.push(r),
                other => return Err(wrong_row(Table::Records, &other)),
            }
        }
        // Oldest first, by dead_lettered_at then id (the order of a page). Ids are unique, so the
        // order is total and an unstable sort (less code in the .wasm) gives the same result.
        crate::support::sort::sort_unstable_by(&mut out, |a, b| {
            (a.record.dead_lettered_at, &a.record.id).cmp(&(b.record.dead_lettered_at, &b.record.id))
        });
        Ok(out)
    }

    async fn matching(&self, filter: &Filter, now: Timestamp) -> Result<Vec<RecordRow>, StoreError> {
        self.records(&|r| filter.matches(&r.record, state(r, now))).await
    }

    /// The writes that remove `entry` (if any) as `end` does, settling its key as that end settles it.
    fn settle(entry: Option<&JournalEntry>, end: EntryEnd, at: Timestamp, writes: &mut Vec<Write>) {
        if let Some(entry) = entry {
            writes.push(Write::Delete(Table::Journal, entry.id.clone()));
            if let (Some(key), Some(outcome)) = (&entry.key, rules::settles_as(end)) {
                writes.push(Write::Put(Row::Settled(SettledKey {
                    key: key.clone(),
                    id: entry.id.clone(),
                    outcome,
                    at,
                })));
            }
        }
    }

    async fn push_locked(&self, mut record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        record.parked_reason = rules::pushed_parked_reason(record.state, record.parked_reason.take());
        record.state = rules::pushed_state(record.state);
        let mut writes = Vec::new();
        let entry = self.journal_entry(&record.id).await?;
        Self::settle(entry.as_ref(), EntryEnd::Pushed, record.dead_lettered_at, &mut writes);
        // Keep the lease of a replaced record so that it is not handed out twice;
        // pushing a parked record cancels it.
        let old = self.record(&record.id).await?;
        let replaced = old.is_some();
        let (lease_nonce, lease_until) = match old {
            Some(old) if rules::push_keeps_lease(record.state) => (old.lease_nonce, old.lease_until),
            _ => (None, None),
        };
        let row = RecordRow { record, lease_nonce, lease_until };
        let mut evicted = Vec::new();
        if let Some(capacity) = self.limits.capacity() {
            evicted = self.evictions(capacity, &row).await?;
        }
        let pushed_evicted = evicted.contains(&row.record.id);
        if !pushed_evicted {
            writes.push(Write::Put(Row::Record(row)));
        }
        if !evicted.is_empty() {
            let mut counters = self.counters().await?;
            counters.dropped += evicted.len() as u64;
            for gone in &evicted {
                writes.push(Write::Delete(Table::Records, gone.clone()));
            }
            writes.push(Write::Put(Row::Meta(counters)));
        }
        self.backend.write(writes).await?;
        Ok(PushOutcome { replaced, evicted })
    }

    /// Ids to evict so that the store holds at most `capacity` records once `pushed` is in:
    /// oldest ready first, then oldest parked. `push` has no clock, so any unsettled lease
    /// counts as live: evicting a record a replayer may still be working on would lose its
    /// outcome. The pushed record itself may be the one to go.
    async fn evictions(&self, capacity: u64, pushed: &RecordRow) -> Result<Vec<String>, StoreError> {
        let mut all = self.records(&|r| r.record.id != pushed.record.id).await?;
        all.push(pushed.clone());
        crate::support::sort::sort_unstable_by(&mut all, |a, b| {
            (a.record.dead_lettered_at, &a.record.id).cmp(&(b.record.dead_lettered_at, &b.record.id))
        });
        let mut excess = all.len().saturating_sub(usize::try_from(capacity).unwrap_or(usize::MAX));
        let mut evicted = Vec::new();
        for wanted in [RecordState::Ready, RecordState::Parked] {
            for row in all.iter().filter(|r| r.lease_nonce.is_none() && r.record.state == wanted) {
                if excess == 0 {
                    return Ok(evicted);
                }
                evicted.push(row.record.id.clone());
                excess -= 1;
            }
        }
        Ok(evicted)
    }

    async fn receive_locked(&self, ask: &ReadyAsk) -> Result<Vec<Leased>, StoreError> {
        let (filter, max, now) = (&ask.filter, ask.max.get(), ask.now);
        let candidates = self
            .records(&|r| {
                // Being replayed is checked below, against the journal read once.
                rules::lease_eligible(r.record.state, r.lease_until, now, false)
                    && filter.matches(&r.record, RecordState::Ready)
            })
            .await?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        // Built by inserting, not `collect()`: `BTreeSet::from_iter` brings a stable sort's code
        // into the .wasm for this one set.
        let mut in_flight = std::collections::BTreeSet::new();
        for id in self.journal_ids().await? {
            in_flight.insert(id);
        }
        let mut counters = self.counters().await?;
        let mut writes = Vec::new();
        let mut out = Vec::new();
        for mut row in candidates {
            if out.len() >= max {
                break;
            }
            if in_flight.contains(&row.record.id) {
                continue; // being replayed; `recover` finishes it
            }
            counters.sequence += 1;
            let expired = row.lease_nonce.take().is_some();
            row.lease_until = None;
            if expired {
                counters.abandoned += 1;
            }
            if let Delivery::Deliver { deliveries } =
                rules::on_delivery(row.record.deliveries, self.limits.max_deliveries())
            {
                row.record.deliveries = deliveries;
                let nonce = format!("{}.{}", row.record.deliveries, counters.sequence);
                let until = ask.lease_until;
                row.lease_nonce = Some(nonce.clone());
                row.lease_until = Some(until);
                let mut record = row.record.clone();
                record.state = RecordState::Leased;
                out.push(Leased { token: LeaseToken { id: row.record.id.clone(), nonce }, record, lease_until: until });
            } else {
                park(&mut row, reason::MAX_DELIVERY_COUNT_EXCEEDED);
            }
            writes.push(Write::Put(Row::Record(row)));
        }
        writes.push(Write::Put(Row::Meta(counters)));
        self.backend.write(writes).await?;
        Ok(out)
    }

    async fn journal_ids(&self) -> Result<Vec<String>, StoreError> {
        let rows = self.backend.scan(Table::Journal, &|_| true).await?;
        Ok(rows.iter().map(|r| r.key().to_string()).collect())
    }

    async fn complete_locked(&self, token: &LeaseToken) -> Result<(), StoreError> {
        match self.record(&token.id).await? {
            Some(row) if holds(&row, token) => {
                let mut counters = self.counters().await?;
                counters.completed += 1;
                self.backend
                    .write(vec![Write::Delete(Table::Records, token.id.clone()), Write::Put(Row::Meta(counters))])
                    .await
            }
            _ => Err(StoreError::LeaseLost { id: token.id.clone() }),
        }
    }

    async fn abandon_locked(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
    ) -> Result<RecordState, StoreError> {
        let Some(mut row) = self.record(&token.id).await?.filter(|r| holds(r, token)) else {
            return Err(StoreError::LeaseLost { id: token.id.clone() });
        };
        row.lease_nonce = None;
        row.lease_until = None;
        let mut asked_park = None;
        if let Some(update) = update {
            let returned = rules::returned_record(&token.id, update);
            asked_park = returned.asked_park;
            row.record = DeadLetterRecord { deliveries: row.record.deliveries, ..returned.record };
        }
        let state =
            match rules::after_abandon(row.record.deliveries, self.limits.max_deliveries(), asked_park.as_deref()) {
                Abandoned::Parked(why) => {
                    park(&mut row, why);
                    RecordState::Parked
                }
                Abandoned::Ready => RecordState::Ready,
            };
        let mut counters = self.counters().await?;
        counters.abandoned += 1;
        self.backend
            .write(vec![
                Write::Delete(Table::Journal, token.id.clone()),
                Write::Put(Row::Record(row)),
                Write::Put(Row::Meta(counters)),
            ])
            .await?;
        Ok(state)
    }

    async fn park_locked(&self, id: &str, why: &str) -> Result<bool, StoreError> {
        let Some(mut row) = self.record(id).await? else { return Ok(false) };
        park(&mut row, why);
        self.backend.write(vec![Write::Put(Row::Record(row))]).await?;
        Ok(true)
    }

    async fn unpark_locked(&self, id: &str) -> Result<bool, StoreError> {
        match self.record(id).await? {
            Some(mut row) if row.record.state == RecordState::Parked => {
                row.record.state = RecordState::Ready;
                row.record.parked_reason = None;
                row.record.deliveries = 0;
                self.backend.write(vec![Write::Put(Row::Record(row))]).await?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn purge_locked(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let doomed = self.records(&|r| !live(r, now) && filter.matches(&r.record, state(r, now))).await?;
        if doomed.is_empty() {
            return Ok(0);
        }
        let n = doomed.len() as u64;
        self.backend.write(doomed.into_iter().map(|r| Write::Delete(Table::Records, r.record.id)).collect()).await?;
        Ok(n)
    }

    async fn purge_unchanged_locked(&self, records: &[DeadLetterRecord], now: Timestamp) -> Result<u64, StoreError> {
        let mut doomed = Vec::new();
        for given in records {
            if let Some(row) = self.record(&given.id).await? {
                if !live(&row, now) && row.record.same_version(given) {
                    doomed.push(Write::Delete(Table::Records, row.record.id));
                }
            }
        }
        let n = doomed.len() as u64;
        if n > 0 {
            self.backend.write(doomed).await?;
        }
        Ok(n)
    }

    #[cfg(feature = "edit")]
    async fn replace_edited_locked(&self, edit: &Edited, now: Timestamp) -> Result<EditWrite, StoreError> {
        let (before, edited) = (&edit.before, &edit.record);
        let Some(mut row) = self.record(&edited.id).await? else { return Ok(EditWrite::Gone) };
        if live(&row, now) || self.journal_entry(&edited.id).await?.is_some() {
            return Ok(EditWrite::Leased);
        }
        let stored = &row.record;
        if (&stored.task, &stored.labels, &stored.history) != (&before.task, &before.labels, &before.history) {
            return Ok(EditWrite::Changed);
        }
        row.record.task = edited.task.clone();
        row.record.labels = edited.labels.clone();
        row.record.history = edited.history.clone();
        self.backend.write(vec![Write::Put(Row::Record(row))]).await?;
        Ok(EditWrite::Written)
    }

    async fn stats_locked(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        let rows = self.records(&|_| true).await?;
        let counters = self.counters().await?;
        let in_flight = self.backend.scan(Table::Journal, &|_| true).await?.len() as u64;
        let mut stats = StoreStats {
            total: rows.len() as u64,
            dropped: counters.dropped,
            completed: counters.completed,
            abandoned: counters.abandoned,
            oldest_dead_lettered_at: rows.iter().map(|r| r.record.dead_lettered_at).min(),
            in_flight,
            ..StoreStats::default()
        };
        for row in &rows {
            match state(row, now) {
                RecordState::Ready => stats.ready += 1,
                RecordState::Leased => stats.leased += 1,
                RecordState::Parked => stats.parked += 1,
            }
        }
        Ok(stats)
    }

    async fn journal_forget_locked(&self, id: &str, now: Timestamp) -> Result<(), StoreError> {
        let entry = self.journal_entry(id).await?;
        let mut writes = Vec::new();
        Self::settle(entry.as_ref(), EntryEnd::Forgotten, now, &mut writes);
        if self.record(id).await?.is_some() {
            // A replayed task that is now solved leaves no dead letter behind.
            let mut counters = self.counters().await?;
            counters.completed += 1;
            writes.push(Write::Delete(Table::Records, id.to_string()));
            writes.push(Write::Put(Row::Meta(counters)));
        }
        if writes.is_empty() {
            return Ok(());
        }
        self.backend.write(writes).await
    }

    /// `must_exist`: `journal_update` (a missing entry is not written again).
    async fn journal_write_locked(&self, entry: &JournalEntry, must_exist: bool) -> Result<(), StoreError> {
        let held = self.journal_entry(&entry.id).await?;
        if !rules::journal_write_allowed(held.as_ref().map(|h| h.owner.as_deref()), entry.owner.as_deref(), must_exist)
        {
            return Err(StoreError::Taken { id: entry.id.clone() });
        }
        self.backend.write(vec![Write::Put(Row::Journal(entry.clone()))]).await
    }

    async fn journal_claim_locked(&self, id: &str, from: Option<&str>, to: Option<&str>) -> Claimed {
        let held = self.journal_entry(id).await?;
        let Some(mut entry) = held.filter(|e| rules::journal_claim_allowed(Some(e.owner.as_deref()), from)) else {
            return Ok(None);
        };
        entry.owner = to.map(str::to_string);
        self.backend.write(vec![Write::Put(Row::Journal(entry.clone()))]).await?;
        Ok(Some(entry))
    }

    async fn settled_locked(&self, prefix: &str) -> Result<Vec<SettledKey>, StoreError> {
        let keep = |row: &Row| row.key().starts_with(prefix);
        let mut out = Vec::new();
        for row in self.backend.scan(Table::Settled, &keep).await? {
            match row {
                Row::Settled(s) => out.push(s),
                other => return Err(wrong_row(Table::Settled, &other)),
            }
        }
        // Keys are unique: an unstable sort orders them the same.
        crate::support::sort::sort_unstable_by(&mut out, |a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    #[cfg(feature = "audit")]
    async fn audit_entries(&self) -> Result<Vec<crate::dlq::audit::AuditEntry>, StoreError> {
        let mut out = Vec::new();
        for row in self.backend.scan(Table::Audit, &|_| true).await? {
            match row {
                Row::Audit(a) => out.push(a.entry),
                other => return Err(wrong_row(Table::Audit, &other)),
            }
        }
        Ok(out)
    }

    /// The next id is one more than the largest: entries are never removed, so ids are never
    /// given twice (under the store's lock, so neither by two processes sharing a host store).
    #[cfg(feature = "audit")]
    async fn audit_append_locked(&self, entry: &AuditEntry) -> Result<u64, StoreError> {
        let last = self.audit_entries().await?.iter().map(|e| e.id).max().unwrap_or(0);
        let entry = crate::dlq::audit::AuditEntry { id: last + 1, ..entry.clone() };
        self.backend.write(vec![Write::Put(Row::Audit(AuditRow::new(entry)))]).await?;
        Ok(last + 1)
    }

    async fn clear_settled_locked(&self, prefix: &str) -> Result<u64, StoreError> {
        let keys = self.settled_locked(prefix).await?;
        if keys.is_empty() {
            return Ok(0);
        }
        let n = keys.len() as u64;
        self.backend.write(keys.into_iter().map(|s| Write::Delete(Table::Settled, s.key)).collect()).await?;
        Ok(n)
    }
}

fn wrong_row(table: Table, row: &Row) -> StoreError {
    StoreError::Corrupt {
        location: format!("table {}", table.as_str()),
        problem: format!("the backend returned a {} row", row.table().as_str()),
    }
}

fn live(row: &RecordRow, now: Timestamp) -> bool {
    rules::lease_live(row.lease_until, now)
}

fn state(row: &RecordRow, now: Timestamp) -> RecordState {
    rules::visible_state(row.record.state, row.lease_until, now)
}

fn holds(row: &RecordRow, token: &LeaseToken) -> bool {
    rules::holds_lease(row.record.state, row.lease_nonce.as_deref(), &token.nonce)
}

fn park(row: &mut RecordRow, why: &str) {
    row.record.state = RecordState::Parked;
    row.record.parked_reason = Some(why.to_string());
    row.lease_nonce = None;
    row.lease_until = None;
}

/// The record as callers see it: with its current state.
fn view(row: RecordRow, now: Timestamp) -> DeadLetterRecord {
    let state = state(&row, now);
    let mut record = row.record;
    record.state = state;
    record
}

/// Runs `$body` with the store to itself: in this process, then against other processes.
macro_rules! exclusive {
    ($self:ident, $body:expr) => {{
        let _serial = $self.serial.lock().await;
        // Under `serial`: no other operation reads or writes the flag meanwhile.
        if $self.lock_unreleased.load(core::sync::atomic::Ordering::Relaxed) {
            $self.backend.unlock().await?;
        }
        $self.lock_unreleased.store(true, core::sync::atomic::Ordering::Relaxed);
        $self.backend.lock().await?;
        let result = $body.await;
        let unlocked = $self.backend.unlock().await;
        // A failed unlock may have left the lock held: the next operation tries again.
        $self.lock_unreleased.store(unlocked.is_err(), core::sync::atomic::Ordering::Relaxed);
        let value = result?;
        unlocked?;
        Ok(value)
    }};
}

// After `exclusive!`, which it uses (a macro is in scope below its definition only).
#[cfg(feature = "fleet")]
pub mod fleet;

#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
impl<B: TableBackend + 'static> DlqStore for TableStore<B> {
    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        exclusive!(self, self.push_locked(record))
    }

    async fn receive_ready(&self, ask: ReadyAsk) -> Result<Vec<Leased>, StoreError> {
        exclusive!(self, self.receive_locked(&ask))
    }

    async fn complete(&self, token: &LeaseToken, _now: Timestamp) -> Result<(), StoreError> {
        exclusive!(self, self.complete_locked(token))
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        _now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        exclusive!(self, self.abandon_locked(token, update))
    }

    async fn park(&self, id: &str, reason: &str, _now: Timestamp) -> Result<bool, StoreError> {
        exclusive!(self, self.park_locked(id, reason))
    }

    async fn unpark(&self, id: &str, _now: Timestamp) -> Result<bool, StoreError> {
        exclusive!(self, self.unpark_locked(id))
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        let rows: Result<Vec<RecordRow>, StoreError> = exclusive!(self, self.matching(filter, now));
        Ok(rows?.into_iter().skip(page.offset).take(page.limit).map(|r| view(r, now)).collect())
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let rows: Result<Vec<RecordRow>, StoreError> = exclusive!(self, self.matching(filter, now));
        Ok(rows?.len() as u64)
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        exclusive!(self, self.purge_locked(filter, now))
    }

    async fn purge_unchanged(&self, records: &[DeadLetterRecord], now: Timestamp) -> Result<u64, StoreError> {
        exclusive!(self, self.purge_unchanged_locked(records, now))
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        exclusive!(self, self.stats_locked(now))
    }

    #[cfg(feature = "edit")]
    async fn replace_edited(&self, edit: &Edited, now: Timestamp) -> Result<EditWrite, StoreError> {
        exclusive!(self, self.replace_edited_locked(edit, now))
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        exclusive!(self, self.journal_write_locked(entry, false))
    }

    async fn journal_update(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        exclusive!(self, self.journal_write_locked(entry, true))
    }

    async fn journal_forget(&self, id: &str, now: Timestamp) -> Result<(), StoreError> {
        exclusive!(self, self.journal_forget_locked(id, now))
    }

    /// Read and written under the store's lock (and the backend's, for host stores shared by
    /// several processes), so two claims of one entry run one after the other.
    async fn journal_claim(&self, id: &str, from: Option<&str>, to: Option<&str>) -> Claimed {
        exclusive!(self, self.journal_claim_locked(id, from, to))
    }

    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        let rows: Result<Vec<Row>, StoreError> = exclusive!(self, self.backend.scan(Table::Journal, &|_| true));
        let mut entries = Vec::new();
        for row in rows? {
            match row {
                Row::Journal(e) => entries.push(e),
                other => return Err(wrong_row(Table::Journal, &other)),
            }
        }
        // Ids are unique: an unstable sort orders them the same.
        crate::support::sort::sort_unstable_by(&mut entries, |a, b| a.id.cmp(&b.id));
        Ok(entries)
    }

    async fn settled(&self, prefix: &str) -> Result<Vec<SettledKey>, StoreError> {
        exclusive!(self, self.settled_locked(prefix))
    }

    async fn clear_settled(&self, prefix: &str) -> Result<u64, StoreError> {
        exclusive!(self, self.clear_settled_locked(prefix))
    }

    #[cfg(feature = "audit")]
    async fn audit_append(&self, entry: &AuditEntry) -> Result<u64, StoreError> {
        exclusive!(self, self.audit_append_locked(entry))
    }

    #[cfg(feature = "audit")]
    async fn audit_list(&self, limit: usize, before: Option<u64>) -> Result<Vec<AuditEntry>, StoreError> {
        let entries: Result<Vec<_>, StoreError> = exclusive!(self, self.audit_entries());
        Ok(crate::dlq::audit::newest_first(entries?, limit, before))
    }

    /// The ledger of a store made with [`TableStore::keeping_fleet_ledger`]; `None` otherwise.
    #[cfg(feature = "fleet")]
    fn fleet_ledger(&self) -> Option<std::sync::Arc<dyn crate::fleet::FleetLedger>> {
        self.fleet_ledger_of_table()
    }
}

/// Rows in process memory: the backend of [`crate::dlq::MemoryStore`]. Rows are
/// kept as typed values, so nothing is encoded or decoded.
#[derive(Debug, Default)]
pub struct MemoryTable {
    /// One map per table, at the table's index (a fixed array rather than a map of maps:
    /// one B-tree shape less in the browser build).
    tables: std::sync::Mutex<[BTreeMap<String, Row>; Table::ALL.len()]>,
}

impl MemoryTable {
    pub fn new() -> Self {
        MemoryTable::default()
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, [BTreeMap<String, Row>; Table::ALL.len()]> {
        // Every mutation is a whole batch applied under the lock; a panic elsewhere cannot
        // leave a batch half-applied, so a poisoned lock still holds consistent tables.
        self.tables.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
impl TableBackend for MemoryTable {
    async fn get(&self, table: Table, key: &str) -> Result<Option<Row>, StoreError> {
        Ok(self.tables()[table as usize].get(key).cloned())
    }

    async fn scan(
        &self,
        table: Table,
        keep: &(dyn for<'r> Fn(&'r Row) -> bool + Sync),
    ) -> Result<Vec<Row>, StoreError> {
        Ok(self.tables()[table as usize].values().filter(|r| keep(r)).cloned().collect())
    }

    async fn write(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        let mut tables = self.tables();
        for w in writes {
            match w {
                Write::Put(row) => {
                    tables[row.table() as usize].insert(row.key().to_string(), row);
                }
                Write::Delete(table, key) => {
                    tables[table as usize].remove(&key);
                }
            }
        }
        Ok(())
    }
}
