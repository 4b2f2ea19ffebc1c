//! The floor the Redis store is measured against: the redis crate sending,
//! for each operation (or group of operations), one minimal Lua script that
//! does the same data work as the store, and nothing else.
//!
//! Why a script per operation: each operation must be atomic against other
//! workers (a record written and its journal entry removed together; a lease
//! checked and taken together), and one round trip per operation is the least
//! any atomic implementation can pay. Plain commands one round trip each
//! (what a pipeline-free redis-py loop would send) cost several round trips
//! per operation and would be a far easier bar.
//!
//! What makes it a floor (every choice is in the floor's favour):
//! - the same data layout as the store (record bodies, deliveries, the age
//!   order, the stream entry that makes a lease visible in `XPENDING`, the
//!   journal and its task keys, settled keys, the completed counter), but only
//!   the commands the bench's operations need: no capacity, no parked or
//!   expired-lease branches beyond the checks receive must make;
//! - bodies encoded before the clock starts and not decoded when received;
//! - nothing but the redis crate between the bench and the socket: either its
//!   async multiplexed connection on the bench's tokio runtime (the I/O model
//!   of the store), or its blocking connection on the calling thread (no async
//!   runtime at all, stricter still).
//!
//! "One by one" is one script call (one round trip) per operation; "grouped"
//! sends `n` operations as one script call, the best batching can do.

use captcha_dlq_core::dlq::DeadLetterRecord;
use captcha_dlq_core::JournalEntry;
use redis::aio::MultiplexedConnection;
use redis::{Cmd, Connection, FromRedisValue, Script};

use crate::FloorLease;

const KEYS: [&str; 12] =
    ["body", "deliv", "nonce", "until", "parked", "entry", "age", "journal", "jkey", "settled", "counters", "stream"];

const PRELUDE: &str = r#"
local BODY, DELIV, NONCE, UNTIL, PARKED, ENTRY, AGE, JOURNAL, JKEY, SETTLED, COUNTERS, STREAM =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
"#;

/// ARGV: (id, body, dead_lettered_at) per record. Returns how many replaced a record.
const PUSH: &str = r#"
local replaced = 0
for i = 1, #ARGV, 3 do
  local id, at = ARGV[i], ARGV[i + 2]
  replaced = replaced + redis.call('HEXISTS', BODY, id)
  redis.call('HSET', BODY, id, ARGV[i + 1])
  redis.call('HSET', DELIV, id, 0)
  redis.call('ZADD', AGE, at, id)
  if redis.call('HEXISTS', ENTRY, id) == 0 then
    redis.call('HSET', ENTRY, id, redis.call('XADD', STREAM, '*', 'id', id))
  end
  if redis.call('HDEL', JOURNAL, id) == 1 then
    local key = redis.call('HGET', JKEY, id)
    if key then
      redis.call('HDEL', JKEY, id)
      redis.call('HSET', SETTLED, key, at)
    end
  end
end
return replaced
"#;

/// ARGV: now, lease end, consumer, max, then `max` nonces. Returns (id, body) pairs leased.
const RECEIVE: &str = r#"
local now, lease_end, consumer, max = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
local out, found, start = {}, 0, 0
while found < max do
  local page = redis.call('ZRANGE', AGE, start, start + max - 1)
  if #page == 0 then break end
  for _, id in ipairs(page) do
    local u = tonumber(redis.call('ZSCORE', UNTIL, id))
    local free = redis.call('HEXISTS', PARKED, id) == 0 and not (u and u > now)
      and redis.call('HEXISTS', JOURNAL, id) == 0
    if free and found < max then
      found = found + 1
      local d = redis.call('HINCRBY', DELIV, id, 1)
      redis.call('HSET', NONCE, id, ARGV[4 + found])
      redis.call('ZADD', UNTIL, lease_end, id)
      local e = redis.call('HGET', ENTRY, id)
      redis.call('XCLAIM', STREAM, 'dlq', consumer, 0, e, 'FORCE', 'RETRYCOUNT', d, 'JUSTID')
      out[#out + 1] = id
      out[#out + 1] = redis.call('HGET', BODY, id)
    end
  end
  start = start + #page
end
return out
"#;

/// ARGV: (id, nonce) per lease. Returns how many leases were still held (and completed).
const COMPLETE: &str = r#"
local done = 0
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HGET', NONCE, id) == ARGV[i + 1] then
    local e = redis.call('HGET', ENTRY, id)
    redis.call('XACK', STREAM, 'dlq', e)
    redis.call('XDEL', STREAM, e)
    redis.call('HDEL', BODY, id)
    redis.call('HDEL', DELIV, id)
    redis.call('HDEL', NONCE, id)
    redis.call('HDEL', ENTRY, id)
    redis.call('ZREM', UNTIL, id)
    redis.call('ZREM', AGE, id)
    done = done + 1
  end
end
redis.call('HINCRBY', COUNTERS, 'completed', done)
return done
"#;

/// ARGV: (id, key ('' = none), body) per entry.
const JOURNAL_UPSERT: &str = r#"
for i = 1, #ARGV, 3 do
  redis.call('HSET', JOURNAL, ARGV[i], ARGV[i + 2])
  if ARGV[i + 1] ~= '' then redis.call('HSET', JKEY, ARGV[i], ARGV[i + 1]) end
end
return 1
"#;

/// ARGV: now, then ids. Removes each entry, settles its key, drops a replayed record.
const JOURNAL_FORGET: &str = r#"
local completed = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('HDEL', JOURNAL, id) == 1 then
    local key = redis.call('HGET', JKEY, id)
    if key then
      redis.call('HDEL', JKEY, id)
      redis.call('HSET', SETTLED, key, '{"id":' .. cjson.encode(id) .. ',"outcome":"solved","at":' .. ARGV[1] .. '}')
    end
  end
  if redis.call('HEXISTS', BODY, id) == 1 then
    local e = redis.call('HGET', ENTRY, id)
    if e then
      redis.call('XACK', STREAM, 'dlq', e)
      redis.call('XDEL', STREAM, e)
    end
    for _, k in ipairs({BODY, DELIV, NONCE, ENTRY, PARKED}) do redis.call('HDEL', k, id) end
    redis.call('ZREM', UNTIL, id)
    redis.call('ZREM', AGE, id)
    completed = completed + 1
  end
end
if completed > 0 then redis.call('HINCRBY', COUNTERS, 'completed', completed) end
return 1
"#;

/// A record as the floor sends it.
#[derive(Debug, Clone)]
pub struct EncodedRecord {
    id: String,
    body: String,
    dead_lettered_at: u64,
}

impl EncodedRecord {
    pub fn new(record: &DeadLetterRecord) -> Result<Self, String> {
        Ok(EncodedRecord {
            id: record.id.clone(),
            body: serde_json::to_string(record).map_err(|e| e.to_string())?,
            dead_lettered_at: record.dead_lettered_at.as_unix_millis(),
        })
    }
}

/// A journal entry as the floor sends it.
#[derive(Debug, Clone)]
pub struct EncodedEntry {
    id: String,
    key: String,
    json: String,
}

impl EncodedEntry {
    pub fn new(entry: &JournalEntry) -> Result<Self, String> {
        let json = serde_json::to_string(entry).map_err(|e| e.to_string())?;
        Ok(EncodedEntry { id: entry.id.clone(), key: entry.key.clone().unwrap_or_default(), json })
    }
}

/// The connection the floor sends on.
enum Conn {
    /// The redis crate's async connection, driven by the caller's tokio runtime.
    Async(MultiplexedConnection),
    /// The redis crate's blocking connection, on the calling thread.
    Blocking(Connection),
}

pub struct RedisFloor {
    conn: Conn,
    keys: Vec<String>,
    push: Script,
    receive: Script,
    complete: Script,
    journal_upsert: Script,
    journal_forget: Script,
    nonces: u64,
}

impl std::fmt::Debug for RedisFloor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisFloor").field("keys", &self.keys).finish_non_exhaustive()
    }
}

fn err(e: redis::RedisError) -> String {
    format!("redis floor: {e}")
}

impl RedisFloor {
    /// Connects to `url`, prepares the keys of `namespace` (its stream and group included) and
    /// loads the scripts, so that no timed call pays for `SCRIPT LOAD`. `blocking`: use the
    /// blocking connection (call from a thread that may block) instead of the async one.
    pub async fn connect(url: &str, namespace: &str, blocking: bool) -> Result<Self, String> {
        let client = redis::Client::open(url).map_err(err)?;
        let conn = if blocking {
            Conn::Blocking(client.get_connection().map_err(err)?)
        } else {
            Conn::Async(client.get_multiplexed_async_connection().await.map_err(err)?)
        };
        let keys: Vec<String> = KEYS.iter().map(|k| format!("{{floor:{namespace}}}:{k}")).collect();
        let codes = [PUSH, RECEIVE, COMPLETE, JOURNAL_UPSERT, JOURNAL_FORGET].map(|body| format!("{PRELUDE}{body}"));
        let [push, receive, complete, journal_upsert, journal_forget] = codes.clone().map(|code| Script::new(&code));
        let mut floor = RedisFloor { conn, keys, push, receive, complete, journal_upsert, journal_forget, nonces: 0 };
        let stream = floor.keys.last().cloned().unwrap_or_default();
        let mut group = redis::cmd("XGROUP");
        group.arg("CREATE").arg(&stream).arg("dlq").arg("0").arg("MKSTREAM");
        floor.query::<()>(group).await?;
        for code in codes {
            let mut load = redis::cmd("SCRIPT");
            load.arg("LOAD").arg(code);
            floor.query::<String>(load).await?;
        }
        Ok(floor)
    }

    async fn query<T: FromRedisValue>(&mut self, cmd: Cmd) -> Result<T, String> {
        match &mut self.conn {
            Conn::Async(c) => cmd.query_async(c).await.map_err(err),
            Conn::Blocking(c) => tokio::task::block_in_place(|| cmd.query(c)).map_err(err),
        }
    }

    fn evalsha(&self, script: &Script) -> Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(script.get_hash()).arg(self.keys.len()).arg(&self.keys);
        cmd
    }

    /// Pushes `records` in one script call (one by one: a slice of one).
    pub async fn push(&mut self, records: &[EncodedRecord]) -> Result<(), String> {
        let mut cmd = self.evalsha(&self.push);
        for r in records {
            cmd.arg(&r.id).arg(&r.body).arg(r.dead_lettered_at);
        }
        self.query::<i64>(cmd).await.map(drop)
    }

    /// Leases up to `max` of the oldest ready records in one script call.
    pub async fn receive(&mut self, max: usize, now_ms: u64, lease_ms: u64) -> Result<Vec<FloorLease>, String> {
        let mut cmd = self.evalsha(&self.receive);
        cmd.arg(now_ms).arg(now_ms + lease_ms).arg("floor-worker").arg(max);
        let nonces: Vec<String> = (0..max)
            .map(|_| {
                self.nonces += 1;
                format!("{:032x}", self.nonces)
            })
            .collect();
        cmd.arg(&nonces);
        let pairs: Vec<String> = self.query(cmd).await?;
        Ok(pairs
            .chunks_exact(2)
            .zip(nonces)
            .filter_map(|(pair, nonce)| pair.first().map(|id| FloorLease { id: id.clone(), nonce }))
            .collect())
    }

    /// Completes `leases` in one script call (one by one: a slice of one).
    pub async fn complete(&mut self, leases: &[FloorLease]) -> Result<(), String> {
        let mut cmd = self.evalsha(&self.complete);
        for l in leases {
            cmd.arg(&l.id).arg(&l.nonce);
        }
        let done: usize = self.query(cmd).await?;
        if done != leases.len() {
            return Err("redis floor: a lease was lost".into());
        }
        Ok(())
    }

    /// Writes `entries` in one script call (one by one: a slice of one).
    pub async fn journal_upsert(&mut self, entries: &[EncodedEntry]) -> Result<(), String> {
        let mut cmd = self.evalsha(&self.journal_upsert);
        for e in entries {
            cmd.arg(&e.id).arg(&e.key).arg(&e.json);
        }
        self.query::<i64>(cmd).await.map(drop)
    }

    /// Forgets `ids` in one script call (one by one: a slice of one).
    pub async fn journal_forget(&mut self, ids: &[String], now_ms: u64) -> Result<(), String> {
        let mut cmd = self.evalsha(&self.journal_forget);
        cmd.arg(now_ms).arg(ids);
        self.query::<i64>(cmd).await.map(drop)
    }
}
