//! The Redis dead-letter store, for fleets of workers on many machines
//! sharing one queue.
//!
//! Where it connects: one server, over TLS or not, or a Redis Cluster, as the
//! location URL says (`location.rs` reads it, `conn.rs` connects). The store
//! works the same on each: every key of a namespace has one hash tag, so every
//! call below touches one cluster slot.
//!
//! Layout, every key under the hash tag `{dlq:<namespace>}` (one cluster slot):
//! `body` (hash id → record JSON), `deliv` (hash id → deliveries), `parked`
//! (hash id → reason: the parked set), `nonce` + `until` (hash and sorted set:
//! the lease token and lease end of leased records), `age` (sorted set by
//! `dead_lettered_at`: the oldest-first order), `entry` (hash id → stream
//! entry), `stream` with consumer group `dlq`, `journal` (hash id → entry
//! JSON), `jkey` (hash journal id → the entry's task key, so that scripts
//! settle keys without parsing entries), `settled` (hash task key → `{"id",
//! "outcome", "at"}`) with `skeys` (the settled keys as a sorted set of equal
//! scores, for prefix ranges in key order) and `counters`. A namespace written
//! before settled keys existed has no `jkey`/`settled`/`skeys` and works as is.
//! Every move (push + journal removal + key settlement + eviction, lease,
//! complete, abandon, park, unpark, purge, journal writes, a journal claim's
//! compare-and-set) is one Lua script, so it is atomic against every other
//! worker; `peek`/`count`/`purge` read the records in pages.
//!
//! Batching (`batch.rs`): the single-call writes (push, complete, abandon,
//! park, unpark, journal_upsert, journal_forget) that arrive together run as
//! one `EVALSHA` of one script (`APPLY`), one round trip for the batch; each
//! keeps its own reply and its own atomicity. `complete_many` sends its
//! completes as one group (one script call per 128).
//!
//! Streams: each record has one stream entry (`XADD` on push). A lease puts
//! that entry in the receiving worker's pending-entries list with
//! `XCLAIM .. FORCE RETRYCOUNT <deliveries>`, and `complete`/`abandon`/`park`
//! `XACK` it, so `XPENDING` shows at any time who holds which record and how
//! often it was delivered. Two things of the classic `XREADGROUP` loop are
//! deliberately not used, and why:
//! - `XREADGROUP ... >` hands out entries in stream order, but `receive` must
//!   hand out the oldest matching records for an arbitrary [`Filter`]
//!   (reason, labels, host...), which the stream cannot express. `receive`
//!   walks `age` oldest first instead (see below); whatever it selects, a
//!   script re-checks each record as it leases it, so a record taken by
//!   another worker in between is skipped, never doubled.
//! - `XAUTOCLAIM` with min-idle = lease judges expiry by the *server's* idle
//!   clock, while the store contract judges it by the caller's `now`. Two
//!   clocks deciding the same lease could hand a record to two replayers at
//!   once, or deny an expired one. The lease end is therefore stored as
//!   `now + lease` in `until`, and `receive(now)` takes over leases with
//!   `until <= now` (re-claiming the stream entry to the new worker). With
//!   real clocks (drivers pass the wall clock) this is the same rule
//!   `XAUTOCLAIM` applies, and virtual time in tests works without sleeping.
//!
//! `receive` walks `age` oldest first in a script (`WALK`), at most 1,024 ids
//! per call and resuming after the last one seen (by time, then id bytes, so
//! records completed or moved by other workers meanwhile do not shift it).
//! Parked records and live leases are skipped inside the script without
//! reading their bodies. With no filter the script leases what it finds (one
//! round trip for up to `max` records); with a filter it returns pages of 64
//! to 256 leasable records with their bodies, matched in Rust, and the matches
//! are leased by a script that re-checks each; a filter naming `ids` looks
//! those up instead of walking. A record at its delivery limit met on the way
//! is parked, as always.
//!
//! Costs and limits: `receive` costs O(log N) per record it inspects: the
//! records handed out, the parked records and live leases older than them,
//! and, with a filter, the older leasable records that do not match (their
//! bodies are shipped and decoded). It does not depend on how many records lie
//! beyond the last one handed out, so draining 100,000 records runs as fast as
//! draining 10,000; a namespace holding many parked or leased records ahead of
//! the ready ones pays for walking past them on every receive. `stats`, and
//! `count` filtering by state only, read counts from the indexes (O(log N)).
//! `peek`, `purge` and other `count`s walk `age` the same way in scan pages of
//! up to 1,024 records (a filter naming `ids` looks those up), match in Rust and stop
//! when they have what they need: `peek` costs the records up to its page's
//! end, `count` and `purge` with a filter the whole namespace, but no call
//! holds the server or the client's memory for more than one page (the
//! `MULTI` snapshot they used before read 100,000 records in one reply).
//! Pages are not one snapshot: a record pushed again between two pages may
//! show up twice, and repeats are dropped. `push` with a capacity evicts
//! oldest first, a page at a time. A record *replaced by a push* between the
//! page read and the lease or purge script is judged by its old content for
//! the filter; its lease and state are always re-checked inside the script.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use captcha_dlq_core::dlq::audit::AuditEntry;
use captcha_dlq_core::dlq::rules;
use captcha_dlq_core::dlq::{
    Claimed, DeadLetterRecord, DlqStore, EditWrite, Edited, Filter, LeaseToken, Leased, Page, PushOutcome, ReadyAsk,
    RecordState, SettledKey, Settlement, StoreError, StoreStats,
};
use captcha_dlq_core::dlq::{LimitedStore, StoreLimits};
use captcha_dlq_core::{JournalEntry, Timestamp};
use redis::{RedisError, RedisResult, Script, Value};

pub use self::batch::BatchStats;
use self::batch::{Batcher, Call};
use self::conn::Conn;
use self::location::{namespace_problem, RedisUrl};
pub use self::location::{shown_location, DEFAULT_NAMESPACE};
use self::scripts::{namespace_key, Op, Scripts, KEY_NAMES, STREAM};
use super::{decode_record, new_nonce, prefix_end};

mod audit;
mod batch;
mod conn;
mod edit;
mod fleet;
mod location;
mod scripts;

const GROUP: &str = "dlq";

/// Settled keys read or cleared per round trip.
const SETTLED_PAGE: usize = 1000;

/// A [`DlqStore`] in Redis, shared by every worker using the same namespace.
#[derive(Clone)]
pub struct RedisStore {
    conn: Conn,
    /// The namespace's name; its keys are named by [`namespace_key`].
    namespace: String,
    /// KEYS of every script, in the order of `PRELUDE`.
    keys: Vec<String>,
    /// The server and namespace, without credentials, for messages.
    location: String,
    /// This worker's name in the consumer group.
    consumer: String,
    scripts: Arc<Scripts>,
    /// Single-call writes go through it, so that those arriving together share a round trip.
    batcher: Batcher,
    limits: StoreLimits,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("location", &self.location)
            .field("namespace", &self.namespace)
            .field("consumer", &self.consumer)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// Connects to the Redis at `url` (any form of [`RedisStore::open`]) and uses the keys of
    /// `namespace`. A URL naming another namespace (`?namespace=`) is refused.
    pub async fn connect(url: &str, namespace: &str) -> Result<Self, StoreError> {
        if let Some(problem) = namespace_problem(namespace) {
            return Err(StoreError::Unusable { location: format!("namespace {namespace:?}"), problem: problem.into() });
        }
        let url = RedisUrl::parse(url)?;
        if let Some(named) = url.namespace.as_deref().filter(|named| *named != namespace) {
            return Err(StoreError::Unusable {
                location: url.shown.clone(),
                problem: format!("the URL names namespace {named:?} and the caller {namespace:?}: give it once"),
            });
        }
        Self::connect_to(url, namespace).await
    }

    /// Connects to the Redis that `url` names, with the namespace it names (`captcha-dlq`
    /// when it names none), as the `--dlq` option does:
    /// - `redis://[user[:password]@]host[:port][/db][?namespace=NS]`: one server;
    /// - `rediss://…[?namespace=NS][&ca=FILE]`: one server over TLS, whose certificate is checked
    ///   against the PEM certificates of `FILE` (without `ca`, the system's CAs);
    /// - `redis+cluster://[user[:password]@]host[:port][,host[:port]…][?namespace=NS]`, and
    ///   `rediss+cluster://…[&ca=FILE]`: a Redis Cluster reached through the hosts listed.
    ///
    /// Any other query parameter is refused, naming it. Errors never show the password.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let url = RedisUrl::parse(url)?;
        let namespace = url.namespace.clone().unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
        Self::connect_to(url, &namespace).await
    }

    async fn connect_to(url: RedisUrl, namespace: &str) -> Result<Self, StoreError> {
        let location = format!("{} (namespace {namespace})", url.shown);
        let ca = url.ca.clone();
        let mut conn = conn::connect(url, &location).await?;
        let keys: Vec<String> = KEY_NAMES.iter().map(|k| namespace_key(namespace, k)).collect();
        let stream = keys.get(STREAM).cloned().unwrap_or_default();
        let created: Result<(), RedisError> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&stream)
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .query_async(&mut conn)
            .await;
        match created {
            Ok(()) => {}
            Err(e) if e.code() == Some("BUSYGROUP") => {}
            // The first command: the server may refuse the user only now, or be a cluster's node.
            Err(e) => return Err(conn::open_failure(&location, ca.as_deref(), &e)),
        }
        let scripts = Arc::new(Scripts::new());
        let batcher = Batcher::start(conn.clone(), keys.clone(), Arc::clone(&scripts));
        Ok(RedisStore {
            conn,
            namespace: namespace.to_string(),
            keys,
            location,
            consumer: format!("worker-{}", new_nonce().get(..16).unwrap_or_default()),
            scripts,
            batcher,
            limits: StoreLimits::default(),
        })
    }

    /// This worker's consumer name in the stream's group (as `XPENDING` shows it).
    pub fn consumer(&self) -> &str {
        &self.consumer
    }

    /// The namespace whose keys this store uses.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The stream whose pending-entries list holds the live leases.
    pub fn stream_key(&self) -> &str {
        self.keys.get(STREAM).map(String::as_str).unwrap_or_default()
    }

    /// Script calls the single-call writes went out in, and the writes they carried (their
    /// ratio is the batch size achieved).
    pub fn batch_stats(&self) -> BatchStats {
        self.batcher.stats()
    }

    /// Runs `call` in the next batch and reads its reply as `T`.
    async fn apply<T: redis::FromRedisValue>(&self, call: Call) -> Result<T, StoreError> {
        let op = call.op();
        self.reply(op, self.batcher.run(call).await)
    }

    /// One operation's reply (or its round trip's error) read as `T`.
    fn reply<T: redis::FromRedisValue>(&self, op: Op, reply: RedisResult<Value>) -> Result<T, StoreError> {
        let value = reply.map_err(|e| backend(&self.location, &e))?;
        redis::from_redis_value(value).map_err(|e| {
            StoreError::Backend(format!("redis {}: unexpected reply to {}: {e}", self.location, op.name()))
        })
    }

    /// `journal_upsert`, or with `must_exist` `journal_update`: one `JOURNAL_UPSERT` (batched with
    /// the writes that arrive together).
    async fn journal_write(&self, entry: &JournalEntry, must_exist: bool) -> Result<(), StoreError> {
        let json =
            serde_json::to_string(entry).map_err(|e| StoreError::Decode(format!("journal entry {}: {e}", entry.id)))?;
        let has_key = if entry.key.is_some() { "1" } else { "0" };
        let has_owner = if entry.owner.is_some() { "1" } else { "0" };
        let call = Call::new(Op::JournalUpsert)
            .arg(&entry.id)
            .arg(&json)
            .arg(has_key)
            .arg(entry.key.as_deref().unwrap_or_default())
            .arg(has_owner)
            .arg(entry.owner.as_deref().unwrap_or_default())
            .arg(if must_exist { "1" } else { "0" });
        let written: i64 = self.apply(call).await?;
        if written == 0 {
            return Err(StoreError::Taken { id: entry.id.clone() });
        }
        Ok(())
    }

    fn key(&self, name: &str) -> &str {
        let i = KEY_NAMES.iter().position(|k| *k == name).unwrap_or(0);
        self.keys.get(i).map(String::as_str).unwrap_or_default()
    }

    /// Field `id` of the namespace's hash `name` (`body`, `journal`), read outside any script.
    async fn hget(&self, name: &str, id: &str) -> Result<Option<String>, StoreError> {
        let mut conn = self.conn.clone();
        redis::cmd("HGET")
            .arg(self.key(name))
            .arg(id)
            .query_async(&mut conn)
            .await
            .map_err(|e| backend(&self.location, &e))
    }

    async fn invoke<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        args: impl FnOnce(&mut redis::ScriptInvocation<'_>),
    ) -> Result<T, StoreError> {
        let mut inv = script.prepare_invoke();
        for k in &self.keys {
            inv.key(k);
        }
        args(&mut inv);
        let mut conn = self.conn.clone();
        inv.invoke_async(&mut conn).await.map_err(|e| backend(&self.location, &e))
    }

    /// One `WALK` from `cursor` (moved past every id inspected). Returns whether `age` may hold
    /// more after the cursor, and what the mode returns: the (id, deliveries, body) triples
    /// leased, the (id, body) pairs peeked, or the records scanned as [`decode_scanned`] reads.
    async fn walk(
        &self,
        cursor: &mut Cursor,
        want: usize,
        mode: Walk<'_>,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> Result<(bool, Vec<String>), StoreError> {
        let reply: Vec<String> = self
            .invoke(&self.scripts.walk, |inv| {
                inv.arg(now.as_unix_millis())
                    .arg(&cursor.score)
                    .arg(&cursor.id)
                    .arg(want)
                    .arg(WALK_BUDGET)
                    .arg(match mode {
                        Walk::Lease(_) => "lease",
                        Walk::Peek => "peek",
                        Walk::Scan => "scan",
                    })
                    .arg(lease_until.as_unix_millis())
                    .arg(&self.consumer)
                    .arg(self.limits.max_deliveries());
                if let Walk::Lease(nonces) = mode {
                    inv.arg(nonces);
                }
            })
            .await?;
        let mut reply = reply.into_iter();
        let (Some(status), Some(score), Some(id)) = (reply.next(), reply.next(), reply.next()) else {
            return Err(StoreError::Backend(format!("redis {}: the receive script gave a short reply", self.location)));
        };
        *cursor = Cursor { score, id };
        Ok((status == "more", reply.collect()))
    }

    /// The records among `ids` that exist, oldest first (as `age` orders them), each once.
    async fn ids_by_age(&self, ids: &[String]) -> Result<Vec<String>, StoreError> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.cmd("ZSCORE").arg(self.key("age")).arg(id);
        }
        let mut conn = self.conn.clone();
        let scores: Vec<Option<f64>> = pipe.query_async(&mut conn).await.map_err(|e| backend(&self.location, &e))?;
        let mut present: Vec<(f64, String)> =
            scores.into_iter().zip(ids).filter_map(|(score, id)| score.map(|s| (s, id))).collect();
        // Equal scores are ordered by the members' bytes, as in the sorted set.
        present.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.as_bytes().cmp(b.1.as_bytes())));
        Ok(present.into_iter().map(|(_, id)| id).collect())
    }

    /// Lease `ids` (oldest first) until `out` holds `max`, skipping any taken by another worker
    /// in the meantime (or parked at their delivery limit): the script re-checks each.
    async fn lease_ids(
        &self,
        ids: &[String],
        max: usize,
        now: Timestamp,
        lease_until: Timestamp,
        out: &mut Receipt,
    ) -> Result<(), StoreError> {
        let mut rest = ids;
        while out.len() < max && !rest.is_empty() {
            let (batch, tail) = rest.split_at((max - out.len()).min(rest.len()));
            rest = tail;
            let nonces: Vec<String> = batch.iter().map(|_| new_nonce()).collect();
            let leased: Vec<String> = self
                .invoke(&self.scripts.receive, |inv| {
                    inv.arg(now.as_unix_millis())
                        .arg(lease_until.as_unix_millis())
                        .arg(&self.consumer)
                        .arg(self.limits.max_deliveries());
                    for (id, nonce) in batch.iter().zip(&nonces) {
                        inv.arg(id).arg(nonce);
                    }
                })
                .await?;
            for triple in leased.chunks_exact(3) {
                let [id, deliveries, body] = triple else { continue };
                let Some(i) = batch.iter().position(|b| b == id) else { continue };
                let nonce = nonces.get(i).cloned().unwrap_or_default();
                out.push(decode_leased(id, deliveries, body, nonce, lease_until)?);
            }
        }
        Ok(())
    }
}

/// What a `WALK` does with the records it finds.
#[derive(Clone, Copy)]
enum Walk<'a> {
    /// Lease them, one nonce each.
    Lease(&'a [String]),
    /// Return the leasable ones.
    Peek,
    /// Return every one, with its state.
    Scan,
}

/// The records `filter` selects, oldest first, a page at a time: by walking `age` (a scan page
/// per round trip), or, when the filter names `ids`, by looking those up. Neither holds the
/// server for long or the whole namespace in memory; pages are not one snapshot, so a record
/// moved (pushed again) between two pages can come twice, and callers drop repeats.
struct Pages<'a> {
    store: &'a RedisStore,
    filter: &'a Filter,
    now: Timestamp,
    cursor: Cursor,
    /// Records asked for in the next round trip; doubles up to [`SCAN_PAGE_MAX`].
    page: usize,
    /// The named ids still to look up, oldest first (`None`: walk `age`).
    ids: Option<std::vec::IntoIter<String>>,
    done: bool,
}

impl<'a> Pages<'a> {
    /// `first`: how many records the caller expects to need (the first page's size).
    async fn new(
        store: &'a RedisStore,
        filter: &'a Filter,
        now: Timestamp,
        first: usize,
    ) -> Result<Pages<'a>, StoreError> {
        let ids = if filter.ids.is_empty() { None } else { Some(store.ids_by_age(&filter.ids).await?.into_iter()) };
        let page = first.clamp(PAGE_MIN, SCAN_PAGE_MAX);
        // Records dead-lettered before `dead_lettered_after` cannot match: start the walk at it
        // (`age` is scored by that time), so a page far into the queue does not walk its start.
        let cursor = match filter.dead_lettered_after {
            Some(t) => Cursor { score: t.as_unix_millis().to_string(), id: String::new() },
            None => Cursor::default(),
        };
        Ok(Pages { store, filter, now, cursor, page, ids, done: false })
    }

    /// The next page's matching records (possibly none), or `None` at the end.
    async fn next(&mut self) -> Result<Option<Vec<Entry>>, StoreError> {
        if self.done {
            return Ok(None);
        }
        let page = self.page;
        self.page = (page * 2).min(SCAN_PAGE_MAX);
        let items: Vec<String> = match &mut self.ids {
            Some(ids) => {
                let chunk: Vec<String> = ids.by_ref().take(page).collect();
                if chunk.is_empty() {
                    return Ok(None);
                }
                self.store
                    .invoke(&self.store.scripts.records, |inv| {
                        inv.arg(self.now.as_unix_millis()).arg(&chunk);
                    })
                    .await?
            }
            None => {
                let (more, items) = self.store.walk(&mut self.cursor, page, Walk::Scan, self.now, self.now).await?;
                self.done = !more;
                items
            }
        };
        let entries = decode_scanned(&items)?;
        Ok(Some(entries.into_iter().filter(|e| self.filter.matches(&e.record, e.state)).collect()))
    }
}

/// Records a scan page carries (with their bodies) at most.
const SCAN_PAGE_MAX: usize = 1024;

/// Ids a `WALK` inspects per call at most, so that a receive behind many parked records or live
/// leases never blocks the server for long: it goes on in further calls.
const WALK_BUDGET: usize = 1024;
/// Candidates (with bodies) a filtered receive fetches per round trip: the first page is what is
/// still wanted, at least `PAGE_MIN`; pages double while matches are scarce, up to `PAGE_MAX`.
const PAGE_MIN: usize = 64;
const PAGE_MAX: usize = 256;

/// A position in `age`: just after the member `id` with `score`; the first member with
/// `score` when `id` is empty; the start when both are.
#[derive(Default)]
struct Cursor {
    score: String,
    id: String,
}

/// The leases one `receive` hands out, in order, each record once.
#[derive(Default)]
struct Receipt {
    leased: Vec<Leased>,
    ids: HashSet<String>,
}

impl Receipt {
    fn len(&self) -> usize {
        self.leased.len()
    }

    fn push(&mut self, lease: Leased) {
        // Only a lease of zero length can be renewed within one receive (by a record moved past
        // the cursor meanwhile); the newer token is the valid one.
        if !self.ids.insert(lease.token.id.clone()) {
            self.leased.retain(|l| l.token.id != lease.token.id);
        }
        self.leased.push(lease);
    }
}

fn decode_leased(
    id: &str,
    deliveries: &str,
    body: &str,
    nonce: String,
    lease_until: Timestamp,
) -> Result<Leased, StoreError> {
    let mut record = decode_record(id, body)?;
    record.state = RecordState::Leased;
    record.deliveries = deliveries.parse().unwrap_or(0);
    record.parked_reason = None;
    Ok(Leased { token: LeaseToken { id: id.to_string(), nonce }, record, lease_until })
}

/// The ids of the (id, body) pairs whose record `filter` selects, in order.
fn matching_ids(pairs: &[String], filter: &Filter) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    for pair in pairs.chunks_exact(2) {
        let [id, body] = pair else { continue };
        let record = decode_record(id, body)?;
        if filter.matches(&record, RecordState::Ready) {
            out.push(id.clone());
        }
    }
    Ok(out)
}

/// A record as a scan sees it: its body with the store's state, deliveries and parked reason.
struct Entry {
    id: String,
    record: DeadLetterRecord,
    state: RecordState,
}

/// The (id, state, deliveries, parked reason, body) quintuples of a scan, decoded.
fn decode_scanned(items: &[String]) -> Result<Vec<Entry>, StoreError> {
    let mut out = Vec::with_capacity(items.len() / 5);
    for quintuple in items.chunks_exact(5) {
        let [id, state, deliveries, why, body] = quintuple else { continue };
        let mut record = decode_record(id, body)?;
        let state = match state.as_str() {
            "parked" => RecordState::Parked,
            "leased" => RecordState::Leased,
            _ => RecordState::Ready,
        };
        record.state = state;
        record.deliveries = deliveries.parse().unwrap_or(0);
        record.parked_reason = (state == RecordState::Parked).then(|| why.clone());
        out.push(Entry { id: id.clone(), record, state });
    }
    Ok(out)
}

/// The `ZRANGEBYLEX` bounds of the keys starting with `prefix`.
fn lex_range(prefix: &str) -> (String, String) {
    let min = if prefix.is_empty() { "-".to_string() } else { format!("[{prefix}") };
    let max = prefix_end(prefix).map_or_else(|| "+".to_string(), |end| format!("({end}"));
    (min, max)
}

/// A settled key's stored JSON (`{"id", "outcome", "at"}`, `at` in Unix ms) read back.
fn decode_settled(key: String, value: &str) -> Result<SettledKey, StoreError> {
    let bad = |problem: &str| StoreError::Decode(format!("settled key {key:?}: {problem} in {value}"));
    let json: serde_json::Value = serde_json::from_str(value).map_err(|e| bad(&e.to_string()))?;
    let id = json.get("id").and_then(|v| v.as_str()).ok_or_else(|| bad("no string id"))?.to_string();
    let outcome = match json.get("outcome").and_then(|v| v.as_str()) {
        Some("solved") => Settlement::Solved,
        Some("dead_lettered") => Settlement::DeadLettered,
        _ => return Err(bad("no outcome solved or dead_lettered")),
    };
    let at = json.get("at").and_then(serde_json::Value::as_u64).ok_or_else(|| bad("no time in ms"))?;
    Ok(SettledKey { key, id, outcome, at: Timestamp::from_unix_millis(at) })
}

/// A complete's answer from the script's reply (1: removed; 0: the lease was not held).
fn completed(token: &LeaseToken, removed: Result<i64, StoreError>) -> Result<(), StoreError> {
    match removed? {
        1 => Ok(()),
        _ => Err(StoreError::LeaseLost { id: token.id.clone() }),
    }
}

fn backend(location: &str, e: &RedisError) -> StoreError {
    if e.code() == Some("WRONGTYPE") {
        return corrupt(location, format!("a key of the namespace holds something else: {e}"));
    }
    StoreError::Backend(format!("redis {location}: {e}"))
}

fn corrupt(location: &str, problem: String) -> StoreError {
    StoreError::Corrupt { location: location.to_string(), problem }
}

fn encode(record: &DeadLetterRecord) -> Result<String, StoreError> {
    serde_json::to_string(record).map_err(|e| StoreError::Decode(format!("record {}: {e}", record.id)))
}

#[async_trait]
impl DlqStore for RedisStore {
    /// Every worker on the namespace, on any host, shares its accounts' limits.
    fn fleet_ledger(&self) -> Option<Arc<dyn captcha_dlq_core::fleet::FleetLedger>> {
        Some(self.as_fleet_ledger())
    }

    async fn audit_append(&self, entry: &AuditEntry) -> Result<u64, StoreError> {
        self.append_audit(entry).await
    }

    async fn audit_list(&self, limit: usize, before: Option<u64>) -> Result<Vec<AuditEntry>, StoreError> {
        self.list_audit(limit, before).await
    }

    async fn settled(&self, prefix: &str) -> Result<Vec<SettledKey>, StoreError> {
        let (mut min, max) = lex_range(prefix);
        let mut out = Vec::new();
        loop {
            let mut conn = self.conn.clone();
            let keys: Vec<String> = redis::cmd("ZRANGEBYLEX")
                .arg(self.key("skeys"))
                .arg(&min)
                .arg(&max)
                .arg("LIMIT")
                .arg(0)
                .arg(SETTLED_PAGE)
                .query_async(&mut conn)
                .await
                .map_err(|e| backend(&self.location, &e))?;
            let Some(last) = keys.last().cloned() else { break };
            let values: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(self.key("settled"))
                .arg(&keys)
                .query_async(&mut conn)
                .await
                .map_err(|e| backend(&self.location, &e))?;
            let full = keys.len() == SETTLED_PAGE;
            for (key, value) in keys.into_iter().zip(values) {
                // A key cleared between the two reads is simply gone.
                if let Some(value) = value {
                    out.push(decode_settled(key, &value)?);
                }
            }
            if !full {
                break;
            }
            min = format!("({last}");
        }
        Ok(out)
    }

    async fn clear_settled(&self, prefix: &str) -> Result<u64, StoreError> {
        let (min, max) = lex_range(prefix);
        let mut cleared = 0;
        loop {
            let n: u64 = self
                .invoke(&self.scripts.clear_settled, |inv| {
                    inv.arg(&min).arg(&max).arg(SETTLED_PAGE);
                })
                .await?;
            cleared += n;
            if n < SETTLED_PAGE as u64 {
                return Ok(cleared);
            }
        }
    }

    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        let body = encode(&record)?;
        let why = rules::pushed_parked_reason(record.state, record.parked_reason.clone());
        let parked = why.is_some();
        let why = why.unwrap_or_default();
        let call = Call::new(Op::Push)
            .arg(&record.id)
            .arg(&body)
            .arg(record.dead_lettered_at.as_unix_millis())
            .arg(record.deliveries)
            .arg(if parked { "1" } else { "0" })
            .arg(&why)
            .arg(self.limits.capacity().unwrap_or(0));
        let (replaced, evicted): (i64, Vec<String>) = self.apply(call).await?;
        Ok(PushOutcome { replaced: replaced == 1, evicted })
    }

    async fn receive_ready(&self, ask: ReadyAsk) -> Result<Vec<Leased>, StoreError> {
        let ReadyAsk { ref filter, max, lease_until, now } = ask;
        let max = max.get();
        let mut out = Receipt::default();
        if *filter == Filter::default() {
            // Every ready record matches: lease while walking, touching only the records handed
            // out plus the parked and live-leased ones in front of them.
            let mut cursor = Cursor::default();
            loop {
                let want = (max - out.len()).min(WALK_BUDGET);
                let nonces: Vec<String> = (0..want).map(|_| new_nonce()).collect();
                let (more, items) = self.walk(&mut cursor, want, Walk::Lease(&nonces), now, lease_until).await?;
                for (triple, nonce) in items.chunks_exact(3).zip(nonces) {
                    if let [id, deliveries, body] = triple {
                        out.push(decode_leased(id, deliveries, body, nonce, lease_until)?);
                    }
                }
                if !more || out.len() >= max {
                    break;
                }
            }
        } else if !filter.ids.is_empty() {
            // Only the named records can match: look them up instead of walking the namespace.
            for chunk in self.ids_by_age(&filter.ids).await?.chunks(PAGE_MAX) {
                let candidates: Vec<String> = self
                    .invoke(&self.scripts.peek_ids, |inv| {
                        inv.arg(now.as_unix_millis()).arg(chunk);
                    })
                    .await?;
                let matching = matching_ids(&candidates, filter)?;
                self.lease_ids(&matching, max, now, lease_until, &mut out).await?;
                if out.len() >= max {
                    break;
                }
            }
        } else {
            // Filters need the decoded record: walk page by page, match in Rust, lease the
            // matches (the lease script re-checks each), and stop once `max` are leased.
            let mut cursor = Cursor::default();
            let mut page = max.clamp(PAGE_MIN, PAGE_MAX);
            loop {
                let (more, candidates) = self.walk(&mut cursor, page, Walk::Peek, now, lease_until).await?;
                let matching = matching_ids(&candidates, filter)?;
                self.lease_ids(&matching, max, now, lease_until, &mut out).await?;
                if !more || out.len() >= max {
                    break;
                }
                // Few matches so far: take bigger pages (fewer round trips) up to the cap.
                page = (page * 2).min(PAGE_MAX);
            }
        }
        Ok(out.leased)
    }

    async fn complete(&self, token: &LeaseToken, _now: Timestamp) -> Result<(), StoreError> {
        completed(token, self.apply(Call::new(Op::Complete).arg(&token.id).arg(&token.nonce)).await)
    }

    /// The completes go together: one script call per 128 tokens (`MAX_BATCH`).
    async fn complete_many(&self, tokens: &[LeaseToken], _now: Timestamp) -> Vec<Result<(), StoreError>> {
        let calls = tokens.iter().map(|t| Call::new(Op::Complete).arg(&t.id).arg(&t.nonce)).collect();
        let replies = self.batcher.run_many(calls).await;
        tokens.iter().zip(replies).map(|(token, reply)| completed(token, self.reply(Op::Complete, reply))).collect()
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        _now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        let (body, dla, why) = match update.map(|u| rules::returned_record(&token.id, u)) {
            Some(r) => {
                (encode(&r.record)?, r.record.dead_lettered_at.as_unix_millis(), r.asked_park.unwrap_or_default())
            }
            None => (String::new(), 0, String::new()),
        };
        let call = Call::new(Op::Abandon)
            .arg(&token.id)
            .arg(&token.nonce)
            .arg(self.limits.max_deliveries())
            .arg(&body)
            .arg(dla)
            .arg(&why);
        let state: String = self.apply(call).await?;
        match state.as_str() {
            "ready" => Ok(RecordState::Ready),
            "parked" => Ok(RecordState::Parked),
            _ => Err(StoreError::LeaseLost { id: token.id.clone() }),
        }
    }

    async fn park(&self, id: &str, why: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let n: i64 = self.apply(Call::new(Op::Park).arg(id).arg(why)).await?;
        Ok(n == 1)
    }

    async fn unpark(&self, id: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let n: i64 = self.apply(Call::new(Op::Unpark).arg(id)).await?;
        Ok(n == 1)
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut skip = page.offset;
        let mut pages = Pages::new(self, filter, now, page.offset.saturating_add(page.limit)).await?;
        while out.len() < page.limit {
            let Some(entries) = pages.next().await? else { break };
            for e in entries {
                if !seen.insert(e.id) {
                    continue;
                }
                if skip > 0 {
                    skip -= 1;
                } else if out.len() < page.limit {
                    out.push(e.record);
                }
            }
        }
        Ok(out)
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        if (Filter { states: Vec::new(), ..filter.clone() }) == Filter::default() {
            // By state only: the counts of `stats`, without reading any record.
            let stats = self.stats(now).await?;
            if filter.states.is_empty() {
                return Ok(stats.total);
            }
            let by_state = [
                (RecordState::Ready, stats.ready),
                (RecordState::Leased, stats.leased),
                (RecordState::Parked, stats.parked),
            ];
            return Ok(by_state.iter().filter(|(state, _)| filter.states.contains(state)).map(|(_, n)| n).sum());
        }
        let mut seen = HashSet::new();
        let mut pages = Pages::new(self, filter, now, SCAN_PAGE_MAX).await?;
        while let Some(entries) = pages.next().await? {
            seen.extend(entries.into_iter().map(|e| e.id));
        }
        Ok(seen.len() as u64)
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        // Page by page; the script re-checks each lease, so one taken meanwhile stays.
        let mut purged = 0;
        let mut pages = Pages::new(self, filter, now, SCAN_PAGE_MAX).await?;
        while let Some(entries) = pages.next().await? {
            let ids: Vec<String> =
                entries.into_iter().filter(|e| e.state != RecordState::Leased).map(|e| e.id).collect();
            if ids.is_empty() {
                continue;
            }
            let n: u64 = self
                .invoke(&self.scripts.purge, |inv| {
                    inv.arg(now.as_unix_millis()).arg(&ids);
                })
                .await?;
            purged += n;
        }
        Ok(purged)
    }

    /// Reads the bodies of `records`, keeps those whose record is the version given, and lets
    /// the script delete each while its body is still the one read (the compare and the delete
    /// in one step on the server, leases judged by the server's clock).
    async fn purge_unchanged(&self, records: &[DeadLetterRecord], _now: Timestamp) -> Result<u64, StoreError> {
        let mut pairs: Vec<String> = Vec::new();
        for given in records {
            let Some(body) = self.hget("body", &given.id).await? else { continue };
            let stored = decode_record(&given.id, &body)?;
            if stored.same_version(given) {
                pairs.push(given.id.clone());
                pairs.push(body);
            }
        }
        if pairs.is_empty() {
            return Ok(0);
        }
        self.invoke(&self.scripts.purge_unchanged, |inv| {
            inv.arg(&pairs);
        })
        .await
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        // Counted from the indexes, without reading any record: a live lease is an `until` score
        // after `now` (leases end before a record is parked, so none of them is parked).
        type Raw = (u64, u64, u64, Vec<(String, f64)>, HashMap<String, String>, u64);
        let mut conn = self.conn.clone();
        let (total, parked, leased, oldest, counters, in_flight): Raw = redis::pipe()
            .atomic()
            .cmd("ZCARD")
            .arg(self.key("age"))
            .cmd("HLEN")
            .arg(self.key("parked"))
            .cmd("ZCOUNT")
            .arg(self.key("until"))
            .arg(format!("({}", now.as_unix_millis()))
            .arg("+inf")
            .cmd("ZRANGE")
            .arg(self.key("age"))
            .arg(0)
            .arg(0)
            .arg("WITHSCORES")
            .cmd("HGETALL")
            .arg(self.key("counters"))
            .cmd("HLEN")
            .arg(self.key("journal"))
            .query_async(&mut conn)
            .await
            .map_err(|e| backend(&self.location, &e))?;
        let counter = |name: &str| counters.get(name).and_then(|v| v.parse().ok()).unwrap_or(0);
        Ok(StoreStats {
            total,
            ready: total.saturating_sub(parked).saturating_sub(leased),
            leased,
            parked,
            dropped: counter("dropped"),
            completed: counter("completed"),
            abandoned: counter("abandoned"),
            oldest_dead_lettered_at: oldest.first().map(|(_, ms)| Timestamp::from_unix_millis(*ms as u64)),
            in_flight,
        })
    }

    async fn replace_edited(&self, edit: &Edited, now: Timestamp) -> Result<EditWrite, StoreError> {
        self.replace_edited_record(edit, now).await
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.journal_write(entry, false).await
    }

    async fn journal_update(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.journal_write(entry, true).await
    }

    async fn journal_forget(&self, id: &str, now: Timestamp) -> Result<(), StoreError> {
        let _: i64 = self.apply(Call::new(Op::JournalForget).arg(id).arg(now.as_unix_millis())).await?;
        Ok(())
    }

    /// The owner is checked here and the write is a compare-and-set of the entry's whole JSON in
    /// a script (`JOURNAL_CLAIM`), so the entry's JSON is never re-encoded in Lua (cjson would
    /// round numbers). An entry that changed between the read and the script (its owner wrote
    /// it meanwhile) is read again, a few times at most.
    async fn journal_claim(&self, id: &str, from: Option<&str>, to: Option<&str>) -> Claimed {
        const TRIES: usize = 16;
        for _ in 0..TRIES {
            let Some(json) = self.hget("journal", id).await? else { return Ok(None) };
            let mut entry: JournalEntry =
                serde_json::from_str(&json).map_err(|e| StoreError::Decode(format!("journal entry {id}: {e}")))?;
            // Decided here (the script only compares and sets the whole entry as read).
            if !rules::journal_claim_allowed(Some(entry.owner.as_deref()), from) {
                return Ok(None);
            }
            entry.owner = to.map(str::to_string);
            let claimed =
                serde_json::to_string(&entry).map_err(|e| StoreError::Decode(format!("journal entry {id}: {e}")))?;
            let written: i64 = self
                .invoke(&self.scripts.journal_claim, |inv| {
                    inv.arg(id).arg(&json).arg(&claimed);
                })
                .await?;
            if written == 1 {
                return Ok(Some(entry));
            }
        }
        Err(StoreError::Backend(format!(
            "redis {}: journal entry {id} kept changing while it was claimed ({TRIES} tries)",
            self.location
        )))
    }

    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        let mut conn = self.conn.clone();
        let all: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.key("journal"))
            .query_async(&mut conn)
            .await
            .map_err(|e| backend(&self.location, &e))?;
        let mut out = Vec::with_capacity(all.len());
        for (id, json) in all {
            let entry: JournalEntry =
                serde_json::from_str(&json).map_err(|e| StoreError::Decode(format!("journal entry {id}: {e}")))?;
            out.push(entry);
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }
}

impl LimitedStore for RedisStore {
    fn limits_mut(&mut self) -> &mut StoreLimits {
        &mut self.limits
    }
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream};
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use captcha_dlq_core::dlq::testkit::{at, sample_record};

    use super::*;

    /// A throwaway `redis-server` as in `tests/support/redis.rs` (which unit tests cannot reach).
    struct Server {
        port: u16,
        child: Child,
    }

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn start() -> Option<Server> {
        if Command::new("redis-server").arg("--version").output().is_err() {
            assert_eq!(
                std::env::var("CAPTCHA_DLQ_SKIP_REDIS").as_deref(),
                Ok("1"),
                "redis-server is not installed: install it or set CAPTCHA_DLQ_SKIP_REDIS=1"
            );
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let server = Server { port, child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not come up on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(server)
    }

    /// Peeks (no leasing) up to `want` ids after the cursor; returns them and whether more may follow.
    async fn walked(store: &RedisStore, cursor: &mut Cursor, want: usize) -> (Vec<String>, bool) {
        let now = at(100_000);
        let (more, items) = store.walk(cursor, want, Walk::Peek, now, now).await.expect("walk");
        (items.chunks_exact(2).filter_map(|p| p.first().cloned()).collect(), more)
    }

    #[tokio::test]
    async fn a_walk_resumes_just_after_its_cursor_even_when_the_cursor_record_is_gone() {
        let Some(server) = start() else { return };
        let url = format!("redis://127.0.0.1:{}/", server.port);
        let store = RedisStore::connect(&url, "cursor").await.expect("connect");
        // Equal times are ordered by the ids' bytes: A < B < a < b < c.
        for (id, minutes) in [("early", 1), ("b", 5), ("A", 5), ("c", 5), ("a", 5), ("B", 5), ("late", 9)] {
            store.push(sample_record(id, minutes)).await.expect("push");
        }
        let eq = sample_record("x", 5).dead_lettered_at.as_unix_millis().to_string();
        let cursor = |score: &str, id: &str| Cursor { score: score.to_string(), id: id.to_string() };

        // Page by page from the start.
        let mut pages = Vec::new();
        let mut c = Cursor::default();
        loop {
            let (ids, more) = walked(&store, &mut c, 3).await;
            pages.push(ids);
            if !more {
                break;
            }
        }
        assert_eq!(
            pages,
            [vec!["early", "A", "B"], vec!["a", "b", "c"], vec!["late"]],
            "the last page says it is the end"
        );

        assert_eq!(walked(&store, &mut cursor(&eq, "a"), 10).await.0, ["b", "c", "late"]);
        assert_eq!(store.purge(&Filter { ids: vec!["a".into()], ..Filter::default() }, at(0)).await.expect("purge"), 1);
        // The cursor's record is gone (completed or purged by another worker): same position.
        assert_eq!(walked(&store, &mut cursor(&eq, "a"), 10).await.0, ["b", "c", "late"]);
        assert_eq!(walked(&store, &mut cursor(&eq, "Ab"), 10).await.0, ["B", "b", "c", "late"]);
        assert_eq!(walked(&store, &mut cursor(&eq, "0"), 10).await.0, ["A", "B", "b", "c", "late"]);
        assert_eq!(walked(&store, &mut cursor(&eq, "d"), 10).await.0, ["late"]);
        let between = sample_record("x", 3).dead_lettered_at.as_unix_millis().to_string();
        assert_eq!(walked(&store, &mut cursor(&between, "zz"), 10).await.0, ["A", "B", "b", "c", "late"]);
        // The cursor's record moved (pushed again, later): the walk goes on from where it was.
        store.push(sample_record("b", 8)).await.expect("push");
        assert_eq!(walked(&store, &mut cursor(&eq, "b"), 10).await.0, ["c", "b", "late"]);
    }
}
