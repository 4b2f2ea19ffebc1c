//! Applies `dlq_retention` to a DLQ store (feature `retention`): the client every `interval_ms`,
//! the CLI's `captcha-dlq dlq retain` once.
//!
//! The records to evict are chosen by the core ([`captcha_dlq_core::dlq::retention`]): the
//! oldest ready or parked ones beyond the age and count limits, never a leased one. Each batch
//! is, in this order: handed to the [`Archive`] (when there is one: natively the `archive` file,
//! appended and synced, feature `files`; in the browser the caller's function; if that fails
//! nothing is removed), removed while each record is still the version archived and not
//! leased (`DlqStore::purge_unchanged`: a record edited, replayed or stored again meanwhile stays,
//! and Redis judges leases by its own clock), counted in `captcha_dlq_dlq_evicted_total{reason}` and
//! logged with how many and where they were archived. Nothing leaves without a trace.

use std::sync::Arc;

use captcha_dlq_core::dlq::audit::{AuditAction, AuditEntry, AuditStage};
use captcha_dlq_core::dlq::retention::{self, EvictionReason, RetentionOptions};
use captcha_dlq_core::dlq::StoreError;
use captcha_dlq_core::dlq::{export_jsonl_redacted, DeadLetterRecord, DlqStore, Filter, Page};
use captcha_dlq_core::Timestamp;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::ops_metrics::OpsCounters;
// Where evicted records go (its own module: the client's shared state holds one, and this module uses that state).
use crate::archive::file_archive;
pub use crate::archive::Archive;
#[cfg(feature = "files")]
pub use crate::archive::FileArchive;

/// Records read, archived and removed at once.
const BATCH: usize = 1_000;

/// Who the audit trail names for an eviction.
pub const RETENTION_OPERATOR: &str = "retention";

/// What one limit evicted (or, in a dry run, would evict).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Eviction {
    pub reason: EvictionReason,
    /// Records removed (in a dry run: that would be).
    pub count: u64,
    /// The file they were appended to first, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive: Option<String>,
}

/// What one application of the limits did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RetentionReport {
    pub dry_run: bool,
    /// One entry per limit that evicted something.
    pub evictions: Vec<Eviction>,
}

impl RetentionReport {
    pub fn total(&self) -> u64 {
        self.evictions.iter().map(|e| e.count).sum()
    }
}

/// Applies `options` to `store` at `now`: the age limit first, then the count limit over
/// what is left, archiving to the options' `archive` file if any. `dry_run` only counts what
/// would go.
pub async fn apply(
    store: &Arc<dyn DlqStore>,
    options: &RetentionOptions,
    now: Timestamp,
    dry_run: bool,
    counters: Option<&OpsCounters>,
) -> Result<RetentionReport> {
    let archive = file_archive(options)?;
    apply_to(store, options, archive.as_deref(), now, dry_run, counters).await
}

/// [`apply`], keeping the evicted records in `archive` (whatever the options' `archive` says).
pub async fn apply_to(
    store: &Arc<dyn DlqStore>,
    options: &RetentionOptions,
    archive: Option<&dyn Archive>,
    now: Timestamp,
    dry_run: bool,
    counters: Option<&OpsCounters>,
) -> Result<RetentionReport> {
    let archive_name = archive.map(Archive::name);
    let mut report = RetentionReport { dry_run, evictions: Vec::new() };
    if let Some(old) = retention::too_old(options, now) {
        let count = if dry_run {
            store.count(&old, now).await.map_err(Error::Store)?
        } else {
            evict_matching(store, &old, u64::MAX, EvictionReason::MaxAge, archive, now, counters).await?
        };
        report.push(EvictionReason::MaxAge, count, archive_name.as_deref());
    }
    let total = store.count(&Filter::all(), now).await.map_err(Error::Store)?;
    // In a dry run the age limit removed nothing yet: count what it would leave.
    let total = if dry_run { total.saturating_sub(report.total()) } else { total };
    if let Some((n, evictable)) = retention::over_count(options, total) {
        let count = if dry_run {
            n.min(store.count(&evictable, now).await.map_err(Error::Store)?)
        } else {
            evict_matching(store, &evictable, n, EvictionReason::MaxCount, archive, now, counters).await?
        };
        report.push(EvictionReason::MaxCount, count, archive_name.as_deref());
    }
    Ok(report)
}

impl RetentionReport {
    fn push(&mut self, reason: EvictionReason, count: u64, archive: Option<&str>) {
        if count > 0 {
            self.evictions.push(Eviction { reason, count, archive: archive.map(str::to_string) });
        }
    }
}

/// Evicts up to `limit` of the oldest records matching `filter`, a batch at a time; returns
/// how many were removed.
async fn evict_matching(
    store: &Arc<dyn DlqStore>,
    filter: &Filter,
    limit: u64,
    reason: EvictionReason,
    archive: Option<&dyn Archive>,
    now: Timestamp,
    counters: Option<&OpsCounters>,
) -> Result<u64> {
    let mut removed = 0u64;
    while removed < limit {
        let want = usize::try_from(limit - removed).unwrap_or(usize::MAX).min(BATCH);
        let batch = store.peek(filter, Page { offset: 0, limit: want }, now).await.map_err(Error::Store)?;
        if batch.is_empty() {
            break;
        }
        if let Some(archive) = archive {
            keep(archive, &batch).await?;
        }
        // The intent first (issue 44, finding 9): a trail that refuses it stops the eviction,
        // so nothing leaves the DLQ without its entry.
        let intent = AuditEntry {
            id: 0,
            at: now,
            operator: RETENTION_OPERATOR.to_string(),
            action: AuditAction::Evict,
            filter: filter.compact_json(),
            count: 0,
            detail: format!("evict up to {} records ({})", batch.len(), reason.as_str()),
            error: None,
            stage: AuditStage::Intent,
            intent: None,
        };
        let intent_id = store.audit_append(&intent).await.map_err(|e| {
            Error::Store(StoreError::Backend(format!(
                "retention evicted nothing: the audit trail did not take the eviction's intent: {e}"
            )))
        })?;
        let intent = AuditEntry { id: intent_id, ..intent };
        // Exactly the versions archived: a record edited, replayed or stored again since the
        // read stays, with its newer content (issue 44, finding 8).
        let n = store.purge_unchanged(&batch, now).await.map_err(Error::Store)?;
        let name = archive.map(Archive::name);
        trace_eviction(store, intent, reason, n, name.as_deref(), counters).await;
        removed += n;
        if n == 0 {
            // Every record of the batch was leased meanwhile: the next read would find them again.
            break;
        }
    }
    Ok(removed)
}

/// Hands `records` to the archive as JSONL (the export's format), so that they are kept before
/// the store lets them go. The records are redacted by the one rule
/// (`captcha_dlq_core::dlq::redact`): an archive outlives the proxies and cookies of its tasks,
/// and is read to learn what was dropped, not to solve it.
async fn keep(archive: &dyn Archive, records: &[DeadLetterRecord]) -> Result<()> {
    archive.keep(export_jsonl_redacted(records), records.len()).await.map_err(|e| {
        Error::Io(format!(
            "dlq_retention.archive: {} did not take {} record(s) ({e}); nothing was removed",
            archive.name(),
            records.len()
        ))
    })
}

/// The trace of one evicted batch: counted, logged and its result entered in the audit trail
/// (as the operator `retention`, with the limit's filter, after its `intent` entry) — one call
/// site for every eviction, whoever applies the limits. The records are gone by now, so a trail
/// that refuses the entry is logged as an error rather than answered.
async fn trace_eviction(
    store: &Arc<dyn DlqStore>,
    intent: AuditEntry,
    reason: EvictionReason,
    n: u64,
    archive: Option<&str>,
    counters: Option<&OpsCounters>,
) {
    if let Some(c) = counters.filter(|_| n > 0) {
        c.evicted(reason, n);
    }
    let detail = match archive {
        Some(name) => format!("{}, archived to {name}", reason.as_str()),
        None => format!("{}, not archived", reason.as_str()),
    };
    let entry = AuditEntry { id: 0, count: n, detail, stage: AuditStage::Result, intent: Some(intent.id), ..intent };
    if let Err(e) = store.audit_append(&entry).await {
        tracing::error!(target: "captcha_dlq", evicted = n, error = %e, "the audit trail did not take the eviction's entry");
    }
    if n == 0 {
        return;
    }
    match archive {
        Some(name) => tracing::info!(
            target: "captcha_dlq",
            evicted = n,
            reason = reason.as_str(),
            "DLQ retention evicted {n} record(s) ({}), archived to {name}",
            reason.as_str()
        ),
        None => tracing::warn!(
            target: "captcha_dlq",
            evicted = n,
            reason = reason.as_str(),
            "DLQ retention evicted {n} record(s) ({}) without an archive: they are gone",
            reason.as_str()
        ),
    }
}

impl crate::Dlq {
    /// Applies the client's `dlq_retention` now (see the module doc); `dry_run` only counts.
    /// Without the option, nothing to do.
    pub async fn retain(&self, dry_run: bool) -> Result<RetentionReport> {
        let inner = &self.client().inner;
        let Some(options) = &inner.options.dlq_retention else {
            return Ok(RetentionReport { dry_run, evictions: Vec::new() });
        };
        let now = inner.backends.runtime.now();
        apply_to(&inner.backends.store, options, inner.archive(options)?.as_deref(), now, dry_run, Some(&inner.ops))
            .await
    }
}

/// Applies the client's `dlq_retention` every `interval_ms` while the client lives.
pub(crate) async fn run_periodically(client: std::sync::Weak<crate::inner::Inner>, options: RetentionOptions) {
    let every = retention::interval(&options);
    loop {
        let Some(runtime) = client.upgrade().map(|inner| inner.backends.runtime.clone()) else { return };
        runtime.sleep(every).await;
        let Some(inner) = client.upgrade() else { return };
        if inner.commands.is_closed() {
            return;
        }
        let now = runtime.now();
        let applied = match inner.archive(&options) {
            Ok(archive) => {
                apply_to(&inner.backends.store, &options, archive.as_deref(), now, false, Some(&inner.ops)).await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = applied {
            tracing::warn!(target: "captcha_dlq", "DLQ retention not applied this time: {e}");
        }
    }
}

impl crate::inner::Inner {
    /// Where this client's evictions are kept: the archive it was started with
    /// ([`Client::start_archiving`](crate::Client::start_archiving)), else the options' file.
    fn archive(&self, options: &RetentionOptions) -> Result<Option<Arc<dyn Archive>>> {
        match &self.archive {
            Some(archive) => Ok(Some(archive.clone())),
            None => file_archive(options),
        }
    }
}
