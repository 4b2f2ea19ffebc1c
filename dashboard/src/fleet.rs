//! The fleet as the Fleet page and `/api/fleet` show it: the store's fleet ledger read once
//! per request (every client sharing the store, each provider account's shared limits, see
//! `captcha_dlq_client::FleetStatus`), which of the accounts are this client's, and the spend.
//!
//! The ledger keeps no spend yet (issue 32: the budget and spend are still per process), so the
//! spend shown is this dashboard's client's own, said so on the page and as `"fleet": null` in
//! the JSON; the fleet's goes next to it once `AccountState` carries one.

use std::collections::BTreeMap;

use captcha_dlq_client::FleetStatus;
use captcha_dlq_core::spend::SpendReport;
use serde_json::{json, Value};

use crate::respond::Failure;
use crate::state::Shared;
use crate::views::age;

/// What the page says when the store keeps no ledger.
pub(crate) const NO_LEDGER: &str = "This store (memory) is this process's own: it keeps no fleet ledger, so there is \
     no fleet to show and this client's limits are its own. Clients share an account's limits through a store they \
     share: give them one SQLite file or one redis:// URL as the DLQ.";

/// What the page says about the two spends it shows.
pub(crate) const SPEND_NOTE: &str = "The fleet's spend is what every client on this store paid at these accounts, \
     as each last synced (a `budget` binds it, unless a client keeps its own); below it, this dashboard's client's \
     own spend since it started.";

pub(crate) struct FleetRead {
    /// `None`: the store keeps no ledger.
    pub(crate) status: Option<FleetStatus>,
    /// This client's providers by the account id each has in the ledger.
    pub(crate) own: BTreeMap<String, Vec<String>>,
    /// This dashboard's client's owner id.
    pub(crate) mine: String,
    /// This client's spend (`None` if the client is closed).
    pub(crate) spend: Option<SpendReport>,
}

impl FleetRead {
    pub(crate) async fn of(state: &Shared) -> Result<FleetRead, Failure> {
        let client = &state.client;
        let (view, spend) = futures::join!(client.fleet_view(), client.spend());
        let mut own: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (provider, account) in client.fleet_accounts() {
            own.entry(account).or_default().push(provider);
        }
        Ok(FleetRead {
            status: view?.map(|view| FleetStatus::of(&view)),
            own,
            mine: client.owner().to_string(),
            spend: spend.ok(),
        })
    }

    /// Changes when a row comes or goes or changes its kind (live or gone, paused or not, an
    /// account error or not): the page reloads then rather than patch its rows' markup.
    pub(crate) fn signature(&self) -> String {
        let Some(s) = &self.status else { return "none".into() };
        let owners = s.owners.iter().map(|o| format!("{}={}", o.owner, if o.alive { "live" } else { "gone" }));
        let accounts = s.accounts.iter().map(|a| {
            let error = a.account_error.as_ref().map_or("", |e| e.code.as_str());
            format!("{}={}/{}", a.account, a.paused_ms > 0, error)
        });
        owners.chain(accounts).collect::<Vec<_>>().join(" ")
    }

    pub(crate) fn json(&self) -> Value {
        let fleet_spent = self.status.as_ref().map(|s| s.accounts.iter().map(|a| a.spent).sum::<f64>());
        let spend = json!({
            "fleet": fleet_spent.map(|cost| json!({ "cost": cost, "cost_text": money(cost) })),
            "client": self.spend.as_ref().map(spend_json),
            "note": SPEND_NOTE,
        });
        let Some(s) = &self.status else {
            return json!({ "ledger": false, "message": NO_LEDGER, "owners": [], "accounts": [], "spend": spend });
        };
        let owners: Vec<Value> = s
            .owners
            .iter()
            .map(|o| {
                let mut v = json!(o);
                v["mine"] = json!(o.owner == self.mine);
                v["state"] = json!(if o.alive { "live" } else { "gone" });
                v["heartbeat"] = json!(heartbeat_text(o.heartbeat_age_ms));
                v
            })
            .collect();
        let accounts: Vec<Value> = s
            .accounts
            .iter()
            .map(|a| {
                let mut v = json!(a);
                v["providers"] = json!(self.own.get(&a.account).cloned().unwrap_or_default());
                v["paused"] = json!(pause_text(a.paused_ms, a.pause_code.as_deref()));
                v["error"] = json!(error_text(a.account_error.as_ref()));
                v
            })
            .collect();
        json!({
            "ledger": true,
            "now": s.now,
            "owner_ttl_ms": s.owner_ttl_ms,
            "live": s.live(),
            "gone": s.gone(),
            "in_flight": s.accounts.iter().map(|a| u64::from(a.in_flight)).sum::<u64>(),
            "owners": owners,
            "accounts": accounts,
            "signature": self.signature(),
            "spend": spend,
        })
    }
}

fn spend_json(r: &SpendReport) -> Value {
    json!({
        "solved": r.solved,
        "cost": r.cost,
        "cost_text": money(r.cost),
        "unpriced": r.unpriced,
        "dead_lettered": r.dead_lettered,
        "budget": r.budget,
        "by_provider": r.by_provider,
    })
}

/// A cost to the millionth (providers quote prices to the hundredth of a cent), as `captcha-dlq
/// spend` prints it.
pub(crate) fn money(x: f64) -> String {
    ((x * 1e6).round() / 1e6).to_string()
}

/// `3s ago`, on the ledger's clock.
pub(crate) fn heartbeat_text(age_ms: u64) -> String {
    format!("{} ago", age(core::time::Duration::from_millis(age_ms)))
}

/// A time left, rounded up: a pause with 300 ms left is not shown as over.
fn left(ms: u64) -> String {
    age(core::time::Duration::from_secs(ms.div_ceil(1000)))
}

/// `12s more (MAX_USER_TURN)`, or `no`.
pub(crate) fn pause_text(paused_ms: u64, code: Option<&str>) -> String {
    if paused_ms == 0 {
        return "no".into();
    }
    format!("{} more ({})", left(paused_ms), code.unwrap_or("no code given"))
}

/// `ERROR_ZERO_BALANCE: no money (holds 40s more)`, or `none`.
pub(crate) fn error_text(error: Option<&captcha_dlq_core::fleet::SharedAccountError>) -> String {
    match error {
        None => "none".into(),
        Some(e) => format!("{}: {} (holds {} more)", e.code, e.description, left(e.hold_ms)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use captcha_dlq_core::fleet::SharedAccountError;

    #[test]
    fn times_left_round_up_and_a_pause_names_its_code() {
        assert_eq!(pause_text(0, Some("MAX_USER_TURN")), "no");
        assert_eq!(pause_text(300, Some("MAX_USER_TURN")), "1s more (MAX_USER_TURN)");
        assert_eq!(pause_text(61_000, None), "1m 1s more (no code given)");
        let e =
            SharedAccountError { code: "ERROR_ZERO_BALANCE".into(), description: "no money".into(), hold_ms: 40_000 };
        assert_eq!(error_text(Some(&e)), "ERROR_ZERO_BALANCE: no money (holds 40s more)");
        assert_eq!(heartbeat_text(3_400), "3s ago");
        assert_eq!(money(0.1 + 0.2), "0.3");
    }
}
