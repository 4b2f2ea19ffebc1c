//! The DLQ as operators reach it: count, peek, stats, analysis, export,
//! import, purge, park, unpark, the journal and settled keys — each store call
//! with the client's timeout. [`Dlq::op`] is the same set for bindings: one
//! operation by name with its arguments as a host value, read with the host's
//! casing (unknown arguments are errors naming them as written) and answered
//! in that casing.

use std::sync::Arc;

use captcha_dlq_core::dlq::{self, Analysis, DeadLetterRecord, DlqStore, Filter, Page, SettledKey, StoreStats};
use captcha_dlq_core::support::cased;
use captcha_dlq_core::support::json_read::{read_cased, Casing, FieldError, Fields, FromJson};
use captcha_dlq_core::support::quoted::Quoted;
use captcha_dlq_core::{ConfigError, JournalEntry};
use serde_json::{json, Value};

use crate::client::Client;
use crate::error::{Error, Result};

/// Records read per page when a whole selection is needed (analysis, export).
const PAGE: usize = 1000;

/// How an export is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// One JSON array (the seeds' `captcha-dlq.json` shape).
    Json,
    /// One record per line.
    Jsonl,
}

impl ExportFormat {
    /// `json` or `jsonl`; `None` for anything else.
    pub fn parse(name: &str) -> Option<ExportFormat> {
        match name {
            "json" => Some(ExportFormat::Json),
            "jsonl" => Some(ExportFormat::Jsonl),
            _ => None,
        }
    }

    /// The format a file name suggests (`.jsonl` → JSONL, else JSON).
    pub fn for_path(path: &str) -> ExportFormat {
        if path.ends_with(".jsonl") {
            ExportFormat::Jsonl
        } else {
            ExportFormat::Json
        }
    }
}

/// The client's dead-letter queue.
#[derive(Clone, Debug)]
pub struct Dlq {
    client: Client,
}

impl Client {
    pub fn dlq(&self) -> Dlq {
        Dlq { client: self.clone() }
    }
}

impl Dlq {
    /// The client this DLQ belongs to.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    pub fn store(&self) -> &Arc<dyn DlqStore> {
        &self.client.backends().store
    }

    fn now(&self) -> captcha_dlq_core::Timestamp {
        self.client.backends().runtime.now()
    }

    pub async fn count(&self, filter: &Filter) -> Result<u64> {
        self.client.store_call(self.store().count(filter, self.now())).await
    }

    /// Matching records, oldest first.
    pub async fn peek(&self, filter: &Filter, page: Page) -> Result<Vec<DeadLetterRecord>> {
        self.client.store_call(self.store().peek(filter, page, self.now())).await
    }

    pub async fn stats(&self) -> Result<StoreStats> {
        self.client.store_call(self.store().stats(self.now())).await
    }

    /// Every matching record (read in pages).
    pub async fn all(&self, filter: &Filter) -> Result<Vec<DeadLetterRecord>> {
        let mut out = Vec::new();
        loop {
            let page = self.peek(filter, Page { offset: out.len(), limit: PAGE }).await?;
            let n = page.len();
            out.extend(page);
            if n < PAGE {
                return Ok(out);
            }
        }
    }

    /// Counts by reason, class, sitekey, page host, hour and provider; oldest age;
    /// repeat-failure rate.
    pub async fn analysis(&self, filter: &Filter) -> Result<Analysis> {
        let records = self.all(filter).await?;
        let stats = self.stats().await?;
        Ok(Analysis::compute(&records, &stats, self.now()))
    }

    /// The matching records as export text, and how many there are.
    pub async fn export(&self, filter: &Filter, format: ExportFormat) -> Result<(String, usize)> {
        let records = self.all(filter).await?;
        let text = match format {
            ExportFormat::Json => dlq::export_json(&records),
            ExportFormat::Jsonl => dlq::export_jsonl(&records),
        };
        Ok((text, records.len()))
    }

    /// Upserts the records of an export, or of the seeds' `captcha-dlq.json`; returns how many.
    pub async fn import(&self, text: &str) -> Result<usize> {
        let provider = self.client.provider().name().to_string();
        let records = dlq::import(text, &provider, self.now()).map_err(|e| {
            Error::Config(ConfigError::new(e.field.clone().unwrap_or_else(|| "file".into()), e.to_string()))
        })?;
        let n = records.len();
        for record in records {
            self.client.store_call(self.store().push(record)).await?;
        }
        Ok(n)
    }

    /// Removes matching records not under a live lease; returns how many.
    pub async fn purge(&self, filter: &Filter) -> Result<u64> {
        self.client.store_call(self.store().purge(filter, self.now())).await
    }

    pub async fn park(&self, id: &str, reason: &str) -> Result<bool> {
        self.client.store_call(self.store().park(id, reason, self.now())).await
    }

    pub async fn unpark(&self, id: &str) -> Result<bool> {
        self.client.store_call(self.store().unpark(id, self.now())).await
    }

    /// Tasks in flight (of every client sharing the store).
    /// The journal. Like [`settled`](Self::settled), retried while the store fails
    /// transiently (for `store.retry_for`): a batch or recover that starts while another
    /// process holds the database waits for it rather than failing.
    pub async fn journal(&self) -> Result<Vec<JournalEntry>> {
        self.client.store_write(|| self.store().journal_entries()).await
    }

    /// Task keys settled (solved and handed over, or dead-lettered) under `prefix`.
    pub async fn settled(&self, prefix: &str) -> Result<Vec<SettledKey>> {
        self.client.store_write(|| self.store().settled(prefix)).await
    }

    pub async fn clear_settled(&self, prefix: &str) -> Result<u64> {
        self.client.store_write(|| self.store().clear_settled(prefix)).await
    }

    /// One operation by name (`count`, `peek`, `stats`, `analysis`, `export`, `import`,
    /// `purge`, `park`, `unpark`, `journal`, `settled`, `clear_settled`, `record_page_outcome`, `edit`), its arguments an
    /// object in `casing`, its answer in `casing`.
    pub async fn op(&self, name: &str, args: Value, casing: Casing) -> Result<Value> {
        let args = if args.is_null() { json!({}) } else { args };
        match name {
            "count" => {
                let a: FilterArgs = read(args, casing, name)?;
                Ok(json!(self.count(&a.filter).await?))
            }
            "peek" => {
                let a: PeekArgs = read(args, casing, name)?;
                answer(&self.peek(&a.filter, a.page).await?, casing)
            }
            "stats" => {
                let _: NoArgs = read(args, casing, name)?;
                answer(&self.stats().await?, casing)
            }
            "analysis" => {
                let a: FilterArgs = read(args, casing, name)?;
                answer(&self.analysis(&a.filter).await?, casing)
            }
            "export" => {
                let a: ExportArgs = read(args, casing, name)?;
                let (text, count) = self.export(&a.filter, a.format).await?;
                Ok(json!({ "text": text, "count": count }))
            }
            "import" => {
                let a: ImportArgs = read(args, casing, name)?;
                Ok(json!(self.import(&a.text).await?))
            }
            "purge" => {
                let a: PurgeArgs = read(args, casing, name)?;
                Ok(json!(self.purge(&a.filter).await?))
            }
            "park" => {
                let a: ParkArgs = read(args, casing, name)?;
                Ok(json!(self.park(&a.id, &a.reason).await?))
            }
            "unpark" => {
                let a: IdArgs = read(args, casing, name)?;
                Ok(json!(self.unpark(&a.id).await?))
            }
            "journal" => {
                let _: NoArgs = read(args, casing, name)?;
                answer(&self.journal().await?, casing)
            }
            "settled" => {
                let a: PrefixArgs = read(args, casing, name)?;
                answer(&self.settled(&a.prefix).await?, casing)
            }
            "clear_settled" => {
                let a: PrefixArgs = read(args, casing, name)?;
                Ok(json!(self.clear_settled(&a.prefix).await?))
            }
            "record_page_outcome" => self.record_page_outcome(args, casing).await,
            #[cfg(not(target_arch = "wasm32"))]
            "edit" => self.edit_op(args, casing).await,
            // Editing (merge patch, diff, report) would take the browser's .wasm over its size guard.
            #[cfg(target_arch = "wasm32")]
            "edit" => Err(Error::Config(ConfigError::new(
                "op",
                "edit is not in the browser build (it would take the .wasm over its size guard, docs/DESIGN.md item 53): \
                 edit from Node, Python, the CLI or the dashboard",
            ))),
            other => Err(Error::Config(ConfigError::new(
                "op",
                format!(
                    "unknown DLQ operation {}; known: count, peek, stats, analysis, export, import, purge, park, unpark, journal, settled, clear_settled, record_page_outcome, edit",
                    Quoted(other)
                ),
            ))),
        }
    }
}

/// A value answered to a host in its casing.
pub(crate) fn answer<T: serde::Serialize>(value: &T, casing: Casing) -> Result<Value> {
    cased::to_value(value, casing).map_err(|e| Error::Io(format!("could not encode the answer: {e}")))
}

pub(crate) fn read<T: FromJson>(args: Value, casing: Casing, op: &str) -> Result<T> {
    read_cased(args, casing).map_err(|e| Error::Config(ConfigError::new(format!("{op}: {}", e.field), e.problem)))
}

struct NoArgs;
impl FromJson for NoArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        Fields::new(value)?.finish().map(|()| NoArgs)
    }
}

struct FilterArgs {
    filter: Filter,
}
impl FromJson for FilterArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let a = FilterArgs { filter: f.or_default("filter")? };
        f.finish()?;
        Ok(a)
    }
}

struct PeekArgs {
    filter: Filter,
    page: Page,
}
impl FromJson for PeekArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let d = Page::default();
        let a = PeekArgs {
            filter: f.or_default("filter")?,
            page: Page { offset: f.or("offset", d.offset)?, limit: f.or("limit", d.limit)? },
        };
        f.finish()?;
        if a.page.limit == 0 {
            return Err(FieldError::new("limit", "must be at least 1"));
        }
        Ok(a)
    }
}

struct ExportArgs {
    filter: Filter,
    format: ExportFormat,
}
impl FromJson for ExportArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let filter = f.or_default("filter")?;
        let name: String = f.or("format", "json".to_string())?;
        f.finish()?;
        let format = ExportFormat::parse(&name).ok_or_else(|| {
            FieldError::new("format", format!("{} is not an export format (json, jsonl)", Quoted(&name)))
        })?;
        Ok(ExportArgs { filter, format })
    }
}

struct ImportArgs {
    text: String,
}
impl FromJson for ImportArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let a = ImportArgs { text: f.req("text")? };
        f.finish()?;
        Ok(a)
    }
}

/// `purge` needs its filter spelled out (`{}` for every record), so that forgetting it
/// is not the same as asking for everything to go.
struct PurgeArgs {
    filter: Filter,
}
impl FromJson for PurgeArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let a = PurgeArgs { filter: f.req("filter")? };
        f.finish()?;
        Ok(a)
    }
}

struct ParkArgs {
    id: String,
    reason: String,
}
impl FromJson for ParkArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let a = ParkArgs { id: f.req("id")?, reason: f.or("reason", "parked by an operator".to_string())? };
        f.finish()?;
        Ok(a)
    }
}

struct IdArgs {
    id: String,
}
impl FromJson for IdArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let a = IdArgs { id: f.req("id")? };
        f.finish()?;
        Ok(a)
    }
}

struct PrefixArgs {
    prefix: String,
}
impl FromJson for PrefixArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let a = PrefixArgs { prefix: f.or("prefix", String::new())? };
        f.finish()?;
        Ok(a)
    }
}
