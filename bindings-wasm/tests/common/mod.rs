//! Helpers shared by the browser test binaries: JSON across the JS boundary
//! (through the crate's own serde-wasm-bindgen conversions) and fresh
//! IndexedDB names.

#![allow(dead_code)] // each test binary uses a different subset

use serde_json::Value;
use wasm_bindgen::JsValue;

pub fn js(v: &Value) -> JsValue {
    captcha_dlq_wasm::convert::json_to_js(v)
}

pub fn json(v: &JsValue) -> Value {
    captcha_dlq_wasm::convert::from_js(v.clone()).unwrap_or(Value::Null)
}

/// A database name no earlier run used.
pub fn fresh_db(tag: &str) -> String {
    format!("captcha-dlq-test-{tag}-{}-{}", js_sys::Date::now() as u64, (js_sys::Math::random() * 1e9) as u64)
}
