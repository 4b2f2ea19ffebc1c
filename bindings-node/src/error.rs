//! Turns every Rust error into one JS-facing shape: a napi error whose message is a JSON
//! payload (`code`, `message`, and `field` / `record` / `class` when they apply). The
//! package's `lib/errors.js` is the one place that maps it onto the JS error classes.

use captcha_dlq::Error;
use captcha_dlq_core::dlq::StoreError;
use captcha_dlq_core::{ConfigError, InvalidTask};
use serde_json::{json, Value};

/// Marks a message as a coded payload, so the JS side never mistakes a foreign error for one.
pub const PREFIX: &str = "captcha-dlq:";

/// A coded error for JS. `redact` is the API key, removed from every text that leaves.
pub fn coded(code: &str, message: &str, extra: Value, redact: Option<&str>) -> napi::Error {
    let payload = payload(code, message, extra, redact);
    napi::Error::new(napi::Status::GenericFailure, format!("{PREFIX}{payload}"))
}

/// The JSON object describing an error (also used inside `solveMany` results).
pub fn payload(code: &str, message: &str, extra: Value, redact: Option<&str>) -> Value {
    let mut payload = json!({ "code": code, "message": scrub(message, redact) });
    if let (Value::Object(p), Value::Object(e)) = (&mut payload, extra) {
        for (k, v) in e {
            let v = match v {
                Value::String(s) => Value::String(scrub(&s, redact)),
                other => other,
            };
            p.insert(k, v);
        }
    }
    payload
}

fn scrub(text: &str, key: Option<&str>) -> String {
    match key {
        Some(k) if k.len() >= 4 && text.contains(k) => text.replace(k, "***"),
        _ => text.to_string(),
    }
}

/// The error for JS of an error from the native API.
pub fn from_native(e: &Error, redact: Option<&str>) -> napi::Error {
    let p = native_payload(e, redact);
    napi::Error::new(napi::Status::GenericFailure, format!("{PREFIX}{p}"))
}

/// The payload of an error from the native API.
pub fn native_payload(e: &Error, redact: Option<&str>) -> Value {
    let message = e.to_string();
    let extra = match e {
        Error::SolveFailed { record, stored } => {
            json!({ "record": serde_json::to_value(record).unwrap_or(Value::Null), "stored": stored, "reason": record.reason, "class": record.class.as_str() })
        }
        Error::InvalidTask(t) => json!({ "field": t.field, "problem": t.problem }),
        Error::Config(c) => json!({ "field": c.field, "problem": c.problem }),
        Error::Store(s) => store_extra(s),
        Error::Provider(f) => json!({ "reason": f.code, "class": f.class.as_str() }),
        Error::Closed | Error::Io(_) => json!({}),
    };
    payload(e.code(), &message, extra, redact)
}

fn store_extra(e: &StoreError) -> Value {
    let kind = match e {
        StoreError::LeaseLost { .. } => "lease_lost",
        StoreError::NotFound { .. } => "not_found",
        StoreError::Corrupt { .. } => "corrupt",
        StoreError::NewerSchema { .. } => "newer_schema",
        StoreError::Decode(_) => "decode",
        StoreError::Backend(_) => "backend",
    };
    json!({ "kind": kind })
}

pub fn invalid_task(e: &InvalidTask) -> napi::Error {
    from_native(&Error::InvalidTask(e.clone()), None)
}

pub fn config(field: &str, problem: impl Into<String>) -> napi::Error {
    from_native(&Error::Config(ConfigError::new(field, problem)), None)
}

pub fn store(e: StoreError, redact: Option<&str>) -> napi::Error {
    from_native(&Error::Store(e), redact)
}

pub fn io(message: impl Into<String>) -> napi::Error {
    from_native(&Error::Io(message.into()), None)
}
