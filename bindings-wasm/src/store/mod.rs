//! Where the dead-letter queue and journal live in the browser: IndexedDB
//! (`"indexeddb:NAME"`, the durable default), memory (`"memory"`, the core's
//! `MemoryStore`), or a host JS object implementing the store methods.

mod idb;
mod idb_io;
mod js;

use std::rc::Rc;

use captcha_dlq_core::dlq::memory::MemoryStore;
use captcha_dlq_core::dlq::DlqStore;
use captcha_dlq_core::quoted::Quoted;
use captcha_dlq_core::ConfigError;
use wasm_bindgen::JsValue;

pub use self::idb::IdbStore;
pub use self::js::{JsStore, METHODS};
use crate::error::Error;

/// The database used when `dlq` is not given.
pub const DEFAULT_DATABASE: &str = "captcha-dlq";

/// Opens the store named by the `dlq` option.
pub(crate) async fn open_store(spec: &JsValue) -> Result<Rc<dyn DlqStore>, Error> {
    if spec.is_undefined() || spec.is_null() {
        return Ok(Rc::new(IdbStore::open(DEFAULT_DATABASE).await?));
    }
    if let Some(text) = spec.as_string() {
        if text == "memory" {
            return Ok(Rc::new(MemoryStore::new()));
        }
        if let Some(name) = text.strip_prefix("indexeddb:") {
            if name.is_empty() {
                return Err(
                    ConfigError::new("dlq", "indexeddb: needs a database name, e.g. 'indexeddb:captcha-dlq'").into()
                );
            }
            return Ok(Rc::new(IdbStore::open(name).await?));
        }
        return Err(ConfigError::new(
            "dlq",
            format!("{}: expected 'memory', 'indexeddb:NAME' or a store object", Quoted(&text)),
        )
        .into());
    }
    Ok(Rc::new(JsStore::new(spec.clone())?))
}
