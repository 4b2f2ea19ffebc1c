//! `captcha_dlq._native`: the Rust extension behind the `captcha_dlq` Python package.
//!
//! It exchanges JSON text with the pure-Python layer (which owns the public API, the task
//! classes and the exception hierarchy), so that every type check and field name comes from
//! the same serde code as the Rust, Node and wasm front ends. Native failures are raised as
//! one exception, `NativeError(code, message, details_json)`, which `captcha_dlq._errors`
//! turns into the public hierarchy.

mod client;
mod dlq_ops;
mod errors;
mod events;
mod pystore;
mod wait;

use pyo3::prelude::*;

/// Runs one case of `tests/vectors/*.json` and returns its outcome as JSON, or raises `ValueError`.
#[pyfunction]
fn evaluate_vector(case_json: &str) -> PyResult<String> {
    let case: serde_json::Value = serde_json::from_str(case_json)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("a vector case must be JSON: {e}")))?;
    let out = captcha_dlq_core::vectors::evaluate(&case).map_err(pyo3::exceptions::PyValueError::new_err)?;
    Ok(out.to_string())
}

/// Parses and validates a task (JSON text) and returns its canonical JSON, or raises `NativeError`.
#[pyfunction]
fn normalize_task(task_json: &str) -> PyResult<String> {
    let task = captcha_dlq::Task::from_json_str(task_json).map_err(|e| errors::to_py(&captcha_dlq::Error::from(e)))?;
    serde_json::to_string(&task).map_err(|e| errors::internal(format!("task serialization failed: {e}")))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NativeError", m.py().get_type::<errors::NativeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(evaluate_vector, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_task, m)?)?;
    m.add_class::<client::NativeClient>()?;
    Ok(())
}
