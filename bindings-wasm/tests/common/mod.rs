//! Helpers shared by the browser test binaries: JSON across the JS boundary
//! and fresh IndexedDB names.

#![allow(dead_code)] // each test binary uses a different subset

use serde_json::Value;
use wasm_bindgen::JsValue;

pub fn js(v: &Value) -> JsValue {
    js_sys::JSON::parse(&v.to_string()).expect("test JSON parses")
}

pub fn json(v: &JsValue) -> Value {
    let text = js_sys::JSON::stringify(v).expect("stringify").as_string().unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A database name no earlier run used.
pub fn fresh_db(tag: &str) -> String {
    format!("captcha-dlq-test-{tag}-{}-{}", js_sys::Date::now() as u64, (js_sys::Math::random() * 1e9) as u64)
}
