//! Values across the wasm↔JS boundary (no JSON text): JS values become
//! `serde_json::Value` for the client's host readers (read here, see [`from_js`]),
//! and their answers become plain JS objects through serde-wasm-bindgen (maps as
//! objects, `null` as `null`), exactly as the Node addon hands them over.

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

/// How deep `from_js` follows nested arrays and objects: deeper is refused (an object that holds
/// itself would otherwise recurse until the stack ran out).
const MAX_DEPTH: usize = 128;

/// A JS value as JSON; `undefined` becomes `null`. Fails on what JSON cannot hold (a
/// function, a symbol, a BigInt out of range), saying what it was.
///
/// Read the way serde-wasm-bindgen's `from_value` reads a `serde_json::Value` (numbers that are
/// safe integers as integers, other numbers as floats and non-finite ones as `null`, a `Map` with
/// string keys as an object, iterables other than arrays and maps refused), without it: its
/// deserializer, monomorphised for `Value`, and serde's error formatting (which formats floats
/// with `f64`'s `Display`, a second float formatter) cost the `.wasm` more than this
/// (bench/README.md).
pub fn from_js(value: JsValue) -> Result<Value, String> {
    read_js(&value, 0)
}

fn read_js(value: &JsValue, depth: usize) -> Result<Value, String> {
    if value.is_undefined() || value.is_null() {
        return Ok(Value::Null);
    }
    if let Some(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(n) = value.as_f64() {
        return Ok(if js_sys::Number::is_safe_integer(value) {
            Value::from(n as i64)
        } else {
            serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
        });
    }
    if let Some(s) = value.as_string() {
        return Ok(Value::String(s));
    }
    if value.is_bigint() {
        return match i64::try_from(value.clone()) {
            Ok(n) => Ok(Value::from(n)),
            Err(value) => u64::try_from(value).map(Value::from).map_err(|_| {
                "Couldn't deserialize i64 or u64 from a BigInt outside i64::MIN..u64::MAX bounds".to_string()
            }),
        };
    }
    if depth >= MAX_DEPTH {
        return Err(format!("nested more than {MAX_DEPTH} levels deep (an object that holds itself?)"));
    }
    if let Some(array) = value.dyn_ref::<js_sys::Array>() {
        return array.iter().map(|item| read_js(&item, depth + 1)).collect::<Result<_, _>>().map(Value::Array);
    }
    if value.is_instance_of::<js_sys::Uint8Array>() || value.is_instance_of::<js_sys::ArrayBuffer>() {
        return Err("invalid type: byte array, expected any valid JSON value".into());
    }
    let entries = if value.is_instance_of::<js_sys::Map>() {
        Some(js_sys::Array::from(value))
    } else if value.is_object() && !js_sys::Symbol::iterator().js_in(value) {
        Some(js_sys::Object::entries(value.unchecked_ref()))
    } else {
        None
    };
    let Some(entries) = entries else {
        return Err(format!("invalid type: {value:?}, expected any valid JSON value"));
    };
    let mut object = serde_json::Map::new();
    for entry in entries.iter() {
        let entry: js_sys::Array = entry.unchecked_into();
        let key = entry.get(0);
        let Some(key) = key.as_string() else {
            return Err(format!("invalid type: {key:?}, expected a string"));
        };
        object.insert(key, read_js(&entry.get(1), depth + 1)?);
    }
    Ok(Value::Object(object))
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
