//! `captcha_dlq._native`: the Rust extension behind the `captcha_dlq` Python package, a
//! thin translation of the shared client (`captcha-dlq-client`, started natively by
//! `captcha_dlq::connect`).
//!
//! Values cross as JSON text in snake_case, read and written by the client's `host`
//! module, so every option, task, filter and result is checked by the same code as in
//! the Rust, Node and browser front ends. Failures are raised as one exception,
//! `NativeError(code, message, details_json)`, which `captcha_dlq._errors` maps.

mod client;
mod errors;
mod handover;
mod logging;
mod pystore;
mod streams;
mod task;
mod wait;

use captcha_dlq::core::dlq::{Page, ReplayPolicy};
use captcha_dlq::core::engine::EngineConfig;
use captcha_dlq::core::support::json_read::Casing;
use captcha_dlq::options::{self, StoreCallOptions, DEFAULT_CONCURRENCY, DEFAULT_PROVIDER, DEFAULT_REPLAY_LIMIT};
use captcha_dlq::{api_values, Error};
use pyo3::prelude::*;
use serde_json::json;

/// Runs one case of `tests/vectors/*.json` and returns its outcome as JSON, or raises `ValueError`.
#[pyfunction]
fn evaluate_vector(case_json: &str) -> PyResult<String> {
    let case: serde_json::Value = serde_json::from_str(case_json)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("a vector case must be JSON: {e}")))?;
    let out = captcha_dlq::core::vectors::evaluate(&case).map_err(pyo3::exceptions::PyValueError::new_err)?;
    Ok(out.to_string())
}

/// Reads and validates a task (JSON text) with the core's rules; its canonical JSON, or
/// `NativeError` `INVALID_TASK` naming the field.
#[pyfunction]
fn check_task(task_json: &str) -> PyResult<String> {
    let task = api_values::task(errors::parse(task_json, "task")?).map_err(|e| errors::to_py(&e))?;
    Ok(api_values::value(&task, Casing::Snake).to_string())
}

/// Every default the client applies for `provider` (the default provider if `None`), as
/// JSON: the engine sections (the provider's documented schedule and rate), the replay
/// policy, the store call options and the call defaults.
#[pyfunction]
#[pyo3(signature = (provider=None))]
fn defaults(provider: Option<&str>) -> PyResult<String> {
    let provider =
        options::provider(provider.unwrap_or(DEFAULT_PROVIDER)).map_err(|e| errors::to_py(&Error::Config(e)))?;
    let engine = EngineConfig::for_provider(&provider);
    let out = json!({
        "provider": provider.name(),
        "base_url": provider.base_url(),
        "dlq": captcha_dlq::DEFAULT_DLQ,
        "retry": api_values::value(&engine.retry, Casing::Snake),
        "polling": api_values::value(&engine.polling, Casing::Snake),
        "rate": api_values::value(&engine.rate, Casing::Snake),
        "circuit": api_values::value(&engine.circuit, Casing::Snake),
        "seed": engine.seed,
        "replay_policy": api_values::value(&ReplayPolicy::default(), Casing::Snake),
        "store": api_values::value(&StoreCallOptions::default(), Casing::Snake),
        "concurrency": DEFAULT_CONCURRENCY,
        "replay_limit": DEFAULT_REPLAY_LIMIT,
        "page": api_values::value(&Page::default(), Casing::Snake),
    });
    Ok(out.to_string())
}

/// Checks a webhook request's `X-Captcha-Dlq-Signature` against its body, in Rust
/// (`captcha_dlq::verify_webhook`): `True`, or `ValueError` saying why (malformed header,
/// time beyond `tolerance_s` seconds, signature not matching, empty secret).
#[pyfunction]
#[pyo3(signature = (body, header, secret, tolerance_s=300))]
fn verify_webhook(body: &[u8], header: &str, secret: &str, tolerance_s: u64) -> PyResult<bool> {
    captcha_dlq::verify_webhook(body, header, secret, std::time::Duration::from_secs(tolerance_s))
        .map(|()| true)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

/// Where the client's log lines go: `emit(batch)` with `[(level, event, message), …]`.
#[pyfunction]
fn set_log_sink(emit: Py<PyAny>) -> PyResult<()> {
    logging::set_sink(emit).map_err(|e| errors::internal(format!("could not start the log thread: {e}")))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    logging::install();
    m.add("NativeError", m.py().get_type::<errors::NativeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The page detector's script (the one copy, in its own crate), for captcha_dlq.page to evaluate in pages.
    m.add("PAGE_DETECTOR_SOURCE", captcha_dlq_page_detector::SOURCE)?;
    m.add_function(wrap_pyfunction!(evaluate_vector, m)?)?;
    m.add_function(wrap_pyfunction!(check_task, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(set_log_sink, m)?)?;
    m.add_function(wrap_pyfunction!(verify_webhook, m)?)?;
    m.add_class::<client::NativeClient>()?;
    m.add_class::<client::NativeDashboard>()?;
    m.add_class::<handover::NativeItem>()?;
    m.add_class::<task::NativeTask>()?;
    m.add_class::<streams::NativeSolveStream>()?;
    m.add_class::<streams::NativeReplayStream>()?;
    m.add_class::<streams::NativeRecoverStream>()?;
    Ok(())
}
