//! A dead-letter store implemented in JS (the package's IndexedDB and memory
//! stores in `js/stores.js`) behind the [`DlqStore`] trait. The object has one
//! method per trait method, camelCased (`push`, `receive`, `complete`, `abandon`, `park`,
//! `unpark`, `peek`, `count`, `purge`, `stats`, `journalUpsert`,
//! `journalForget`, `journalEntries`); each may return a value or a promise.
//!
//! Values cross in their serde JSON shape (the schema-1 record, RFC 3339
//! times); `now` is an RFC 3339 string and a lease a number of milliseconds.
//! A method that throws an error with `code: "LEASE_LOST"` reports a stale
//! token; anything else thrown is a backend error.

use core::time::Duration;

use captcha_dlq_core::dlq::{
    DeadLetterRecord, DlqStore, Filter, LeaseToken, Leased, Page, PushOutcome, RecordState, StoreError, StoreStats,
};
use captcha_dlq_core::json_read::FromJson;
use captcha_dlq_core::{JournalEntry, Timestamp};
use js_sys::{Array, Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::convert::{describe, from_js, to_js};
use crate::dlq::{Leased as LeasedReply, PushReply};

/// A store delegating to a JS object.
#[derive(Debug)]
pub struct JsStore {
    object: JsValue,
    /// Names the store in errors: `indexeddb:NAME` or `memory`.
    label: String,
}

impl JsStore {
    /// One of the package's own stores.
    pub(super) fn builtin(object: JsValue, label: String) -> JsStore {
        JsStore { object, label }
    }

    async fn call(&self, name: &str, args: &[JsValue]) -> Result<JsValue, StoreError> {
        let method: Function = Reflect::get(&self.object, &JsValue::from_str(name))
            .ok()
            .and_then(|m| m.dyn_into().ok())
            .ok_or_else(|| StoreError::Backend(format!("{} has no method {name}", self.label)))?;
        let list: Array = args.iter().collect();
        let returned = method.apply(&self.object, &list).map_err(|e| thrown(&self.label, name, &e))?;
        JsFuture::from(Promise::resolve(&returned)).await.map_err(|e| thrown(&self.label, name, &e))
    }

    async fn call_as<T: FromJson>(&self, name: &str, args: &[JsValue]) -> Result<T, StoreError> {
        let value = self.call(name, args).await?;
        from_js(&value).map_err(|e| self.decode_error(name, e))
    }

    fn decode_error(&self, method: &str, e: String) -> StoreError {
        StoreError::Decode(format!("{}'s {method} returned {e}", self.label))
    }
}

/// What a store method threw, as a store error (`code: "LEASE_LOST"` is a stale token).
pub(super) fn thrown(label: &str, method: &str, e: &JsValue) -> StoreError {
    let code = Reflect::get(e, &"code".into()).ok().and_then(|c| c.as_string());
    if code.as_deref() == Some("LEASE_LOST") {
        let id = Reflect::get(e, &"id".into()).ok().and_then(|c| c.as_string()).unwrap_or_default();
        return StoreError::LeaseLost { id };
    }
    StoreError::Backend(format!("{label}'s {method} failed: {}", describe(e)))
}

fn js<T: serde::Serialize + ?Sized>(value: &T) -> Result<JsValue, StoreError> {
    to_js(value).map_err(StoreError::Backend)
}

fn time(now: Timestamp) -> JsValue {
    JsValue::from_str(&now.to_rfc3339())
}

#[async_trait::async_trait(?Send)]
impl DlqStore for JsStore {
    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        let value = self.call("push", &[js(&record)?]).await?;
        if value.is_undefined() || value.is_null() {
            return Ok(PushOutcome::default());
        }
        let reply: PushReply = from_js(&value).map_err(|e| self.decode_error("push", e))?;
        Ok(PushOutcome { replaced: reply.replaced, evicted: reply.evicted })
    }

    async fn receive(
        &self,
        filter: &Filter,
        max: usize,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Vec<Leased>, StoreError> {
        let args = [js(filter)?, JsValue::from_f64(max as f64), JsValue::from_f64(lease.as_millis() as f64), time(now)];
        let replies: Vec<LeasedReply> = self.call_as("receive", &args).await?;
        Ok(replies
            .into_iter()
            .map(|r| Leased { token: r.token, record: r.record, lease_until: r.lease_until })
            .collect())
    }

    async fn complete(&self, token: &LeaseToken, now: Timestamp) -> Result<(), StoreError> {
        self.call("complete", &[js(token)?, time(now)]).await.map(|_| ())
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        let update = match &update {
            Some(r) => js(r)?,
            None => JsValue::NULL,
        };
        self.call_as("abandon", &[js(token)?, update, time(now)]).await
    }

    async fn park(&self, id: &str, reason: &str, now: Timestamp) -> Result<bool, StoreError> {
        self.call_as("park", &[id.into(), reason.into(), time(now)]).await
    }

    async fn unpark(&self, id: &str, now: Timestamp) -> Result<bool, StoreError> {
        self.call_as("unpark", &[id.into(), time(now)]).await
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        self.call_as("peek", &[js(filter)?, js(&page)?, time(now)]).await
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        self.call_as("count", &[js(filter)?, time(now)]).await
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        self.call_as("purge", &[js(filter)?, time(now)]).await
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        self.call_as("stats", &[time(now)]).await
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.call("journalUpsert", &[js(entry)?]).await.map(|_| ())
    }

    async fn journal_forget(&self, id: &str) -> Result<(), StoreError> {
        self.call("journalForget", &[id.into()]).await.map(|_| ())
    }

    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        self.call_as("journalEntries", &[]).await
    }
}
