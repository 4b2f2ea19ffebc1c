//! The single native exception and the translation of `captcha_dlq::Error` into it.
//!
//! Details travel as JSON so that `captcha_dlq._errors` can build the public exception
//! (with `.record`, `.field`, ...) in one place. None of these carry the API key: the
//! native errors never contain it, and records are key-free by construction.

use captcha_dlq::Error;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;
use serde_json::json;

create_exception!(_native, NativeError, PyException, "A native failure: args are (code, message, details_json).");

pub(crate) fn raise(code: &str, message: impl Into<String>, details: serde_json::Value) -> PyErr {
    NativeError::new_err((code.to_string(), message.into(), details.to_string()))
}

pub(crate) fn internal(message: impl Into<String>) -> PyErr {
    raise("INTERNAL", message, json!({}))
}

pub(crate) fn closed() -> PyErr {
    to_py(&Error::Closed)
}

pub(crate) fn details(e: &Error) -> serde_json::Value {
    match e {
        Error::SolveFailed { record, stored } => json!({ "record": record, "stored": stored }),
        Error::InvalidTask(t) => json!({ "field": t.field, "problem": t.problem }),
        Error::Config(c) => json!({ "field": c.field, "problem": c.problem }),
        Error::Store(s) => json!({ "problem": s.to_string() }),
        Error::Provider(f) => json!({ "reason": f.code, "class": f.class.as_str(), "problem": f.description }),
        Error::Closed | Error::Io(_) => json!({}),
    }
}

/// The stable code Python sees: the native code, with network failures of direct calls apart.
pub(crate) fn code_of(e: &Error) -> &'static str {
    match e {
        Error::Provider(f) if f.code == captcha_dlq_core::class::reason::NETWORK => "TRANSPORT_ERROR",
        _ => e.code(),
    }
}

pub(crate) fn to_py(e: &Error) -> PyErr {
    raise(code_of(e), e.to_string(), details(e))
}

/// A config problem found on this side of the boundary (bad JSON shape, unknown field).
pub(crate) fn config(field: impl Into<String>, problem: impl Into<String>) -> PyErr {
    to_py(&Error::Config(captcha_dlq_core::ConfigError::new(field, problem)))
}
