//! When a lane's fleet share syncs: [`SyncSchedule`].

use crate::support::time::Timestamp;

/// Whether a sync is out, when the next heartbeat is, and not before when a sync may ask for
/// permits again (after a failed sync, or one that brought none).
///
/// Calling contract: [`start`](Self::start) when a sync is asked for; exactly one of
/// [`granted`](Self::granted), [`failed`](Self::failed) or [`due_now`](Self::due_now) ends it.
/// Times are arguments.
#[derive(Debug)]
pub(in crate::engine) struct SyncSchedule {
    syncing: bool,
    /// The next heartbeat.
    next: Timestamp,
    retry_at: Option<Timestamp>,
}

impl Default for SyncSchedule {
    fn default() -> Self {
        SyncSchedule { syncing: false, next: Timestamp::EPOCH, retry_at: None }
    }
}

impl SyncSchedule {
    /// A sync is out (its answer not yet in).
    pub(in crate::engine) fn syncing(&self) -> bool {
        self.syncing
    }

    pub(in crate::engine) fn next(&self) -> Timestamp {
        self.next
    }

    /// Not before this may a sync ask for permits again (`None`: no such wait).
    pub(in crate::engine) fn retry_at(&self) -> Option<Timestamp> {
        self.retry_at
    }

    pub(in crate::engine) fn start(&mut self) {
        self.syncing = true;
    }

    /// The sync was answered: the next heartbeat is at `next`, and a sync that brought no permit
    /// waits until `retry_at`.
    pub(in crate::engine) fn granted(&mut self, next: Timestamp, retry_at: Option<Timestamp>) {
        self.syncing = false;
        self.next = next;
        self.retry_at = retry_at;
    }

    /// The sync failed: the next one, and any ask for permits, not before `retry_at`.
    pub(in crate::engine) fn failed(&mut self, retry_at: Timestamp) {
        self.syncing = false;
        self.retry_at = Some(retry_at);
        self.next = retry_at;
    }

    /// A sync is due at once, whatever the timers said (the client closes).
    pub(in crate::engine) fn due_now(&mut self, now: Timestamp) {
        self.syncing = false;
        self.next = now;
        self.retry_at = None;
    }
}
