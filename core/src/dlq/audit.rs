//! The audit trail: who did what to the DLQ, when, to which records and how many. The client
//! appends one [`AuditEntry`] per operator action (`client/src/audit.rs`); every store keeps
//! them, never dropping one, and lists them newest first ([`DlqStore::audit_list`]).
//!
//! An action leaves two entries: its *intent*, appended before it runs (the action does not run
//! when the trail refuses it), and its *result*, appended after however it ended, pointing at
//! its intent (`intent`). An intent without a result is an action that was cut short (the
//! process ended in it). Entries written before there were intents read as results.
//!
//! Entry ids are given by the store on append: 1, 2, 3… in the order entries were appended
//! (the table store's rows, SQLite's row ids, the position in a Redis list), so `before` is a
//! cursor every store reads the same way. Feature `audit`, not in the browser build (`docs/decisions/0054-audit-trail-and-roles.md`).
//!
//! [`DlqStore::audit_list`]: crate::dlq::DlqStore::audit_list

use serde::Serialize;
use serde_json::Value;

use crate::dlq::error::StoreError;
use crate::support::json_read::{deserialize_from_json, FieldError, Fields, FromJson};
use crate::support::time::Timestamp;

/// Entries listed at most by one call.
pub const MAX_AUDIT_LIMIT: usize = 1000;

/// What an operator did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    Replay,
    Purge,
    Park,
    Unpark,
    Import,
    /// A record's task or labels changed before a replay.
    Edit,
    /// Records removed by a retention limit.
    Evict,
    /// Another process's journal entries finished (or dead-lettered) by an operator, their answers
    /// kept for whoever resumes them.
    Recover,
    /// Records exported with their secrets (proxy credentials, cookies): every other export is
    /// redacted (`crate::dlq::redact`), so this one says who took them.
    ExportSecrets,
    /// A running replay cancelled (by someone other than, or the same as, who started it).
    Cancel,
    /// An account hold (a zero balance waiting for a top-up) ended by an operator at once.
    ResumeAccounts,
}

impl AuditAction {
    pub const ALL: [AuditAction; 11] = [
        AuditAction::Replay,
        AuditAction::Purge,
        AuditAction::Park,
        AuditAction::Unpark,
        AuditAction::Import,
        AuditAction::Edit,
        AuditAction::Evict,
        AuditAction::Recover,
        AuditAction::ExportSecrets,
        AuditAction::Cancel,
        AuditAction::ResumeAccounts,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Replay => "replay",
            AuditAction::Purge => "purge",
            AuditAction::Park => "park",
            AuditAction::Unpark => "unpark",
            AuditAction::Import => "import",
            AuditAction::Edit => "edit",
            AuditAction::Evict => "evict",
            AuditAction::Recover => "recover",
            AuditAction::ExportSecrets => "export_secrets",
            AuditAction::Cancel => "cancel",
            AuditAction::ResumeAccounts => "resume_accounts",
        }
    }
}

/// Which of an action's two entries an [`AuditEntry`] is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditStage {
    /// Written before the action runs: who means to do what to which records.
    Intent,
    /// Written after it ended: how many records it touched, and its error if it failed.
    #[default]
    Result,
}

impl AuditStage {
    pub const ALL: [AuditStage; 2] = [AuditStage::Intent, AuditStage::Result];

    pub fn as_str(self) -> &'static str {
        match self {
            AuditStage::Intent => "intent",
            AuditStage::Result => "result",
        }
    }
}

impl FromJson for AuditStage {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        crate::support::json_read::unit_variant(value, &AuditStage::ALL, AuditStage::as_str)
    }
}

/// One operator action, as the audit trail keeps it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditEntry {
    /// The store's number for the entry (1 for the first); ignored by `audit_append`, which
    /// gives it.
    pub id: u64,
    /// When the action ended, on the client's clock (the `now` of its store calls).
    pub at: Timestamp,
    /// Who: a dashboard token's name, the CLI's `--as` (or `cli:USER@HOST`), an API caller's
    /// name (`api` unless it gave one).
    pub operator: String,
    pub action: AuditAction,
    /// The records selected, in the filter's own field names (`{"ids": [...]}` for one
    /// record; `null` for an import).
    pub filter: Value,
    /// How many records the action touched (so far, when it failed part way).
    pub count: u64,
    /// A short note: a park reason, a replay's outcome counts.
    pub detail: String,
    /// The action's error when it failed, in whole or in part.
    pub error: Option<String>,
    /// The intent, before the action ran, or its result after.
    pub stage: AuditStage,
    /// In a result, the id of its intent entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<u64>,
}

impl FromJson for AuditAction {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        crate::support::json_read::unit_variant(value, &AuditAction::ALL, AuditAction::as_str)
    }
}

impl FromJson for AuditEntry {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(AuditEntry {
            id: f.or_default("id")?,
            at: f.req("at")?,
            operator: f.req("operator")?,
            action: f.req("action")?,
            filter: f.or("filter", Value::Null)?,
            count: f.or_default("count")?,
            detail: f.or_default("detail")?,
            error: f.opt("error")?,
            stage: f.or("stage", AuditStage::Result)?,
            intent: f.opt("intent")?,
        })
    }
}

deserialize_from_json!(AuditEntry);

/// What a store that keeps no audit trail answers (a [`DlqStore`](crate::dlq::DlqStore) written
/// before there was one): the action it was asked to record still happened.
pub fn no_audit_trail() -> StoreError {
    StoreError::Unusable {
        location: "this store".into(),
        problem: "it keeps no audit trail (implement DlqStore::audit_append and audit_list)".into(),
    }
}

/// The audit entries of a table store's rows (or any store's), newest first, older than
/// `before`, at most `limit`: the one statement of the listing rule.
pub fn newest_first(mut entries: Vec<AuditEntry>, limit: usize, before: Option<u64>) -> Vec<AuditEntry> {
    entries.retain(|e| before.is_none_or(|b| e.id < b));
    // Ids are unique: an unstable sort orders them the same.
    entries.sort_unstable_by_key(|e| core::cmp::Reverse(e.id));
    entries.truncate(limit);
    entries
}

/// The key of the table store's row for entry `id`: zero-padded, so keys sort as ids do.
pub fn row_key(id: u64) -> String {
    format!("{id:020}")
}
