//! The SQLite fleet ledger: the processes sharing one file (on one host, so one clock) keep
//! each account's state (`fleet_accounts`) and their heartbeat rows (`fleet_owners`) in it. A
//! sync is one write transaction that reads the account and the owner rows, applies the core's
//! rules ([`AccountState::apply`]) and writes both back.

use std::sync::Arc;

use async_trait::async_trait;
use captcha_dlq_core::dlq::StoreError;
use captcha_dlq_core::fleet::{
    others, AccountState, FleetGrant, FleetLedger, FleetReport, FleetView, OwnerInfo, OwnerRow, FORGET_OWNERS_AFTER_MS,
};
use captcha_dlq_core::{Secret, Timestamp};
use rusqlite::{params, Connection, OptionalExtension};

use super::errors::db_error;
use super::{encode, SqliteStore};

fn decode<T: serde::de::DeserializeOwned>(json: &str, what: impl Fn() -> String) -> Result<T, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Decode(format!("{}: {e}", what())))
}

fn owner_rows(conn: &Connection, loc: &str) -> Result<Vec<OwnerRow>, StoreError> {
    let err = db_error(loc);
    let mut stmt = conn.prepare_cached("SELECT owner, json FROM fleet_owners").map_err(&err)?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).map_err(&err)?;
    let mut out = Vec::new();
    for row in rows {
        let (owner, json) = row.map_err(&err)?;
        out.push(decode(&json, || format!("fleet owner row {owner}"))?);
    }
    Ok(out)
}

fn sync(
    conn: &Connection,
    loc: &str,
    account: &str,
    owner: &OwnerInfo,
    report: &FleetReport,
    now_ms: u64,
) -> Result<FleetGrant, StoreError> {
    let err = db_error(loc);
    let stored: Option<String> = conn
        .query_row("SELECT json FROM fleet_accounts WHERE account = ?1", [account], |r| r.get(0))
        .optional()
        .map_err(&err)?;
    let mut state: AccountState = match stored {
        Some(json) => decode(&json, || format!("fleet account {account}"))?,
        None => AccountState::default(),
    };
    let rows = owner_rows(conn, loc)?;
    let grant = state.apply(report, others(&rows, &owner.owner, account, now_ms), now_ms);
    let previous = rows.into_iter().find(|row| row.owner == owner.owner);
    let reserved = report.reserved_nano.saturating_add(grant.reserved_for(report));
    let row = OwnerRow::synced(previous, owner, account, (report.in_flight, reserved), now_ms);
    let state_json = encode(&state, || format!("fleet account {account}"))?;
    let row_json = encode(&row, || format!("fleet owner row {}", owner.owner))?;
    conn.execute(
        "INSERT INTO fleet_accounts (account, json) VALUES (?1, ?2) ON CONFLICT(account) DO UPDATE SET json = ?2",
        params![account, state_json],
    )
    .map_err(&err)?;
    conn.execute(
        "INSERT INTO fleet_owners (owner, heartbeat_ms, json) VALUES (?1, ?2, ?3)
         ON CONFLICT(owner) DO UPDATE SET heartbeat_ms = ?2, json = ?3",
        params![owner.owner, now_ms as i64, row_json],
    )
    .map_err(&err)?;
    let forget_before = now_ms.saturating_sub(FORGET_OWNERS_AFTER_MS);
    conn.execute("DELETE FROM fleet_owners WHERE heartbeat_ms < ?1", [forget_before as i64]).map_err(&err)?;
    Ok(grant)
}

fn view(conn: &Connection, loc: &str, now_ms: u64) -> Result<FleetView, StoreError> {
    let err = db_error(loc);
    let owners = owner_rows(conn, loc)?;
    let mut stmt = conn.prepare("SELECT account, json FROM fleet_accounts ORDER BY account").map_err(&err)?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).map_err(&err)?;
    let mut accounts = std::collections::BTreeMap::new();
    for row in rows {
        let (account, json) = row.map_err(&err)?;
        let state = decode(&json, || format!("fleet account {account}"))?;
        accounts.insert(account, state);
    }
    Ok(FleetView { now_ms, owners, accounts })
}

#[async_trait]
impl FleetLedger for SqliteStore {
    fn account_id(&self, base_url: &str, key: &Secret) -> String {
        crate::store::fleet_account_id(base_url, key)
    }

    async fn sync(
        &self,
        account: &str,
        owner: &OwnerInfo,
        report: &FleetReport,
        now: Timestamp,
    ) -> Result<FleetGrant, StoreError> {
        let (account, owner, report) = (account.to_string(), owner.clone(), report.clone());
        let now_ms = now.as_unix_millis();
        self.writer.write(Box::new(move |conn, loc| sync(conn, loc, &account, &owner, &report, now_ms))).await
    }

    async fn leave(&self, owner: &str) -> Result<(), StoreError> {
        let owner = owner.to_string();
        self.writer
            .write(Box::new(move |conn, loc| {
                conn.execute("DELETE FROM fleet_owners WHERE owner = ?1", [&owner]).map(|_| ()).map_err(db_error(loc))
            }))
            .await
    }

    async fn view(&self, now: Timestamp) -> Result<FleetView, StoreError> {
        let now_ms = now.as_unix_millis();
        self.writer.read(Box::new(move |conn, loc| view(conn, loc, now_ms))).await
    }
}

impl SqliteStore {
    /// This store as the client's fleet ledger.
    pub(super) fn as_fleet_ledger(&self) -> Arc<dyn FleetLedger> {
        Arc::new(self.clone())
    }
}
