//! Handing an answer to Python: its journal entry goes only once Python holds it.
//!
//! The client keeps each answer in the journal until its `Receipt` is acknowledged. An
//! asyncio awaitable can be cancelled after the Rust side resolved it, and its value is
//! then dropped unseen; so answers cross as a [`NativeItem`] whose receipt is acknowledged
//! by `take()`, which the Python layer calls once the value is in its hands. A dropped
//! item leaves the answer in the journal for `recover()`.

use std::sync::Mutex;

use captcha_dlq::Receipt;
use pyo3::prelude::*;

#[pyclass(module = "captcha_dlq._native", frozen)]
pub(crate) struct NativeItem {
    json: String,
    receipt: Mutex<Option<Receipt>>,
}

impl NativeItem {
    pub(crate) fn new(json: String, receipt: Option<Receipt>) -> Self {
        NativeItem { json, receipt: Mutex::new(receipt) }
    }
}

/// The value's JSON, acknowledging its answer (if it holds one) as handed over.
pub(crate) fn hand_over(json: String, receipt: Option<Receipt>) -> String {
    if let Some(receipt) = receipt {
        receipt.ack();
    }
    json
}

#[pymethods]
impl NativeItem {
    /// The value as JSON text; the answer it holds counts as handed over from now on.
    fn take(&self) -> String {
        let receipt = self.receipt.lock().ok().and_then(|mut r| r.take());
        hand_over(self.json.clone(), receipt)
    }

    fn __repr__(&self) -> String {
        "NativeItem(...)".to_string()
    }
}
