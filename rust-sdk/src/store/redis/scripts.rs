//! The Lua scripts of the Redis store (each operation that changes more than
//! one key is one script, so it is atomic against every other worker) and the
//! namespace's key layout they share.
//!
//! The rules the scripts apply (lease eligibility, delivery → park, abandon, a push keeping a
//! lease, the journal's fence) are `captcha_dlq_core::dlq::rules`, written in Lua again so that
//! each operation stays one atomic script; `store_redis::the_lua_scripts_answer_the_rules_case_table`
//! runs the rules' case table against them on a real server (decision 0075).

use redis::Script;

use captcha_dlq_core::class::reason;

/// Every key of a namespace, in the order of `PRELUDE`. `jkey` (journal id → task key),
/// `settled` (task key → JSON) and `skeys` (task keys, for ranges in key order) came with
/// settled keys; a namespace written before them simply has none.
pub(super) const KEY_NAMES: [&str; 13] = [
    "body", "deliv", "nonce", "until", "parked", "entry", "age", "journal", "counters", "stream", "jkey", "settled",
    "skeys",
];

/// The stream's place in [`KEY_NAMES`].
pub(super) const STREAM: usize = 9;

/// The Redis key `name` of `namespace`: `{dlq:<namespace>}:<name>`. Every key of a namespace
/// gets its name here, so all of them share the hash tag `{dlq:<namespace>}` and hence one
/// cluster slot: a script may then touch any of them in a Redis Cluster, whose nodes refuse a
/// call whose keys lie on several slots. The names are those of the first release (single
/// servers used the tag already), so a namespace written by any release reads as it is.
/// A namespace has no braces (`location::namespace_problem`), so the tag is the whole of it.
pub(super) fn namespace_key(namespace: &str, name: &str) -> String {
    format!("{{dlq:{namespace}}}:{name}")
}

/// Shared by every script: key names, the two ways a lease or record ends, and how a journal
/// entry goes (settling its task key).
const PRELUDE: &str = r#"
local BODY, DELIV, NONCE, UNTIL, PARKED, ENTRY, AGE, JOURNAL, COUNTERS, STREAM, JKEY, SETTLED, SKEYS =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12],
  KEYS[13]
local GROUP = 'dlq'
local MAX_DELIVERY_REASON = '@MAX_DELIVERY_REASON@'
local function end_lease(id)
  local e = redis.call('HGET', ENTRY, id)
  if e then redis.call('XACK', STREAM, GROUP, e) end
  redis.call('HDEL', NONCE, id)
  redis.call('ZREM', UNTIL, id)
end
-- Removes record `id` entirely. `leased`: it is known to be under a lease, hence not parked.
local function drop(id, leased)
  local e = redis.call('HGET', ENTRY, id)
  if e then
    redis.call('XACK', STREAM, GROUP, e)
    redis.call('XDEL', STREAM, e)
  end
  redis.call('HDEL', BODY, id)
  redis.call('HDEL', DELIV, id)
  redis.call('HDEL', NONCE, id)
  redis.call('HDEL', ENTRY, id)
  if not leased then redis.call('HDEL', PARKED, id) end
  redis.call('ZREM', UNTIL, id)
  redis.call('ZREM', AGE, id)
end
-- Removes the journal entry `id`; if it had a task key, settles the key as `outcome` at `at` (ms).
local function forget_entry(id, outcome, at)
  -- An entry's key is written with it (journal_upsert), so no entry means no key.
  if redis.call('HDEL', JOURNAL, id) == 0 then return end
  local key = redis.call('HGET', JKEY, id)
  if key then
    redis.call('HDEL', JKEY, id)
    redis.call('HSET', SETTLED, key, '{"id":' .. cjson.encode(id) .. ',"outcome":"' .. outcome .. '","at":' .. at .. '}')
    redis.call('ZADD', SKEYS, 0, key)
  end
end
"#;

/// Shared by the scripts that look records up and lease them (not by [`APPLY`]: every local
/// function is a closure made again on every call, so each script carries only what it uses).
const READS_PRELUDE: &str = r#"
-- Whether `id` has a journal entry: a replay of it is in flight, and it is never leased.
local function replaying(id)
  return redis.call('HEXISTS', JOURNAL, id) == 1
end
-- Whether `id` is neither parked nor under a lease that is still live at `now`.
local function available(id, now)
  if redis.call('HEXISTS', PARKED, id) == 1 then return false end
  local u = tonumber(redis.call('ZSCORE', UNTIL, id))
  return not (u and u > now and redis.call('HEXISTS', NONCE, id) == 1)
end
-- Lease `id` if it is ready or its lease ended by `now` (taking the stream entry over); a
-- record at the delivery limit is parked instead. Returns its deliveries and body, or nil.
local expired = 0
local function lease(id, nonce, now, lease_end, consumer, maxd)
  if not available(id, now) or replaying(id) then return nil end
  local body = redis.call('HGET', BODY, id)
  if not body then return nil end
  if redis.call('HEXISTS', NONCE, id) == 1 then
    expired = expired + 1
    end_lease(id)
  end
  local d = tonumber(redis.call('HGET', DELIV, id) or '0') or 0
  if d >= maxd then
    redis.call('HSET', PARKED, id, MAX_DELIVERY_REASON)
    return nil
  end
  d = d + 1
  redis.call('HSET', DELIV, id, d)
  redis.call('HSET', NONCE, id, nonce)
  redis.call('ZADD', UNTIL, lease_end, id)
  local e = redis.call('HGET', ENTRY, id)
  if e then redis.call('XCLAIM', STREAM, GROUP, consumer, 0, e, 'FORCE', 'RETRYCOUNT', d, 'JUSTID') end
  return d, body
end
-- Appends (id, state, deliveries, parked reason, body) of `id` to `out` if it exists; the state
-- is 'parked', 'leased' (a lease still live at `now`) or 'ready'.
local function describe(id, now, out)
  local body = redis.call('HGET', BODY, id)
  if not body then return false end
  local state, why = 'ready', redis.call('HGET', PARKED, id)
  if why then
    state = 'parked'
  else
    why = ''
    if not available(id, now) then state = 'leased' end
  end
  out[#out + 1] = id
  out[#out + 1] = state
  out[#out + 1] = redis.call('HGET', DELIV, id) or '0'
  out[#out + 1] = why
  out[#out + 1] = body
  return true
end
local function count_expired()
  if expired > 0 then redis.call('HINCRBY', COUNTERS, 'abandoned', expired) end
end
-- Redis orders members of equal score by their bytes (memcmp), not by Lua's locale-aware `<`.
local function bytes_lt(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
-- The rank in `age` just after the position (score, id), whether or not `id` is still there
-- (another worker may have completed it or moved it since).
local function rank_after(score, id)
  local r = redis.call('ZRANK', AGE, id)
  if r and tonumber(redis.call('ZSCORE', AGE, id)) == tonumber(score) then return r + 1 end
  local lo = redis.call('ZCOUNT', AGE, '-inf', '(' .. score)
  local hi = lo + redis.call('ZCOUNT', AGE, score, score)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if bytes_lt(id, redis.call('ZRANGE', AGE, mid, mid)[1]) then hi = mid else lo = mid + 1 end
  end
  return lo
end
"#;

/// ARGV: id, body, dead_lettered_at, deliveries, parked ('1'/'0'), parked reason, capacity (0 = none).
/// The record's journal entry goes, and its task key is settled as dead-lettered.
const PUSH: &str = r#"
local id = ARGV[1]
local replaced = redis.call('HEXISTS', BODY, id)
-- A new record has no lease, park mark or stream entry: only a replaced one needs checks.
if ARGV[5] == '1' then
  if replaced == 1 then end_lease(id) end
  redis.call('HSET', PARKED, id, ARGV[6])
elseif replaced == 1 then
  -- a replaced record keeps an unsettled lease, so it is not handed out twice
  redis.call('HDEL', PARKED, id)
end
redis.call('HSET', BODY, id, ARGV[2])
redis.call('HSET', DELIV, id, ARGV[4])
redis.call('ZADD', AGE, ARGV[3], id)
if replaced == 0 or redis.call('HEXISTS', ENTRY, id) == 0 then
  redis.call('HSET', ENTRY, id, redis.call('XADD', STREAM, '*', 'id', id))
end
forget_entry(id, 'dead_lettered', ARGV[3])
local evicted = {}
local cap = tonumber(ARGV[7])
if cap > 0 and redis.call('HLEN', BODY) > cap then
  -- Oldest first, a page at a time: the cost follows the records passed over, not the namespace.
  for pass = 1, 2 do
    local start = 0
    while redis.call('HLEN', BODY) > cap do
      local page = redis.call('ZRANGE', AGE, start, start + 127)
      if #page == 0 then break end
      for _, victim in ipairs(page) do
        if redis.call('HLEN', BODY) <= cap then break end
        local parked = redis.call('HEXISTS', PARKED, victim) == 1
        local leased = redis.call('HEXISTS', NONCE, victim) == 1
        -- ready records first, then parked ones; never one under a lease (push has no clock)
        if not leased and (pass == 2) == parked and redis.call('HEXISTS', BODY, victim) == 1 then
          drop(victim)
          evicted[#evicted + 1] = victim
        else
          start = start + 1
        end
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
local out = {}
for i = 5, #ARGV, 2 do
  local id = ARGV[i]
  local d, body = lease(id, ARGV[i + 1], now, lease_end, consumer, maxd)
  if d then
    out[#out + 1] = id
    out[#out + 1] = tostring(d)
    out[#out + 1] = body
  end
end
count_expired()
return out
"#;

/// Walks `age` oldest first from just after the cursor (score, id; id '' = from the oldest),
/// skipping parked records and live leases without reading their bodies, until `want` records
/// are found or `budget` ids were inspected.
/// ARGV: now, cursor score, cursor id, want, budget, mode, lease end, consumer, max deliveries,
/// then (mode 'lease') `want` nonces.
/// Mode 'lease' leases what it finds (a record at the delivery limit is parked instead) and
/// returns (id, deliveries, body) triples; mode 'peek' changes nothing and returns (id, body)
/// pairs of the records that could be leased now; mode 'scan' changes nothing and returns every
/// record as `describe` does. The reply starts with 'end' (nothing after
/// the cursor) or 'more', then the new cursor (score, id).
const WALK: &str = r#"
local now, want, budget = tonumber(ARGV[1]), tonumber(ARGV[4]), tonumber(ARGV[5])
local leasing, scanning = ARGV[6] == 'lease', ARGV[6] == 'scan'
local lease_end, consumer, maxd = ARGV[7], ARGV[8], tonumber(ARGV[9])
local score, last = ARGV[2], ARGV[3]
local start = 0
-- A cursor with a score and no id starts at the first record of that score.
if last ~= '' or score ~= '' then start = rank_after(score, last) end
local out, found, seen, status = {}, 0, 0, 'more'
while found < want and seen < budget do
  local n = math.min(budget - seen, 128)
  local page = redis.call('ZRANGE', AGE, start, start + n - 1, 'WITHSCORES')
  local got = #page / 2
  for i = 1, #page, 2 do
    local id = page[i]
    last, score = id, page[i + 1]
    seen = seen + 1
    if leasing then
      local d, body = lease(id, ARGV[10 + found], now, lease_end, consumer, maxd)
      if d then
        found = found + 1
        out[#out + 1] = id
        out[#out + 1] = tostring(d)
        out[#out + 1] = body
      end
    elseif scanning then
      if describe(id, now, out) then found = found + 1 end
    elseif available(id, now) and not replaying(id) then
      local body = redis.call('HGET', BODY, id)
      if body then
        found = found + 1
        out[#out + 1] = id
        out[#out + 1] = body
      end
    end
    if found >= want then break end
  end
  if found < want and got < n then
    status = 'end'
    break
  end
  start = start + got
end
count_expired()
local reply = {status, score, last}
for i = 1, #out do reply[#reply + 1] = out[i] end
return reply
"#;

/// ARGV: now, ids. Returns (id, body) pairs of those that could be leased now.
const PEEK_IDS: &str = r#"
local now, out = tonumber(ARGV[1]), {}
for i = 2, #ARGV do
  local id = ARGV[i]
  if available(id, now) and not replaying(id) then
    local body = redis.call('HGET', BODY, id)
    if body then
      out[#out + 1] = id
      out[#out + 1] = body
    end
  end
end
return out
"#;

/// ARGV: now, ids. Returns the records among them that exist, as `describe` does.
const RECORDS: &str = r#"
local now, out = tonumber(ARGV[1]), {}
for i = 2, #ARGV do describe(ARGV[i], now, out) end
return out
"#;

/// ARGV: id, nonce. Returns 1, or 0 if the token is stale.
const COMPLETE: &str = r#"
if redis.call('HGET', NONCE, ARGV[1]) ~= ARGV[2] then return 0 end
drop(ARGV[1], true)
redis.call('HINCRBY', COUNTERS, 'completed', 1)
return 1
"#;

/// ARGV: id, nonce, max deliveries, new body ('' = keep), dead_lettered_at, park reason ('' = not asked).
/// Returns 'ready', 'parked', or 'lost'. The record's journal entry (its failed replay) goes.
const ABANDON: &str = r#"
local id = ARGV[1]
if redis.call('HGET', NONCE, id) ~= ARGV[2] then return 'lost' end
end_lease(id)
redis.call('HDEL', JOURNAL, id)
redis.call('HDEL', JKEY, id)
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

/// Shared by the two purges (not by every script: each local function is a closure made again
/// on every call): the walk over the ids they are given and the lease rule they both apply.
const PURGE_PRELUDE: &str = r#"
-- Removes each record whose id is ARGV[i], for i from `first` by `step`, that `chosen(i)` accepts
-- and that is not under a lease still live at `now` (ms); returns how many went.
local function purge_chosen(now, first, step, chosen)
  local n = 0
  for i = first, #ARGV, step do
    local id = ARGV[i]
    if chosen(i) then
      local u = tonumber(redis.call('ZSCORE', UNTIL, id))
      local live = redis.call('HEXISTS', NONCE, id) == 1 and u ~= nil and u > now
      if not live then
        drop(id)
        n = n + 1
      end
    end
  end
  return n
end
"#;

/// ARGV: now, ids. Removes those not under a live lease; returns how many.
const PURGE: &str = r#"
return purge_chosen(tonumber(ARGV[1]), 2, 1, function(i) return redis.call('HEXISTS', BODY, ARGV[i]) == 1 end)
"#;

/// Retention's compare-and-delete (issue 44, finding 8). ARGV: pairs of (id, the record's body
/// as read). A record goes only while its body is still that one (an edit, a failed replay or a
/// push rewrites it) and its lease, if any, has ended by the server's clock (`TIME`), never an
/// evicting host's. Returns how many went.
const PURGE_UNCHANGED: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return purge_chosen(now, 1, 2, function(i) return redis.call('HGET', BODY, ARGV[i]) == ARGV[i + 1] end)
"#;

/// ARGV: id, JSON, has key ('1'/'0'), key, has owner ('1'/'0'), owner, must exist ('1'/'0':
/// `journal_update`). Returns 1, or 0 when the entry exists with another owner or is missing
/// and must exist (the fence: nothing is written). The stored entry is only decoded to read its
/// owner, never re-encoded.
const JOURNAL_UPSERT: &str = r#"
local held = redis.call('HGET', JOURNAL, ARGV[1])
if not held and ARGV[7] == '1' then return 0 end
if held then
  -- An entry cjson cannot read (none we write) is not fenced rather than never written again.
  local ok, entry = pcall(cjson.decode, held)
  local owner = nil
  if ok and type(entry) == 'table' and entry.owner ~= cjson.null then owner = entry.owner end
  local want = nil
  if ARGV[5] == '1' then want = ARGV[6] end
  if ok and owner ~= want then return 0 end
end
redis.call('HSET', JOURNAL, ARGV[1], ARGV[2])
if ARGV[3] == '1' then
  redis.call('HSET', JKEY, ARGV[1], ARGV[4])
else
  redis.call('HDEL', JKEY, ARGV[1])
end
return 1
"#;

/// ARGV: id, the entry's JSON as read, its JSON with the new owner. Writes the new JSON only if
/// the entry still reads as it was read (compare-and-set of the whole entry: its owner, and
/// anything its owner wrote meanwhile); returns 1, or 0 if it changed or is gone.
const JOURNAL_CLAIM: &str = r#"
if redis.call('HGET', JOURNAL, ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', JOURNAL, ARGV[1], ARGV[3])
return 1
"#;

/// ARGV: id, now. Removes the entry, settles its key as solved, and removes a dead-letter record
/// with the same id (a replay that is now solved), counting it as completed.
const JOURNAL_FORGET: &str = r#"
local id = ARGV[1]
forget_entry(id, 'solved', ARGV[2])
if redis.call('HEXISTS', BODY, id) == 1 then
  drop(id)
  redis.call('HINCRBY', COUNTERS, 'completed', 1)
end
return 1
"#;

/// ARGV: lex min, lex max, page size. Forgets up to a page of settled keys in the range;
/// returns how many.
const CLEAR_SETTLED: &str = r#"
local keys = redis.call('ZRANGEBYLEX', SKEYS, ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
if #keys == 0 then return 0 end
redis.call('HDEL', SETTLED, unpack(keys))
redis.call('ZREM', SKEYS, unpack(keys))
return #keys
"#;

/// The single-call operations [`APPLY`] runs, by name, with each one's body (also each one's own
/// script, [`Scripts::alone`], for a call that goes out by itself).
const OPERATIONS: [(Op, &str); 7] = [
    (Op::Push, PUSH),
    (Op::Complete, COMPLETE),
    (Op::Abandon, ABANDON),
    (Op::Park, PARK),
    (Op::Unpark, UNPARK),
    (Op::JournalUpsert, JOURNAL_UPSERT),
    (Op::JournalForget, JOURNAL_FORGET),
];

/// A single-call write, run by [`APPLY`] with others that arrived together, or alone by its
/// own script. The order is that of [`OPERATIONS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Push,
    Complete,
    Abandon,
    Park,
    Unpark,
    JournalUpsert,
    JournalForget,
}

impl Op {
    pub(super) fn name(self) -> &'static str {
        match self {
            Op::Push => "push",
            Op::Complete => "complete",
            Op::Abandon => "abandon",
            Op::Park => "park",
            Op::Unpark => "unpark",
            Op::JournalUpsert => "journal_upsert",
            Op::JournalForget => "journal_forget",
        }
    }
}

/// ARGV: operations one after another, each as (name, argument count, arguments...); each
/// operation's body sees its own arguments as `ARGV`. Returns one reply per operation, in order;
/// an operation that fails (a key of the wrong type) answers an error reply in its place and
/// the others still run. The whole call is atomic, as each operation was on its own. `OP`
/// (made from [`OPERATIONS`]) makes an operation's function the first time the call needs it.
const APPLY: &str = r#"
local out, i = {}, 1
while i <= #ARGV do
  local name, n = ARGV[i], tonumber(ARGV[i + 1])
  local args = {}
  for j = 1, n do args[j] = ARGV[i + 1 + j] end
  i = i + 2 + n
  local op = OP(name)
  local ok, res
  if op then
    ok, res = pcall(op, args)
  else
    ok, res = false, 'unknown operation ' .. tostring(name)
  end
  if ok then
    out[#out + 1] = res
  elseif type(res) == 'table' and res.err then
    out[#out + 1] = res
  else
    out[#out + 1] = {err = tostring(res)}
  end
end
return out
"#;

#[derive(Clone)]
pub(super) struct Scripts {
    pub(super) apply: Script,
    /// Each operation of [`OPERATIONS`] as a script of its own, in that order: a call that goes
    /// out alone runs its body directly, without `APPLY`'s dispatch (reading the operations, a
    /// table of arguments, a function made and called under `pcall`, a table of replies): with
    /// one push it cost the server 5-17 us more than the push's own script (decision
    /// 0038 in docs/decisions/).
    alone: [Script; OPERATIONS.len()],
    pub(super) receive: Script,
    pub(super) walk: Script,
    pub(super) peek_ids: Script,
    pub(super) records: Script,
    pub(super) purge: Script,
    pub(super) purge_unchanged: Script,
    pub(super) clear_settled: Script,
    pub(super) journal_claim: Script,
}

impl Scripts {
    /// The script running `op` by itself: ARGV are its arguments, the reply is its own.
    pub(super) fn alone(&self, op: Op) -> &Script {
        // OPERATIONS lists the operations in the order of `Op` (see the test below).
        &self.alone[op as usize]
    }

    pub(super) fn new() -> Self {
        let prelude = PRELUDE.replace("@MAX_DELIVERY_REASON@", reason::MAX_DELIVERY_COUNT_EXCEEDED);
        let s = |body: &str| Script::new(&format!("{prelude}{READS_PRELUDE}{body}"));
        // `OP(name)`: the operation's function, made on first use in this call (nil if unknown).
        let mut operations = String::from(
            "local made = {}\nlocal function OP(name)\n  local f = made[name]\n  if f then return f end\n",
        );
        for (i, (op, body)) in OPERATIONS.iter().enumerate() {
            let branch = if i == 0 { "if" } else { "elseif" };
            operations.push_str(&format!(
                "  {branch} name == '{}' then\n    f = function(ARGV)\n{body}\n    end\n",
                op.name()
            ));
        }
        operations.push_str("  end\n  made[name] = f\n  return f\nend\n");
        Scripts {
            apply: Script::new(&format!("{prelude}{operations}{APPLY}")),
            alone: OPERATIONS.map(|(_, body)| Script::new(&format!("{prelude}{body}"))),
            receive: s(RECEIVE),
            walk: s(WALK),
            peek_ids: s(PEEK_IDS),
            records: s(RECORDS),
            purge: Script::new(&format!("{prelude}{PURGE_PRELUDE}{PURGE}")),
            purge_unchanged: Script::new(&format!("{prelude}{PURGE_PRELUDE}{PURGE_UNCHANGED}")),
            clear_settled: s(CLEAR_SETTLED),
            journal_claim: Script::new(&format!("{prelude}{JOURNAL_CLAIM}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OPERATIONS;

    #[test]
    fn operations_are_listed_in_the_order_of_op() {
        for (i, (op, _)) in OPERATIONS.iter().enumerate() {
            assert_eq!(*op as usize, i, "{} is listed out of order", op.name());
        }
    }
}
