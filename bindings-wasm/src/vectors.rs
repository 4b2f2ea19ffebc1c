//! The shared wire vectors (`tests/vectors/*.json`) evaluated by this build of
//! the core, so JS tests can check the browser build byte for byte.

use wasm_bindgen::prelude::*;

use crate::convert::{to_js, to_json};

/// Runs one vector case; resolves to its output in the shape of `expected`.
#[wasm_bindgen(js_name = evaluateVector)]
pub fn evaluate_vector(case: JsValue) -> Result<JsValue, JsValue> {
    let json = to_json(&case).map_err(|e| JsValue::from(js_sys::Error::new(&e)))?;
    let out = captcha_dlq_core::vectors::evaluate(&json).map_err(|e| JsValue::from(js_sys::Error::new(&e)))?;
    to_js(&out).map_err(|e| JsValue::from(js_sys::Error::new(&e)))
}
