//! A JS object as a host store: the core's one protocol (`get`, `scan`,
//! `write`, optional `lock`/`unlock`; `docs/custom-store.md`) called on a JS
//! object, each method answering a value or a promise. Arguments and answers
//! cross through serde-wasm-bindgen; `HostTable` checks every answer against
//! the schema and the core's `TableStore` applies the lease rules.

use captcha_dlq_client::core::dlq::host::{HostCall, HostError};
use js_sys::{Array, Function, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::convert::{absent, describe, from_js, json_to_js};

/// A JS store object and how errors name it.
#[derive(Debug)]
pub struct JsHostCall {
    object: JsValue,
    label: String,
}

impl JsHostCall {
    pub fn new(object: JsValue, label: impl Into<String>) -> JsHostCall {
        JsHostCall { object, label: label.into() }
    }

    fn method(&self, name: &str) -> Option<Function> {
        Reflect::get(&self.object, &JsValue::from_str(name)).ok()?.dyn_into().ok()
    }
}

#[async_trait::async_trait(?Send)]
impl HostCall for JsHostCall {
    async fn call(&self, method: &'static str, args: Value) -> Result<Value, HostError> {
        let function = self.method(method).ok_or_else(|| HostError(format!("there is no `{method}` method")))?;
        let list: Array = match &args {
            Value::Array(items) => items.iter().map(json_to_js).collect(),
            other => std::iter::once(json_to_js(other)).collect(),
        };
        let returned = function.apply(&self.object, &list).map_err(|e| HostError(describe(&e)))?;
        let answer = JsFuture::from(Promise::resolve(&returned)).await.map_err(|e| HostError(describe(&e)))?;
        from_js(answer).map_err(|e| HostError(format!("answered something that is not JSON data: {e}")))
    }

    fn provides(&self, method: &'static str) -> bool {
        self.method(method).is_some()
    }

    /// Read so that a bad `shared` is refused here as in Node; a shared store keeps no fleet
    /// ledger in the browser (`docs/decisions/0049-host-stores-join-the-fleet.md`), its lock still serialises the tabs.
    fn declared(&self, name: &'static str) -> Option<Value> {
        let value = Reflect::get(&self.object, &JsValue::from_str(name)).ok().filter(|v| !absent(v))?;
        Some(from_js(value).unwrap_or_else(Value::String))
    }

    fn label(&self) -> &str {
        &self.label
    }
}
