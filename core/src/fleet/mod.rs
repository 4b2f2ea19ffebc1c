//! The fleet ledger: what every client sharing one store agrees on per provider account.
//!
//! A provider's limits bind its *account* (the provider plus the key), not a process: 2captcha
//! bans a key that sends more than 60 `in.php` requests in 3 s whether they come from one
//! process or from eight. So clients that share a store (a Redis namespace, a SQLite file) keep
//! per account, in that store:
//! - the submit schedule: a client leases *permits* (times at which it may submit) in small
//!   batches, spaced `1/rate` apart across the whole fleet, so no store round trip is paid per
//!   submission;
//! - every pause a provider asked for (`MAX_USER_TURN`, `ERROR: 100x` bans, backoffs), so one
//!   client's ban holds them all;
//! - the in-flight window (AIMD): one `ERROR_NO_SLOT_AVAILABLE` halves it for everyone, and each
//!   client's share is the window less what the others have in flight;
//! - an account error (wrong key, no balance, IP not allowed), so the fleet stops after one
//!   answer instead of each client learning it on its own;
//! - the task kinds the account's service refused as a whole (`ERROR_TASK_NOT_SUPPORTED`), each
//!   until when, so every client routes that kind elsewhere without paying a refused submission
//!   to learn it (issue 43, item 4);
//! - the fleet's spend at the account and each client's reservation (the known cost of its tasks
//!   in flight and of the permits it holds), so that a `budget` binds the fleet: no permit is
//!   granted that the budget could not pay beside what was spent and what is reserved;
//! - each client's heartbeat (an owner row: host, pid, start, last sync, tasks in flight and
//!   reserved cost), from which the in-flight counts, the reservations and the fleet view are read.
//!
//! An account is named in the store by a keyed hash of the key and the provider's base URL
//! ([`FleetLedger::account_id`]), never by the key.
//!
//! The engine stays sans-IO: it asks for a sync with the engine's `Action::FleetSync` and is handed
//! the [`FleetGrant`] back. The rules are [`AccountState::apply`] (stores that run Rust in their
//! transaction: SQLite, the table store); Redis runs the same rules in a Lua script on the
//! server's clock. `testkit::run_ledger_suite` checks every implementation against them.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::http::Secret;
use crate::store_error::{MaybeSendSync, StoreError};
use crate::support::json_read::{deserialize_from_json, read_fields};
use crate::support::time::Timestamp;

#[cfg(any(test, feature = "testkit"))]
pub mod testkit;

/// An owner whose last sync is older than this is gone: its in-flight tasks no longer count
/// against the window, and the fleet view shows it as dead.
pub const OWNER_TTL_MS: u64 = 15_000;
/// Owner rows silent for this long are deleted by the next sync (the fleet view shows dead
/// owners, and `recover` takes their entries by them, until then): longer than any task
/// deadline, after which the front end's liveness takes such entries anyway.
pub const FORGET_OWNERS_AFTER_MS: u64 = 120 * OWNER_TTL_MS;
/// A client syncs each shared account at least this often, with or without work (its heartbeat).
pub const HEARTBEAT_MS: u64 = 5_000;
/// Permits are granted at most this far ahead of the ledger's clock.
pub const PERMIT_HORIZON_MS: u64 = 1_000;
/// A permit not used within this long after its time lapses (the slot is not moved to later,
/// where it could bunch up with the slots granted after it).
pub const PERMIT_GRACE_MS: u64 = 500;
/// The window is halved at most once in this long: several clients hearing "no free worker" at
/// once report one congestion, not several.
pub const HALVE_SPACING_MS: u64 = 1_000;
/// Most permits one sync asks for.
pub const MAX_PERMITS_PER_SYNC: u32 = 64;

/// An account error as the fleet shares it: the provider's code and description, and how long
/// it holds every client before they may try again (each with one request at most).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SharedAccountError {
    pub code: String,
    pub description: String,
    /// How long, from the report, the error holds the fleet.
    pub hold_ms: u64,
}

/// A pause a provider asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SharedPause {
    /// From the report, in ms.
    pub ms: u64,
    /// The provider's code (`MAX_USER_TURN`, `ERROR: 1001`, …).
    pub code: String,
}

/// A task kind the account's service refused as a whole, for `ms` (from the report, or from the
/// grant's `now_ms`): routing skips the service for that kind meanwhile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RefusedKind {
    /// The kind's `type` tag (`hcaptcha`).
    pub kind: String,
    pub ms: u64,
}

impl RefusedKind {
    /// `kind:ms,kind:ms`: the form a store that cannot run Rust in its transaction (Redis's Lua)
    /// keeps and passes them in. A kind tag holds neither `:` nor `,`.
    pub fn encode_list(list: &[RefusedKind]) -> String {
        list.iter().map(|r| format!("{}:{}", r.kind, r.ms)).collect::<Vec<_>>().join(",")
    }

    /// Reads [`encode_list`](Self::encode_list)'s form; a malformed item is left out.
    pub fn parse_list(text: &str) -> Vec<RefusedKind> {
        text.split(',')
            .filter_map(|item| {
                let (kind, ms) = item.split_once(':')?;
                Some(RefusedKind { kind: kind.to_string(), ms: ms.parse().ok()? })
            })
            .collect()
    }
}

/// What one client tells the ledger about one account in a sync.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FleetReport {
    /// This client's tasks at the account now (submitted, not ended).
    pub in_flight: u32,
    /// Permits asked for (0: a heartbeat, or only a report).
    pub want: u32,
    /// The account's submit ceiling, per second (the provider's documented rate).
    pub rate: f64,
    /// The most tasks in flight at the account (the window's ceiling).
    pub window_max: u32,
    /// A pause the provider asked this client for since its last sync.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause: Option<SharedPause>,
    /// The provider said it has no free worker since the last sync: halve the window.
    pub no_slot: bool,
    /// Submissions the provider accepted since the last sync (the window grows by as many).
    pub accepted: u32,
    /// An account error this client was answered since its last sync.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_error: Option<SharedAccountError>,
    /// The account works again (a positive balance, an accepted submission, `reset_circuit`).
    pub account_ok: bool,
    /// The budget the fleet shares, in nano-units (`None`: no budget, or a per-process one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_nano: Option<u64>,
    /// What this client's solved tasks at the account cost since its last sync.
    pub spent_nano: u64,
    /// What this client holds reserved at the account now: the known cost of its tasks in flight
    /// and of the permits it holds.
    pub reserved_nano: u64,
    /// The known cost of a task sent with one of the permits asked for (0: unknown, so the
    /// budget does not limit them, as with one process).
    pub permit_cost_nano: u64,
    /// This client holds for an account error and its balance check is due: it asks for the
    /// fleet's probe turn, which lasts this long (its `circuit.account_probe_ms`; 0: not asking).
    pub probe_ms: u64,
    /// Kinds the service refused as a whole since the last sync, each for how long.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused_kinds: Vec<RefusedKind>,
}

/// Who a client is, for the owner rows (the fleet view) and the in-flight counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OwnerInfo {
    /// The client's owner id, as stamped on its journal entries.
    pub owner: String,
    pub host: String,
    pub pid: u32,
    pub started_at: Timestamp,
}

/// What the ledger answers a sync with. Times are offsets from the ledger's clock (`now_ms`),
/// so that hosts whose clocks disagree agree on the schedule.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FleetGrant {
    /// The ledger's clock at the sync, in ms since the epoch (for tests and the fleet view).
    pub now_ms: u64,
    /// When each granted permit may be used, in ms after `now_ms`, ascending.
    pub permits: Vec<u64>,
    /// How long submissions stay paused, from `now_ms` (0: not paused).
    pub paused_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_code: Option<String>,
    /// The account's in-flight window.
    pub window: u32,
    /// Tasks the other live clients have in flight at the account.
    pub others_in_flight: u32,
    /// What the fleet spent at the account, this sync's report included.
    pub spent_nano: u64,
    /// What the other live clients hold reserved at the account.
    pub others_reserved_nano: u64,
    /// An account error holding the fleet, with the time it still holds (`hold_ms` from `now_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_error: Option<SharedAccountError>,
    /// This client has the fleet's probe turn: it checks the balance for every client holding
    /// on the account (the others wait for what it reports).
    pub probe: bool,
    /// Every kind the service refused that is still refused, with the time left (from `now_ms`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused_kinds: Vec<RefusedKind>,
}

/// An account's shared state, as a store keeps it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AccountState {
    /// The next free submit slot, in µs since the epoch (0: none taken yet).
    pub next_slot_us: u64,
    pub paused_until_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_code: Option<String>,
    /// 0 until the first sync sets it to the window's ceiling.
    pub window: u32,
    pub last_halved_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_error: Option<SharedAccountError>,
    /// Until when `account_error` holds, in ms since the epoch.
    pub account_error_until_ms: u64,
    /// What the fleet's solved tasks at the account cost, ever (nano-units).
    pub spent_nano: u64,
    /// Until when the probe turn given last is the one client's that has it, in ms since the
    /// epoch: while an account error holds the fleet, one client at a time checks the balance.
    pub probe_until_ms: u64,
    /// Kinds the account's service refused as a whole, each until when (ms since the epoch).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub refused_kinds: BTreeMap<String, u64>,
}

/// What the other live clients hold at an account, from their rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Others {
    pub in_flight: u32,
    pub reserved_nano: u64,
}

impl AccountState {
    /// Applies one client's report at the ledger's time `now_ms` and answers it; `others` is what
    /// the other live owners hold at the account. The one statement of the fleet's rules: the
    /// Redis script follows it step by step. The caller adds the granted permits' cost
    /// ([`FleetGrant::reserved_for`]) to the reporting owner's reservation.
    pub fn apply(&mut self, report: &FleetReport, others: Others, now_ms: u64) -> FleetGrant {
        self.spent_nano = self.spent_nano.saturating_add(report.spent_nano);
        if let Some(pause) = &report.pause {
            let until = now_ms.saturating_add(pause.ms);
            if until > self.paused_until_ms {
                self.paused_until_ms = until;
                self.pause_code = Some(pause.code.clone());
            }
        }
        if report.account_ok {
            self.account_error = None;
            self.account_error_until_ms = 0;
            self.probe_until_ms = 0;
        }
        if let Some(error) = &report.account_error {
            self.account_error_until_ms = now_ms.saturating_add(error.hold_ms);
            self.account_error = Some(error.clone());
        }
        for refused in &report.refused_kinds {
            let until = now_ms.saturating_add(refused.ms);
            let at = self.refused_kinds.entry(refused.kind.clone()).or_default();
            *at = (*at).max(until);
        }
        self.refused_kinds.retain(|_, until| *until > now_ms);
        let ceiling = report.window_max.max(1);
        if self.window == 0 || self.window > ceiling {
            self.window = ceiling;
        }
        if report.no_slot && now_ms >= self.last_halved_ms.saturating_add(HALVE_SPACING_MS) {
            self.window = (self.window / 2).max(1);
            self.last_halved_ms = now_ms;
        } else if report.accepted > 0 {
            self.window = self.window.saturating_add(report.accepted).min(ceiling);
        }

        let held = self.account_error_until_ms > now_ms;
        // One balance check per turn for the whole fleet: the first holder to ask after the last
        // turn ran out gets the next (a prober that died loses its turn when it ends).
        let probe = held && report.probe_ms > 0 && self.probe_until_ms <= now_ms;
        if probe {
            self.probe_until_ms = now_ms.saturating_add(report.probe_ms);
        }
        let paused_until_ms = self.paused_until_ms.max(if held { self.account_error_until_ms } else { 0 });
        let mut permits = Vec::new();
        if !held && report.rate.is_finite() && report.rate > 0.0 {
            let interval_us = ((1_000_000.0 / report.rate).round() as u64).max(1);
            let now_us = now_ms.saturating_mul(1000);
            let horizon_us = now_us.saturating_add(PERMIT_HORIZON_MS * 1000);
            let mut slot = self.next_slot_us.max(now_us).max(paused_until_ms.saturating_mul(1000));
            let affordable = match (report.budget_nano, report.permit_cost_nano) {
                (Some(budget), cost) if cost > 0 => {
                    let committed =
                        self.spent_nano.saturating_add(others.reserved_nano).saturating_add(report.reserved_nano);
                    u32::try_from(budget.saturating_sub(committed) / cost).unwrap_or(u32::MAX)
                }
                (Some(budget), _) if self.spent_nano >= budget => 0,
                _ => u32::MAX,
            };
            let most = report.want.min(MAX_PERMITS_PER_SYNC).min(affordable);
            while (permits.len() as u32) < most && slot <= horizon_us {
                permits.push(slot.div_ceil(1000).saturating_sub(now_ms));
                slot = slot.saturating_add(interval_us);
            }
            if !permits.is_empty() {
                self.next_slot_us = slot;
            }
        }
        if !held && self.account_error.is_some() {
            self.account_error = None;
            self.probe_until_ms = 0;
        }
        FleetGrant {
            now_ms,
            permits,
            paused_ms: self.paused_until_ms.saturating_sub(now_ms),
            pause_code: (self.paused_until_ms > now_ms).then(|| self.pause_code.clone()).flatten(),
            window: self.window,
            others_in_flight: others.in_flight,
            spent_nano: self.spent_nano,
            others_reserved_nano: others.reserved_nano,
            account_error: self.account_error.clone().filter(|_| held).map(|mut e| {
                e.hold_ms = self.account_error_until_ms.saturating_sub(now_ms);
                e
            }),
            probe,
            refused_kinds: self
                .refused_kinds
                .iter()
                .map(|(kind, until)| RefusedKind { kind: kind.clone(), ms: until - now_ms })
                .collect(),
        }
    }
}

impl FleetGrant {
    /// What the grant's permits reserve for the owner that asked, at `report`'s cost per permit.
    pub fn reserved_for(&self, report: &FleetReport) -> u64 {
        report.permit_cost_nano.saturating_mul(self.permits.len() as u64)
    }
}

/// One client of the fleet as the ledger last heard of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OwnerRow {
    pub owner: String,
    pub host: String,
    pub pid: u32,
    pub started_at: Timestamp,
    /// The ledger's clock at its last sync, in ms since the epoch.
    pub heartbeat_ms: u64,
    /// Its tasks in flight, per account id.
    pub in_flight: BTreeMap<String, u32>,
    /// What it holds reserved against the budget, per account id (nano-units).
    pub reserved_nano: BTreeMap<String, u64>,
}

impl OwnerRow {
    /// Whether the owner synced within [`OWNER_TTL_MS`] of the ledger's `now_ms`.
    pub fn alive(&self, now_ms: u64) -> bool {
        now_ms < self.heartbeat_ms.saturating_add(OWNER_TTL_MS)
    }

    /// This row after a sync of `owner` for `account` at `now_ms`, holding `in_flight` tasks and
    /// `reserved_nano` there.
    pub fn synced(
        previous: Option<OwnerRow>,
        owner: &OwnerInfo,
        account: &str,
        (in_flight, reserved_nano): (u32, u64),
        now_ms: u64,
    ) -> Self {
        let (mut counts, mut reserved) = previous.map(|row| (row.in_flight, row.reserved_nano)).unwrap_or_default();
        counts.insert(account.to_string(), in_flight);
        reserved.insert(account.to_string(), reserved_nano);
        OwnerRow {
            owner: owner.owner.clone(),
            host: owner.host.clone(),
            pid: owner.pid,
            started_at: owner.started_at,
            heartbeat_ms: now_ms,
            in_flight: counts,
            reserved_nano: reserved,
        }
    }
}

/// What the other live owners hold at `account`.
pub fn others<'a>(rows: impl IntoIterator<Item = &'a OwnerRow>, me: &str, account: &str, now_ms: u64) -> Others {
    rows.into_iter().filter(|row| row.owner != me && row.alive(now_ms)).fold(Others::default(), |sum, row| Others {
        in_flight: sum.in_flight.saturating_add(row.in_flight.get(account).copied().unwrap_or(0)),
        reserved_nano: sum.reserved_nano.saturating_add(row.reserved_nano.get(account).copied().unwrap_or(0)),
    })
}

/// The fleet as the ledger sees it right now (`captcha-dlq fleet`, the dashboard, `/metrics`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FleetView {
    /// The ledger's clock, in ms since the epoch.
    pub now_ms: u64,
    /// Every owner row, live or not (rows of owners gone for long are dropped by the store).
    pub owners: Vec<OwnerRow>,
    /// Each account's shared state, by account id.
    pub accounts: BTreeMap<String, AccountState>,
}

/// A store's shared per-account state (see the module documentation). Implemented by stores that
/// several processes or hosts share; the memory store has none (one process is the fleet).
#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
pub trait FleetLedger: MaybeSendSync {
    /// How the store names the account of `key` at `base_url`: a keyed hash, never the key.
    fn account_id(&self, base_url: &str, key: &Secret) -> String;
    /// Applies `report` for `account` from `owner` (refreshing its heartbeat) and answers with the
    /// fleet's grant. `now` is the caller's clock; stores with a clock of their own (Redis's
    /// `TIME`) use theirs, so that hosts' clocks do not matter.
    async fn sync(
        &self,
        account: &str,
        owner: &OwnerInfo,
        report: &FleetReport,
        now: Timestamp,
    ) -> Result<FleetGrant, StoreError>;
    /// A closing client's row goes at once: its in-flight tasks no longer count.
    async fn leave(&self, owner: &str) -> Result<(), StoreError>;
    /// The owners and accounts, for the fleet view.
    async fn view(&self, now: Timestamp) -> Result<FleetView, StoreError>;
}

// Read by hand rather than derived (see `crate::support::json_read`); stores keep these as JSON.

read_fields!(
    SharedAccountError, open, code: req, description: req, hold_ms: req
);

read_fields!(
    FleetGrant, open, now_ms: req, permits: or_default, paused_ms: req, pause_code: opt, window: req,
    others_in_flight: req, spent_nano: or_default, others_reserved_nano: or_default, account_error: opt,
    probe: or_default, refused_kinds: or_default
);

read_fields!(RefusedKind, open, kind: req, ms: req);

read_fields!(
    AccountState, open, next_slot_us: or_default, paused_until_ms: or_default, pause_code: opt, window: or_default,
    last_halved_ms: or_default, account_error: opt, account_error_until_ms: or_default, spent_nano: or_default,
    probe_until_ms: or_default, refused_kinds: or_default
);

read_fields!(
    OwnerRow, open, owner: req, host: req, pid: req, started_at: req, heartbeat_ms: req, in_flight: or_default,
    reserved_nano: or_default
);

deserialize_from_json!(FleetGrant, AccountState, OwnerRow);

#[cfg(test)]
mod tests {
    use super::*;

    fn report(want: u32) -> FleetReport {
        FleetReport { want, rate: 10.0, window_max: 100, ..FleetReport::default() }
    }

    #[test]
    fn permits_are_spaced_across_syncs_and_never_beyond_the_horizon() {
        let mut state = AccountState::default();
        let a = state.apply(&report(4), Others::default(), 1_000_000);
        assert_eq!(a.permits, vec![0, 100, 200, 300]);
        let b = state.apply(&report(20), Others::default(), 1_000_050);
        // The next free slot is 1_000_400; the horizon 1_001_050 holds 7 more.
        assert_eq!(b.permits, vec![350, 450, 550, 650, 750, 850, 950]);
        let idle = state.apply(&report(2), Others::default(), 1_100_000);
        assert_eq!(idle.permits, vec![0, 100], "an idle schedule restarts from now: no burst");
    }

    #[test]
    fn a_pause_holds_every_client_and_permits_start_after_it() {
        let mut state = AccountState::default();
        let banned = FleetReport { pause: Some(SharedPause { ms: 10_000, code: "MAX_USER_TURN".into() }), ..report(1) };
        let a = state.apply(&banned, Others::default(), 5_000);
        assert_eq!((a.paused_ms, a.pause_code.as_deref()), (10_000, Some("MAX_USER_TURN")));
        assert!(a.permits.is_empty(), "the pause outlasts the horizon");
        let b = state.apply(&report(3), Others::default(), 14_500);
        assert_eq!(b.paused_ms, 500);
        assert_eq!(b.permits, vec![500, 600, 700]);
    }

    #[test]
    fn the_window_halves_once_per_congestion_and_grows_back_to_its_ceiling() {
        let mut state = AccountState::default();
        let no_slot = FleetReport { no_slot: true, ..report(0) };
        assert_eq!(state.apply(&no_slot, Others::default(), 10_000).window, 50);
        assert_eq!(
            state.apply(&no_slot, Others::default(), 10_200).window,
            50,
            "a second client's report of the same congestion"
        );
        assert_eq!(state.apply(&no_slot, Others::default(), 11_000).window, 25);
        let accepted = FleetReport { accepted: 200, ..report(0) };
        assert_eq!(state.apply(&accepted, Others { in_flight: 7, reserved_nano: 0 }, 12_000).window, 100);
        assert_eq!(state.apply(&report(0), Others { in_flight: 7, reserved_nano: 0 }, 12_000).others_in_flight, 7);
    }

    #[test]
    fn an_account_error_holds_the_fleet_until_it_lapses_or_the_account_works() {
        let mut state = AccountState::default();
        let error =
            SharedAccountError { code: "ERROR_ZERO_BALANCE".into(), description: "no money".into(), hold_ms: 60_000 };
        let a = state.apply(&FleetReport { account_error: Some(error.clone()), ..report(5) }, Others::default(), 1_000);
        assert!(a.permits.is_empty());
        let b = state.apply(&report(5), Others::default(), 31_000);
        assert_eq!(
            b.account_error.as_ref().map(|e| (e.code.as_str(), e.hold_ms)),
            Some(("ERROR_ZERO_BALANCE", 30_000))
        );
        assert!(b.permits.is_empty());
        let c = state.apply(&report(1), Others::default(), 61_000);
        assert_eq!((c.account_error, c.permits.len()), (None, 1), "lapsed: each client may try once more");
        state.apply(&FleetReport { account_error: Some(error), ..report(0) }, Others::default(), 70_000);
        let ok = state.apply(&FleetReport { account_ok: true, ..report(1) }, Others::default(), 71_000);
        assert_eq!((ok.account_error, ok.permits.len()), (None, 1));
    }

    #[test]
    fn others_counts_live_owners_but_the_caller() {
        let info =
            |owner: &str| OwnerInfo { owner: owner.into(), host: "h".into(), pid: 1, started_at: Timestamp::EPOCH };
        let a = OwnerRow::synced(None, &info("a"), "acct", (3, 30), 100_000);
        let b = OwnerRow::synced(None, &info("b"), "acct", (4, 40), 100_000);
        let b = OwnerRow::synced(Some(b), &info("b"), "other", (9, 90), 100_000);
        let dead = OwnerRow::synced(None, &info("c"), "acct", (50, 500), 100_000 - OWNER_TTL_MS);
        let rows = [a, b, dead];
        assert_eq!(others(&rows, "a", "acct", 100_000), Others { in_flight: 4, reserved_nano: 40 });
        assert_eq!(others(&rows, "b", "acct", 100_000), Others { in_flight: 3, reserved_nano: 30 });
        assert_eq!(others(&rows, "z", "other", 100_000), Others { in_flight: 9, reserved_nano: 90 });
    }

    #[test]
    fn no_permit_is_granted_that_the_budget_could_not_pay() {
        let mut state = AccountState::default();
        let priced = |want, spent, reserved| FleetReport {
            budget_nano: Some(10_000),
            permit_cost_nano: 1_000,
            spent_nano: spent,
            reserved_nano: reserved,
            ..report(want)
        };
        // 10 units of budget: 2 spent, 3 reserved by this client, 2 by the others: room for 3.
        let a = state.apply(&priced(8, 2_000, 3_000), Others { in_flight: 2, reserved_nano: 2_000 }, 1_000);
        assert_eq!((a.permits.len(), a.spent_nano, a.reserved_for(&priced(8, 0, 0))), (3, 2_000, 3_000));
        let spent = state.apply(&priced(8, 8_000, 0), Others::default(), 2_000);
        assert_eq!((spent.permits.len(), spent.spent_nano), (0, 10_000), "the fleet spent it all");
        let unknown_cost = FleetReport { permit_cost_nano: 0, ..priced(2, 0, 0) };
        assert!(state.apply(&unknown_cost, Others::default(), 3_000).permits.is_empty(), "spent: nothing more");
        let mut fresh = AccountState::default();
        assert_eq!(
            fresh.apply(&FleetReport { permit_cost_nano: 0, ..priced(2, 0, 0) }, Others::default(), 1).permits.len(),
            2
        );
    }
}
