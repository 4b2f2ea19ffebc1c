//! `client.dlq`: inspect and manage the dead-letter queue (count, peek,
//! stats, analysis, export, import, purge, park, unpark). Records cross as
//! their schema-1 JSON, exactly as an export file holds them.

use std::time::{SystemTime, UNIX_EPOCH};

use captcha_dlq_core::dlq::analysis::Analysis;
use captcha_dlq_core::dlq::{export, DeadLetterRecord, Page};
use captcha_dlq_core::Timestamp;
use napi_derive::napi;

use crate::client::{filter, NativeClient};
use crate::error;

/// Records fetched per page when a call needs all matching records.
const PAGE: usize = 1000;

pub(crate) fn now() -> Timestamp {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    Timestamp::from_unix_millis(u64::try_from(ms).unwrap_or(u64::MAX))
}

impl NativeClient {
    fn store_err(&self, e: captcha_dlq_core::dlq::StoreError) -> napi::Error {
        error::store(e, Some(&self.key))
    }

    async fn all(&self, f: &captcha_dlq_core::dlq::Filter) -> napi::Result<Vec<DeadLetterRecord>> {
        let mut out = Vec::new();
        loop {
            let page = Page { offset: out.len(), limit: PAGE };
            let got = self.client.dlq().peek(f, page, now()).await.map_err(|e| self.store_err(e))?;
            let n = got.len();
            out.extend(got);
            if n < PAGE {
                return Ok(out);
            }
        }
    }
}

#[napi]
impl NativeClient {
    #[napi]
    pub async fn dlq_count(&self, filter_json: Option<String>) -> napi::Result<f64> {
        let f = filter(filter_json)?;
        let n = self.client.dlq().count(&f, now()).await.map_err(|e| self.store_err(e))?;
        Ok(n as f64)
    }

    /// Matching records, oldest first, as a JSON array.
    #[napi]
    pub async fn dlq_peek(&self, filter_json: Option<String>, offset: u32, limit: u32) -> napi::Result<String> {
        let f = filter(filter_json)?;
        let page = Page { offset: offset as usize, limit: limit as usize };
        let records = self.client.dlq().peek(&f, page, now()).await.map_err(|e| self.store_err(e))?;
        Ok(serde_json::to_string(&records).unwrap_or_default())
    }

    #[napi]
    pub async fn dlq_stats(&self) -> napi::Result<String> {
        let stats = self.client.dlq().stats(now()).await.map_err(|e| self.store_err(e))?;
        Ok(serde_json::to_string(&stats).unwrap_or_default())
    }

    /// Breakdowns by reason, class, sitekey, page host, hour and provider, plus ages and rates.
    #[napi]
    pub async fn dlq_analysis(&self, filter_json: Option<String>) -> napi::Result<String> {
        let f = filter(filter_json)?;
        let records = self.all(&f).await?;
        let stats = self.client.dlq().stats(now()).await.map_err(|e| self.store_err(e))?;
        Ok(serde_json::to_string(&Analysis::compute(&records, &stats, now())).unwrap_or_default())
    }

    /// Writes matching records to `path` as `json` (an array) or `jsonl`; returns how many.
    #[napi]
    pub async fn dlq_export(&self, path: String, format: String, filter_json: Option<String>) -> napi::Result<u32> {
        let f = filter(filter_json)?;
        let text_of: fn(&[DeadLetterRecord]) -> String = match format.as_str() {
            "json" => export::export_json,
            "jsonl" => export::export_jsonl,
            other => return Err(error::config("format", format!("must be 'json' or 'jsonl', got {other:?}"))),
        };
        let records = self.all(&f).await?;
        let text = text_of(&records);
        let shown = path.clone();
        tokio::task::spawn_blocking(move || std::fs::write(&path, text))
            .await
            .map_err(|e| error::io(format!("writing {shown} was interrupted: {e}")))?
            .map_err(|e| error::io(format!("cannot write {shown}: {e}")))?;
        Ok(u32::try_from(records.len()).unwrap_or(u32::MAX))
    }

    /// Reads an export (or a seed's `captcha-dlq.json`) and upserts its records; returns how many.
    #[napi]
    pub async fn dlq_import(&self, path: String) -> napi::Result<u32> {
        let shown = path.clone();
        let text = tokio::task::spawn_blocking(move || std::fs::read_to_string(&path))
            .await
            .map_err(|e| error::io(format!("reading {shown} was interrupted: {e}")))?
            .map_err(|e| error::io(format!("cannot read {shown}: {e}")))?;
        let records = export::import(&text, self.client.provider().name(), now()).map_err(|e| {
            let extra = serde_json::json!({ "field": e.field, "location": e.location.to_string() });
            error::coded("IO_ERROR", &format!("cannot import {shown}: {e}"), extra, Some(&self.key))
        })?;
        let n = records.len();
        for record in records {
            self.client.dlq().push(record).await.map_err(|e| self.store_err(e))?;
        }
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Removes matching records not under a live lease; returns how many.
    #[napi]
    pub async fn dlq_purge(&self, filter_json: Option<String>) -> napi::Result<f64> {
        let f = filter(filter_json)?;
        let n = self.client.dlq().purge(&f, now()).await.map_err(|e| self.store_err(e))?;
        Ok(n as f64)
    }

    #[napi]
    pub async fn dlq_park(&self, id: String, reason: String) -> napi::Result<bool> {
        self.client.dlq().park(&id, &reason, now()).await.map_err(|e| self.store_err(e))
    }

    #[napi]
    pub async fn dlq_unpark(&self, id: String) -> napi::Result<bool> {
        self.client.dlq().unpark(&id, now()).await.map_err(|e| self.store_err(e))
    }
}
