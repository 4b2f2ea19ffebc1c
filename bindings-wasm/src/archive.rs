//! The browser's retention archive: a browser has no file to append evicted records to, so
//! `dlqRetention.archive` is a JS function, `archive(jsonl, count)`, handed each batch before the
//! store lets it go (docs/decisions/0071-browser-package-features.md). The text is what the
//! client writes to a native archive file — the records redacted by the core's one rule, as JSONL
//! — so a caller may keep it, upload it or offer it as a download (`Blob`). A function that throws
//! or rejects removes nothing, as a file that cannot be written does; the client counts, logs and
//! audits what was evicted (`captcha_dlq_client::retention`).

use captcha_dlq_client::retention::Archive;
use captcha_dlq_client::BoxFuture;
use js_sys::{Function, Promise};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::convert::{absent, describe};
use crate::error::config;

/// The caller's `dlqRetention.archive` function.
#[derive(Debug)]
pub struct CallbackArchive {
    callback: Function,
}

impl CallbackArchive {
    /// The archive `value` names: none when it is absent, else it must be a function.
    pub fn from_js(value: JsValue) -> Result<Option<CallbackArchive>, JsValue> {
        if absent(&value) {
            return Ok(None);
        }
        let callback =
            value.dyn_into::<Function>().map_err(|_| config("dlqRetention.archive", "expected a function"))?;
        Ok(Some(CallbackArchive { callback }))
    }
}

impl Archive for CallbackArchive {
    fn name(&self) -> String {
        "the archive callback".to_string()
    }

    fn keep(&self, text: String, count: usize) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            // `count` is at most a batch (1,000): exact as a JS number.
            #[allow(clippy::cast_precision_loss)]
            let count = JsValue::from_f64(count as f64);
            let returned =
                self.callback.call2(&JsValue::NULL, &JsValue::from_str(&text), &count).map_err(|e| describe(&e))?;
            // A plain value or a promise (thenable): the records are kept once it settles.
            JsFuture::from(Promise::resolve(&returned)).await.map(drop).map_err(|e| describe(&e))
        })
    }
}
