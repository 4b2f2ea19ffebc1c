//! The dead-letter record, schema 1 (DESIGN §5): everything needed to replay
//! a task safely and to see why it failed. Never holds the API key.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::class::ErrorClass;
use crate::task::Task;
use crate::time::Timestamp;

pub const SCHEMA: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeadLetterRecord {
    pub schema: u32,
    /// A ULID; the same id the task had in the journal while in flight.
    pub id: String,
    pub task: Task,
    pub provider: String,
    /// A provider code or a system reason ([`crate::class::reason`]).
    pub reason: String,
    pub description: String,
    pub class: ErrorClass,
    /// Provider submissions made for this task, over its whole life.
    pub attempts: u32,
    /// Times it was taken out of the DLQ and tried again.
    pub replays: u32,
    pub history: Vec<HistoryEntry>,
    pub first_failed_at: Timestamp,
    pub dead_lettered_at: Timestamp,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    pub state: RecordState,
    /// Leases handed out for this record (peek-lock deliveries).
    #[serde(default)]
    pub deliveries: u32,
    /// Why it was parked, when `state` is `parked`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parked_reason: Option<String>,
}

/// One failure in the task's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub at: Timestamp,
    pub phase: Phase,
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Submit,
    Poll,
    Deadline,
    Recover,
    Cancel,
    Application,
    Import,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordState {
    /// Waiting to be received.
    Ready,
    /// Leased to a replayer until the lease expires.
    Leased,
    /// Set aside for review; never received until un-parked by an operator.
    Parked,
}

impl RecordState {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordState::Ready => "ready",
            RecordState::Leased => "leased",
            RecordState::Parked => "parked",
        }
    }
}

impl DeadLetterRecord {
    /// The host of the page the task was for, if it has one.
    pub fn page_host(&self) -> Option<String> {
        crate::weburl::host_of(self.task.page_url()?)
    }
}
