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

/// Runs one case of `tests/vectors/*.json` (without its `expected`); its actual output.
#[napi(ts_return_type = "any")]
pub fn evaluate_vector(env: &napi::Env, case: Value) -> napi::Result<Value> {
    captcha_dlq_core::vectors::evaluate(&case).map_err(|problem| {
        error::to_js(env, serde_json::json!({"code": "INVALID_CONFIG", "field": "case", "message": problem}))
    })
}
