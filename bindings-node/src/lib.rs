//! The Node.js addon behind the `captcha-dlq` npm package (napi-rs).
//!
//! It exports the native surface of `docs/bindings.md` — `open`, then
//! `NativeClient`, `NativeJob` and the three streams — over the one
//! orchestration (`captcha_dlq::connect` and `captcha_dlq_client::api_values`), the
//! same surface the browser package's wasm exports, so one JS wrapper
//! (`lib/`) serves both packages. Values cross as JS objects; errors as `Error`
//! objects carrying `code`, `field`, `record`… (see [`error`]). Node-only
//! extras: writing/reading export files, the shared wire vectors and the fleet
//! ledger suite over a JS store (test hooks).

// Under `cfg(test)` (clippy --all-targets) napi registers nothing, so exports look unused.
#![cfg_attr(test, allow(dead_code))]

mod client;
mod error;
mod job;
mod ledger_suite;
mod store;
mod streams;

use napi_derive::napi;
use serde_json::Value;

/// Runs one case of `tests/vectors/*.json` (without its `expected`); its actual output. (Not named `case`: napi
/// writes the parameter into the generated declarations, where `case` is a reserved word.)
#[napi(ts_return_type = "any")]
pub fn evaluate_vector(env: &napi::Env, vector_case: Value) -> napi::Result<Value> {
    captcha_dlq_core::vectors::evaluate(&vector_case).map_err(|problem| {
        error::to_js(env, serde_json::json!({"code": "INVALID_CONFIG", "field": "case", "message": problem}))
    })
}

/// Checks a webhook request's `X-Captcha-Dlq-Signature` against its body with the Rust check
/// (`captcha_dlq::verify_webhook`): `true`, or an `Error` with `code` `WEBHOOK_SIGNATURE`
/// saying why. `index.js`'s `verifyWebhook` passes strings and `Uint8Array`s as a `Buffer`.
#[napi]
pub fn verify_webhook(
    env: &napi::Env,
    body: napi::bindgen_prelude::Buffer,
    header: String,
    secret: String,
    tolerance_s: Option<u32>,
) -> napi::Result<bool> {
    let tolerance =
        tolerance_s.map_or(captcha_dlq::DEFAULT_WEBHOOK_TOLERANCE, |s| std::time::Duration::from_secs(u64::from(s)));
    captcha_dlq::verify_webhook(&body, &header, &secret, tolerance)
        .map(|()| true)
        .map_err(|e| error::to_js(env, serde_json::json!({"code": "WEBHOOK_SIGNATURE", "message": e.to_string()})))
}
