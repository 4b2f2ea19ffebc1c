//! What names a job and what it is: [`Identity`].

use crate::labels::Labels;
use crate::task::{TaskKind, ValidTask};

/// What names a task and what it is, from acceptance to its end: its record id (the ULID its
/// journal entry and dead letter carry; the engine's own handle is the `JobId`), the task and
/// its labels, the caller's key, and the DLQ record it replays.
///
/// Calling contract: made once when the engine takes a task ([`new`](Self::new)); the caller's
/// key and the record it continues are said right after, before anything is written for it
/// ([`set_key`](Self::set_key), [`replays`](Self::replays), [`continues`](Self::continues)).
/// Nothing changes afterwards; [`into_parts`](Self::into_parts) hands its parts to the journal
/// entry or dead letter the ended job becomes (moved, not copied).
#[derive(Clone, Debug)]
pub(in crate::engine) struct Identity {
    record_id: String,
    /// Shared with the journal entries written for it.
    task: ValidTask,
    labels: Labels,
    /// The caller's stable name for the task (see `JournalEntry::key`).
    key: Option<String>,
    replay_of: Option<String>,
    /// A replay whose lease the driver holds: its dead letter settles that lease instead of
    /// being pushed (a replay found in the journal after a restart has lost its lease).
    lease_held: bool,
}

/// An [`Identity`] taken apart when its job ends.
#[derive(Debug)]
pub(in crate::engine) struct IdentityParts {
    pub record_id: String,
    pub task: ValidTask,
    pub labels: Labels,
    pub key: Option<String>,
    pub replay_of: Option<String>,
    pub lease_held: bool,
}

impl Identity {
    pub(in crate::engine) fn new(record_id: String, task: ValidTask, labels: Labels) -> Identity {
        Identity { record_id, task, labels, key: None, replay_of: None, lease_held: false }
    }

    /// The caller named the task `key`.
    pub(in crate::engine) fn set_key(&mut self, key: Option<String>) {
        self.key = key;
    }

    /// It replays the DLQ record `record_id`, whose lease the driver holds.
    pub(in crate::engine) fn replays(&mut self, record_id: String) {
        self.replay_of = Some(record_id);
        self.lease_held = true;
    }

    /// It continues a journal entry (recovery): that entry's replayed record and key; a lease
    /// it may have had died with the process that held it.
    pub(in crate::engine) fn continues(&mut self, replay_of: Option<String>, key: Option<String>) {
        self.replay_of = replay_of;
        self.key = key;
    }

    pub(in crate::engine) fn record_id(&self) -> &str {
        &self.record_id
    }

    pub(in crate::engine) fn task(&self) -> &ValidTask {
        &self.task
    }

    pub(in crate::engine) fn kind(&self) -> TaskKind {
        self.task.kind()
    }

    pub(in crate::engine) fn labels(&self) -> &Labels {
        &self.labels
    }

    pub(in crate::engine) fn key(&self) -> Option<&String> {
        self.key.as_ref()
    }

    pub(in crate::engine) fn replay_of(&self) -> Option<&String> {
        self.replay_of.as_ref()
    }

    pub(in crate::engine) fn into_parts(self) -> IdentityParts {
        let Identity { record_id, task, labels, key, replay_of, lease_held } = self;
        IdentityParts { record_id, task, labels, key, replay_of, lease_held }
    }
}
