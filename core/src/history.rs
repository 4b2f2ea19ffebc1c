//! A task's failure history: one [`HistoryEntry`] per failed attempt, with the [`Phase`] it failed
//! in. The in-flight journal entry keeps it while the task runs, and its dead-letter record
//! carries it over; both read it from here.

use serde::Serialize;
use serde_json::Value;

use crate::support::json_read::{deserialize_from_json, read_fields, unit_variant, FieldError, FromJson};
use crate::support::time::Timestamp;

/// One failure in the task's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HistoryEntry {
    pub at: Timestamp,
    pub phase: Phase,
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The provider the attempt ran at, as the client names it (absent in records written
    /// before clients had several providers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Submit,
    Poll,
    Deadline,
    Recover,
    Cancel,
    Application,
    Import,
    /// An operator changed the record's task or labels (`dlq::edit`); the entry's text is the diff.
    Edit,
}

impl Phase {
    pub const ALL: [Phase; 8] = [
        Phase::Submit,
        Phase::Poll,
        Phase::Deadline,
        Phase::Recover,
        Phase::Cancel,
        Phase::Application,
        Phase::Import,
        Phase::Edit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Submit => "submit",
            Phase::Poll => "poll",
            Phase::Deadline => "deadline",
            Phase::Recover => "recover",
            Phase::Cancel => "cancel",
            Phase::Application => "application",
            Phase::Import => "import",
            Phase::Edit => "edit",
        }
    }
}

read_fields!(
    HistoryEntry, open, at: req, phase: req, error: req, provider_task_id: opt, http_status: opt, provider: opt
);

impl FromJson for Phase {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        unit_variant(value, &Phase::ALL, Phase::as_str)
    }
}

deserialize_from_json!(HistoryEntry, Phase);
