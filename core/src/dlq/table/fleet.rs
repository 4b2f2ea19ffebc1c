//! The fleet ledger over a table backend: for a store that several processes share through a
//! backend of their own (a custom store written in Python or JavaScript over a shared file or
//! database, declared `shared`; `docs/custom-store.md`).
//!
//! The ledger is two more tables: `fleet_accounts` ([`FleetAccountRow`]: each account's
//! [`AccountState`]) and `fleet_owners` ([`OwnerRow`]: each client's heartbeat row). A sync reads
//! the account and the owner rows and writes both back in one [`TableBackend::write`], under the
//! store's lock (in this process, then the backend's `lock` against the others), applying the
//! core's rules ([`AccountState::apply`]) exactly as the SQLite ledger does in its transaction.
//!
//! The ledger's clock is the `now` of the client that syncs: a backend has no clock of its own
//! to offer (the protocol passes none). So the clients sharing a custom store share their hosts'
//! clocks: on one host that is one clock, as for a SQLite file; across hosts their clocks must
//! agree (NTP) to well under the 15 s an owner stays alive, or a host whose clock runs ahead
//! sees live owners as gone. Redis, which has a clock of its own, is the store for fleets of
//! hosts whose clocks may not agree.
//!
//! Feature `fleet`. The memory store keeps no ledger: one process is its fleet. Nor does the browser build (its
//! stores are one profile's tabs; the fleet code does not fit the `.wasm` budget).

use std::sync::{Arc, Weak};

use serde::Serialize;
use serde_json::Value;

use super::{wrong_row, Row, Table, TableBackend, TableStore, Write};
use crate::dlq::store::StoreError;
use crate::fleet::{
    others, AccountState, FleetGrant, FleetLedger, FleetReport, FleetView, OwnerInfo, OwnerRow, FORGET_OWNERS_AFTER_MS,
};
use crate::http::Secret;
use crate::support::json_read::{FieldError, Fields, FromJson};
use crate::support::time::Timestamp;

/// How a store names a provider account from its base URL and key: a keyed hash, never the key
/// (the native crate's `fleet_account_id`, HMAC-SHA256, which the core has no hash for).
pub type AccountNaming = fn(&str, &Secret) -> String;

/// One account's shared state, as the `fleet_accounts` table keeps it: `{account, state}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetAccountRow {
    pub account: String,
    pub state: AccountState,
}

impl FromJson for FleetAccountRow {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(FleetAccountRow { account: f.req("account")?, state: f.req("state")? })
    }
}

/// What a [`TableStore`] keeping the ledger holds: itself, weakly (the ledger it hands out holds
/// it strongly), and how it names accounts.
pub(super) struct Fleet<B> {
    me: Weak<TableStore<B>>,
    naming: AccountNaming,
}

impl<B> core::fmt::Debug for Fleet<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Fleet")
    }
}

impl<B: TableBackend + 'static> TableStore<B> {
    /// This store, shared by several processes, keeping the fleet ledger in its backend's
    /// `fleet_accounts` and `fleet_owners` tables; `naming` names the accounts. Its
    /// [`fleet_ledger`](crate::dlq::DlqStore::fleet_ledger) is then the ledger; without this it
    /// has none.
    pub fn keeping_fleet_ledger(mut self, naming: AccountNaming) -> Arc<Self> {
        Arc::new_cyclic(|me| {
            self.fleet = Some(Fleet { me: me.clone(), naming });
            self
        })
    }

    pub(super) fn fleet_ledger_of_table(&self) -> Option<Arc<dyn FleetLedger>> {
        let fleet = self.fleet.as_ref()?;
        Some(Arc::new(TableLedger { store: fleet.me.upgrade()?, naming: fleet.naming }))
    }
}

impl<B: TableBackend> TableStore<B> {
    async fn fleet_owners(&self) -> Result<Vec<OwnerRow>, StoreError> {
        let mut out = Vec::new();
        for row in self.backend.scan(Table::FleetOwners, &|_| true).await? {
            match row {
                Row::FleetOwner(owner) => out.push(owner),
                other => return Err(wrong_row(Table::FleetOwners, &other)),
            }
        }
        Ok(out)
    }

    async fn fleet_sync_locked(
        &self,
        account: &str,
        owner: &OwnerInfo,
        report: &FleetReport,
        now_ms: u64,
    ) -> Result<FleetGrant, StoreError> {
        let mut state = match self.backend.get(Table::FleetAccounts, account).await? {
            Some(Row::FleetAccount(row)) => row.state,
            Some(other) => return Err(wrong_row(Table::FleetAccounts, &other)),
            None => AccountState::default(),
        };
        let rows = self.fleet_owners().await?;
        let grant = state.apply(report, others(&rows, &owner.owner, account, now_ms), now_ms);
        let forget_before = now_ms.saturating_sub(FORGET_OWNERS_AFTER_MS);
        let mut writes = Vec::new();
        let mut previous = None;
        for row in rows {
            if row.owner == owner.owner {
                previous = Some(row);
            } else if row.heartbeat_ms < forget_before {
                writes.push(Write::Delete(Table::FleetOwners, row.owner));
            }
        }
        let reserved = report.reserved_nano.saturating_add(grant.reserved_for(report));
        let row = OwnerRow::synced(previous, owner, account, (report.in_flight, reserved), now_ms);
        writes.push(Write::Put(Row::FleetAccount(FleetAccountRow { account: account.to_string(), state })));
        writes.push(Write::Put(Row::FleetOwner(row)));
        self.backend.write(writes).await?;
        Ok(grant)
    }

    async fn fleet_view_locked(&self, now_ms: u64) -> Result<FleetView, StoreError> {
        let owners = self.fleet_owners().await?;
        let mut accounts = std::collections::BTreeMap::new();
        for row in self.backend.scan(Table::FleetAccounts, &|_| true).await? {
            match row {
                Row::FleetAccount(row) => accounts.insert(row.account, row.state),
                other => return Err(wrong_row(Table::FleetAccounts, &other)),
            };
        }
        Ok(FleetView { now_ms, owners, accounts })
    }
}

/// The ledger a [`TableStore`] keeping one hands out.
struct TableLedger<B> {
    store: Arc<TableStore<B>>,
    naming: AccountNaming,
}

#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
impl<B: TableBackend> FleetLedger for TableLedger<B> {
    fn account_id(&self, base_url: &str, key: &Secret) -> String {
        (self.naming)(base_url, key)
    }

    /// On `now`, the caller's clock (see the module documentation).
    async fn sync(
        &self,
        account: &str,
        owner: &OwnerInfo,
        report: &FleetReport,
        now: Timestamp,
    ) -> Result<FleetGrant, StoreError> {
        let store = &*self.store;
        exclusive!(store, store.fleet_sync_locked(account, owner, report, now.as_unix_millis()))
    }

    async fn leave(&self, owner: &str) -> Result<(), StoreError> {
        let store = &*self.store;
        exclusive!(store, store.backend.write(vec![Write::Delete(Table::FleetOwners, owner.to_string())]))
    }

    async fn view(&self, now: Timestamp) -> Result<FleetView, StoreError> {
        let store = &*self.store;
        exclusive!(store, store.fleet_view_locked(now.as_unix_millis()))
    }
}

#[cfg(test)]
mod tests {
    //! The ledger suite over the table store: through the host protocol as JSON rows (what a
    //! Python or JS store keeps) and over the memory table.

    use super::*;
    use crate::dlq::host::reference::JsonRows;
    use crate::dlq::host::{HostCall, HostTable};
    use crate::dlq::table::MemoryTable;
    use crate::dlq::{DlqStore, MemoryStore};
    use crate::fleet::testkit::run_ledger_suite;
    use futures_lite::future::block_on;
    use serde_json::json;

    /// A stand-in for the native crate's HMAC (the core has no cryptographic hash): keyed by the
    /// key, never containing it, which is all the suite checks of a name.
    fn naming(base_url: &str, key: &Secret) -> String {
        let keyed = format!("{}\n{base_url}", key.expose());
        format!("{:032x}", xxhash_rust::xxh3::xxh3_128(keyed.as_bytes()))
    }

    const NOW: Timestamp = Timestamp::from_unix_millis(1_795_255_200_000);

    #[test]
    fn a_table_store_keeping_the_ledger_follows_the_rules() {
        let host = TableStore::over(HostTable::new(JsonRows::default()).unwrap()).keeping_fleet_ledger(naming);
        let ledger = host.fleet_ledger().expect("a store keeping the ledger has one");
        assert_eq!(block_on(run_ledger_suite(&*ledger, NOW, 1)), 9);
        let memory = TableStore::over(MemoryTable::new()).keeping_fleet_ledger(naming);
        assert_eq!(block_on(run_ledger_suite(&*memory.fleet_ledger().expect("ledger"), NOW, 2)), 9);
    }

    #[test]
    fn a_store_that_is_not_shared_keeps_no_ledger() {
        assert!(MemoryStore::new().fleet_ledger().is_none(), "one process is the memory store's fleet");
        assert!(TableStore::over(HostTable::new(JsonRows::default()).unwrap()).fleet_ledger().is_none());
    }

    /// What a host store is handed: the two tables by name, rows as JSON keyed by account and
    /// owner, every change of a sync in one `write`.
    #[test]
    fn a_host_store_sees_the_ledger_as_two_tables_of_json_rows() {
        let store = TableStore::over(HostTable::new(JsonRows::default()).unwrap()).keeping_fleet_ledger(naming);
        let ledger = store.fleet_ledger().unwrap();
        let owner = OwnerInfo { owner: "h/1/x".into(), host: "h".into(), pid: 1, started_at: NOW };
        let report = FleetReport { in_flight: 2, want: 1, rate: 10.0, window_max: 8, ..FleetReport::default() };
        block_on(ledger.sync("acct", &owner, &report, NOW)).unwrap();
        let host = store.backend().host();
        let account = block_on(host.call("get", json!(["fleet_accounts", "acct"]))).unwrap();
        assert_eq!((account["account"].as_str(), account["state"]["window"].as_u64()), (Some("acct"), Some(8)));
        let owners = block_on(host.call("scan", json!(["fleet_owners"]))).unwrap();
        assert_eq!(owners[0]["owner"], "h/1/x");
        assert_eq!(owners[0]["in_flight"]["acct"], 2);
        block_on(ledger.leave("h/1/x")).unwrap();
        assert_eq!(block_on(host.call("scan", json!(["fleet_owners"]))).unwrap(), json!([]));
    }

    /// A row a store gives back that does not fit is named, as every row is.
    #[test]
    fn a_bad_fleet_row_is_named() {
        let store = TableStore::over(HostTable::new(JsonRows::default()).unwrap()).keeping_fleet_ledger(naming);
        let host = store.backend().host();
        let bad = json!([[{"op": "put", "table": "fleet_accounts", "key": "acct", "row": {"account": "acct", "state": {"window": "wide"}}}]]);
        block_on(host.call("write", bad)).unwrap();
        let owner = OwnerInfo { owner: "o".into(), host: "h".into(), pid: 1, started_at: NOW };
        let e = block_on(store.fleet_ledger().unwrap().sync("acct", &owner, &FleetReport::default(), NOW));
        let e = e.unwrap_err().to_string();
        assert!(e.contains("fleet_accounts") && e.contains("state.window"), "{e}");
    }
}
