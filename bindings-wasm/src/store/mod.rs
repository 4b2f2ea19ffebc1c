//! Where the dead-letter queue and journal live in the browser: IndexedDB
//! (`"indexeddb:NAME"`, the durable default), memory (`"memory"`), or a host JS
//! object implementing the store methods. The first two are written in JS
//! (`js/stores.js`, one set of lease rules over two tables); all three are
//! driven through the same host-store adapter, [`JsStore`].

mod js;

use captcha_dlq_core::dlq::DeadLetterRecord;
use captcha_dlq_core::quoted::Quoted;
use captcha_dlq_core::ConfigError;
use js_sys::{Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

pub use self::js::{JsStore, METHODS};
use crate::convert::from_js;
use crate::error::Error;

/// The database used when `dlq` is not given.
pub const DEFAULT_DATABASE: &str = "captcha-dlq";

#[wasm_bindgen(module = "/js/stores.js")]
extern "C" {
    #[wasm_bindgen(js_name = memoryStore)]
    fn memory_store(keys_of: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = indexedDbStore)]
    fn indexed_db_store(name: &str, keys_of: &JsValue) -> Promise;
}

/// `record => {sitekey, page_host}` for the JS stores' filters: the core derives
/// them (per task kind, and the page URL's host), so JS never re-implements that.
fn keys_of() -> JsValue {
    Closure::<dyn Fn(JsValue) -> JsValue>::new(|value: JsValue| {
        let keys = Object::new();
        if let Ok(record) = from_js::<DeadLetterRecord>(&value) {
            let sitekey = record.task.sitekey().map_or(JsValue::NULL, JsValue::from_str);
            let host = record.page_host().map_or(JsValue::NULL, |h| JsValue::from_str(&h));
            let _ = Reflect::set(&keys, &"sitekey".into(), &sitekey);
            let _ = Reflect::set(&keys, &"page_host".into(), &host);
        }
        keys.into()
    })
    .into_js_value()
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

/// Opens the store named by the `dlq` option.
pub(crate) async fn open_store(spec: &JsValue) -> Result<JsStore, Error> {
    if spec.is_undefined() || spec.is_null() {
        return indexeddb(DEFAULT_DATABASE).await;
    }
    if let Some(text) = spec.as_string() {
        if text == "memory" {
            return Ok(memory());
        }
        if let Some(name) = text.strip_prefix("indexeddb:") {
            return indexeddb(name).await;
        }
        return Err(ConfigError::new(
            "dlq",
            format!("{}: expected 'memory', 'indexeddb:NAME' or a store object", Quoted(&text)),
        )
        .into());
    }
    Ok(JsStore::host(spec.clone())?)
}
