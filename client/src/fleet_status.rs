//! The fleet as an operator reads it: the ledger's rows ([`FleetView`]) with what follows from
//! them at the ledger's clock — which clients are live, each account's tasks in flight (the sum
//! over its live clients), the pause and the account error still holding and for how long.
//!
//! One reading for every place that shows the fleet (the dashboard's Fleet page and
//! `/api/fleet`, the `captcha_dlq_fleet_*` gauges of [`crate::prometheus`]), so that they agree
//! with each other and with the rules the ledger applies ([`OwnerRow::alive`], the pause and
//! hold times of [`AccountState`]).
//!
//! [`OwnerRow::alive`]: captcha_dlq_core::fleet::OwnerRow::alive
//! [`AccountState`]: captcha_dlq_core::fleet::AccountState

use std::collections::BTreeMap;

use captcha_dlq_core::fleet::{FleetView, SharedAccountError, OWNER_TTL_MS};
use captcha_dlq_core::Timestamp;
use serde::Serialize;

/// The fleet at the ledger's clock.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetStatus {
    /// The ledger's clock when it was read (ages and remaining times are from it, so a host
    /// whose clock is off does not make a live client look gone).
    pub now: Timestamp,
    /// A client silent for this long is gone.
    pub owner_ttl_ms: u64,
    /// Live clients first, then the gone ones; each by owner id.
    pub owners: Vec<OwnerStatus>,
    /// By account id.
    pub accounts: Vec<AccountStatus>,
}

/// One client of the fleet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OwnerStatus {
    pub owner: String,
    pub host: String,
    pub pid: u32,
    /// On the client's own clock (it says when it started).
    pub started_at: Timestamp,
    /// On the ledger's clock.
    pub last_heartbeat_at: Timestamp,
    /// How long before the ledger's `now` its last sync was.
    pub heartbeat_age_ms: u64,
    /// Synced within [`OWNER_TTL_MS`]; a gone client's tasks no longer count against any window.
    pub alive: bool,
    /// Its tasks in flight, over every account.
    pub in_flight: u32,
    /// Its tasks in flight, per account id.
    pub in_flight_by_account: BTreeMap<String, u32>,
}

/// One provider account's shared state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AccountStatus {
    /// The keyed hash the store names the account by (never the key).
    pub account: String,
    /// The in-flight window the fleet shares (0 before the first sync set it).
    pub window: u32,
    /// Tasks in flight at the account, summed over its live clients (what the window is
    /// measured against).
    pub in_flight: u32,
    /// Live clients that have synced the account.
    pub clients: u32,
    /// How long submissions stay paused from `now` (0: not paused).
    pub paused_ms: u64,
    /// The provider's code for the pause, while it holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_code: Option<String>,
    /// The account error holding the fleet, with `hold_ms` the time it still holds from `now`;
    /// `None` once it lapsed or the account worked again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_error: Option<SharedAccountError>,
    /// What the fleet's solved tasks at the account cost, ever (every client's, as each last
    /// synced), in the provider's currency.
    pub spent: f64,
}

impl FleetStatus {
    /// What `view` says at its own clock (`view.now_ms`).
    pub fn of(view: &FleetView) -> FleetStatus {
        let now_ms = view.now_ms;
        let mut owners: Vec<OwnerStatus> = view
            .owners
            .iter()
            .map(|row| OwnerStatus {
                owner: row.owner.clone(),
                host: row.host.clone(),
                pid: row.pid,
                started_at: row.started_at,
                last_heartbeat_at: Timestamp::from_unix_millis(row.heartbeat_ms),
                heartbeat_age_ms: now_ms.saturating_sub(row.heartbeat_ms),
                alive: row.alive(now_ms),
                in_flight: row.in_flight.values().fold(0u32, |sum, n| sum.saturating_add(*n)),
                in_flight_by_account: row.in_flight.clone(),
            })
            .collect();
        owners.sort_by(|a, b| b.alive.cmp(&a.alive).then_with(|| a.owner.cmp(&b.owner)));
        let accounts = view
            .accounts
            .iter()
            .map(|(account, state)| {
                let live = owners.iter().filter(|o| o.alive);
                let counts: Vec<u32> = live.filter_map(|o| o.in_flight_by_account.get(account).copied()).collect();
                let paused_ms = state.paused_until_ms.saturating_sub(now_ms);
                // The ledger lets an error lapse at its hold time (`AccountState::apply`); the
                // row may still carry it until the next sync clears it.
                let held = state.account_error_until_ms > now_ms;
                AccountStatus {
                    account: account.clone(),
                    window: state.window,
                    in_flight: counts.iter().fold(0u32, |sum, n| sum.saturating_add(*n)),
                    clients: counts.len() as u32,
                    paused_ms,
                    pause_code: state.pause_code.clone().filter(|_| paused_ms > 0),
                    account_error: state.account_error.clone().filter(|_| held).map(|mut e| {
                        e.hold_ms = state.account_error_until_ms - now_ms;
                        e
                    }),
                    spent: state.spent_nano as f64 / 1e9,
                }
            })
            .collect();
        FleetStatus { now: Timestamp::from_unix_millis(now_ms), owner_ttl_ms: OWNER_TTL_MS, owners, accounts }
    }

    /// Clients that synced within the TTL.
    pub fn live(&self) -> usize {
        self.owners.iter().filter(|o| o.alive).count()
    }

    /// Clients whose rows are still kept but which stopped syncing.
    pub fn gone(&self) -> usize {
        self.owners.len() - self.live()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use captcha_dlq_core::fleet::{AccountState, OwnerRow};

    fn row(owner: &str, heartbeat_ms: u64, in_flight: &[(&str, u32)]) -> OwnerRow {
        OwnerRow {
            owner: owner.into(),
            host: "h".into(),
            pid: 7,
            started_at: Timestamp::EPOCH,
            heartbeat_ms,
            in_flight: in_flight.iter().map(|(a, n)| (a.to_string(), *n)).collect(),
            reserved_nano: BTreeMap::new(),
        }
    }

    #[test]
    fn live_clients_count_gone_ones_do_not_and_holds_are_times_left() {
        let now_ms = 1_000_000;
        let error =
            SharedAccountError { code: "ERROR_ZERO_BALANCE".into(), description: "no money".into(), hold_ms: 0 };
        let view = FleetView {
            now_ms,
            owners: vec![
                row("z-gone", now_ms - OWNER_TTL_MS, &[("acct", 40)]),
                row("b", now_ms - 3_000, &[("acct", 2), ("other", 1)]),
                row("a", now_ms, &[("acct", 5)]),
            ],
            accounts: BTreeMap::from([
                (
                    "acct".to_string(),
                    AccountState {
                        window: 12,
                        paused_until_ms: now_ms + 4_500,
                        pause_code: Some("MAX_USER_TURN".into()),
                        account_error: Some(error.clone()),
                        account_error_until_ms: now_ms + 30_000,
                        ..AccountState::default()
                    },
                ),
                (
                    "other".to_string(),
                    AccountState {
                        window: 3,
                        paused_until_ms: now_ms - 1,
                        pause_code: Some("ERROR: 1001".into()),
                        account_error: Some(error),
                        account_error_until_ms: now_ms,
                        ..AccountState::default()
                    },
                ),
            ]),
        };
        let status = FleetStatus::of(&view);
        let order: Vec<(&str, bool, u64)> =
            status.owners.iter().map(|o| (o.owner.as_str(), o.alive, o.heartbeat_age_ms)).collect();
        assert_eq!(order, [("a", true, 0), ("b", true, 3_000), ("z-gone", false, OWNER_TTL_MS)]);
        assert_eq!((status.live(), status.gone()), (2, 1));
        assert_eq!(status.owners[1].in_flight, 3);
        let acct = &status.accounts[0];
        assert_eq!((acct.in_flight, acct.clients, acct.window), (7, 2, 12), "the gone client's 40 do not count");
        assert_eq!((acct.paused_ms, acct.pause_code.as_deref()), (4_500, Some("MAX_USER_TURN")));
        assert_eq!(acct.account_error.as_ref().map(|e| e.hold_ms), Some(30_000));
        let other = &status.accounts[1];
        assert_eq!((other.paused_ms, other.pause_code.as_deref()), (0, None), "a pause that ended shows no code");
        assert_eq!(other.account_error, None, "an error at its hold time has lapsed");
        assert_eq!((other.in_flight, other.clients), (1, 1));
    }
}
