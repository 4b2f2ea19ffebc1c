//! Promises over IndexedDB's event API: open a database, await a request,
//! await a transaction's commit. Awaiting a request resumes in a microtask, so
//! the transaction stays active across the awaits of one operation.

use captcha_dlq_core::dlq::StoreError;
use captcha_dlq_core::quoted::Quoted;
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbFactory, IdbOpenDbRequest, IdbRequest, IdbTransaction};

use crate::convert::describe;

pub(crate) const RECORDS: &str = "records";
pub(crate) const JOURNAL: &str = "journal";
pub(crate) const META: &str = "meta";
const VERSION: u32 = 1;

pub(crate) fn backend(what: &str, e: &JsValue) -> StoreError {
    StoreError::Backend(format!("IndexedDB {what}: {}", describe_dom(e)))
}

/// A `DOMException` or `Error` as `Name: message`.
fn describe_dom(e: &JsValue) -> String {
    let name = Reflect::get(e, &"name".into()).ok().and_then(|n| n.as_string());
    let message = Reflect::get(e, &"message".into()).ok().and_then(|n| n.as_string());
    match (name, message) {
        (Some(n), Some(m)) => format!("{n}: {m}"),
        _ => describe(e),
    }
}

/// Opens (creating or upgrading) the database `name` in this global's `indexedDB`.
pub(crate) async fn open(name: &str) -> Result<IdbDatabase, StoreError> {
    let factory: IdbFactory = Reflect::get(&js_sys::global(), &"indexedDB".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| StoreError::Backend("IndexedDB is not available in this context".into()))?;
    let request: IdbOpenDbRequest = factory.open_with_u32(name, VERSION).map_err(|e| backend("open", &e))?;
    let upgrading = request.clone();
    let on_upgrade = Closure::once_into_js(move |_event: JsValue| {
        if let Ok(db) = upgrading.result().and_then(|r| r.dyn_into::<IdbDatabase>()) {
            let existing = db.object_store_names();
            for store in [RECORDS, JOURNAL, META] {
                if !existing.contains(store) {
                    // Fails only if the name exists, which was just checked.
                    let _ = db.create_object_store(store);
                }
            }
        }
    });
    request.set_onupgradeneeded(Some(on_upgrade.unchecked_ref()));
    let result = wait(&request).await.map_err(|e| backend(&format!("open {}", Quoted(name)), &e))?;
    result.dyn_into::<IdbDatabase>().map_err(|e| backend("open", &e))
}

/// The result of `request` once it succeeds.
pub(crate) async fn wait(request: &IdbRequest) -> Result<JsValue, JsValue> {
    let promise = Promise::new(&mut |resolve: Function, reject: Function| {
        let ok = request.clone();
        let failed = request.clone();
        let on_success = Closure::once_into_js(move |_e: JsValue| {
            let _ = resolve.call1(&JsValue::UNDEFINED, &ok.result().unwrap_or(JsValue::UNDEFINED));
        });
        let on_error = Closure::once_into_js(move |_e: JsValue| {
            let error = failed.error().ok().flatten().map_or(JsValue::UNDEFINED, JsValue::from);
            let _ = reject.call1(&JsValue::UNDEFINED, &error);
        });
        request.set_onsuccess(Some(on_success.unchecked_ref()));
        request.set_onerror(Some(on_error.unchecked_ref()));
    });
    JsFuture::from(promise).await
}

/// Resolves when `tx` commits; fails if it aborts.
pub(crate) fn committed(tx: &IdbTransaction) -> JsFuture {
    let promise = Promise::new(&mut |resolve: Function, reject: Function| {
        let failed = tx.clone();
        let on_complete = Closure::once_into_js(move |_e: JsValue| {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        });
        // A failed request aborts the transaction (nothing here prevents that), so `abort` covers errors.
        let on_abort = Closure::once_into_js(move |_e: JsValue| {
            let error = failed.error().map_or(JsValue::from_str("transaction aborted"), JsValue::from);
            let _ = reject.call1(&JsValue::UNDEFINED, &error);
        });
        tx.set_oncomplete(Some(on_complete.unchecked_ref()));
        tx.set_onabort(Some(on_abort.unchecked_ref()));
    });
    JsFuture::from(promise)
}
