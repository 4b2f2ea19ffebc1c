//! The browser's DLQ stores, by the `dlq` option: `memory` (the core's
//! `MemoryStore`), `indexeddb:NAME` (default `indexeddb:captcha-dlq`), or a
//! store object written in JS. IndexedDB and JS objects are both table
//! backends speaking the core's host-store protocol ([`host::JsHostCall`]), so
//! their lease rules are the core's `TableStore`'s, as for every store.
//!
//! The IndexedDB table is a small JS object (`js/indexeddb.js`): it gets,
//! scans and writes rows, each call one IndexedDB transaction, and serialises
//! the tabs and workers sharing a database through a Web Lock. It decides
//! nothing; IndexedDB is a JS API, and the module is smaller for not binding
//! its callbacks from Rust.
//!
//! Every store is one type, [`BrowserStore`]: the table store over a boxed
//! backend, so its code (the lease rules and their sorts) is in the `.wasm`
//! once rather than once per backend.

pub mod host;

use std::sync::Arc;

use captcha_dlq_client::core::dlq::host::HostTable;
use captcha_dlq_client::core::dlq::table::{MemoryTable, Row, Table, Write};
use captcha_dlq_client::core::dlq::{DlqStore, StoreError, TableBackend, TableStore};
use captcha_dlq_client::core::support::quoted::Quoted;
use captcha_dlq_client::core::ConfigError;
use captcha_dlq_client::options::Durability;
use captcha_dlq_client::Error;
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use self::host::JsHostCall;
use crate::convert::{absent, describe};

/// Where the DLQ lives when the options do not say.
pub const DEFAULT_DLQ: &str = "indexeddb:captcha-dlq";

const INDEXEDDB: &str = "indexeddb:";

#[wasm_bindgen(module = "/js/indexeddb.js")]
extern "C" {
    /// Opens (creating or upgrading) the database `name`; resolves to its table object.
    #[wasm_bindgen(js_name = openIndexedDb, catch)]
    fn open_indexed_db(name: &str) -> Result<Promise, JsValue>;
}

/// The store the options name: `spec` is the `dlq` option when it is a location, `object`
/// a store object (`dlq` given as an object); at most one of them. No browser store is a
/// SQLite file, so `durability` must be the default.
pub async fn open(spec: Option<&str>, object: JsValue, durability: Durability) -> Result<Arc<dyn DlqStore>, Error> {
    let store = if absent(&object) {
        let spec = spec.unwrap_or(DEFAULT_DLQ);
        durability.check_store(false, &Quoted(spec).to_string())?;
        open_location(spec).await?
    } else if spec.is_some() {
        return Err(config("give the DLQ as a location or as a store object, not both"));
    } else {
        durability.check_store(false, "the custom store")?;
        over(JsHostCall::new(object, "the custom store"))?
    };
    #[allow(clippy::arc_with_non_send_sync)] // wasm32 has one thread; the store holds JS values
    Ok(Arc::new(store))
}

async fn open_location(spec: &str) -> Result<BrowserStore, Error> {
    if spec == "memory" {
        return Ok(memory());
    }
    let Some(name) = spec.strip_prefix(INDEXEDDB) else {
        return Err(config(format!(
            "{} is not a browser store: use 'indexeddb:NAME' (the default is '{DEFAULT_DLQ}'), 'memory', or a store object",
            Quoted(spec)
        )));
    };
    if name.is_empty() {
        return Err(config("indexeddb: needs a database name, e.g. 'indexeddb:captcha-dlq'"));
    }
    Ok(over(JsHostCall::new(indexed_db(spec, name).await?, spec))?)
}

/// The table object of the IndexedDB database `name`.
pub async fn indexed_db(label: &str, name: &str) -> Result<JsValue, Error> {
    let opening = open_indexed_db(name).map_err(|e| opening_failed(label, &e))?;
    JsFuture::from(opening).await.map_err(|e| opening_failed(label, &e))
}

/// A DLQ store of this package: the table store over one of the backends.
pub type BrowserStore = TableStore<AnyTable>;

/// The `memory` store: the core's memory table.
pub fn memory() -> BrowserStore {
    TableStore::over(AnyTable(Box::new(MemoryTable::new())))
}

/// The table store over a host object that speaks the protocol.
pub fn over(host: JsHostCall) -> Result<BrowserStore, StoreError> {
    Ok(TableStore::over(AnyTable(Box::new(HostTable::new(host)?))))
}

/// Any table backend, behind one type.
pub struct AnyTable(Box<dyn TableBackend>);

impl core::fmt::Debug for AnyTable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("AnyTable")
    }
}

#[async_trait::async_trait(?Send)]
impl TableBackend for AnyTable {
    async fn get(&self, table: Table, key: &str) -> Result<Option<Row>, StoreError> {
        self.0.get(table, key).await
    }

    async fn scan(
        &self,
        table: Table,
        keep: &(dyn for<'r> Fn(&'r Row) -> bool + Sync),
    ) -> Result<Vec<Row>, StoreError> {
        self.0.scan(table, keep).await
    }

    async fn write(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        self.0.write(writes).await
    }

    async fn lock(&self) -> Result<(), StoreError> {
        self.0.lock().await
    }

    async fn unlock(&self) -> Result<(), StoreError> {
        self.0.unlock().await
    }
}

fn config(problem: impl Into<String>) -> Error {
    Error::Config(ConfigError::new("dlq", problem))
}

fn opening_failed(label: &str, e: &JsValue) -> Error {
    Error::Store(StoreError::Backend(format!("{label} could not be opened: {}", describe(e))))
}
