//! `captcha-dlq fleet`: the clients sharing the DLQ store and each provider account's shared
//! limits, as the store's fleet ledger holds them (one line per client and per account, or
//! `--json`). Opens only the store: no API key needed.

use captcha_dlq::core::fleet::{FleetView, OWNER_TTL_MS};
use captcha_dlq::core::Timestamp;
use captcha_dlq::Error;
use serde_json::json;

use super::{exit, store, Global};

pub(crate) async fn run(global: &Global) -> Result<u8, Error> {
    let store = store(global).await?;
    let Some(ledger) = store.fleet_ledger() else {
        return Err(Error::Config(captcha_dlq::core::ConfigError::new(
            "dlq",
            "this store is one process's own (memory): it keeps no fleet; use a SQLite file or a redis:// URL",
        )));
    };
    let view = ledger.view(Timestamp::from_unix_millis(now_ms())).await?;
    if global.json {
        println!("{}", json!({ "ok": true, "fleet": json_of(&view) }));
    } else {
        print!("{}", text_of(&view));
    }
    Ok(exit::OK)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn json_of(view: &FleetView) -> serde_json::Value {
    let owners: Vec<_> = view
        .owners
        .iter()
        .map(|row| {
            json!({
                "owner": row.owner,
                "host": row.host,
                "pid": row.pid,
                "started_at": row.started_at,
                "last_heartbeat_at": Timestamp::from_unix_millis(row.heartbeat_ms),
                "alive": row.alive(view.now_ms),
                "in_flight": row.in_flight.values().sum::<u32>(),
            })
        })
        .collect();
    json!({ "now": Timestamp::from_unix_millis(view.now_ms), "owner_ttl_ms": OWNER_TTL_MS, "owners": owners, "accounts": view.accounts })
}

fn text_of(view: &FleetView) -> String {
    let mut out = String::new();
    let alive = view.owners.iter().filter(|row| row.alive(view.now_ms)).count();
    out.push_str(&format!("clients: {} live, {} gone\n", alive, view.owners.len() - alive));
    for row in &view.owners {
        let ago = view.now_ms.saturating_sub(row.heartbeat_ms);
        out.push_str(&format!(
            "  {} host={} pid={} started={} heartbeat={}ms ago in_flight={} {}\n",
            row.owner,
            row.host,
            row.pid,
            row.started_at.to_rfc3339(),
            ago,
            row.in_flight.values().sum::<u32>(),
            if row.alive(view.now_ms) { "live" } else { "gone" }
        ));
    }
    out.push_str(&format!("accounts: {}\n", view.accounts.len()));
    for (account, state) in &view.accounts {
        let paused = state.paused_until_ms.saturating_sub(view.now_ms);
        let held = state.account_error.as_ref().filter(|_| state.account_error_until_ms > view.now_ms);
        out.push_str(&format!(
            "  {account} window={} paused={}{} account_error={}\n",
            state.window,
            paused,
            if paused > 0 { format!("ms ({})", state.pause_code.as_deref().unwrap_or("?")) } else { "ms".into() },
            held.map_or("none".to_string(), |e| e.code.clone()),
        ));
    }
    out
}
