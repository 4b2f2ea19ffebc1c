//! One submitted task as JavaScript holds it: `id`, `wait()` for its solution,
//! `cancel()` (an `AbortSignal` fired). What cancelling means — dead-lettered as
//! `Cancelled` if not sent yet, running on for `recover` if the provider has it —
//! is the client's ([`captcha_dlq::SolveHandle`]).

use std::sync::Mutex;

use captcha_dlq::{api_values, Outcome, Receipt, SolveHandle};
use captcha_dlq_core::support::json_read::Casing;
use napi::bindgen_prelude::PromiseRaw;
use napi::Env;
use napi_derive::napi;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::error;

#[napi]
pub struct NativeJob {
    id: String,
    handle: Mutex<Option<SolveHandle>>,
    cancel_tx: Mutex<Option<oneshot::Sender<()>>>,
    cancel_rx: Mutex<Option<oneshot::Receiver<()>>>,
}

impl std::fmt::Debug for NativeJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeJob").field("id", &self.id).finish()
    }
}

impl NativeJob {
    pub fn new(handle: SolveHandle) -> Self {
        let (tx, rx) = oneshot::channel();
        NativeJob {
            id: handle.id().to_string(),
            handle: Mutex::new(Some(handle)),
            cancel_tx: Mutex::new(Some(tx)),
            cancel_rx: Mutex::new(Some(rx)),
        }
    }
}

#[napi]
impl NativeJob {
    /// The task's record id (its journal entry, and its DLQ record if it fails).
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// Cancels the task; harmless once it ended or when called twice.
    #[napi]
    pub fn cancel(&self) {
        if let Some(tx) = self.cancel_tx.lock().ok().and_then(|mut t| t.take()) {
            let _ = tx.send(());
        }
    }

    /// The solution (`{text, fields, providerTaskId}`), or the task's error. Its journal entry
    /// goes (the receipt is acknowledged) once the solution has become a JS value.
    #[napi(ts_return_type = "Promise<any>")]
    pub fn wait<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Value>> {
        let handle = self.handle.lock().ok().and_then(|mut h| h.take());
        let cancel = self.cancel_rx.lock().ok().and_then(|mut r| r.take());
        let work = async move {
            let (Some(handle), Some(cancel)) = (handle, cancel) else {
                return Err(
                    json!({"code": "INVALID_CONFIG", "field": "wait", "message": "wait() was already called on this job"}),
                );
            };
            // A dropped sender (the job object collected) is not a cancellation: only `cancel` is.
            let cancelled = async move {
                if cancel.await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            match handle.outcome_or_cancel(cancelled).await.and_then(Outcome::into_delivery) {
                Ok(delivery) => Ok((api_values::solution(&delivery.solution, Casing::Camel), delivery.receipt)),
                Err(e) => Err(error::payload(&e)),
            }
        };
        error::settle(env, work, |_, (solution, receipt): (Value, Receipt)| {
            receipt.ack();
            Ok(solution)
        })
    }
}
