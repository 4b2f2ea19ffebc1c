//! A task object's core task: read and checked once, when the Python object is built, and
//! handed to `solve` as it is, so solving it neither reads nor checks it again.

use captcha_dlq::api_values;
use captcha_dlq::core::ValidTask;
use pyo3::prelude::*;

use crate::errors::{parse, to_py};

/// The checked core task a Python task object holds (`NativeError` `INVALID_TASK` naming
/// the field when it is not valid).
#[pyclass(frozen, module = "captcha_dlq._native")]
#[derive(Debug)]
pub struct NativeTask {
    task: ValidTask,
}

#[pymethods]
impl NativeTask {
    #[new]
    fn new(task_json: &str) -> PyResult<Self> {
        let task = api_values::task(parse(task_json, "task")?).map_err(|e| to_py(&e))?;
        Ok(NativeTask { task })
    }
}

impl NativeTask {
    pub(crate) fn task(&self) -> &ValidTask {
        &self.task
    }
}

/// The task of a call: a `NativeTask` (a task object's, already checked) as it is, or a
/// task's JSON text (a dict), read and checked here.
pub(crate) fn task_of(task: &Bound<'_, PyAny>) -> PyResult<ValidTask> {
    if let Ok(held) = task.cast::<NativeTask>() {
        return Ok(held.get().task().clone());
    }
    let text: String = task.extract()?;
    api_values::task(parse(&text, "task")?).map_err(|e| to_py(&e))
}
