//! Blocking on the shared tokio runtime from a Python thread: the GIL is released while
//! waiting, and the wait wakes every few milliseconds to run Python's signal handlers, so
//! Ctrl-C raises `KeyboardInterrupt` promptly instead of after the batch.

use std::future::Future;
use std::time::Duration;

use pyo3::prelude::*;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

/// How long one slice of waiting lasts before Python gets to look at signals.
const SLICE: Duration = Duration::from_millis(50);

pub(crate) fn runtime() -> &'static Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// Progress updates `(done, total)` and the Python callable that receives them.
pub(crate) type Progress = (mpsc::UnboundedReceiver<(usize, usize)>, Py<PyAny>);

/// Runs `fut` to completion on the shared runtime. `progress`, if given, receives the values
/// sent on `updates` on the calling thread (with the GIL) while waiting.
pub(crate) fn block_on<T, F>(py: Python<'_>, fut: F, mut updates: Option<Progress>) -> PyResult<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(crate::errors::raise(
            "INVALID_CONFIG",
            "a blocking captcha-dlq call was made from inside the client's own runtime (e.g. from a custom store \
             method); use the async API there",
            serde_json::json!({ "field": "call", "problem": "blocking call inside the runtime" }),
        ));
    }
    let rt = runtime();
    let mut handle = rt.spawn(fut);
    loop {
        let slice = py.detach(|| rt.block_on(async { tokio::time::timeout(SLICE, &mut handle).await }));
        if let Some((rx, callback)) = updates.as_mut() {
            let mut last = None;
            while let Ok(update) = rx.try_recv() {
                last = Some(update);
            }
            if let Some((done, total)) = last {
                if let Err(e) = callback.call1(py, (done, total)) {
                    handle.abort();
                    return Err(e);
                }
            }
        }
        match slice {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(join)) => return Err(crate::errors::internal(format!("the native task failed: {join}"))),
            Err(_elapsed) => {
                if let Err(e) = py.check_signals() {
                    // The jobs themselves go on in the driver (journaled); only this wait ends.
                    handle.abort();
                    return Err(e);
                }
            }
        }
    }
}
