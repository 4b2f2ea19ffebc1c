//! One submitted task as seen from JS: `wait` for its solution, `cancel` it
//! (an `AbortSignal` fired). Cancelling dead-letters the job as `Cancelled`.

use std::sync::Mutex;

use captcha_dlq::SolveHandle;
use napi_derive::napi;
use tokio::sync::oneshot;

use crate::error;

#[napi]
pub struct NativeJob {
    handle: Mutex<Option<SolveHandle>>,
    cancel_tx: Mutex<Option<oneshot::Sender<()>>>,
    cancel_rx: Mutex<Option<oneshot::Receiver<()>>>,
    key: String,
}

impl std::fmt::Debug for NativeJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NativeJob")
    }
}

impl NativeJob {
    pub(crate) fn new(handle: SolveHandle, key: String) -> Self {
        let (tx, rx) = oneshot::channel();
        NativeJob {
            handle: Mutex::new(Some(handle)),
            cancel_tx: Mutex::new(Some(tx)),
            cancel_rx: Mutex::new(Some(rx)),
            key,
        }
    }
}

#[napi]
impl NativeJob {
    /// Asks for the job to stop; harmless after it ended or when called twice.
    #[napi]
    pub fn cancel(&self) {
        if let Some(tx) = self.cancel_tx.lock().ok().and_then(|mut t| t.take()) {
            let _ = tx.send(());
        }
    }

    /// The solution as JSON; rejects with the coded failure (`SOLVE_FAILED` with the record).
    #[napi]
    pub async fn wait(&self) -> napi::Result<String> {
        let handle = self.handle.lock().ok().and_then(|mut h| h.take());
        let rx = self.cancel_rx.lock().ok().and_then(|mut r| r.take());
        let (Some(handle), Some(rx)) = (handle, rx) else {
            return Err(error::coded(
                "INVALID_CONFIG",
                "wait() was already called on this job",
                serde_json::json!({}),
                None,
            ));
        };
        // A dropped sender is not a cancellation: only an explicit `cancel` is.
        let cancelled = async move {
            if rx.await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        let solution = handle.wait_or_cancel(cancelled).await.map_err(|e| error::from_native(&e, Some(&self.key)))?;
        Ok(serde_json::to_string(&solution).unwrap_or_default())
    }
}
