//! JSON between Rust and JS: values cross as JSON text through the engine's
//! own serde types and `JSON.parse` / `JSON.stringify`, so a JS object and a
//! stored IndexedDB value have exactly the serde shape of the Rust type.
//! Going in, they are read by the core's `FromJson` readers (no derived
//! `Deserialize` code in the module).

use captcha_dlq_core::json_read::FromJson;
use serde::Serialize;
use wasm_bindgen::JsValue;

/// A Rust value as a plain JS value.
pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, String> {
    let text = serde_json::to_string(value).map_err(|e| format!("cannot encode: {e}"))?;
    js_sys::JSON::parse(&text).map_err(|e| format!("cannot encode: {}", describe(&e)))
}

/// A JS value as `serde_json::Value`; `undefined` becomes `null`.
pub(crate) fn to_json(value: &JsValue) -> Result<serde_json::Value, String> {
    if value.is_undefined() {
        return Ok(serde_json::Value::Null);
    }
    let text = js_sys::JSON::stringify(value)
        .map_err(|e| format!("not JSON-serialisable: {}", describe(&e)))?
        .as_string()
        .unwrap_or_else(|| "null".to_string());
    serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))
}

/// A JS value read into a Rust type; the error names the field (`record.history[0].at: ...`).
pub(crate) fn from_js<T: FromJson>(value: &JsValue) -> Result<T, String> {
    T::from_json(to_json(value)?).map_err(|e| e.to_string())
}

/// A thrown JS value as text (an `Error`'s message, else its string form).
pub(crate) fn describe(value: &JsValue) -> String {
    if let Some(e) = value.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

use wasm_bindgen::JsCast;

/// A Rust value as a plain JS value, or a thrown `Error` (encoding our own types cannot really fail).
pub(crate) fn js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    to_js(value).map_err(|e| JsValue::from(js_sys::Error::new(&e)))
}

/// `object[name]`, or `undefined` when `object` is not an object.
pub(crate) fn get(object: &JsValue, name: &str) -> JsValue {
    if !object.is_object() {
        return JsValue::UNDEFINED;
    }
    js_sys::Reflect::get(object, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// `undefined` or `null`: an option left out.
pub(crate) fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}
