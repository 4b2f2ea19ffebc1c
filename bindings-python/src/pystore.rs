//! A DLQ store written in Python: the `DlqStore` trait over a host object.
//!
//! The Python side wraps the user's object in `captcha_dlq._store.StoreAdapter`, whose
//! `call(method, args_json)` decodes the arguments, calls the method and answers
//! `{"ok": result}` or `{"error": {"kind", "message", "id"}}` as JSON. Each call runs on
//! tokio's blocking pool with the GIL, so the driver never blocks a runtime worker on Python.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use captcha_dlq_core::dlq::{
    DeadLetterRecord, DlqStore, Filter, LeaseToken, Leased, Page, PushOutcome, RecordState, StoreError, StoreStats,
};
use captcha_dlq_core::json_read::{FieldError, Fields, FromJson};
use captcha_dlq_core::{JournalEntry, Timestamp};
use pyo3::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};

pub(crate) struct PyStore {
    adapter: Arc<Py<PyAny>>,
}

impl std::fmt::Debug for PyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PyStore")
    }
}

impl PyStore {
    pub(crate) fn new(adapter: Py<PyAny>) -> Self {
        PyStore { adapter: Arc::new(adapter) }
    }

    async fn call<T: FromJson>(&self, method: &'static str, args: Value) -> Result<T, StoreError> {
        let adapter = self.adapter.clone();
        let args = args.to_string();
        let answer = tokio::task::spawn_blocking(move || {
            Python::try_attach(|py| -> PyResult<String> {
                adapter.bind(py).call_method1("call", (method, args))?.extract::<String>()
            })
        })
        .await
        .map_err(|e| StoreError::Backend(format!("Python store `{method}` was interrupted: {e}")))?;
        let text = match answer {
            None => return Err(StoreError::Backend("the Python interpreter is shutting down".into())),
            Some(Err(e)) => return Err(StoreError::Backend(format!("Python store `{method}` failed: {e}"))),
            Some(Ok(text)) => text,
        };
        let reply: Reply = serde_json::from_str(&text)
            .map_err(|e| StoreError::Decode(format!("Python store `{method}` answered badly: {e}")))?;
        if let Some(err) = reply.error {
            let id = err.id.unwrap_or_default();
            return Err(match err.kind.as_str() {
                "lease_lost" => StoreError::LeaseLost { id },
                "not_found" => StoreError::NotFound { id },
                _ => StoreError::Backend(format!("Python store `{method}`: {}", err.message)),
            });
        }
        let value = reply.ok.unwrap_or(Value::Null);
        T::from_json(value).map_err(|e| {
            let at = if e.field.is_empty() { "." } else { e.field.as_str() };
            StoreError::Decode(format!("Python store `{method}` returned a bad value at `{at}`: {}", e.problem))
        })
    }
}

#[derive(Deserialize)]
struct Reply {
    ok: Option<Value>,
    error: Option<ReplyError>,
}

#[derive(Deserialize)]
struct ReplyError {
    kind: String,
    message: String,
    id: Option<String>,
}

struct WireLeased {
    token: LeaseToken,
    record: DeadLetterRecord,
    lease_until: Timestamp,
}

impl FromJson for WireLeased {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(WireLeased { token: f.req("token")?, record: f.req("record")?, lease_until: f.req("lease_until")? })
    }
}

#[derive(Default)]
struct WirePush {
    replaced: bool,
    evicted: Vec<String>,
}

/// Both fields may be left out.
impl FromJson for WirePush {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(WirePush { replaced: f.or_default("replaced")?, evicted: f.or_default("evicted")? })
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[async_trait]
impl DlqStore for PyStore {
    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        let out: Option<WirePush> = self.call("push", json!([record])).await?;
        let out = out.unwrap_or_default();
        Ok(PushOutcome { replaced: out.replaced, evicted: out.evicted })
    }

    async fn receive(
        &self,
        filter: &Filter,
        max: usize,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Vec<Leased>, StoreError> {
        let out: Vec<WireLeased> = self.call("receive", json!([filter, max, ms(lease), now])).await?;
        Ok(out.into_iter().map(|l| Leased { token: l.token, record: l.record, lease_until: l.lease_until }).collect())
    }

    async fn complete(&self, token: &LeaseToken, now: Timestamp) -> Result<(), StoreError> {
        self.call::<Value>("complete", json!([token, now])).await.map(|_| ())
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        self.call("abandon", json!([token, update, now])).await
    }

    async fn park(&self, id: &str, reason: &str, now: Timestamp) -> Result<bool, StoreError> {
        self.call("park", json!([id, reason, now])).await
    }

    async fn unpark(&self, id: &str, now: Timestamp) -> Result<bool, StoreError> {
        self.call("unpark", json!([id, now])).await
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        self.call("peek", json!([filter, page.offset, page.limit, now])).await
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        self.call("count", json!([filter, now])).await
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        self.call("purge", json!([filter, now])).await
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        self.call("stats", json!([now])).await
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.call::<Value>("journal_upsert", json!([entry])).await.map(|_| ())
    }

    async fn journal_forget(&self, id: &str) -> Result<(), StoreError> {
        self.call::<Value>("journal_forget", json!([id])).await.map(|_| ())
    }

    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        self.call("journal_entries", json!([])).await
    }
}
