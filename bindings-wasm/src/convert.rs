//! Values across the wasm↔JS boundary, through serde-wasm-bindgen (no JSON
//! text): JS values become `serde_json::Value` for the client's host readers,
//! and their answers become plain JS objects (maps as objects, `null` as
//! `null`), exactly as the Node addon hands them over.

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

/// How every value goes out: plain objects, `null` kept as `null`.
const OUT: serde_wasm_bindgen::Serializer =
    serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true).serialize_missing_as_null(true);

/// A Rust value as a plain JS value.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, String> {
    value.serialize(&OUT).map_err(|e| format!("cannot be handed to JavaScript: {e}"))
}

/// A JSON value as a plain JS value (JSON values always convert).
pub fn json_to_js(value: &Value) -> JsValue {
    to_js(value).unwrap_or(JsValue::NULL)
}

/// A JS value as JSON; `undefined` becomes `null`. Fails on what JSON cannot hold (a
/// function, a symbol, a BigInt out of range), saying what it was.
pub fn from_js(value: JsValue) -> Result<Value, String> {
    serde_wasm_bindgen::from_value(value).map_err(|e| e.to_string())
}

/// A thrown JS value as text: an `Error`'s name and message, else its string form.
pub fn describe(value: &JsValue) -> String {
    if let Some(e) = value.dyn_ref::<js_sys::Error>() {
        let name = String::from(e.name());
        let message = String::from(e.message());
        return if name.is_empty() || name == "Error" { message } else { format!("{name}: {message}") };
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

/// `undefined` or `null`: an argument left out.
pub fn absent(value: &JsValue) -> bool {
    value.is_undefined() || value.is_null()
}
