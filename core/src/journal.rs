//! The in-flight journal: what a driver persists so that a task survives the
//! process dying between submission and its end.

use serde::Serialize;

use crate::history::HistoryEntry;
use crate::labels::Labels;
use crate::solution::Solution;
use crate::support::json_read::{deserialize_from_json, read_fields};
use crate::support::time::Timestamp;
use crate::task::ValidTask;

/// A task in flight. Written when the engine accepts it (before anything is
/// sent) and rewritten when it gets a provider task id; rewritten with its
/// `solution` once solved, so the answer is durable before it is handed over;
/// removed (`journal_forget`) only after the answer reached its caller, or by
/// the store in the same transaction as the task's dead-letter record.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JournalEntry {
    /// A ULID; becomes the dead-letter record's id if the task fails.
    pub id: String,
    /// Shared with the engine's job: writing an entry does not copy the task.
    pub task: ValidTask,
    pub provider: String,
    /// Shared with the engine's job, as the task is.
    #[serde(default)]
    pub labels: Labels,
    /// The provider's id of the current submission, once it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_task_id: Option<String>,
    pub attempts: u32,
    #[serde(default)]
    pub replays: u32,
    #[serde(default)]
    pub history: Vec<HistoryEntry>,
    pub accepted_at: Timestamp,
    pub updated_at: Timestamp,
    /// Set on jobs replayed out of the DLQ: the record they came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
    /// The driver instance working on it (host, process, instance), stamped by the driver so
    /// that recovery takes over only entries whose owner is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The caller's stable name for the task (a batch line, an application id). When the
    /// task ends, the store remembers the key as settled in the same transaction, so the
    /// same work is never submitted twice (see `DlqStore::settled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The answer, once solved and not yet handed over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solution: Option<Solution>,
    /// The caller wants the task only until then (its `ttl_ms` after it was accepted): past
    /// it, a task not solved goes to the DLQ as `TTLExpired` and nothing more is paid for it
    /// (the Azure Service Bus message TTL of the seeds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wanted_until: Option<Timestamp>,
}

read_fields!(
    /// Unknown fields are ignored, as they were when `JournalEntry` derived `Deserialize`.
    JournalEntry, open, id: req, task: req, provider: req, labels: or_default, provider_task_id: opt, attempts: req,
    replays: or_default, history: or_default, accepted_at: req, updated_at: req, replay_of: opt, owner: opt, key: opt,
    solution: opt, wanted_until: opt
);

deserialize_from_json!(JournalEntry);
