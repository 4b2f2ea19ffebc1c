//! The shared wire vectors (`tests/vectors/*.json`) evaluated by this build of
//! the core, so the browser build is checked case by case (test builds only).

use wasm_bindgen::prelude::*;

use crate::convert::{from_js, to_js};

/// Runs one vector case; its output in the shape of `expected`.
#[wasm_bindgen(js_name = evaluateVector)]
pub fn evaluate_vector(case: JsValue) -> Result<JsValue, JsValue> {
    let fail = |e: String| JsValue::from(js_sys::Error::new(&e));
    let case = from_js(case).map_err(fail)?;
    let out = captcha_dlq_client::core::vectors::evaluate(&case).map_err(fail)?;
    to_js(&out).map_err(fail)
}
