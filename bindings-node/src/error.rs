//! Errors as JavaScript receives them: an `Error` object whose own properties are
//! those of `api_values::error` (`code`, `message`, `field`, `record`, `stored`, `runsOn`),
//! so the package's `lib/errors.js` only has to pick the class for `code`.
//!
//! Work that may fail runs as a future resolving to `Result<T, Value>` (the error
//! already a host value); [`settle`] turns it into a promise whose rejection is
//! built on the JS thread, where objects can be made.

use core::future::Future;

use captcha_dlq::api_values;
use captcha_dlq_core::support::json_read::Casing;
use napi::bindgen_prelude::{JsObjectValue, JsValue, PromiseRaw, ToNapiValue};
use napi::Env;
use serde_json::Value;

/// An error of the client API as a host value (camelCase, as JavaScript spells it).
pub fn payload(e: &captcha_dlq::Error) -> Value {
    api_values::error(e, Casing::Camel)
}

/// The JS `Error` for a payload, as a napi error that throws (or rejects with) that object.
pub fn to_js(env: &Env, payload: Value) -> napi::Error {
    let message = payload.get("message").and_then(Value::as_str).unwrap_or("captcha-dlq error").to_string();
    build(env, &message, payload).unwrap_or_else(|e| e)
}

fn build(env: &Env, message: &str, payload: Value) -> napi::Result<napi::Error> {
    let mut error = env.create_error(napi::Error::from_reason(message))?;
    if let Value::Object(fields) = payload {
        for (name, value) in fields {
            if name != "message" {
                error.set_named_property(&name, value)?;
            }
        }
    }
    Ok(napi::Error::from(error.to_unknown()))
}

/// A promise for `work`: resolved with `convert(answer)` on the JS thread, or rejected
/// with the JS error of its payload.
pub fn settle<'env, T, V, F, C>(env: &'env Env, work: F, convert: C) -> napi::Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: ToNapiValue,
    F: Future<Output = Result<T, Value>> + Send + 'static,
    C: FnOnce(&Env, T) -> napi::Result<V> + 'static,
{
    env.spawn_future_with_callback(async move { Ok(work.await) }, move |env, answer| match answer {
        Ok(value) => convert(env, value),
        Err(payload) => Err(to_js(env, payload)),
    })
}

/// [`settle`] for work whose answer goes to JS as it is.
pub fn promise<'env, T, F>(env: &'env Env, work: F) -> napi::Result<PromiseRaw<'env, T>>
where
    T: Send + ToNapiValue + 'static,
    F: Future<Output = Result<T, Value>> + Send + 'static,
{
    settle(env, work, |_, value| Ok(value))
}

/// A client error thrown synchronously.
pub fn throw(env: &Env, e: &captcha_dlq::Error) -> napi::Error {
    to_js(env, payload(e))
}
