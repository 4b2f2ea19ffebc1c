//! The store contract every DLQ backend implements (memory, SQLite, Redis,
//! IndexedDB, host objects), with peek-lock semantics after Azure Service Bus:
//! `receive` leases records to one replayer for a while, `complete` removes a
//! leased record, `abandon` returns it (counting the delivery), and a record
//! delivered too often is parked for review. Time is an argument, as in the
//! engine, so lease expiry is testable without sleeping.
//!
//! The in-flight journal lives behind the same trait so that a backend can
//! write a dead-letter record and drop its journal entry in one transaction,
//! and so that the rules which make a task end exactly once (a record being
//! replayed is never handed out twice; a solved task leaves no dead letter; a
//! settled key is never worked on again) are enforced by the store itself.

use core::time::Duration;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::class::ErrorClass;
#[cfg(feature = "audit")]
use crate::dlq::audit::AuditEntry;
#[cfg(feature = "edit")]
use crate::dlq::edit::Edited;
use crate::dlq::record::{DeadLetterRecord, RecordState};
use crate::journal::JournalEntry;
use crate::support::json_read::{deserialize_from_json, read_fields, FieldError, Fields, FromJson};
use crate::support::time::Timestamp;

/// Which records an operation applies to. Empty fields match everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(default)]
pub struct Filter {
    pub ids: Vec<String>,
    pub reasons: Vec<String>,
    pub classes: Vec<ErrorClass>,
    /// Ignored by `receive`, which only ever hands out ready records.
    pub states: Vec<RecordState>,
    pub sitekey: Option<String>,
    pub page_host: Option<String>,
    /// Every pair must be present on the record.
    pub labels: BTreeMap<String, String>,
    pub dead_lettered_before: Option<Timestamp>,
    pub dead_lettered_after: Option<Timestamp>,
}

impl Filter {
    pub fn all() -> Self {
        Filter::default()
    }

    /// This filter as `receive` applies it: without `states`, since only ready records are
    /// ever handed out (the one statement of that rule for every backend).
    pub fn for_receive(&self) -> Filter {
        Filter { states: Vec::new(), ..self.clone() }
    }

    /// The filter as the audit trail shows it: the fields that select something (empty lists,
    /// maps and absent bounds left out), so `{}` reads as "every record".
    pub fn compact_json(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.retain(|_, v| match v {
                Value::Null => false,
                Value::Array(a) => !a.is_empty(),
                Value::Object(o) => !o.is_empty(),
                _ => true,
            });
        }
        value
    }

    /// Whether `record`, whose state right now is `state`, is selected.
    pub fn matches(&self, record: &DeadLetterRecord, state: RecordState) -> bool {
        (self.ids.is_empty() || self.ids.contains(&record.id))
            && (self.reasons.is_empty() || self.reasons.contains(&record.reason))
            && (self.classes.is_empty() || self.classes.contains(&record.class))
            && (self.states.is_empty() || self.states.contains(&state))
            && self.sitekey.as_deref().is_none_or(|s| record.task.sitekey() == Some(s))
            && self.page_host.as_deref().is_none_or(|h| record.page_host().as_deref() == Some(h))
            && self.labels.iter().all(|(k, v)| record.labels.get(k) == Some(v))
            && self.dead_lettered_before.is_none_or(|t| record.dead_lettered_at < t)
            && self.dead_lettered_after.is_none_or(|t| record.dead_lettered_at >= t)
    }
}

/// A window of results, oldest first (by `dead_lettered_at`, then id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Page {
    pub offset: usize,
    pub limit: usize,
}

impl Default for Page {
    fn default() -> Self {
        Page { offset: 0, limit: 100 }
    }
}

/// Proof of a lease. Stale once the lease expires and the record is received again.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct LeaseToken {
    pub id: String,
    /// Changes on every delivery, so an old holder cannot complete a new lease.
    pub nonce: String,
}

/// A record handed to a replayer.
#[derive(Clone, Debug, PartialEq)]
pub struct Leased {
    pub token: LeaseToken,
    /// The record with `deliveries` already counting this lease.
    pub record: DeadLetterRecord,
    pub lease_until: Timestamp,
}

/// What `push` did besides storing the record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PushOutcome {
    /// A record with the same id was replaced (push is idempotent by id).
    pub replaced: bool,
    /// Ids evicted to respect an opt-in capacity; also counted in `StoreStats::dropped`.
    pub evicted: Vec<String>,
}

/// Counts a backend keeps; analysis of contents is [`crate::dlq::analysis`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    pub total: u64,
    pub ready: u64,
    pub leased: u64,
    pub parked: u64,
    /// Records dropped to honour a capacity limit, ever.
    pub dropped: u64,
    /// Records completed (replayed successfully), ever.
    pub completed: u64,
    /// Leases abandoned or expired, ever.
    pub abandoned: u64,
    pub oldest_dead_lettered_at: Option<Timestamp>,
    /// Tasks in the in-flight journal.
    pub in_flight: u64,
}

/// What [`DlqStore::receive`] asks of a backend once the rules every backend shares are applied:
/// the filter without `states` ([`Filter::for_receive`]), at least one record, and the end of
/// the leases it hands out (`now` plus the lease), computed once.
#[derive(Clone, Debug)]
pub struct ReadyAsk {
    pub filter: Filter,
    pub max: core::num::NonZeroUsize,
    pub lease_until: Timestamp,
    pub now: Timestamp,
}

// Read by hand rather than derived (see `crate::support::json_read`).

read_fields!(
    /// Every field may be left out (`{}` matches everything). Unknown fields are refused: a misspelt
    /// field (`reason` for `reasons`) would otherwise match every record, and `purge` would remove them all.
    Filter, closed, ids: or_default, reasons: or_default, classes: or_default, states: or_default, sitekey: opt,
    page_host: opt, labels: or_default, dead_lettered_before: opt, dead_lettered_after: opt
);

/// Both fields are required (`Page::default` is not a serde default).
impl FromJson for Page {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(Page { offset: f.req("offset")?, limit: f.req("limit")? })
    }
}

impl FromJson for LeaseToken {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(LeaseToken { id: f.req("id")?, nonce: f.req("nonce")? })
    }
}

read_fields!(
    StoreStats, open, total: req, ready: req, leased: req, parked: req, dropped: req, completed: req, abandoned: req,
    oldest_dead_lettered_at: opt, in_flight: req
);

deserialize_from_json!(Filter, Page, LeaseToken, StoreStats, Settlement, SettledKey);

/// How a keyed task ended (see [`DlqStore::settled`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Settlement {
    /// Solved, and its answer handed over (`journal_forget`).
    Solved,
    /// Dead-lettered (`push`): its record is (or was) in the DLQ.
    DeadLettered,
}

/// A task key the store remembers as done, so the same work is not submitted again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SettledKey {
    pub key: String,
    /// The task's record id.
    pub id: String,
    pub outcome: Settlement,
    pub at: Timestamp,
}

impl Settlement {
    pub fn as_str(self) -> &'static str {
        match self {
            Settlement::Solved => "solved",
            Settlement::DeadLettered => "dead_lettered",
        }
    }
}

impl FromJson for Settlement {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        crate::support::json_read::unit_variant(
            value,
            &[Settlement::Solved, Settlement::DeadLettered],
            Settlement::as_str,
        )
    }
}

read_fields!(
    SettledKey, open, key: req, id: req, outcome: req, at: req
);

pub use super::error::{MaybeSendSync, StoreError};

/// What [`DlqStore::replace_edited`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EditWrite {
    /// The record now holds the edited task, labels and history.
    Written,
    /// The record is under a live lease, or being replayed (it has a journal entry): unchanged.
    Leased,
    /// There is no record with that id (any more).
    Gone,
    /// The record's task, labels or history are no longer those the edit was made from (a
    /// replay or a push changed it meanwhile): unchanged; read it again and redo the edit.
    Changed,
}

/// What [`DlqStore::journal_claim`] answers: the journal entry as claimed, or `None` when it is
/// gone or another owner holds it.
pub type Claimed = Result<Option<JournalEntry>, StoreError>;

/// A dead-letter queue backend plus the in-flight journal.
///
/// Contract, checked for every backend by `dlq::testkit`:
/// - `push` is an upsert by `record.id`, and removes the journal entry with the
///   same id in the same transaction; if that entry had a `key`, the key is
///   settled as `dead_lettered` in the same transaction.
/// - `receive` hands out up to `max` ready records matching `filter` (oldest
///   first), and records whose lease expired before `now`; each delivery
///   increments `deliveries` and gets a fresh token. Parked records are never
///   received, nor is a record whose id has a journal entry (it is being
///   replayed, maybe by a process that died: `recover` finishes it).
/// - `complete` and `abandon` fail with `LeaseLost` if the token is stale;
///   `complete_many` answers each token as `complete` would, in order.
/// - `abandon` may replace the record (a failed replay updates attempts and
///   history); if the record's deliveries reached the store's limit, or the
///   update says `parked`, it is parked. It removes the journal entry with the
///   record's id in the same transaction. Returns the resulting state.
/// - `journal_upsert` of an entry that exists with another `owner` (absent counts as one)
///   writes nothing and fails with `Taken`: an owner whose entry was claimed away cannot take
///   it back by writing it (a process that was paused past the fleet's TTL, then resumed).
/// - `journal_update` is `journal_upsert` of an entry that must exist: a missing one is not
///   written again (`Taken`), so an old owner's late write cannot bring back an entry its new
///   owner already finished and forgot.
/// - `journal_claim` is a compare-and-set of an entry's `owner`: of two claims naming the
///   same expected owner, at most one succeeds (see the method).
/// - `journal_forget` removes the entry after its answer was handed over; in
///   the same transaction it settles the entry's `key` as `solved` and removes
///   a dead-letter record with the same id (a replayed task that is now
///   solved), counting it as completed.
/// - `replace_edited` writes an operator's edit: only if the record is not leased nor being
///   replayed and still holds what the edit was made from, and it changes nothing but the
///   task, labels and history.
/// - `purge_unchanged` removes a record only while it is the version given and not leased.
/// - Nothing is ever removed except by `complete`, `purge`, `purge_unchanged`, `journal_forget`
///   of a solved replay, or an opt-in capacity, and capacity drops are counted.
/// - `audit_append` numbers entries 1, 2, 3… in the order they were appended and keeps every
///   one; `audit_list` answers them newest first (feature `audit`, not in the browser build).
#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
pub trait DlqStore: MaybeSendSync {
    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError>;
    /// Leases up to `max` ready records matching `filter`. The rules every backend would
    /// otherwise repeat are applied here, once: nothing is asked of the backend for `max == 0`,
    /// and the filter's `states` are ignored (only ready records are handed out;
    /// [`Filter::for_receive`]). Backends implement [`receive_ready`](Self::receive_ready) and
    /// leave this as it is.
    async fn receive(
        &self,
        filter: &Filter,
        max: usize,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Vec<Leased>, StoreError> {
        match core::num::NonZeroUsize::new(max) {
            Some(max) => {
                let ask = ReadyAsk { filter: filter.for_receive(), max, lease_until: now.add(lease), now };
                self.receive_ready(ask).await
            }
            None => Ok(Vec::new()),
        }
    }
    /// `receive` as the backend does it, with the shared rules applied ([`ReadyAsk`]).
    async fn receive_ready(&self, ask: ReadyAsk) -> Result<Vec<Leased>, StoreError>;
    async fn complete(&self, token: &LeaseToken, now: Timestamp) -> Result<(), StoreError>;
    /// Completes several leases at once (the records of one receive batch): one result per
    /// token, in order, each what `complete` would have answered for it at that point (a
    /// token named twice: the second is `LeaseLost`). A lost lease fails alone; a failure of
    /// the backend itself fails the tokens it covered. Backends that can do it in one
    /// transaction or round trip override this; the default completes one by one.
    async fn complete_many(&self, tokens: &[LeaseToken], now: Timestamp) -> Vec<Result<(), StoreError>> {
        let mut out = Vec::with_capacity(tokens.len());
        for token in tokens {
            out.push(self.complete(token, now).await);
        }
        out
    }
    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        now: Timestamp,
    ) -> Result<RecordState, StoreError>;
    /// Set aside a record (ready or leased) for review; `false` if no such record.
    async fn park(&self, id: &str, reason: &str, now: Timestamp) -> Result<bool, StoreError>;
    /// Return a parked record to ready with its delivery count reset; `false` if not parked.
    async fn unpark(&self, id: &str, now: Timestamp) -> Result<bool, StoreError>;
    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError>;
    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError>;
    /// Remove matching records that are not under a live lease; returns how many.
    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError>;
    /// Removes each of `records` that the store still holds as the same version
    /// ([`DeadLetterRecord::same_version`]: not edited, replayed or stored again since it was
    /// read) and that is not under a live lease; returns how many. Retention's compare-and-delete
    /// (issue 44, finding 8): it archives what it read, then deletes exactly that, so a record
    /// changed in between stays, with its newer content. `now` is the caller's clock; a store
    /// with a clock of its own (Redis) judges leases by that one. Our stores do it atomically;
    /// this default, for stores written before it, compares then purges by id, which leaves a
    /// short window in which a change can be lost.
    async fn purge_unchanged(&self, records: &[DeadLetterRecord], now: Timestamp) -> Result<u64, StoreError> {
        let ids: Vec<String> = records.iter().map(|r| r.id.clone()).collect();
        let by_id = Filter { ids, ..Filter::default() };
        let page = Page { offset: 0, limit: records.len().max(1) };
        let stored = self.peek(&by_id, page, now).await?;
        let same: Vec<String> =
            stored.iter().filter(|s| records.iter().any(|r| r.same_version(s))).map(|s| s.id.clone()).collect();
        if same.is_empty() {
            return Ok(0);
        }
        self.purge(&Filter { ids: same, ..Filter::default() }, now).await
    }
    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError>;
    /// Gives record `edit.record.id` the task, labels and history of `edit.record` (an operator's
    /// edit, `dlq::edit`), in one atomic step, if the record's task, labels and history are still
    /// `edit.before`'s and it is neither under a lease live at `now` nor being replayed (its id has
    /// a journal entry); everything else of the record (attempts, replays, deliveries, state,
    /// parked reason, times) stays as stored. Parked and ready records can be edited. Not in
    /// the browser build, which leaves feature `edit` out (its `.wasm` size guard, docs/decisions/0053-edit-then-replay.md).
    #[cfg(feature = "edit")]
    async fn replace_edited(&self, edit: &Edited, now: Timestamp) -> Result<EditWrite, StoreError>;

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError>;
    /// Rewrites an entry that exists and is still `entry.owner`'s (a task's later writes: its
    /// provider task id, its answer); `Taken` if it is gone or another owner's.
    async fn journal_update(&self, entry: &JournalEntry) -> Result<(), StoreError>;
    /// Removes the entry of a task whose answer was handed over (see the contract above).
    async fn journal_forget(&self, id: &str, now: Timestamp) -> Result<(), StoreError>;
    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError>;
    /// Takes the journal entry `id` over: if its `owner` is `from` (`None`: it has
    /// none), sets it to `to` (`None`: releases it to whoever recovers it) and returns
    /// the entry as it now is; `None` if the entry is gone or its owner is another (someone
    /// took it first). Nothing else of the entry changes (its `updated_at` keeps the age the
    /// stale rule reads). Atomic against every other call of the store, in this process and in
    /// others sharing the store, so two takers (two adopting clients, an adopter and
    /// `recover`) never both get one entry. Time plays no part: whoever claims decides first
    /// that the owner is gone (by the fleet ledger's clock or the front end's liveness).
    async fn journal_claim(&self, id: &str, from: Option<&str>, to: Option<&str>) -> Claimed;

    /// Settled keys starting with `prefix` (all with `""`), in key order.
    async fn settled(&self, prefix: &str) -> Result<Vec<SettledKey>, StoreError>;
    /// Forgets settled keys starting with `prefix`; returns how many.
    async fn clear_settled(&self, prefix: &str) -> Result<u64, StoreError>;

    /// Appends `entry` to the audit trail (its `id` is ignored) and returns the id the store
    /// gave it: one more than the last. Never drops an entry. The default, for a store written
    /// before there was a trail, fails naming that ([`crate::dlq::audit::no_audit_trail`]).
    #[cfg(feature = "audit")]
    async fn audit_append(&self, entry: &AuditEntry) -> Result<u64, StoreError> {
        let _ = entry;
        Err(crate::dlq::audit::no_audit_trail())
    }
    /// Up to `limit` audit entries, newest first; with `before`, only those with a smaller id.
    #[cfg(feature = "audit")]
    async fn audit_list(&self, limit: usize, before: Option<u64>) -> Result<Vec<AuditEntry>, StoreError> {
        let _ = (limit, before);
        Err(crate::dlq::audit::no_audit_trail())
    }

    /// The store's fleet ledger, if several processes or hosts share the store (see
    /// [`crate::fleet`]); `None` (the default) for a store one process has to itself.
    fn fleet_ledger(&self) -> Option<std::sync::Arc<dyn crate::fleet::FleetLedger>> {
        None
    }
}
