//! The Redis dead-letter store, for fleets of workers on many machines
//! sharing one queue.
//!
//! Layout, every key under the hash tag `{dlq:<namespace>}` (one cluster slot):
//! `body` (hash id → record JSON), `deliv` (hash id → deliveries), `parked`
//! (hash id → reason: the parked set), `nonce` + `until` (hash and sorted set:
//! the lease token and lease end of leased records), `age` (sorted set by
//! `dead_lettered_at`: the oldest-first order), `entry` (hash id → stream
//! entry), `stream` with consumer group `dlq`, `journal` (hash id → entry
//! JSON) and `counters`. Every move (push + journal delete + eviction, lease,
//! complete, abandon, park, unpark, purge) is one Lua script, so it is atomic
//! against every other worker; reads take one `MULTI` snapshot.
//!
//! Streams: each record has one stream entry (`XADD` on push). A lease puts
//! that entry in the receiving worker's pending-entries list with
//! `XCLAIM .. FORCE RETRYCOUNT <deliveries>`, and `complete`/`abandon`/`park`
//! `XACK` it, so `XPENDING` shows at any time who holds which record and how
//! often it was delivered. Two things of the classic `XREADGROUP` loop are
//! deliberately not used, and why:
//! - `XREADGROUP ... >` hands out entries in stream order, but `receive` must
//!   hand out the oldest matching records for an arbitrary [`Filter`]
//!   (reason, labels, host...), which the stream cannot express. Selection is
//!   done on a snapshot, and the lease script re-checks each candidate, so a
//!   record taken by another worker in between is skipped, never doubled.
//! - `XAUTOCLAIM` with min-idle = lease judges expiry by the *server's* idle
//!   clock, while the store contract judges it by the caller's `now`. Two
//!   clocks deciding the same lease could hand a record to two replayers at
//!   once, or deny an expired one. The lease end is therefore stored as
//!   `now + lease` in `until`, and `receive(now)` takes over leases with
//!   `until <= now` (re-claiming the stream entry to the new worker). With
//!   real clocks (drivers pass the wall clock) this is the same rule
//!   `XAUTOCLAIM` applies, and virtual time in tests works without sleeping.
//!
//! Costs and limits: `receive`, `peek`, `count`, `purge` and `stats` read the
//! whole namespace in one snapshot (filters need the decoded record), which
//! suits dead-letter volumes (thousands to ~100k records), not a hot queue. A
//! record *replaced by a push* between the snapshot and the script is judged
//! by its old content for `receive`/`purge` filters; its lease and state are
//! always re-checked inside the script.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use captcha_dlq_core::class::reason;
use captcha_dlq_core::dlq::memory::{DEFAULT_MAX_DELIVERIES, PARKED_BY_REPLAYER};
use captcha_dlq_core::dlq::{
    DeadLetterRecord, DlqStore, Filter, LeaseToken, Leased, Page, PushOutcome, RecordState, StoreError, StoreStats,
};
use captcha_dlq_core::{ConfigError, JournalEntry, Timestamp};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{RedisError, Script};

use super::new_nonce;

const GROUP: &str = "dlq";

/// Shared by every script: key names and the two ways a lease or record ends.
const PRELUDE: &str = r#"
local BODY, DELIV, NONCE, UNTIL, PARKED, ENTRY, AGE, JOURNAL, COUNTERS, STREAM =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local GROUP = 'dlq'
local MAX_DELIVERY_REASON = '@MAX_DELIVERY_REASON@'
local function end_lease(id)
  local e = redis.call('HGET', ENTRY, id)
  if e then redis.call('XACK', STREAM, GROUP, e) end
  redis.call('HDEL', NONCE, id)
  redis.call('ZREM', UNTIL, id)
end
local function drop(id)
  local e = redis.call('HGET', ENTRY, id)
  if e then
    redis.call('XACK', STREAM, GROUP, e)
    redis.call('XDEL', STREAM, e)
  end
  for _, k in ipairs({BODY, DELIV, NONCE, ENTRY, PARKED}) do redis.call('HDEL', k, id) end
  redis.call('ZREM', UNTIL, id)
  redis.call('ZREM', AGE, id)
end
"#;

/// ARGV: id, body, dead_lettered_at, deliveries, parked ('1'/'0'), parked reason, capacity (0 = none).
const PUSH: &str = r#"
local id = ARGV[1]
local replaced = redis.call('HEXISTS', BODY, id)
if ARGV[5] == '1' then
  end_lease(id)
  redis.call('HSET', PARKED, id, ARGV[6])
else
  -- a replaced record keeps an unsettled lease, so it is not handed out twice
  redis.call('HDEL', PARKED, id)
end
redis.call('HSET', BODY, id, ARGV[2])
redis.call('HSET', DELIV, id, ARGV[4])
redis.call('ZADD', AGE, ARGV[3], id)
if redis.call('HEXISTS', ENTRY, id) == 0 then
  redis.call('HSET', ENTRY, id, redis.call('XADD', STREAM, '*', 'id', id))
end
redis.call('HDEL', JOURNAL, id)
local evicted = {}
local cap = tonumber(ARGV[7])
if cap > 0 and redis.call('HLEN', BODY) > cap then
  local ids = redis.call('ZRANGE', AGE, 0, -1)
  for pass = 1, 2 do
    for _, victim in ipairs(ids) do
      if redis.call('HLEN', BODY) <= cap then break end
      local parked = redis.call('HEXISTS', PARKED, victim) == 1
      local leased = redis.call('HEXISTS', NONCE, victim) == 1
      -- ready records first, then parked ones; never one under a lease (push has no clock)
      if not leased and (pass == 2) == parked and redis.call('HEXISTS', BODY, victim) == 1 then
        drop(victim)
        evicted[#evicted + 1] = victim
      end
    end
  end
  if #evicted > 0 then redis.call('HINCRBY', COUNTERS, 'dropped', #evicted) end
end
return {replaced, evicted}
"#;

/// ARGV: now, lease end, consumer, max deliveries, then (id, nonce) pairs oldest first.
/// Returns (id, deliveries, body) triples of the records leased.
const RECEIVE: &str = r#"
local now, lease_end, consumer, maxd = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
local out, expired = {}, 0
for i = 5, #ARGV, 2 do
  local id, nonce = ARGV[i], ARGV[i + 1]
  local body = redis.call('HGET', BODY, id)
  if body and redis.call('HEXISTS', PARKED, id) == 0 then
    local held = redis.call('HEXISTS', NONCE, id) == 1
    local u = tonumber(redis.call('ZSCORE', UNTIL, id))
    if not held or not u or u <= now then
      if held then
        expired = expired + 1
        end_lease(id)
      end
      local d = tonumber(redis.call('HGET', DELIV, id) or '0') or 0
      if d >= maxd then
        redis.call('HSET', PARKED, id, MAX_DELIVERY_REASON)
      else
        d = d + 1
        redis.call('HSET', DELIV, id, d)
        redis.call('HSET', NONCE, id, nonce)
        redis.call('ZADD', UNTIL, lease_end, id)
        local e = redis.call('HGET', ENTRY, id)
        if e then redis.call('XCLAIM', STREAM, GROUP, consumer, 0, e, 'FORCE', 'RETRYCOUNT', d, 'JUSTID') end
        out[#out + 1] = id
        out[#out + 1] = tostring(d)
        out[#out + 1] = body
      end
    end
  end
end
if expired > 0 then redis.call('HINCRBY', COUNTERS, 'abandoned', expired) end
return out
"#;

/// ARGV: id, nonce. Returns 1, or 0 if the token is stale.
const COMPLETE: &str = r#"
if redis.call('HGET', NONCE, ARGV[1]) ~= ARGV[2] then return 0 end
drop(ARGV[1])
redis.call('HINCRBY', COUNTERS, 'completed', 1)
return 1
"#;

/// ARGV: id, nonce, max deliveries, new body ('' = keep), dead_lettered_at, park reason ('' = not asked).
/// Returns 'ready', 'parked', or 'lost'.
const ABANDON: &str = r#"
local id = ARGV[1]
if redis.call('HGET', NONCE, id) ~= ARGV[2] then return 'lost' end
end_lease(id)
if ARGV[4] ~= '' then
  redis.call('HSET', BODY, id, ARGV[4])
  redis.call('ZADD', AGE, ARGV[5], id)
end
redis.call('HINCRBY', COUNTERS, 'abandoned', 1)
local why = ARGV[6]
if why == '' and (tonumber(redis.call('HGET', DELIV, id) or '0') or 0) >= tonumber(ARGV[3]) then
  why = MAX_DELIVERY_REASON
end
if why ~= '' then
  redis.call('HSET', PARKED, id, why)
  return 'parked'
end
return 'ready'
"#;

/// ARGV: id, reason.
const PARK: &str = r#"
if redis.call('HEXISTS', BODY, ARGV[1]) == 0 then return 0 end
end_lease(ARGV[1])
redis.call('HSET', PARKED, ARGV[1], ARGV[2])
return 1
"#;

/// ARGV: id.
const UNPARK: &str = r#"
if redis.call('HEXISTS', PARKED, ARGV[1]) == 0 then return 0 end
redis.call('HDEL', PARKED, ARGV[1])
redis.call('HSET', DELIV, ARGV[1], 0)
return 1
"#;

/// ARGV: now, ids. Removes those not under a live lease; returns how many.
const PURGE: &str = r#"
local now, n = tonumber(ARGV[1]), 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('HEXISTS', BODY, id) == 1 then
    local u = tonumber(redis.call('ZSCORE', UNTIL, id))
    local live = redis.call('HEXISTS', NONCE, id) == 1 and u ~= nil and u > now
    if not live then
      drop(id)
      n = n + 1
    end
  end
end
return n
"#;

#[derive(Clone)]
struct Scripts {
    push: Script,
    receive: Script,
    complete: Script,
    abandon: Script,
    park: Script,
    unpark: Script,
    purge: Script,
}

impl Scripts {
    fn new() -> Self {
        let prelude = PRELUDE.replace("@MAX_DELIVERY_REASON@", reason::MAX_DELIVERY_COUNT_EXCEEDED);
        let s = |body: &str| Script::new(&format!("{prelude}{body}"));
        Scripts {
            push: s(PUSH),
            receive: s(RECEIVE),
            complete: s(COMPLETE),
            abandon: s(ABANDON),
            park: s(PARK),
            unpark: s(UNPARK),
            purge: s(PURGE),
        }
    }
}

/// A [`DlqStore`] in Redis, shared by every worker using the same namespace.
#[derive(Clone)]
pub struct RedisStore {
    conn: ConnectionManager,
    /// KEYS of every script, in the order of `PRELUDE`.
    keys: Vec<String>,
    /// The server and namespace, without credentials, for messages.
    location: String,
    /// This worker's name in the consumer group.
    consumer: String,
    scripts: Scripts,
    max_deliveries: u32,
    capacity: Option<u64>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("location", &self.location)
            .field("consumer", &self.consumer)
            .field("max_deliveries", &self.max_deliveries)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

const KEY_NAMES: [&str; 10] =
    ["body", "deliv", "nonce", "until", "parked", "entry", "age", "journal", "counters", "stream"];

impl RedisStore {
    /// Connect to `url` (`redis://[:password@]host[:port][/db]`) and use the keys of `namespace`.
    pub async fn connect(url: &str, namespace: &str) -> Result<Self, StoreError> {
        if namespace.is_empty() || namespace.contains(['{', '}']) || namespace.chars().any(char::is_whitespace) {
            return Err(StoreError::Backend(format!(
                "invalid Redis namespace {namespace:?}: it must be non-empty, without braces or spaces"
            )));
        }
        // Never echo the URL itself: it may carry a password.
        let mut parsed = url::Url::parse(url).map_err(|e| StoreError::Backend(format!("invalid Redis URL: {e}")))?;
        let _ = parsed.set_password(None);
        let _ = parsed.set_username("");
        let location = format!("{parsed} (namespace {namespace})");
        let client = redis::Client::open(url).map_err(|e| backend(&location, &e))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(Duration::from_secs(30)))
            .set_number_of_retries(2);
        let mut conn = client.get_connection_manager_with_config(config).await.map_err(|e| backend(&location, &e))?;
        let keys: Vec<String> = KEY_NAMES.iter().map(|k| format!("{{dlq:{namespace}}}:{k}")).collect();
        let stream = keys.last().cloned().unwrap_or_default();
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
            Err(e) => return Err(backend(&location, &e)),
        }
        Ok(RedisStore {
            conn,
            keys,
            location,
            consumer: format!("worker-{}", new_nonce().get(..16).unwrap_or_default()),
            scripts: Scripts::new(),
            max_deliveries: DEFAULT_MAX_DELIVERIES,
            capacity: None,
        })
    }

    /// Park a record once it has been delivered this many times (default 10, as Service Bus).
    pub fn with_max_deliveries(mut self, max: u32) -> Result<Self, ConfigError> {
        if max == 0 {
            return Err(ConfigError::new("max_deliveries", "must be at least 1"));
        }
        self.max_deliveries = max;
        Ok(self)
    }

    /// Keep at most `capacity` records (oldest ready evicted first, then parked; counted in `dropped`).
    pub fn with_capacity(mut self, capacity: u64) -> Result<Self, ConfigError> {
        if capacity == 0 {
            return Err(ConfigError::new("capacity", "must be at least 1"));
        }
        self.capacity = Some(capacity);
        Ok(self)
    }

    /// This worker's consumer name in the stream's group (as `XPENDING` shows it).
    pub fn consumer(&self) -> &str {
        &self.consumer
    }

    /// The stream whose pending-entries list holds the live leases.
    pub fn stream_key(&self) -> &str {
        self.keys.last().map(String::as_str).unwrap_or_default()
    }

    fn key(&self, name: &str) -> &str {
        let i = KEY_NAMES.iter().position(|k| *k == name).unwrap_or(0);
        self.keys.get(i).map(String::as_str).unwrap_or_default()
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

    /// Every record with its state at `now`, oldest first, plus counters, in one atomic read.
    async fn snapshot(&self, now: Timestamp) -> Result<Snapshot, StoreError> {
        let mut conn = self.conn.clone();
        type Raw = (
            Vec<String>,
            HashMap<String, String>,
            HashMap<String, String>,
            HashMap<String, String>,
            Vec<(String, f64)>,
            HashMap<String, String>,
            HashMap<String, String>,
            u64,
        );
        let (order, bodies, deliv, nonces, until, parked, counters, in_flight): Raw = redis::pipe()
            .atomic()
            .cmd("ZRANGE")
            .arg(self.key("age"))
            .arg(0)
            .arg(-1)
            .cmd("HGETALL")
            .arg(self.key("body"))
            .cmd("HGETALL")
            .arg(self.key("deliv"))
            .cmd("HGETALL")
            .arg(self.key("nonce"))
            .cmd("ZRANGE")
            .arg(self.key("until"))
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .cmd("HGETALL")
            .arg(self.key("parked"))
            .cmd("HGETALL")
            .arg(self.key("counters"))
            .cmd("HLEN")
            .arg(self.key("journal"))
            .query_async(&mut conn)
            .await
            .map_err(|e| backend(&self.location, &e))?;
        let until: HashMap<String, f64> = until.into_iter().collect();
        let mut entries = Vec::with_capacity(order.len());
        for id in order {
            let Some(body) = bodies.get(&id) else {
                return Err(corrupt(&self.location, format!("record {id} is in the age index but has no body")));
            };
            let mut record: DeadLetterRecord =
                serde_json::from_str(body).map_err(|e| StoreError::Decode(format!("record {id}: {e}")))?;
            let held = nonces.contains_key(&id);
            let live = held && until.get(&id).is_some_and(|u| *u > now.as_unix_millis() as f64);
            let state = match parked.get(&id) {
                Some(_) => RecordState::Parked,
                None if live => RecordState::Leased,
                None => RecordState::Ready,
            };
            record.state = state;
            record.deliveries = deliv.get(&id).and_then(|d| d.parse().ok()).unwrap_or(0);
            record.parked_reason = parked.get(&id).cloned();
            entries.push(Entry { id, record, state });
        }
        let counter = |name: &str| counters.get(name).and_then(|v| v.parse().ok()).unwrap_or(0);
        Ok(Snapshot {
            entries,
            dropped: counter("dropped"),
            completed: counter("completed"),
            abandoned: counter("abandoned"),
            in_flight,
        })
    }

    fn matching(snapshot: Snapshot, filter: &Filter) -> impl Iterator<Item = Entry> + '_ {
        snapshot.entries.into_iter().filter(move |e| filter.matches(&e.record, e.state))
    }
}

struct Entry {
    id: String,
    record: DeadLetterRecord,
    state: RecordState,
}

struct Snapshot {
    entries: Vec<Entry>,
    dropped: u64,
    completed: u64,
    abandoned: u64,
    in_flight: u64,
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
    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        let body = encode(&record)?;
        let parked = record.state == RecordState::Parked;
        let why = record.parked_reason.clone().unwrap_or_else(|| PARKED_BY_REPLAYER.to_string());
        let (replaced, evicted): (i64, Vec<String>) = self
            .invoke(&self.scripts.push, |inv| {
                inv.arg(&record.id)
                    .arg(&body)
                    .arg(record.dead_lettered_at.as_unix_millis())
                    .arg(record.deliveries)
                    .arg(if parked { "1" } else { "0" })
                    .arg(&why)
                    .arg(self.capacity.unwrap_or(0));
            })
            .await?;
        Ok(PushOutcome { replaced: replaced == 1, evicted })
    }

    async fn receive(
        &self,
        filter: &Filter,
        max: usize,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Vec<Leased>, StoreError> {
        let filter = Filter { states: Vec::new(), ..filter.clone() };
        let lease_until = now.add(lease);
        let candidates: Vec<String> = Self::matching(self.snapshot(now).await?, &filter)
            .filter(|e| e.state == RecordState::Ready)
            .map(|e| e.id)
            .collect();
        let mut out = Vec::new();
        let mut rest = candidates.as_slice();
        // Candidates taken by another worker since the snapshot (or parked at their
        // delivery limit) are skipped by the script; try the next ones.
        while out.len() < max && !rest.is_empty() {
            let (batch, tail) = rest.split_at((max - out.len()).min(rest.len()));
            rest = tail;
            let nonces: Vec<String> = batch.iter().map(|_| new_nonce()).collect();
            let leased: Vec<String> = self
                .invoke(&self.scripts.receive, |inv| {
                    inv.arg(now.as_unix_millis())
                        .arg(lease_until.as_unix_millis())
                        .arg(&self.consumer)
                        .arg(self.max_deliveries);
                    for (id, nonce) in batch.iter().zip(&nonces) {
                        inv.arg(id).arg(nonce);
                    }
                })
                .await?;
            for triple in leased.chunks_exact(3) {
                let [id, deliveries, body] = triple else { continue };
                let Some(i) = batch.iter().position(|b| b == id) else { continue };
                let nonce = nonces.get(i).cloned().unwrap_or_default();
                let mut record: DeadLetterRecord =
                    serde_json::from_str(body).map_err(|e| StoreError::Decode(format!("record {id}: {e}")))?;
                record.state = RecordState::Leased;
                record.deliveries = deliveries.parse().unwrap_or(0);
                record.parked_reason = None;
                out.push(Leased { token: LeaseToken { id: id.clone(), nonce }, record, lease_until });
            }
        }
        Ok(out)
    }

    async fn complete(&self, token: &LeaseToken, _now: Timestamp) -> Result<(), StoreError> {
        let done: i64 = self
            .invoke(&self.scripts.complete, |inv| {
                inv.arg(&token.id).arg(&token.nonce);
            })
            .await?;
        if done == 1 {
            Ok(())
        } else {
            Err(StoreError::LeaseLost { id: token.id.clone() })
        }
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        _now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        let (body, dla, why) = match update {
            Some(u) => {
                // The token names the record; the store owns state and deliveries.
                let why = (u.state == RecordState::Parked)
                    .then(|| u.parked_reason.clone().unwrap_or_else(|| PARKED_BY_REPLAYER.to_string()));
                let u = DeadLetterRecord { id: token.id.clone(), state: RecordState::Ready, parked_reason: None, ..u };
                (encode(&u)?, u.dead_lettered_at.as_unix_millis(), why.unwrap_or_default())
            }
            None => (String::new(), 0, String::new()),
        };
        let state: String = self
            .invoke(&self.scripts.abandon, |inv| {
                inv.arg(&token.id).arg(&token.nonce).arg(self.max_deliveries).arg(&body).arg(dla).arg(&why);
            })
            .await?;
        match state.as_str() {
            "ready" => Ok(RecordState::Ready),
            "parked" => Ok(RecordState::Parked),
            _ => Err(StoreError::LeaseLost { id: token.id.clone() }),
        }
    }

    async fn park(&self, id: &str, why: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let n: i64 = self
            .invoke(&self.scripts.park, |inv| {
                inv.arg(id).arg(why);
            })
            .await?;
        Ok(n == 1)
    }

    async fn unpark(&self, id: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let n: i64 = self
            .invoke(&self.scripts.unpark, |inv| {
                inv.arg(id);
            })
            .await?;
        Ok(n == 1)
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        let snapshot = self.snapshot(now).await?;
        Ok(Self::matching(snapshot, filter).skip(page.offset).take(page.limit).map(|e| e.record).collect())
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let snapshot = self.snapshot(now).await?;
        Ok(Self::matching(snapshot, filter).count() as u64)
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let ids: Vec<String> = Self::matching(self.snapshot(now).await?, filter)
            .filter(|e| e.state != RecordState::Leased)
            .map(|e| e.id)
            .collect();
        if ids.is_empty() {
            return Ok(0);
        }
        self.invoke(&self.scripts.purge, |inv| {
            inv.arg(now.as_unix_millis()).arg(&ids);
        })
        .await
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        let snapshot = self.snapshot(now).await?;
        let mut stats = StoreStats {
            total: snapshot.entries.len() as u64,
            dropped: snapshot.dropped,
            completed: snapshot.completed,
            abandoned: snapshot.abandoned,
            oldest_dead_lettered_at: snapshot.entries.iter().map(|e| e.record.dead_lettered_at).min(),
            in_flight: snapshot.in_flight,
            ..StoreStats::default()
        };
        for e in &snapshot.entries {
            match e.state {
                RecordState::Ready => stats.ready += 1,
                RecordState::Leased => stats.leased += 1,
                RecordState::Parked => stats.parked += 1,
            }
        }
        Ok(stats)
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        let json =
            serde_json::to_string(entry).map_err(|e| StoreError::Decode(format!("journal entry {}: {e}", entry.id)))?;
        let mut conn = self.conn.clone();
        redis::cmd("HSET")
            .arg(self.key("journal"))
            .arg(&entry.id)
            .arg(json)
            .query_async::<()>(&mut conn)
            .await
            .map_err(|e| backend(&self.location, &e))
    }

    async fn journal_forget(&self, id: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        redis::cmd("HDEL")
            .arg(self.key("journal"))
            .arg(id)
            .query_async::<()>(&mut conn)
            .await
            .map_err(|e| backend(&self.location, &e))
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
