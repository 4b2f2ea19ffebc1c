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

pub mod host;

use std::sync::Arc;

use captcha_dlq_client::core::dlq::host::HostTable;
use captcha_dlq_client::core::dlq::{DlqStore, MemoryStore, StoreError, TableStore};
use captcha_dlq_client::core::ConfigError;
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
/// a store object (`dlq` given as an object); at most one of them.
pub async fn open(spec: Option<&str>, object: JsValue) -> Result<Arc<dyn DlqStore>, Error> {
    if !absent(&object) {
        if spec.is_some() {
            return Err(config("give the DLQ as a location or as a store object, not both"));
        }
        return Ok(Arc::new(over(JsHostCall::new(object, "the custom store")).map_err(|e| config(e.to_string()))?));
    }
    match spec.unwrap_or(DEFAULT_DLQ) {
        "memory" => Ok(Arc::new(MemoryStore::new())),
        spec if spec.starts_with(INDEXEDDB) => {
            let name = &spec[INDEXEDDB.len()..];
            if name.is_empty() {
                return Err(config("indexeddb: needs a database name, e.g. 'indexeddb:captcha-dlq'"));
            }
            Ok(Arc::new(over(JsHostCall::new(indexed_db(spec, name).await?, spec))?))
        }
        other => Err(config(format!(
            "{other:?} is not a browser store: use 'indexeddb:NAME' (the default is '{DEFAULT_DLQ}'), 'memory', or a store object"
        ))),
    }
}

/// The table object of the IndexedDB database `name`.
pub async fn indexed_db(label: &str, name: &str) -> Result<JsValue, Error> {
    let opening = open_indexed_db(name).map_err(|e| opening_failed(label, &e))?;
    JsFuture::from(opening).await.map_err(|e| opening_failed(label, &e))
}

/// The table store over a host object that speaks the protocol.
pub fn over(host: JsHostCall) -> Result<TableStore<HostTable<JsHostCall>>, StoreError> {
    Ok(TableStore::over(HostTable::new(host)?))
}

fn config(problem: impl Into<String>) -> Error {
    Error::Config(ConfigError::new("dlq", problem))
}

fn opening_failed(label: &str, e: &JsValue) -> Error {
    Error::Store(StoreError::Backend(format!("{label} could not be opened: {}", describe(e))))
}
