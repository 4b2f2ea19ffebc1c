//! Waiting on the shared tokio runtime from a Python thread: the GIL is released while
//! waiting, and the wait wakes every few milliseconds to run Python's signal handlers, so
//! Ctrl-C raises `KeyboardInterrupt` promptly. The work is then aborted between two of its
//! polls; what it had finished by then is handed back, not dropped.

use std::future::Future;
use std::time::Duration;

use pyo3::prelude::*;
use tokio::runtime::Runtime;

/// How long one slice of waiting lasts before Python gets to look at signals.
const SLICE: Duration = Duration::from_millis(50);

pub(crate) fn runtime() -> &'static Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// How a wait ended.
pub(crate) enum Waited<T> {
    Done(T),
    /// A signal handler raised (Ctrl-C); the work had finished after all if `Some`.
    Interrupted(PyErr, Option<T>),
}

/// Runs `fut` to completion on the shared runtime, or until a signal handler raises.
pub(crate) fn wait<T, F>(py: Python<'_>, fut: F) -> PyResult<Waited<T>>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(crate::errors::config(
            "call",
            "a blocking captcha-dlq call was made on the client's own runtime (from a custom store method?); \
             store methods must not call the client",
        ));
    }
    let rt = runtime();
    let mut handle = rt.spawn(fut);
    loop {
        let slice = py.detach(|| rt.block_on(async { tokio::time::timeout(SLICE, &mut handle).await }));
        match slice {
            Ok(Ok(value)) => return Ok(Waited::Done(value)),
            Ok(Err(join)) => return Err(crate::errors::internal(format!("the native task failed: {join}"))),
            Err(_elapsed) => {
                if let Err(e) = py.check_signals() {
                    handle.abort();
                    // Aborted between two polls: either it had finished (its value is here)
                    // or it stopped where nothing is lost.
                    let finished = py.detach(|| rt.block_on(handle)).ok();
                    return Ok(Waited::Interrupted(e, finished));
                }
            }
        }
    }
}

/// [`wait`], raising the interrupt (whatever had finished is dropped, so an answer's
/// receipt goes unacknowledged and the answer stays in the journal).
pub(crate) fn block_on<T, F>(py: Python<'_>, fut: F) -> PyResult<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    match wait(py, fut)? {
        Waited::Done(value) => Ok(value),
        Waited::Interrupted(e, _) => Err(e),
    }
}
