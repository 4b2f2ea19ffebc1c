//! Stores written in the host language, through one protocol.
//!
//! A Python object, a JavaScript object in Node or in a browser (and the
//! browser's own IndexedDB store) keeps rows; it never decides anything. It
//! answers five calls, the same in every language:
//!
//! | method | arguments | answer |
//! |---|---|---|
//! | `get` | `table`, `key` | the row, or null |
//! | `scan` | `table` | every row of the table, in any order |
//! | `write` | `ops`: `[{op: "put", table, key, row} \| {op: "delete", table, key}]` | nothing; all ops or none |
//! | `lock` (optional) | — | nothing, once this caller has the storage to itself |
//! | `unlock` (optional) | — | nothing |
//!
//! An object may also declare `shared: true`: several processes share its
//! storage (it then needs `lock` and `unlock`), so the client keeps the fleet
//! ledger in it, in two more tables (`fleet_accounts`, `fleet_owners`; see
//! [`crate::dlq::table::fleet`]). Absent, `null` or `false`: the store is one
//! process's and is never asked about those tables. Anything else is an error
//! naming it.
//!
//! Tables are `records`, `journal`, `settled`, `meta` and `audit` (the audit trail's entries,
//! appended and listed only when an operator acts or asks; feature `audit`, not in the browser); keys are strings;
//! rows are JSON objects in the schema's own spelling, opaque to the store
//! (time is inside rows, as RFC 3339 strings; no call passes a clock). A
//! method may answer at once or with a promise/awaitable; a thrown error is a
//! store failure naming the store and the method. [`HostTable`] turns those
//! calls into a [`TableBackend`], so the lease rules of
//! [`TableStore`](crate::dlq::table::TableStore) apply to every host store,
//! and every answer is checked against the schema before it is used.

use serde_json::{json, Value};

use crate::dlq::store::{MaybeSendSync, StoreError};
use crate::dlq::table::{Row, Table, TableBackend, Write};
use crate::support::quoted::Quoted;

/// The methods of the protocol, in the order the documentation lists them.
pub const METHODS: [&str; 5] = ["get", "scan", "write", "lock", "unlock"];

/// What went wrong in a host call, in the host's words (never containing the API key:
/// the store never sees it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError(pub String);

/// How a binding calls a method of its host's store object.
#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
pub trait HostCall: MaybeSendSync {
    /// Calls `method` with `args` (a JSON array); the answer as JSON.
    async fn call(&self, method: &'static str, args: Value) -> Result<Value, HostError>;
    /// Whether the object has this (optional) method.
    fn provides(&self, method: &'static str) -> bool;
    /// The value of the object's attribute `name` (a declaration such as [`SHARED`], not a
    /// method) as JSON, read when the store is opened; `None` if it has none. A value that is not
    /// JSON data comes as a string describing it (the error then shows it).
    fn declared(&self, _name: &'static str) -> Option<Value> {
        None
    }
    /// How errors name the store (`the custom store`, `indexeddb:captcha-dlq`).
    fn label(&self) -> &str;
}

/// The methods an object must have to be a store (the others are optional).
pub const REQUIRED: [&str; 3] = ["get", "scan", "write"];

/// The declaration that several processes share a store object's storage.
pub const SHARED: &str = "shared";

/// A host object as a [`TableBackend`].
#[derive(Debug)]
pub struct HostTable<C> {
    host: C,
    shared: bool,
}

impl<C: HostCall> HostTable<C> {
    /// Checks that the object has the required methods, naming the first missing one, and reads
    /// its `shared` declaration.
    pub fn new(host: C) -> Result<Self, StoreError> {
        if let Some(missing) = REQUIRED.iter().find(|m| !host.provides(m)) {
            return Err(StoreError::Backend(format!(
                "{} has no `{missing}` method; a store object needs get, scan and write (lock and unlock are optional)",
                host.label()
            )));
        }
        let shared = match host.declared(SHARED) {
            None | Some(Value::Null | Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(other) => {
                return Err(StoreError::Backend(format!(
                    "{}'s `{SHARED}` is {other}: declare `{SHARED}` true (several processes share the storage, \
                     and the client keeps the fleet ledger in it) or false, or leave it out",
                    host.label()
                )))
            }
        };
        if shared {
            if let Some(missing) = ["lock", "unlock"].into_iter().find(|m| !host.provides(m)) {
                return Err(StoreError::Backend(format!(
                    "{} is declared `{SHARED}` but has no `{missing}` method: the processes sharing a store \
                     take turns through lock and unlock",
                    host.label()
                )));
            }
        }
        Ok(HostTable { host, shared })
    }

    pub fn host(&self) -> &C {
        &self.host
    }

    /// Whether the object declared that several processes share its storage.
    pub fn shared(&self) -> bool {
        self.shared
    }

    async fn call(&self, method: &'static str, args: Value) -> Result<Value, StoreError> {
        self.host
            .call(method, args)
            .await
            .map_err(|e| StoreError::Backend(format!("{}'s {method} failed: {}", self.host.label(), e.0)))
    }

    fn bad_answer(&self, method: &str, what: impl core::fmt::Display) -> StoreError {
        StoreError::Decode(format!("{}'s {method} answered {what}", self.host.label()))
    }

    fn row(&self, method: &str, table: Table, value: Value) -> Result<Row, StoreError> {
        Row::from_json(table, value).map_err(|e| {
            let field = e.field_under(table.as_str());
            self.bad_answer(
                method,
                format_args!("a {} row that does not fit the schema: {field}: {}", table.as_str(), e.problem),
            )
        })
    }
}

#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
impl<C: HostCall> TableBackend for HostTable<C> {
    async fn get(&self, table: Table, key: &str) -> Result<Option<Row>, StoreError> {
        match self.call("get", json!([table.as_str(), key])).await? {
            Value::Null => Ok(None),
            value => {
                let row = self.row("get", table, value)?;
                if row.key() != key {
                    return Err(self.bad_answer(
                        "get",
                        format_args!("the row of {} when asked for {}", Quoted(row.key()), Quoted(key)),
                    ));
                }
                Ok(Some(row))
            }
        }
    }

    async fn scan(
        &self,
        table: Table,
        keep: &(dyn for<'r> Fn(&'r Row) -> bool + Sync),
    ) -> Result<Vec<Row>, StoreError> {
        let Value::Array(values) = self.call("scan", json!([table.as_str()])).await? else {
            return Err(self.bad_answer("scan", "something other than an array of rows"));
        };
        let mut rows = Vec::with_capacity(values.len());
        for (i, value) in values.into_iter().enumerate() {
            let row = self.row("scan", table, value).map_err(|e| match e {
                StoreError::Decode(m) => StoreError::Decode(format!("{m} (item {i})")),
                other => other,
            })?;
            if keep(&row) {
                rows.push(row);
            }
        }
        Ok(rows)
    }

    async fn write(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        let ops: Vec<Value> = writes
            .iter()
            .map(|w| match w {
                Write::Put(row) => {
                    json!({"op": "put", "table": row.table().as_str(), "key": row.key(), "row": row.to_json()})
                }
                Write::Delete(table, key) => json!({"op": "delete", "table": table.as_str(), "key": key}),
            })
            .collect();
        self.call("write", json!([ops])).await.map(|_| ())
    }

    async fn lock(&self) -> Result<(), StoreError> {
        if self.host.provides("lock") {
            self.call("lock", json!([])).await?;
        }
        Ok(())
    }

    async fn unlock(&self) -> Result<(), StoreError> {
        if self.host.provides("unlock") {
            self.call("unlock", json!([])).await?;
        }
        Ok(())
    }
}

/// A host store speaking the protocol from inside Rust: the reference the bindings' tests
/// compare their hosts against, and a store for Rust callers who want one in memory.
#[cfg(any(test, feature = "testkit"))]
pub mod reference {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use super::*;

    /// Rows as JSON in a map, exactly as a Python dict or a JS `Map` store would keep them.
    #[derive(Debug, Default)]
    pub struct JsonRows {
        tables: Mutex<BTreeMap<String, BTreeMap<String, Value>>>,
    }

    #[cfg_attr(feature = "send", async_trait::async_trait)]
    #[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
    impl HostCall for JsonRows {
        async fn call(&self, method: &'static str, args: Value) -> Result<Value, HostError> {
            let mut tables = self.tables.lock().map_err(|_| HostError("poisoned".into()))?;
            let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
            match method {
                "get" => {
                    let (table, key) = (arg(0), arg(1));
                    let (Some(table), Some(key)) = (table.as_str(), key.as_str()) else {
                        return Err(HostError("get(table, key) takes two strings".into()));
                    };
                    Ok(tables.get(table).and_then(|t| t.get(key)).cloned().unwrap_or(Value::Null))
                }
                "scan" => {
                    let table = arg(0);
                    let table = table.as_str().ok_or_else(|| HostError("scan(table) takes a string".into()))?;
                    Ok(Value::Array(tables.get(table).map(|t| t.values().cloned().collect()).unwrap_or_default()))
                }
                "write" => {
                    let Value::Array(ops) = arg(0) else { return Err(HostError("write(ops) takes an array".into())) };
                    for op in ops {
                        let table = op["table"].as_str().unwrap_or_default().to_string();
                        let key = op["key"].as_str().unwrap_or_default().to_string();
                        match op["op"].as_str() {
                            Some("put") => {
                                tables.entry(table).or_default().insert(key, op["row"].clone());
                            }
                            Some("delete") => {
                                if let Some(t) = tables.get_mut(&table) {
                                    t.remove(&key);
                                }
                            }
                            other => return Err(HostError(format!("unknown op {other:?}"))),
                        }
                    }
                    Ok(Value::Null)
                }
                other => Err(HostError(format!("no method {other}"))),
            }
        }

        fn provides(&self, method: &'static str) -> bool {
            REQUIRED.contains(&method)
        }

        fn label(&self) -> &str {
            "the JSON rows store"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::reference::JsonRows;
    use super::*;
    use crate::dlq::table::TableStore;
    use crate::dlq::testkit::{run_store_suite, CASES};
    use futures_lite::future::block_on;

    #[test]
    fn a_host_store_conforms_through_the_protocol() {
        let ran =
            block_on(run_store_suite(|| async { TableStore::over(HostTable::new(JsonRows::default()).unwrap()) }));
        assert_eq!(ran, CASES.len());
    }

    #[derive(Debug)]
    struct Broken;

    #[async_trait::async_trait]
    impl HostCall for Broken {
        async fn call(&self, method: &'static str, _args: Value) -> Result<Value, HostError> {
            match method {
                "scan" => Ok(json!([{"record": {"id": 5}}])),
                "get" => Ok(json!("not a row")),
                _ => Err(HostError("disk full".into())),
            }
        }
        fn provides(&self, method: &'static str) -> bool {
            method != "unlock"
        }
        fn label(&self) -> &str {
            "the custom store"
        }
    }

    #[test]
    fn bad_answers_and_failures_name_the_store_the_method_and_the_field() {
        block_on(async {
            let t = HostTable::new(Broken).unwrap();
            let e = t.scan(Table::Records, &|_| true).await.unwrap_err().to_string();
            assert!(
                e.contains("the custom store's scan")
                    && e.contains("records.record.schema: missing field")
                    && e.contains("item 0"),
                "{e}"
            );
            let e = t.get(Table::Journal, "x").await.unwrap_err().to_string();
            assert!(e.contains("the custom store's get") && e.contains("journal"), "{e}");
            let e = t.write(vec![Write::Delete(Table::Settled, "k".into())]).await.unwrap_err().to_string();
            assert_eq!(e, "store backend error: the custom store's write failed: disk full");
            assert!(t.lock().await.is_err(), "lock is provided here, and fails");
            assert!(t.unlock().await.is_ok(), "unlock is optional: not provided, nothing to do");
        });
        #[derive(Debug)]
        struct Missing;
        #[async_trait::async_trait]
        impl HostCall for Missing {
            async fn call(&self, _m: &'static str, _a: Value) -> Result<Value, HostError> {
                Ok(Value::Null)
            }
            fn provides(&self, method: &'static str) -> bool {
                method == "get"
            }
            fn label(&self) -> &str {
                "the custom store"
            }
        }
        let e = HostTable::new(Missing).unwrap_err().to_string();
        assert!(e.contains("no `scan` method"), "{e}");
    }

    /// An object declaring `shared` as the given JSON, with or without `lock` and `unlock`.
    #[derive(Debug)]
    struct Declaring(Option<Value>, bool);

    #[async_trait::async_trait]
    impl HostCall for Declaring {
        async fn call(&self, _m: &'static str, _a: Value) -> Result<Value, HostError> {
            Ok(Value::Null)
        }
        fn provides(&self, method: &'static str) -> bool {
            REQUIRED.contains(&method) || self.1
        }
        fn declared(&self, name: &'static str) -> Option<Value> {
            (name == SHARED).then(|| self.0.clone()).flatten()
        }
        fn label(&self) -> &str {
            "the custom store"
        }
    }

    #[test]
    fn a_store_is_shared_only_when_it_says_so_and_can_take_turns() {
        let shared = |value: Option<Value>, locks: bool| HostTable::new(Declaring(value, locks)).map(|t| t.shared());
        assert_eq!(shared(None, false), Ok(false), "a store of four tables, as before");
        assert_eq!(shared(Some(Value::Null), false), Ok(false));
        assert_eq!(shared(Some(json!(false)), true), Ok(false));
        assert_eq!(shared(Some(json!(true)), true), Ok(true));
        let e = shared(Some(json!(true)), false).unwrap_err().to_string();
        assert!(e.contains("declared `shared` but has no `lock` method"), "{e}");
        for bad in [json!("yes"), json!(1), json!({"fleet": true})] {
            let e = shared(Some(bad.clone()), true).unwrap_err().to_string();
            assert!(e.contains(&format!("the custom store's `shared` is {bad}: declare `shared` true")), "{e}");
        }
    }
}
