//! The dead-letter record, schema 1 (docs/decisions/0065-dead-letter-record-schema-1.md): everything needed to replay
//! a task safely and to see why it failed. Never holds the API key.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::class::ErrorClass;
use crate::solution::Solution;
use crate::support::json_read::{deserialize_from_json, read_fields, unit_variant, FieldError, FromJson};
use crate::task::ValidTask;
// A record's history is the journal entry's, carried over when the task is dead-lettered.
pub use crate::history::{HistoryEntry, Phase};
use crate::support::time::Timestamp;

pub const SCHEMA: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeadLetterRecord {
    pub schema: u32,
    /// A ULID; the same id the task had in the journal while in flight.
    pub id: String,
    pub task: ValidTask,
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
    /// A paid answer that was not handed over, kept for the record (a `TTLExpired` dead letter
    /// of an answer past its life: its text, its `cost`, `solved_at` and `expires_at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solution: Option<Solution>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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
    pub const ALL: [RecordState; 3] = [RecordState::Ready, RecordState::Leased, RecordState::Parked];

    pub fn as_str(self) -> &'static str {
        match self {
            RecordState::Ready => "ready",
            RecordState::Leased => "leased",
            RecordState::Parked => "parked",
        }
    }
}

impl DeadLetterRecord {
    /// Whether `other` is the same version of this record: the same task, labels, history,
    /// reason, attempts, replays and dead-letter time. An edit, a failed replay and a record
    /// stored again all change one of them; its state, deliveries and park reason are the
    /// store's bookkeeping and do not count. Retention deletes only the version it archived
    /// ([`DlqStore::purge_unchanged`](crate::dlq::DlqStore::purge_unchanged)).
    pub fn same_version(&self, other: &DeadLetterRecord) -> bool {
        (&self.id, &self.task, &self.labels, &self.history, &self.reason)
            == (&other.id, &other.task, &other.labels, &other.history, &other.reason)
            && (self.attempts, self.replays, self.dead_lettered_at)
                == (other.attempts, other.replays, other.dead_lettered_at)
    }

    /// The host of the page the task was for, if it has one.
    pub fn page_host(&self) -> Option<String> {
        crate::support::weburl::host_of(self.task.page_url()?)
    }
}

// Read by hand rather than derived (see `crate::support::json_read`); unknown fields
// are ignored, as the derived readers did, so that records written by a
// newer minor version still load.

read_fields!(
    DeadLetterRecord, open, schema: req, id: req, task: req, provider: req, reason: req, description: req, class: req,
    attempts: req, replays: req, history: req, first_failed_at: req, dead_lettered_at: req, labels: or_default,
    state: req, deliveries: or_default, parked_reason: opt, solution: opt
);

impl FromJson for RecordState {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        unit_variant(value, &RecordState::ALL, RecordState::as_str)
    }
}

deserialize_from_json!(DeadLetterRecord, RecordState);
