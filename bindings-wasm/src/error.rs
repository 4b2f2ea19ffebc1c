//! The one mapping of the client's errors to JS: an `Error` whose message and
//! properties (`code`, `field`, `record`, `stored`, `id`, `runsOn`) are those
//! `captcha_dlq_client::api_values::error` gives every binding. The JS wrapper turns
//! the `code` into the matching error class.

use captcha_dlq_client::core::support::json_read::Casing;
use captcha_dlq_client::core::ConfigError;
use captcha_dlq_client::{api_values, Error};
use serde_json::Value;
use wasm_bindgen::JsValue;

use crate::convert::json_to_js;

/// The JS value to reject or throw with.
pub fn to_js_error(e: &Error) -> JsValue {
    let value = api_values::error(e, Casing::Camel);
    let message = value.get("message").and_then(Value::as_str).unwrap_or_default();
    let error = js_sys::Error::new(message);
    if let Value::Object(fields) = &value {
        for (name, field) in fields.iter().filter(|(name, _)| *name != "message") {
            // Setting a property of a fresh Error cannot fail.
            let _ = js_sys::Reflect::set(&error, &JsValue::from_str(name), &json_to_js(field));
        }
    }
    error.into()
}

/// A configuration error (a bad argument of a native call) as a JS error.
pub fn config(field: &str, problem: impl Into<String>) -> JsValue {
    to_js_error(&Error::Config(ConfigError::new(field, problem)))
}

/// Turns the client's results into JS rejections.
pub trait IntoJs<T> {
    fn js(self) -> Result<T, JsValue>;
}

impl<T> IntoJs<T> for Result<T, Error> {
    fn js(self) -> Result<T, JsValue> {
        self.map_err(|e| to_js_error(&e))
    }
}
