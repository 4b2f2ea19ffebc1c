//! The package's JS stores (`js/stores.js`: IndexedDB and memory) seen from
//! Rust as [`DlqStore`]s, so the core's store conformance suite
//! (`dlq::testkit`) runs on them in Chromium. Test builds only (feature
//! `conformance`): the package itself calls the stores from JS.
//!
//! [`DlqStore`]: captcha_dlq_core::dlq::DlqStore

mod js;

use captcha_dlq_core::ConfigError;
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

pub use self::js::JsStore;
use crate::error::Error;

#[wasm_bindgen(module = "/js/stores.js")]
extern "C" {
    #[wasm_bindgen(js_name = memoryStore)]
    fn memory_store(keys_of: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = indexedDbStore)]
    fn indexed_db_store(name: &str, keys_of: &JsValue) -> Promise;
}

/// The core's `keysOf` as a JS function for the stores.
fn keys_of() -> JsValue {
    Closure::<dyn Fn(JsValue) -> JsValue>::new(crate::dlq::keys_of).into_js_value()
}

/// The built-in memory store.
pub fn memory() -> JsStore {
    JsStore::builtin(memory_store(&keys_of()), "memory".to_string())
}

/// The built-in IndexedDB store over database `name` (created if missing).
pub async fn indexeddb(name: &str) -> Result<JsStore, Error> {
    if name.is_empty() {
        return Err(ConfigError::new("dlq", "indexeddb: needs a database name, e.g. 'indexeddb:captcha-dlq'").into());
    }
    let label = format!("indexeddb:{name}");
    let object =
        JsFuture::from(indexed_db_store(name, &keys_of())).await.map_err(|e| js::thrown(&label, "open", &e))?;
    Ok(JsStore::builtin(object, label))
}
