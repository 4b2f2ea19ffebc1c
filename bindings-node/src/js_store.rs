//! A [`DlqStore`] over a JS object: each trait call becomes one call of a JS
//! dispatcher (`lib/store.js` wraps the app's object) through a threadsafe
//! function, and the Promise it returns is awaited on tokio. Times cross as
//! unix milliseconds and records as their schema-1 JSON, so a JS store can
//! keep them in any database it likes.

use std::time::Duration;

use async_trait::async_trait;
use captcha_dlq_core::dlq::{
    DeadLetterRecord, DlqStore, Filter, LeaseToken, Leased, Page, PushOutcome, RecordState, StoreError, StoreStats,
};
use captcha_dlq_core::json_read::{FieldError, Fields, FromJson};
use captcha_dlq_core::{JournalEntry, Timestamp};
use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::ThreadsafeFunction;
use serde::Deserialize;
use serde_json::{json, Value};

/// `(requestJson) => Promise<replyJson>`, weak so an idle client never keeps Node alive.
pub type Dispatch = ThreadsafeFunction<String, Promise<String>, String, napi::Status, false, true>;

pub struct JsStore {
    dispatch: Dispatch,
}

impl std::fmt::Debug for JsStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsStore")
    }
}

/// What the dispatcher answers: `{ok: value}` or `{error, kind}`.
#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    ok: Value,
    error: Option<String>,
    kind: Option<String>,
    id: Option<String>,
}

struct JsLeased {
    token: LeaseToken,
    record: DeadLetterRecord,
    lease_until: u64,
}

impl FromJson for JsLeased {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(JsLeased { token: f.req("token")?, record: f.req("record")?, lease_until: f.req("lease_until")? })
    }
}

struct JsPush {
    replaced: bool,
    evicted: Vec<String>,
}

/// Both fields may be left out.
impl FromJson for JsPush {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(JsPush { replaced: f.or_default("replaced")?, evicted: f.or_default("evicted")? })
    }
}

impl JsStore {
    pub fn new(dispatch: Dispatch) -> Self {
        JsStore { dispatch }
    }

    async fn call<T: FromJson>(&self, method: &str, args: Value) -> Result<T, StoreError> {
        let request = json!({ "method": method, "args": args }).to_string();
        let promise =
            self.dispatch.call_async(request).await.map_err(|e| {
                StoreError::Backend(format!("the JS store could not be called ({method}): {}", e.reason))
            })?;
        let text =
            promise.await.map_err(|e| StoreError::Backend(format!("the JS store's {method} failed: {}", e.reason)))?;
        let reply: Reply = serde_json::from_str(&text)
            .map_err(|e| StoreError::Backend(format!("the JS store's {method} answered unreadable JSON: {e}")))?;
        if let Some(message) = reply.error {
            let id = reply.id.unwrap_or_default();
            return Err(match reply.kind.as_deref() {
                Some("lease_lost") => StoreError::LeaseLost { id },
                Some("not_found") => StoreError::NotFound { id },
                _ => StoreError::Backend(format!("the JS store's {method} failed: {message}")),
            });
        }
        T::from_json(reply.ok).map_err(|e| {
            let at = if e.field.is_empty() { "." } else { e.field.as_str() };
            StoreError::Decode(format!("the JS store's {method} returned a bad value at `{at}`: {}", e.problem))
        })
    }
}

fn ms(t: Timestamp) -> u64 {
    t.as_unix_millis()
}

#[async_trait]
impl DlqStore for JsStore {
    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        let r: Option<JsPush> = self.call("push", json!([record])).await?;
        let r = r.unwrap_or(JsPush { replaced: false, evicted: Vec::new() });
        Ok(PushOutcome { replaced: r.replaced, evicted: r.evicted })
    }

    async fn receive(
        &self,
        filter: &Filter,
        max: usize,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Vec<Leased>, StoreError> {
        let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
        let got: Vec<JsLeased> = self.call("receive", json!([filter, max, lease_ms, ms(now)])).await?;
        if got.len() > max {
            return Err(StoreError::Backend(format!(
                "the JS store's receive returned {} records, more than {max}",
                got.len()
            )));
        }
        Ok(got
            .into_iter()
            .map(|l| Leased {
                token: l.token,
                record: l.record,
                lease_until: Timestamp::from_unix_millis(l.lease_until),
            })
            .collect())
    }

    async fn complete(&self, token: &LeaseToken, now: Timestamp) -> Result<(), StoreError> {
        self.call::<Value>("complete", json!([token, ms(now)])).await.map(|_| ())
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        self.call("abandon", json!([token, update, ms(now)])).await
    }

    async fn park(&self, id: &str, reason: &str, now: Timestamp) -> Result<bool, StoreError> {
        self.call("park", json!([id, reason, ms(now)])).await
    }

    async fn unpark(&self, id: &str, now: Timestamp) -> Result<bool, StoreError> {
        self.call("unpark", json!([id, ms(now)])).await
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        self.call("peek", json!([filter, page, ms(now)])).await
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        self.call("count", json!([filter, ms(now)])).await
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        self.call("purge", json!([filter, ms(now)])).await
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        self.call("stats", json!([ms(now)])).await
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.call::<Value>("journalUpsert", json!([entry])).await.map(|_| ())
    }

    async fn journal_forget(&self, id: &str) -> Result<(), StoreError> {
        self.call::<Value>("journalForget", json!([id])).await.map(|_| ())
    }

    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        self.call("journalEntries", json!([])).await
    }
}
