//! The one native exception, and `captcha_dlq::Error` turned into it.
//!
//! `NativeError(code, message, details_json)`: the code is the client's stable code, the
//! details are `client::api_values::error` in snake_case (`field`, `record`, `stored`,
//! `runs_on`, `id`). `captcha_dlq._errors` builds the public exception from them, in one
//! place. Nothing here holds the API key: the client's errors and records never do.

use captcha_dlq::core::support::json_read::Casing;
use captcha_dlq::core::ConfigError;
use captcha_dlq::{api_values, Error};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;
use serde_json::Value;

create_exception!(_native, NativeError, PyException, "A native failure: args are (code, message, details_json).");

pub(crate) fn to_py(e: &Error) -> PyErr {
    NativeError::new_err((e.code(), e.to_string(), api_values::error(e, Casing::Snake).to_string()))
}

pub(crate) fn config(field: impl Into<String>, problem: impl Into<String>) -> PyErr {
    to_py(&Error::Config(ConfigError::new(field, problem)))
}

/// A failure of the binding itself (a panicked task): no stable code fits, so it says so.
pub(crate) fn internal(message: impl Into<String>) -> PyErr {
    let message = message.into();
    NativeError::new_err(("INTERNAL", message.clone(), serde_json::json!({ "message": message }).to_string()))
}

/// JSON text from the Python layer (always `json.dumps` output) as a value; `what` names
/// the argument if it is not.
pub(crate) fn parse(text: &str, what: &str) -> Result<Value, PyErr> {
    serde_json::from_str(text).map_err(|e| config(what, format!("not JSON: {e}")))
}
