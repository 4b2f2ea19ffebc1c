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

#[cfg(feature = "audit")]
use crate::audit::{self, Action, Operator};
use crate::client::Client;
use crate::error::{Error, Result};
#[cfg(feature = "audit")]
use crate::replay::{ReplayOptions, ReplayResult, ReplayStream};
#[cfg(feature = "audit")]
use captcha_dlq_core::dlq::audit::{AuditEntry, MAX_AUDIT_LIMIT};

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

/// The client's dead-letter queue, as one operator acts on it (`api` unless
/// [`as_operator`](Dlq::as_operator) names another): every action it applies leaves an entry
/// in the store's audit trail naming them (`crate::audit`, feature `audit`; not in the browser build,
/// which keeps no trail and so no operator).
#[derive(Clone, Debug)]
pub struct Dlq {
    client: Client,
    #[cfg(feature = "audit")]
    operator: Operator,
}

impl Client {
    pub fn dlq(&self) -> Dlq {
        Dlq {
            client: self.clone(),
            #[cfg(feature = "audit")]
            operator: Operator::default(),
        }
    }
}

impl Dlq {
    /// The client this DLQ belongs to.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    #[cfg(feature = "audit")]
    /// This DLQ as `operator` acts on it (the name is checked: [`Operator::new`]).
    pub fn as_operator(&self, operator: &str) -> Result<Dlq> {
        Ok(Dlq { client: self.client.clone(), operator: Operator::new(operator)? })
    }

    #[cfg(feature = "audit")]
    /// Who this handle's actions are recorded as.
    pub fn operator(&self) -> &Operator {
        &self.operator
    }

    #[cfg(feature = "audit")]
    /// Replays records as this handle's operator (see [`Client::replay_stream`]).
    pub fn replay_stream(&self, options: ReplayOptions) -> ReplayStream {
        self.client.replay_stream(ReplayOptions { operator: Some(self.operator.clone()), ..options })
    }

    #[cfg(feature = "audit")]
    /// Replays records as this handle's operator (see [`Client::replay`]).
    pub async fn replay(&self, options: ReplayOptions) -> Result<ReplayResult> {
        self.client.replay(ReplayOptions { operator: Some(self.operator.clone()), ..options }).await
    }

    /// Up to `limit` entries of the audit trail (at most [`MAX_AUDIT_LIMIT`]), newest first;
    /// with `before`, those older than entry `before` (the last id of the page before).
    #[cfg(feature = "audit")]
    pub async fn audit(&self, limit: usize, before: Option<u64>) -> Result<Vec<AuditEntry>> {
        if limit == 0 || limit > MAX_AUDIT_LIMIT {
            return Err(Error::Config(ConfigError::new("limit", format!("must be 1 to {MAX_AUDIT_LIMIT}"))));
        }
        self.client.store_write(|| self.store().audit_list(limit, before)).await
    }

    /// The intent of `action` in the trail, before it runs (`crate::audit`): an error means
    /// the action must not run.
    #[cfg(feature = "audit")]
    pub(crate) async fn intend(&self, action: Action, filter: Value, detail: String) -> Result<audit::Intent> {
        audit::intend(&self.client, &self.operator, action, filter, detail).await
    }

    /// The result of `intent` in the trail, after it ran (`detail` replaces the intent's).
    #[cfg(feature = "audit")]
    pub(crate) async fn audited<T>(
        &self,
        intent: audit::Intent,
        detail: Option<String>,
        count: u64,
        outcome: Result<T>,
    ) -> Result<T> {
        audit::record(&self.client, &self.operator, intent, detail, count, outcome).await
    }

    /// Cancels a running replay as this handle's operator: `cancel` runs between the intent and
    /// the result entries of the trail (action `cancel`; `filter` and `detail` name the replay),
    /// and not at all when the trail refuses the intent.
    #[cfg(feature = "audit")]
    pub async fn cancel_replay(&self, filter: Value, detail: String, cancel: impl FnOnce()) -> Result<()> {
        let intent = self.intend(Action::Cancel, filter, detail).await?;
        cancel();
        self.audited(intent, None, 1, Ok(())).await
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

    /// The matching records with their secrets (proxy credentials, cookies, key-like task
    /// fields) as export text, and how many: an audited action (`export_secrets`) naming this
    /// handle's operator, for the exports a front end otherwise redacts (the dashboard's
    /// `/export?secrets=1`).
    #[cfg(feature = "audit")]
    pub async fn export_with_secrets(&self, filter: &Filter, format: ExportFormat) -> Result<(String, usize)> {
        let detail = format!("{} with secrets", if format == ExportFormat::Json { "json" } else { "jsonl" });
        let intent = self.intend(Action::ExportSecrets, filter.compact_json(), detail).await?;
        let outcome = self.export(filter, format).await;
        let count = outcome.as_ref().map_or(0, |(_, n)| *n as u64);
        self.audited(intent, None, count, outcome).await
    }

    /// Upserts the records of an export, or of the seeds' `captcha-dlq.json`; returns how many.
    pub async fn import(&self, text: &str) -> Result<usize> {
        let provider = self.client.provider().name().to_string();
        let records = dlq::import(text, &provider, self.now()).map_err(|e| {
            Error::Config(ConfigError::new(e.field.clone().unwrap_or_else(|| "file".into()), e.to_string()))
        })?;
        let n = records.len();
        #[cfg(feature = "audit")]
        let intent = self.intend(Action::Import, Value::Null, format!("{n} records in the file")).await?;
        let mut pushed = 0;
        let mut outcome = Ok(n);
        for record in records {
            if let Err(e) = self.client.store_call(self.store().push(record)).await {
                outcome = Err(e);
                break;
            }
            pushed += 1;
        }
        #[cfg(feature = "audit")]
        let outcome = self.audited(intent, None, pushed, outcome).await;
        let _ = pushed;
        outcome
    }

    /// Removes matching records not under a live lease; returns how many.
    pub async fn purge(&self, filter: &Filter) -> Result<u64> {
        #[cfg(feature = "audit")]
        let intent = self.intend(Action::Purge, filter.compact_json(), String::new()).await?;
        let outcome = self.client.store_call(self.store().purge(filter, self.now())).await;
        #[cfg(feature = "audit")]
        let outcome = {
            let count = *outcome.as_ref().unwrap_or(&0);
            self.audited(intent, None, count, outcome).await
        };
        outcome
    }

    /// Parks record `id` with `reason`, which is shown in terminals and pages: a reason with a
    /// control, bidi or invisible formatting character is refused, naming it.
    pub async fn park(&self, id: &str, reason: &str) -> Result<bool> {
        if let Err(problem) = captcha_dlq_core::support::shown_text::check_shown_text(reason) {
            return Err(Error::Config(ConfigError::new("reason", problem)));
        }
        #[cfg(feature = "audit")]
        let intent = self.intend(Action::Park, json!({ "ids": [id] }), reason.to_string()).await?;
        let outcome = self.client.store_call(self.store().park(id, reason, self.now())).await;
        #[cfg(feature = "audit")]
        let outcome = {
            let count = u64::from(*outcome.as_ref().unwrap_or(&false));
            self.audited(intent, None, count, outcome).await
        };
        outcome
    }

    pub async fn unpark(&self, id: &str) -> Result<bool> {
        #[cfg(feature = "audit")]
        let intent = self.intend(Action::Unpark, json!({ "ids": [id] }), String::new()).await?;
        let outcome = self.client.store_call(self.store().unpark(id, self.now())).await;
        #[cfg(feature = "audit")]
        let outcome = {
            let count = u64::from(*outcome.as_ref().unwrap_or(&false));
            self.audited(intent, None, count, outcome).await
        };
        outcome
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
    /// `purge`, `park`, `unpark`, `journal`, `settled`, `clear_settled`, `record_page_outcome`, `page_task`, `page_answer`, `edit`), its arguments an
    /// object in `casing`, its answer in `casing`.
    ///
    /// Every operation also takes `operator`, the name its actions are recorded as (this
    /// handle's otherwise), and `audit` (`limit`, default 50; `before`) lists the audit trail.
    #[cfg(not(feature = "audit"))]
    pub async fn op(&self, name: &str, args: Value, casing: Casing) -> Result<Value> {
        let mut args = if args.is_null() { json!({}) } else { args };
        // The shared JS `asOperator` names one; the browser keeps no trail to write it in.
        if let Some(a) = args.as_object_mut() {
            a.remove("operator");
        }
        self.op_as(name, args, casing).await
    }

    #[cfg(feature = "audit")]
    pub async fn op(&self, name: &str, args: Value, casing: Casing) -> Result<Value> {
        let mut args = if args.is_null() { json!({}) } else { args };
        let named = match args.as_object_mut().and_then(|a| a.remove("operator")) {
            None => None,
            Some(Value::String(operator)) => Some(self.as_operator(&operator)?),
            Some(other) => {
                return Err(Error::Config(ConfigError::new(
                    format!("{name}: operator"),
                    format!("expected a name (a string), got {other}"),
                )))
            }
        };
        match named {
            Some(dlq) => dlq.op_as(name, args, casing).await,
            None => self.op_as(name, args, casing).await,
        }
    }

    async fn op_as(&self, name: &str, args: Value, casing: Casing) -> Result<Value> {
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
            "page_task" => self.page_task(args, casing),
            "page_answer" => self.page_answer(args, casing),
            #[cfg(feature = "edit")]
            "edit" => self.edit_op(args, casing).await,
            // Feature `edit`: editing (merge patch, diff, report) would take the browser's .wasm over its size guard.
            #[cfg(not(feature = "edit"))]
            "edit" => Err(Error::Config(ConfigError::new(
                "op",
                "edit is not in this build (cargo feature `edit` is off, as in the browser build, whose .wasm it would take over its size guard, decision 0053 in docs/decisions/): \
                 edit from Node, Python, the CLI or the dashboard",
            ))),
            #[cfg(feature = "audit")]
            "audit" => {
                let a: AuditArgs = read(args, casing, name)?;
                answer(&self.audit(a.limit, a.before).await?, casing)
            }
            other => Err(Error::Config(ConfigError::new(
                "op",
                format!(
                    "unknown DLQ operation {}; known: count, peek, stats, analysis, export, import, purge, park, unpark, journal, settled, clear_settled, record_page_outcome, page_task, page_answer, edit, audit (these two not in the browser)",
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

#[cfg(feature = "audit")]
struct AuditArgs {
    limit: usize,
    before: Option<u64>,
}
#[cfg(feature = "audit")]
impl FromJson for AuditArgs {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let a = AuditArgs { limit: f.or("limit", 50)?, before: f.opt("before")? };
        f.finish()?;
        Ok(a)
    }
}
