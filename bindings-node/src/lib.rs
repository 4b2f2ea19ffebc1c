//! The Node.js addon behind the `captcha-dlq` npm package (napi-rs).
//!
//! It exposes the native client (`openClient` → `NativeClient`, `NativeJob`)
//! and a few pure helpers (task validation, the shared wire vectors, filter
//! matching for JS stores). The JS layer in `lib/` turns its JSON values and
//! coded errors into the package's public API; see `index.d.ts`.

// Under `cfg(test)` (clippy --all-targets) napi registers nothing, so exports look unused.
#![cfg_attr(test, allow(dead_code))]

mod client;
mod dlq;
mod error;
mod job;
mod js_store;
mod options;

use captcha_dlq_core::dlq::{DeadLetterRecord, RecordState};
use captcha_dlq_core::Task;
use napi_derive::napi;

/// Runs one case of `tests/vectors/*.json` (without its `expected`); the actual output as JSON.
#[napi]
pub fn evaluate_vector(case_json: String) -> napi::Result<String> {
    let case: serde_json::Value =
        serde_json::from_str(&case_json).map_err(|e| error::config("case", format!("not valid JSON: {e}")))?;
    let actual = captcha_dlq_core::vectors::evaluate(&case).map_err(|e| error::config("case", e))?;
    Ok(actual.to_string())
}

/// Validates a task (camelCase or snake_case fields); its canonical JSON.
#[napi]
pub fn parse_task(task_json: String) -> napi::Result<String> {
    let task = Task::from_json_str(&task_json).map_err(|e| error::invalid_task(&e))?;
    serde_json::to_string(&task).map_err(|e| error::config("task", e.to_string()))
}

/// Whether `record`, in `state`, is selected by `filter`: the rule every store applies.
#[napi]
pub fn filter_matches(filter_json: String, record_json: String, state: String) -> napi::Result<bool> {
    let filter = client::filter(Some(filter_json))?;
    let record: DeadLetterRecord = options::typed(
        "record",
        serde_json::from_str::<serde_json::Value>(&record_json)
            .map_err(|e| error::config("record", format!("not valid JSON: {e}")))?,
    )?;
    let state: RecordState = options::typed("state", serde_json::Value::String(state))?;
    Ok(filter.matches(&record, state))
}
