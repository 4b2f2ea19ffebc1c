//! The fleet ledger conformance suite: every [`FleetLedger`] (SQLite, Redis, …) answers as
//! [`AccountState::apply`] says. Ledgers with their own clock (Redis) ignore the `now` passed in,
//! so the cases never depend on time passing or standing still: they read the ledger's clock
//! from each grant (`now_ms`) and check schedules in that clock.

use super::*;

/// A fresh account id per case, so a shared server's earlier runs do not interfere.
fn account(ledger: &dyn FleetLedger, case: &str, nonce: u64) -> String {
    ledger.account_id("https://solver.example", &Secret::new(format!("key-{case}-{nonce}")))
}

fn owner(name: &str, nonce: u64) -> OwnerInfo {
    OwnerInfo {
        owner: format!("host-{name}/{}/{nonce}", 100 + name.len()),
        host: format!("host-{name}"),
        pid: 100 + name.len() as u32,
        started_at: Timestamp::from_unix_millis(1_700_000_000_000),
    }
}

fn asking(want: u32, rate: f64) -> FleetReport {
    FleetReport { want, rate, window_max: 50, ..FleetReport::default() }
}

/// Runs every case; `nonce` keeps the accounts and owners of this run apart from other runs on
/// the same server. Returns the number of cases run.
pub async fn run_ledger_suite(ledger: &dyn FleetLedger, now: Timestamp, nonce: u64) -> usize {
    account_ids_are_keyed_hashes(ledger);
    permits_are_spaced_across_the_fleet(ledger, now, nonce).await;
    a_pause_reported_by_one_holds_the_others(ledger, now, nonce).await;
    the_window_and_in_flight_are_shared(ledger, now, nonce).await;
    an_account_error_holds_the_fleet(ledger, now, nonce).await;
    the_view_lists_owners_and_accounts(ledger, now, nonce).await;
    the_budget_binds_the_fleet(ledger, now, nonce).await;
    one_client_checks_the_balance_for_the_fleet(ledger, now, nonce).await;
    a_kind_one_client_was_refused_is_refused_for_all(ledger, now, nonce).await;
    9
}

/// A kind the service refused as a whole (`ERROR_TASK_NOT_SUPPORTED`), reported by one client,
/// reaches every client of the account with the time left; the longer of two reports wins; an
/// account's marks are its own (issue 43, item 4).
async fn a_kind_one_client_was_refused_is_refused_for_all(ledger: &dyn FleetLedger, now: Timestamp, nonce: u64) {
    let acct = account(ledger, "refused", nonce);
    let refused = |kind: &str, ms: u64| RefusedKind { kind: kind.into(), ms };
    let report = FleetReport { refused_kinds: vec![refused("hcaptcha", 900_000)], ..asking(0, 10.0) };
    let a = ledger.sync(&acct, &owner("a", nonce), &report, now).await.expect("report");
    assert_eq!(a.refused_kinds.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>(), ["hcaptcha"]);
    let b = ledger.sync(&acct, &owner("b", nonce), &asking(1, 10.0), now).await.expect("sync");
    let [heard] = b.refused_kinds.as_slice() else { panic!("the other client hears of it: {b:?}") };
    assert_eq!(heard.kind, "hcaptcha");
    assert!(heard.ms > 890_000 && heard.ms <= 900_000, "with the time left: {heard:?}");
    assert_eq!(b.permits.len(), 1, "other kinds go on being sent");
    let shorter =
        FleetReport { refused_kinds: vec![refused("hcaptcha", 1_000), refused("altcha", 60_000)], ..asking(0, 10.0) };
    let c = ledger.sync(&acct, &owner("c", nonce), &shorter, now).await.expect("report");
    let mut kinds: Vec<(&str, bool)> = c.refused_kinds.iter().map(|r| (r.kind.as_str(), r.ms > 800_000)).collect();
    kinds.sort_unstable();
    assert_eq!(kinds, [("altcha", false), ("hcaptcha", true)], "the longer mark is kept: {c:?}");
    let other = account(ledger, "refused-other", nonce);
    let elsewhere = ledger.sync(&other, &owner("b", nonce), &asking(0, 10.0), now).await.expect("sync");
    assert!(elsewhere.refused_kinds.is_empty(), "an account's marks are its own");
}

fn account_ids_are_keyed_hashes(ledger: &dyn FleetLedger) {
    let key = Secret::new("0123456789abcdef0123456789abcdef");
    let id = ledger.account_id("https://2captcha.com", &key);
    assert!(!id.contains(key.expose()), "the account id must not hold the key");
    assert!(id.len() >= 16, "an account id long enough not to collide: {id}");
    assert_eq!(id, ledger.account_id("https://2captcha.com", &key), "stable");
    assert_ne!(id, ledger.account_id("https://api.capsolver.com", &key), "per provider");
    assert_ne!(id, ledger.account_id("https://2captcha.com", &Secret::new("another key")), "per key");
}

/// Absolute permit times (in the ledger's clock) from several owners' grants are `1/rate` apart.
async fn permits_are_spaced_across_the_fleet(ledger: &dyn FleetLedger, now: Timestamp, nonce: u64) {
    let acct = account(ledger, "spacing", nonce);
    let mut slots = Vec::new();
    for name in ["a", "b", "c"] {
        let grant = ledger.sync(&acct, &owner(name, nonce), &asking(3, 20.0), now).await.expect("sync");
        assert!(!grant.permits.is_empty() && grant.permits.len() <= 3, "{grant:?}");
        assert!(grant.permits.windows(2).all(|w| w[0] <= w[1]), "ascending: {grant:?}");
        slots.extend(grant.permits.iter().map(|p| grant.now_ms + p));
    }
    slots.sort_unstable();
    // 20/s: 50 ms apart, give or take the rounding of each to whole ms.
    assert!(slots.windows(2).all(|w| w[1] - w[0] >= 49), "fleet-wide spacing: {slots:?}");
    let none = ledger.sync(&acct, &owner("a", nonce), &asking(0, 20.0), now).await.expect("heartbeat");
    assert!(none.permits.is_empty(), "a heartbeat takes no slot");
}

async fn a_pause_reported_by_one_holds_the_others(ledger: &dyn FleetLedger, now: Timestamp, nonce: u64) {
    let acct = account(ledger, "pause", nonce);
    let ban = FleetReport { pause: Some(SharedPause { ms: 60_000, code: "MAX_USER_TURN".into() }), ..asking(0, 10.0) };
    ledger.sync(&acct, &owner("a", nonce), &ban, now).await.expect("report");
    let other = ledger.sync(&acct, &owner("b", nonce), &asking(5, 10.0), now).await.expect("sync");
    assert!(other.paused_ms > 50_000 && other.paused_ms <= 60_000, "{other:?}");
    assert_eq!(other.pause_code.as_deref(), Some("MAX_USER_TURN"));
    assert!(other.permits.is_empty(), "no permit inside a pause: {other:?}");
    let elsewhere =
        ledger.sync(&account(ledger, "pause-other", nonce), &owner("b", nonce), &asking(1, 10.0), now).await;
    assert_eq!(elsewhere.expect("sync").paused_ms, 0, "a pause binds its account only");
}

async fn the_window_and_in_flight_are_shared(ledger: &dyn FleetLedger, now: Timestamp, nonce: u64) {
    let acct = account(ledger, "window", nonce);
    let busy = FleetReport { in_flight: 7, ..asking(0, 10.0) };
    let first = ledger.sync(&acct, &owner("a", nonce), &busy, now).await.expect("sync");
    assert_eq!((first.window, first.others_in_flight), (50, 0));
    let no_slot = FleetReport { no_slot: true, in_flight: 2, ..asking(0, 10.0) };
    let b = ledger.sync(&acct, &owner("b", nonce), &no_slot, now).await.expect("sync");
    assert_eq!((b.window, b.others_in_flight), (25, 7), "halved for everyone; a's tasks count");
    let a = ledger.sync(&acct, &owner("a", nonce), &busy, now).await.expect("sync");
    assert_eq!((a.window, a.others_in_flight), (25, 2));
    ledger.leave(&owner("a", nonce).owner).await.expect("leave");
    let b = ledger.sync(&acct, &owner("b", nonce), &asking(0, 10.0), now).await.expect("sync");
    assert_eq!(b.others_in_flight, 0, "a closed client's tasks no longer count");
    let grown = FleetReport { accepted: 100, ..asking(0, 10.0) };
    assert_eq!(ledger.sync(&acct, &owner("b", nonce), &grown, now).await.expect("sync").window, 50, "capped");
}

async fn an_account_error_holds_the_fleet(ledger: &dyn FleetLedger, now: Timestamp, nonce: u64) {
    let acct = account(ledger, "account", nonce);
    let error = SharedAccountError {
        code: "ERROR_KEY_DOES_NOT_EXIST".into(),
        description: "the key is wrong".into(),
        hold_ms: 60_000,
    };
    let report = FleetReport { account_error: Some(error), ..asking(0, 10.0) };
    ledger.sync(&acct, &owner("a", nonce), &report, now).await.expect("report");
    let b = ledger.sync(&acct, &owner("b", nonce), &asking(4, 10.0), now).await.expect("sync");
    let held = b.account_error.expect("the other client hears of it");
    assert_eq!(held.code, "ERROR_KEY_DOES_NOT_EXIST");
    assert!(held.hold_ms > 50_000 && held.hold_ms <= 60_000);
    assert!(b.permits.is_empty(), "no permit while held");
    let fixed = FleetReport { account_ok: true, ..asking(1, 10.0) };
    let c = ledger.sync(&acct, &owner("c", nonce), &fixed, now).await.expect("sync");
    assert_eq!((c.account_error, c.permits.len()), (None, 1));
}

/// While an account error holds the fleet, the probe turn goes to one asker at a time, the next
/// turn only once it ran out; a working account ends the hold and the turns.
async fn one_client_checks_the_balance_for_the_fleet(ledger: &dyn FleetLedger, now: Timestamp, nonce: u64) {
    let acct = account(ledger, "probe", nonce);
    let error =
        SharedAccountError { code: "ERROR_ZERO_BALANCE".into(), description: "no money".into(), hold_ms: 60_000 };
    ledger
        .sync(&acct, &owner("a", nonce), &FleetReport { account_error: Some(error), ..asking(0, 10.0) }, now)
        .await
        .expect("report");
    let probing = |ms: u64| FleetReport { probe_ms: ms, ..asking(0, 10.0) };
    let mut turns = Vec::new();
    for name in ["a", "b", "c", "d"] {
        let grant = ledger.sync(&acct, &owner(name, nonce), &probing(30_000), now).await.expect("sync");
        assert!(grant.account_error.is_some(), "{name} still holds: {grant:?}");
        turns.push(grant.probe);
    }
    assert_eq!(turns, [true, false, false, false], "one probe turn for the fleet");
    let quiet = ledger.sync(&acct, &owner("b", nonce), &asking(0, 10.0), now).await.expect("sync");
    assert!(!quiet.probe, "a client that does not ask gets no turn");
    let fixed = FleetReport { account_ok: true, ..asking(1, 10.0) };
    let after = ledger.sync(&acct, &owner("a", nonce), &fixed, now).await.expect("sync");
    assert_eq!((after.account_error, after.probe), (None, false));
    let unheld = ledger.sync(&acct, &owner("c", nonce), &probing(30_000), now).await.expect("sync");
    assert!(!unheld.probe, "no turns without an error holding the fleet: {unheld:?}");
}

async fn the_view_lists_owners_and_accounts(ledger: &dyn FleetLedger, now: Timestamp, nonce: u64) {
    let acct = account(ledger, "view", nonce);
    let me = owner("viewer", nonce);
    ledger.sync(&acct, &me, &FleetReport { in_flight: 3, ..asking(1, 10.0) }, now).await.expect("sync");
    let view = ledger.view(now).await.expect("view");
    let row = view.owners.iter().find(|r| r.owner == me.owner).expect("the owner is listed");
    assert_eq!((row.host.as_str(), row.pid, row.started_at), (me.host.as_str(), me.pid, me.started_at));
    assert_eq!(row.in_flight.get(&acct), Some(&3));
    assert!(row.alive(view.now_ms));
    assert!(view.accounts.get(&acct).is_some_and(|a| a.window == 50 && a.next_slot_us > 0), "{view:?}");
    ledger.leave(&me.owner).await.expect("leave");
    assert!(!ledger.view(now).await.expect("view").owners.iter().any(|r| r.owner == me.owner));
}

/// Permits are granted only as far as the budget pays beside the fleet's spend and every live
/// owner's reservation (its own included, the permits just granted too).
async fn the_budget_binds_the_fleet(ledger: &dyn FleetLedger, now: Timestamp, nonce: u64) {
    let acct = account(ledger, "budget", nonce);
    let priced = |want: u32, spent: u64, reserved: u64| FleetReport {
        budget_nano: Some(3_000),
        permit_cost_nano: 1_000,
        spent_nano: spent,
        reserved_nano: reserved,
        ..asking(want, 20.0)
    };
    let a = ledger.sync(&acct, &owner("a", nonce), &priced(5, 0, 0), now).await.expect("sync");
    assert_eq!(a.permits.len(), 3, "room for three: {a:?}");
    let b = ledger.sync(&acct, &owner("b", nonce), &priced(5, 0, 0), now).await.expect("sync");
    assert_eq!((b.permits.len(), b.others_reserved_nano), (0, 3_000), "a's permits are reserved: {b:?}");
    // a used one permit, its task solved (1 spent), two permits lapsed unused.
    let a = ledger.sync(&acct, &owner("a", nonce), &priced(0, 1_000, 0), now).await.expect("sync");
    assert_eq!(a.spent_nano, 1_000);
    let b = ledger.sync(&acct, &owner("b", nonce), &priced(5, 0, 0), now).await.expect("sync");
    assert_eq!((b.permits.len(), b.spent_nano), (2, 1_000), "what a freed: {b:?}");
    let a = ledger.sync(&acct, &owner("a", nonce), &priced(5, 2_000, 0), now).await.expect("sync");
    assert_eq!((a.permits.len(), a.spent_nano), (0, 3_000), "spent: no more permits");
    let free = FleetReport { budget_nano: None, ..priced(1, 0, 0) };
    assert_eq!(ledger.sync(&acct, &owner("c", nonce), &free, now).await.expect("sync").permits.len(), 1, "no budget");
}
