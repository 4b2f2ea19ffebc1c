//! The in-flight journal: what a driver persists so that a task survives the
//! process dying between submission and its end.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::dlq::record::HistoryEntry;
use crate::task::Task;
use crate::time::Timestamp;

/// A task in flight. Written when the engine accepts it and rewritten when it
/// gets a provider task id; removed when the task is solved or dead-lettered
/// (by the store, in the same transaction as the dead-letter record).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// A ULID; becomes the dead-letter record's id if the task fails.
    pub id: String,
    pub task: Task,
    pub provider: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
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
}

/// What the engine asks the driver to do with the journal.
#[derive(Clone, Debug, PartialEq)]
pub enum JournalOp {
    /// Insert or replace the entry with this id.
    Upsert(JournalEntry),
    /// Remove the entry: the task was solved (dead-lettering removes it with the record).
    Forget { id: String },
}
