//! The floor the Redis store is measured against: the redis crate's plain
//! synchronous connection sending, for each operation, one minimal Lua script
//! that does the same data work as the store, and nothing else.
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
//! - a blocking connection on the calling thread: no async runtime, no
//!   connection manager, no reconnect logic.
//!
//! "One by one" is one round trip per operation; "pipelined" sends `n`
//! operations per round trip (still one script each).

use captcha_dlq_core::dlq::DeadLetterRecord;
use captcha_dlq_core::JournalEntry;
use redis::{Connection, Script};

const KEYS: [&str; 12] =
    ["body", "deliv", "nonce", "until", "parked", "entry", "age", "journal", "jkey", "settled", "counters", "stream"];

const PRELUDE: &str = r#"
local BODY, DELIV, NONCE, UNTIL, PARKED, ENTRY, AGE, JOURNAL, JKEY, SETTLED, COUNTERS, STREAM =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
"#;

/// ARGV: id, body, dead_lettered_at. Returns whether a record was replaced.
const PUSH: &str = r#"
local id = ARGV[1]
local replaced = redis.call('HEXISTS', BODY, id)
redis.call('HSET', BODY, id, ARGV[2])
redis.call('HSET', DELIV, id, 0)
redis.call('ZADD', AGE, ARGV[3], id)
if redis.call('HEXISTS', ENTRY, id) == 0 then
  redis.call('HSET', ENTRY, id, redis.call('XADD', STREAM, '*', 'id', id))
end
if redis.call('HDEL', JOURNAL, id) == 1 then
  local key = redis.call('HGET', JKEY, id)
  if key then
    redis.call('HDEL', JKEY, id)
    redis.call('HSET', SETTLED, key, ARGV[3])
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

/// ARGV: id, nonce. Returns 1, or 0 if the lease was lost.
const COMPLETE: &str = r#"
local id = ARGV[1]
if redis.call('HGET', NONCE, id) ~= ARGV[2] then return 0 end
local e = redis.call('HGET', ENTRY, id)
redis.call('XACK', STREAM, 'dlq', e)
redis.call('XDEL', STREAM, e)
redis.call('HDEL', BODY, id)
redis.call('HDEL', DELIV, id)
redis.call('HDEL', NONCE, id)
redis.call('HDEL', ENTRY, id)
redis.call('ZREM', UNTIL, id)
redis.call('ZREM', AGE, id)
redis.call('HINCRBY', COUNTERS, 'completed', 1)
return 1
"#;

/// ARGV: id, key ('' = none), body.
const JOURNAL_UPSERT: &str = r#"
redis.call('HSET', JOURNAL, ARGV[1], ARGV[3])
if ARGV[2] ~= '' then redis.call('HSET', JKEY, ARGV[1], ARGV[2]) end
return 1
"#;

/// ARGV: id, settled value. Removes the entry, settles its key, drops a replayed record.
const JOURNAL_FORGET: &str = r#"
local id = ARGV[1]
if redis.call('HDEL', JOURNAL, id) == 1 then
  local key = redis.call('HGET', JKEY, id)
  if key then
    redis.call('HDEL', JKEY, id)
    redis.call('HSET', SETTLED, key, ARGV[2])
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
  redis.call('HINCRBY', COUNTERS, 'completed', 1)
end
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

#[derive(Debug, Clone)]
pub struct FloorLease {
    pub id: String,
    pub nonce: String,
}

pub struct RedisFloor {
    conn: Connection,
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
    /// Connects to `url` and prepares the keys of `namespace` (its stream and group included).
    pub fn connect(url: &str, namespace: &str) -> Result<Self, String> {
        let client = redis::Client::open(url).map_err(err)?;
        let mut conn = client.get_connection().map_err(err)?;
        let keys: Vec<String> = KEYS.iter().map(|k| format!("{{floor:{namespace}}}:{k}")).collect();
        let stream = keys.last().cloned().unwrap_or_default();
        redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&stream)
            .arg("dlq")
            .arg("0")
            .arg("MKSTREAM")
            .exec(&mut conn)
            .map_err(err)?;
        let script = |body: &str| Script::new(&format!("{PRELUDE}{body}"));
        let floor = RedisFloor {
            conn,
            keys,
            push: script(PUSH),
            receive: script(RECEIVE),
            complete: script(COMPLETE),
            journal_upsert: script(JOURNAL_UPSERT),
            journal_forget: script(JOURNAL_FORGET),
            nonces: 0,
        };
        Ok(floor)
    }

    /// Loads the scripts, so that no timed call pays for `SCRIPT LOAD`.
    pub fn load(&mut self) -> Result<(), String> {
        for s in [&self.push, &self.receive, &self.complete, &self.journal_upsert, &self.journal_forget] {
            s.prepare_invoke().load(&mut self.conn).map_err(err)?;
        }
        Ok(())
    }

    fn evalsha(&self, script: &Script) -> redis::Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(script.get_hash()).arg(self.keys.len()).arg(&self.keys);
        cmd
    }

    /// Pushes `records`, one script each, in one round trip (one by one: a slice of one).
    pub fn push(&mut self, records: &[EncodedRecord]) -> Result<(), String> {
        let mut pipe = redis::pipe();
        for r in records {
            let mut cmd = self.evalsha(&self.push);
            cmd.arg(&r.id).arg(&r.body).arg(r.dead_lettered_at);
            pipe.add_command(cmd);
        }
        let _: Vec<i64> = pipe.query(&mut self.conn).map_err(err)?;
        Ok(())
    }

    /// Leases up to `max` of the oldest ready records in one script.
    pub fn receive(&mut self, max: usize, now_ms: u64, lease_ms: u64) -> Result<Vec<FloorLease>, String> {
        let mut cmd = self.evalsha(&self.receive);
        cmd.arg(now_ms).arg(now_ms + lease_ms).arg("floor-worker").arg(max);
        let nonces: Vec<String> = (0..max)
            .map(|_| {
                self.nonces += 1;
                format!("{:032x}", self.nonces)
            })
            .collect();
        cmd.arg(&nonces);
        let pairs: Vec<String> = cmd.query(&mut self.conn).map_err(err)?;
        Ok(pairs
            .chunks_exact(2)
            .zip(nonces)
            .filter_map(|(pair, nonce)| pair.first().map(|id| FloorLease { id: id.clone(), nonce }))
            .collect())
    }

    /// Completes `leases`, one script each, in one round trip (one by one: a slice of one).
    pub fn complete(&mut self, leases: &[FloorLease]) -> Result<(), String> {
        let mut pipe = redis::pipe();
        for l in leases {
            let mut cmd = self.evalsha(&self.complete);
            cmd.arg(&l.id).arg(&l.nonce);
            pipe.add_command(cmd);
        }
        let done: Vec<i64> = pipe.query(&mut self.conn).map_err(err)?;
        if done.iter().any(|d| *d != 1) {
            return Err("redis floor: a lease was lost".into());
        }
        Ok(())
    }

    /// Writes `entries`, one script each, in one round trip (one by one: a slice of one).
    pub fn journal_upsert(&mut self, entries: &[EncodedEntry]) -> Result<(), String> {
        let mut pipe = redis::pipe();
        for e in entries {
            let mut cmd = self.evalsha(&self.journal_upsert);
            cmd.arg(&e.id).arg(&e.key).arg(&e.json);
            pipe.add_command(cmd);
        }
        let _: Vec<i64> = pipe.query(&mut self.conn).map_err(err)?;
        Ok(())
    }

    /// Forgets `ids`, one script each, in one round trip (one by one: a slice of one).
    pub fn journal_forget(&mut self, ids: &[String], now_ms: u64) -> Result<(), String> {
        let mut pipe = redis::pipe();
        for id in ids {
            let mut cmd = self.evalsha(&self.journal_forget);
            cmd.arg(id).arg(format!("{{\"id\":\"{id}\",\"outcome\":\"solved\",\"at\":{now_ms}}}"));
            pipe.add_command(cmd);
        }
        let _: Vec<i64> = pipe.query(&mut self.conn).map_err(err)?;
        Ok(())
    }
}
