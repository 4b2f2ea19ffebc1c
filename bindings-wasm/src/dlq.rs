//! The DLQ questions the JS client asks the core: filters and pages read from
//! the caller's objects (camelCase accepted, the bad field named), the keys a
//! store filters on, what a store returned checked against the schema, and
//! export and analysis over records.

use captcha_dlq_core::dlq::analysis::Analysis;
use captcha_dlq_core::dlq::export::export_json;
use captcha_dlq_core::dlq::{DeadLetterRecord, Filter, LeaseToken, Page, StoreError, StoreStats};
use captcha_dlq_core::json_read::{FieldError, Fields, FromJson};
use captcha_dlq_core::{ConfigError, JournalEntry, Timestamp};
use js_sys::{Object, Reflect};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::convert::{absent, from_js, js, to_json};
use crate::engine::at;
use crate::error::Error;
use crate::options::snake;

/// A filter from JS (`undefined` matches everything); top-level keys may be camelCase, label keys are
/// kept as given. Returns it in the schema shape the stores read. Throws INVALID_CONFIG naming `filter.FIELD`.
#[wasm_bindgen(js_name = readFilter)]
pub fn read_filter(value: JsValue) -> Result<JsValue, JsValue> {
    js(&filter(&value).map_err(Error::from)?)
}

pub(crate) fn filter(value: &JsValue) -> Result<Filter, ConfigError> {
    if absent(value) {
        return Ok(Filter::all());
    }
    let json = to_json(value).map_err(|e| ConfigError::new("filter", e))?;
    let Value::Object(map) = json else {
        return Err(ConfigError::new("filter", "expected an object"));
    };
    let map = map.into_iter().map(|(k, v)| (snake(&k), v)).collect();
    Filter::from_json(Value::Object(map)).map_err(|e| ConfigError::new(e.field_under("filter"), e.problem))
}

/// `{offset, limit}` (both optional; default 0 and 100). Throws INVALID_CONFIG naming `page.FIELD`.
#[wasm_bindgen(js_name = readPage)]
pub fn read_page(value: JsValue) -> Result<JsValue, JsValue> {
    let mut page = Page::default();
    if !absent(&value) {
        let json = to_json(&value).map_err(|e| Error::from(ConfigError::new("page", e)))?;
        let Value::Object(fields) = json else {
            return Err(Error::from(ConfigError::new("page", "expected an object such as {offset, limit}")).into());
        };
        for (k, v) in fields {
            let field = format!("page.{k}");
            let n = v.as_u64().ok_or_else(|| Error::from(ConfigError::new(field.clone(), "expected a whole number")));
            match k.as_str() {
                "offset" => page.offset = n? as usize,
                "limit" => page.limit = n? as usize,
                _ => return Err(Error::from(ConfigError::new(field, "unknown; use offset and limit")).into()),
            }
        }
    }
    js(&page)
}

/// `{sitekey, page_host}` of a record, for the JS stores' filters: the core derives them (per task
/// kind, and the page URL's host), so JS never re-implements that. Nulls for what a record lacks.
#[wasm_bindgen(js_name = keysOf)]
pub fn keys_of(value: JsValue) -> JsValue {
    let keys = Object::new();
    if let Ok(record) = from_js::<DeadLetterRecord>(&value) {
        let sitekey = record.task.sitekey().map_or(JsValue::NULL, JsValue::from_str);
        let host = record.page_host().map_or(JsValue::NULL, |h| JsValue::from_str(&h));
        let _ = Reflect::set(&keys, &"sitekey".into(), &sitekey);
        let _ = Reflect::set(&keys, &"page_host".into(), &host);
    }
    keys.into()
}

/// What a store's `receive` returns per record.
#[derive(Serialize)]
pub(crate) struct Leased {
    pub token: LeaseToken,
    pub record: DeadLetterRecord,
    pub lease_until: Timestamp,
}

impl FromJson for Leased {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(Leased { token: f.req("token")?, record: f.req("record")?, lease_until: f.req("lease_until")? })
    }
}

/// What a store's `push` returns (either field may be left out, or the whole answer).
#[derive(Serialize)]
pub(crate) struct PushReply {
    pub replaced: bool,
    pub evicted: Vec<String>,
}

impl FromJson for PushReply {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        if value.is_null() {
            return Ok(PushReply { replaced: false, evicted: Vec::new() });
        }
        let mut f = Fields::new(value)?;
        Ok(PushReply { replaced: f.or_default("replaced")?, evicted: f.or_default("evicted")? })
    }
}

fn checked<T: FromJson + Serialize>(value: &JsValue) -> Result<JsValue, String> {
    let parsed: T = from_js(value)?;
    crate::convert::to_js(&parsed)
}

/// Checks what store `label`'s `method` returned against the schema and returns it in its canonical
/// shape (`receive`, `peek`, `stats`, `journalEntries`, `push`, `abandon`, `park`, `unpark`, `count`,
/// `purge`). Throws STORE_ERROR naming the store, the method and the field.
#[wasm_bindgen(js_name = checkStored)]
pub fn check_stored(label: &str, method: &str, value: JsValue) -> Result<JsValue, JsValue> {
    let value = if value.is_undefined() { JsValue::NULL } else { value };
    let checked = match method {
        "receive" => checked::<Vec<Leased>>(&value),
        "peek" => checked::<Vec<DeadLetterRecord>>(&value),
        "stats" => checked::<StoreStats>(&value),
        "journalEntries" => checked::<Vec<JournalEntry>>(&value),
        "push" => checked::<PushReply>(&value),
        "abandon" => checked::<captcha_dlq_core::dlq::RecordState>(&value),
        "park" | "unpark" => checked::<bool>(&value),
        "count" | "purge" => checked::<u64>(&value),
        _ => return Ok(value),
    };
    checked.map_err(|e| Error::Store(StoreError::Decode(format!("{label}'s {method} returned {e}"))).into())
}

/// The records as our JSON export (no API key is ever in a record).
#[wasm_bindgen(js_name = exportRecords)]
pub fn export_records(records: JsValue) -> Result<String, JsValue> {
    let records: Vec<DeadLetterRecord> =
        from_js(&records).map_err(|e| Error::Store(StoreError::Decode(format!("a record to export: {e}"))))?;
    Ok(export_json(&records))
}

/// Counts by reason, class, sitekey, page host and hour; oldest age; replay throughput.
#[wasm_bindgen(js_name = analyse)]
pub fn analyse(records: JsValue, stats: JsValue, now: f64) -> Result<JsValue, JsValue> {
    let records: Vec<DeadLetterRecord> =
        from_js(&records).map_err(|e| Error::Store(StoreError::Decode(format!("a record to analyse: {e}"))))?;
    let stats: StoreStats = from_js(&stats).map_err(|e| Error::Store(StoreError::Decode(format!("stats: {e}"))))?;
    js(&Analysis::compute(&records, &stats, at(now)))
}
