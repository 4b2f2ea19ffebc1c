//! The Redis fleet ledger: every client on one namespace, on any host, shares each account's
//! state through it. Keys, under the namespace's hash tag (one cluster slot):
//! `fleet_account:<id>` (a hash per account: the fields of [`AccountState`]), `fleet_accounts`
//! (the set of account ids, for the fleet view) and `fleet_owners` (hash owner → its row as
//! JSON). Scripts touch only the keys they are given.
//!
//! A sync is one script on the server's clock (`TIME`), never a host's: hosts whose clocks
//! disagree by minutes still agree on the schedule, the pauses and who is alive. The script
//! follows [`AccountState::apply`] step by step (the conformance suite,
//! `captcha_dlq_core::fleet::testkit`, runs against both). Numbers are kept as hash fields
//! written with `%.0f`: Lua's numbers are doubles, exact to 2^53 (µs since the epoch fit), and
//! cjson would round them to 14 digits.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use captcha_dlq_core::dlq::StoreError;
use captcha_dlq_core::fleet::{
    AccountState, FleetGrant, FleetLedger, FleetReport, FleetView, OwnerInfo, RefusedKind, SharedAccountError,
    FORGET_OWNERS_AFTER_MS, HALVE_SPACING_MS, MAX_PERMITS_PER_SYNC, OWNER_TTL_MS, PERMIT_HORIZON_MS,
};
use captcha_dlq_core::{Secret, Timestamp};
use redis::Script;

use super::{backend, RedisStore};

/// `AccountState::apply` in Lua. KEYS: the account's hash, the owners' hash, the accounts' set.
/// Replies `{now_ms, paused_ms, pause_code, window, others_in_flight, error_code, error_description,
/// error_hold_ms, spent_nano, others_reserved_nano, probe (1: this client's turn), refused kinds,
/// permit…}` (an empty code: none; the nano amounts as text, past what an integer reply from a
/// Lua double keeps exactly; the refused kinds as `kind:ms_left,…`, `RefusedKind::encode_list`,
/// and kept in the hash as `kind:until_ms,…`).
const SYNC: &str = r#"
local ACCOUNT, OWNERS, ACCOUNTS = KEYS[1], KEYS[2], KEYS[3]
local account, me, owner_json = ARGV[1], ARGV[2], ARGV[3]
local in_flight, want, rate, window_max = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local pause_ms, pause_code = tonumber(ARGV[8]), ARGV[9]
local no_slot, accepted = ARGV[10] == '1', tonumber(ARGV[11])
local err_code, err_description, err_hold = ARGV[12], ARGV[13], tonumber(ARGV[14])
local account_ok = ARGV[15] == '1'
local TTL, HORIZON, HALVE, MAXP, FORGET = tonumber(ARGV[16]), tonumber(ARGV[17]), tonumber(ARGV[18]), tonumber(ARGV[19]), tonumber(ARGV[20])
local budget, spent, reserved, permit_cost = tonumber(ARGV[21]), tonumber(ARGV[22]), tonumber(ARGV[23]), tonumber(ARGV[24])
local probe_ms = tonumber(ARGV[25])
local refused_report = ARGV[26]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local s = redis.call('HMGET', ACCOUNT, 'next_slot_us', 'paused_until_ms', 'pause_code', 'window', 'last_halved_ms',
  'err_code', 'err_description', 'err_hold_ms', 'err_until_ms', 'spent_nano', 'probe_until_ms', 'refused_kinds')
local next_slot, paused_until, p_code = tonumber(s[1]) or 0, tonumber(s[2]) or 0, s[3] or ''
local window, last_halved = tonumber(s[4]) or 0, tonumber(s[5]) or 0
local e_code, e_description, e_hold, e_until = s[6] or '', s[7] or '', tonumber(s[8]) or 0, tonumber(s[9]) or 0
local spent_total = (tonumber(s[10]) or 0) + spent
local probe_until = tonumber(s[11]) or 0
local refused = {}
for kind, till in string.gmatch(s[12] or '', '([^:,]+):(%d+)') do refused[kind] = tonumber(till) end

-- What the other live owners hold (and rows long silent go).
local others, others_reserved, mine = 0, 0, nil
local rows = redis.call('HGETALL', OWNERS)
for i = 1, #rows, 2 do
  local row = cjson.decode(rows[i + 1])
  if rows[i] == me then
    mine = row
  elseif now < row.heartbeat_ms + TTL then
    others = others + (tonumber(row.in_flight[account]) or 0)
    if type(row.reserved_nano) == 'table' then
      others_reserved = others_reserved + (tonumber(row.reserved_nano[account]) or 0)
    end
  elseif now > row.heartbeat_ms + FORGET then
    redis.call('HDEL', OWNERS, rows[i])
  end
end

if pause_ms >= 0 and now + pause_ms > paused_until then
  paused_until = now + pause_ms
  p_code = pause_code
end
if account_ok then
  e_code, e_description, e_hold, e_until = '', '', 0, 0
  probe_until = 0
end
if err_code ~= '' then
  e_until = now + err_hold
  e_code, e_description, e_hold = err_code, err_description, err_hold
end
for kind, ms in string.gmatch(refused_report, '([^:,]+):(%d+)') do
  local till = now + tonumber(ms)
  if (refused[kind] or 0) < till then refused[kind] = till end
end
local refused_kinds = {}
for kind, till in pairs(refused) do
  if till > now then refused_kinds[#refused_kinds + 1] = kind end
end
table.sort(refused_kinds)
local ceiling = math.max(window_max, 1)
if window == 0 or window > ceiling then window = ceiling end
if no_slot and now >= last_halved + HALVE then
  window = math.max(math.floor(window / 2), 1)
  last_halved = now
elseif accepted > 0 then
  window = math.min(window + accepted, ceiling)
end

local held = e_until > now
local probe = held and probe_ms > 0 and probe_until <= now
if probe then probe_until = now + probe_ms end
local blocked_until = paused_until
if held and e_until > blocked_until then blocked_until = e_until end
local permits = {}
if not held and rate > 0 then
  local interval = math.max(math.floor(1000000 / rate + 0.5), 1)
  local now_us = now * 1000
  local horizon = now_us + HORIZON * 1000
  local slot = math.max(next_slot, now_us, blocked_until * 1000)
  local most = math.min(want, MAXP)
  if budget >= 0 and permit_cost > 0 then
    most = math.min(most, math.floor(math.max(budget - spent_total - others_reserved - reserved, 0) / permit_cost))
  elseif budget >= 0 and spent_total >= budget then
    most = 0
  end
  while #permits < most and slot <= horizon do
    permits[#permits + 1] = math.max(math.ceil(slot / 1000) - now, 0)
    slot = slot + interval
  end
  if #permits > 0 then next_slot = slot end
end
if not held and e_code ~= '' then
  e_code, e_description, e_hold, e_until = '', '', 0, 0
  probe_until = 0
end

local f = function(n) return string.format('%.0f', n) end
local refused_kept, refused_left = {}, {}
for _, kind in ipairs(refused_kinds) do
  refused_kept[#refused_kept + 1] = kind .. ':' .. f(refused[kind])
  refused_left[#refused_left + 1] = kind .. ':' .. f(refused[kind] - now)
end
redis.call('HSET', ACCOUNT, 'next_slot_us', f(next_slot), 'paused_until_ms', f(paused_until), 'pause_code', p_code,
  'window', f(window), 'last_halved_ms', f(last_halved), 'err_code', e_code, 'err_description', e_description,
  'err_hold_ms', f(e_hold), 'err_until_ms', f(e_until), 'spent_nano', f(spent_total), 'probe_until_ms', f(probe_until),
  'refused_kinds', table.concat(refused_kept, ','))
redis.call('SADD', ACCOUNTS, account)

local row = cjson.decode(owner_json)
local counts, holds = {}, {}
if mine and type(mine.in_flight) == 'table' then counts = mine.in_flight end
if mine and type(mine.reserved_nano) == 'table' then holds = mine.reserved_nano end
counts[account] = in_flight
holds[account] = reserved + #permits * permit_cost
row.in_flight = counts
row.reserved_nano = holds
row.heartbeat_ms = now
redis.call('HSET', OWNERS, me, cjson.encode(row))

local paused_ms = math.max(paused_until - now, 0)
if paused_ms == 0 then p_code = '' end
local reply = { now, paused_ms, p_code, window, others, '', '', 0, f(spent_total), f(others_reserved), probe and 1 or 0,
  table.concat(refused_left, ',') }
if held then
  reply[6], reply[7], reply[8] = e_code, e_description, e_until - now
end
for i = 1, #permits do reply[#reply + 1] = permits[i] end
return reply
"#;

/// The view's first part, on the slot's server (its clock, as syncs use):
/// `{now_ms, owner count, owner rows…, account ids…}`; each account's hash is read after it.
const VIEW: &str = r#"
local OWNERS, ACCOUNTS = KEYS[1], KEYS[2]
local t = redis.call('TIME')
local owners = redis.call('HVALS', OWNERS)
local reply = { tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), #owners }
for _, json in ipairs(owners) do reply[#reply + 1] = json end
for _, account in ipairs(redis.call('SMEMBERS', ACCOUNTS)) do reply[#reply + 1] = account end
return reply
"#;

fn scripts() -> &'static (Script, Script) {
    static SCRIPTS: OnceLock<(Script, Script)> = OnceLock::new();
    SCRIPTS.get_or_init(|| (Script::new(SYNC), Script::new(VIEW)))
}

fn garbled(location: &str, what: &str) -> StoreError {
    StoreError::Backend(format!("redis {location}: unexpected reply to the fleet {what} script"))
}

impl RedisStore {
    /// A fleet key of this namespace: the store's own keys share its hash tag.
    fn fleet_key(&self, name: &str) -> String {
        super::scripts::namespace_key(self.namespace(), name)
    }

    /// This store as the client's fleet ledger.
    pub(super) fn as_fleet_ledger(&self) -> Arc<dyn FleetLedger> {
        Arc::new(self.clone())
    }
}

fn grant_of(reply: Vec<redis::Value>, location: &str) -> Result<FleetGrant, StoreError> {
    let text = |v: &redis::Value| -> Result<String, StoreError> {
        redis::from_redis_value::<String>(v.clone()).map_err(|_| garbled(location, "sync"))
    };
    let number = |v: &redis::Value| -> Result<u64, StoreError> {
        redis::from_redis_value::<i64>(v.clone()).map(|n| n.max(0) as u64).map_err(|_| garbled(location, "sync"))
    };
    let amount =
        |v: &redis::Value| -> Result<u64, StoreError> { text(v)?.parse().map_err(|_| garbled(location, "sync")) };
    if reply.len() < 12 {
        return Err(garbled(location, "sync"));
    }
    let (pause_code, error_code) = (text(&reply[2])?, text(&reply[5])?);
    Ok(FleetGrant {
        now_ms: number(&reply[0])?,
        paused_ms: number(&reply[1])?,
        pause_code: (!pause_code.is_empty()).then_some(pause_code),
        window: u32::try_from(number(&reply[3])?).unwrap_or(u32::MAX),
        others_in_flight: u32::try_from(number(&reply[4])?).unwrap_or(u32::MAX),
        account_error: match error_code.is_empty() {
            true => None,
            false => Some(SharedAccountError {
                code: error_code,
                description: text(&reply[6])?,
                hold_ms: number(&reply[7])?,
            }),
        },
        spent_nano: amount(&reply[8])?,
        others_reserved_nano: amount(&reply[9])?,
        probe: number(&reply[10])? == 1,
        refused_kinds: RefusedKind::parse_list(&text(&reply[11])?),
        permits: reply[12..].iter().map(number).collect::<Result<_, _>>()?,
    })
}

/// An account's state from its hash's fields (as `HGETALL` gives them).
fn account_of(fields: &BTreeMap<String, String>) -> AccountState {
    let number = |name: &str| fields.get(name).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let text = |name: &str| fields.get(name).filter(|v| !v.is_empty()).cloned();
    AccountState {
        next_slot_us: number("next_slot_us"),
        paused_until_ms: number("paused_until_ms"),
        pause_code: text("pause_code"),
        window: u32::try_from(number("window")).unwrap_or(u32::MAX),
        last_halved_ms: number("last_halved_ms"),
        account_error: text("err_code").map(|code| SharedAccountError {
            code,
            description: text("err_description").unwrap_or_default(),
            hold_ms: number("err_hold_ms"),
        }),
        account_error_until_ms: number("err_until_ms"),
        spent_nano: number("spent_nano"),
        probe_until_ms: number("probe_until_ms"),
        // Kept as `kind:until_ms,…` (the script's form).
        refused_kinds: RefusedKind::parse_list(fields.get("refused_kinds").map_or("", String::as_str))
            .into_iter()
            .map(|r| (r.kind, r.ms))
            .collect(),
    }
}

#[async_trait]
impl FleetLedger for RedisStore {
    fn account_id(&self, base_url: &str, key: &Secret) -> String {
        crate::store::fleet_account_id(base_url, key)
    }

    async fn sync(
        &self,
        account: &str,
        owner: &OwnerInfo,
        report: &FleetReport,
        _now: Timestamp,
    ) -> Result<FleetGrant, StoreError> {
        let owner_json = serde_json::to_string(owner).map_err(|e| StoreError::Decode(format!("fleet owner: {e}")))?;
        let (pause_ms, pause_code) = report.pause.as_ref().map_or((-1, ""), |p| (p.ms as i64, p.code.as_str()));
        let error = report.account_error.as_ref();
        let mut inv = scripts().0.prepare_invoke();
        inv.key(self.fleet_key(&format!("fleet_account:{account}")))
            .key(self.fleet_key("fleet_owners"))
            .key(self.fleet_key("fleet_accounts"))
            .arg(account)
            .arg(&owner.owner)
            .arg(owner_json)
            .arg(report.in_flight)
            .arg(report.want)
            .arg(report.rate)
            .arg(report.window_max)
            .arg(pause_ms)
            .arg(pause_code)
            .arg(u8::from(report.no_slot))
            .arg(report.accepted)
            .arg(error.map_or("", |e| e.code.as_str()))
            .arg(error.map_or("", |e| e.description.as_str()))
            .arg(error.map_or(0, |e| e.hold_ms))
            .arg(u8::from(report.account_ok))
            .arg(OWNER_TTL_MS)
            .arg(PERMIT_HORIZON_MS)
            .arg(HALVE_SPACING_MS)
            .arg(MAX_PERMITS_PER_SYNC)
            .arg(FORGET_OWNERS_AFTER_MS)
            .arg(report.budget_nano.map_or(-1, |b| i64::try_from(b).unwrap_or(i64::MAX)))
            .arg(report.spent_nano)
            .arg(report.reserved_nano)
            .arg(report.permit_cost_nano)
            .arg(report.probe_ms)
            .arg(RefusedKind::encode_list(&report.refused_kinds));
        let mut conn = self.conn.clone();
        let reply: Vec<redis::Value> = inv.invoke_async(&mut conn).await.map_err(|e| backend(&self.location, &e))?;
        grant_of(reply, &self.location)
    }

    async fn leave(&self, owner: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        redis::cmd("HDEL")
            .arg(self.fleet_key("fleet_owners"))
            .arg(owner)
            .query_async::<i64>(&mut conn)
            .await
            .map(|_| ())
            .map_err(|e| backend(&self.location, &e))
    }

    async fn view(&self, _now: Timestamp) -> Result<FleetView, StoreError> {
        let mut inv = scripts().1.prepare_invoke();
        inv.key(self.fleet_key("fleet_owners")).key(self.fleet_key("fleet_accounts"));
        let mut conn = self.conn.clone();
        let reply: Vec<String> = inv.invoke_async(&mut conn).await.map_err(|e| backend(&self.location, &e))?;
        let mut items = reply.into_iter();
        let mut number = || items.next().and_then(|n| n.parse::<u64>().ok());
        let (now_ms, owners) = number().zip(number()).ok_or_else(|| garbled(&self.location, "view"))?;
        let mut view = FleetView { now_ms, ..FleetView::default() };
        for _ in 0..owners {
            let json = items.next().ok_or_else(|| garbled(&self.location, "view"))?;
            let row = serde_json::from_str(&json)
                .map_err(|e| StoreError::Decode(format!("a fleet owner row in {}: {e}", self.location)))?;
            view.owners.push(row);
        }
        for account in items {
            let fields: BTreeMap<String, String> = redis::cmd("HGETALL")
                .arg(self.fleet_key(&format!("fleet_account:{account}")))
                .query_async(&mut conn)
                .await
                .map_err(|e| backend(&self.location, &e))?;
            view.accounts.insert(account, account_of(&fields));
        }
        Ok(view)
    }
}
