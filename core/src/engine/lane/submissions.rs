//! A lane's submissions: those waiting and those in flight ([`Submissions`]).

use std::collections::BTreeSet;

use crate::engine::JobId;
use crate::support::time::Timestamp;

/// The jobs waiting at a lane for a submission (by when they may go), how many it has in
/// flight, and the budget those reserve.
///
/// Calling contract: a job enters the queue with [`enqueue`](Self::enqueue) and leaves it with
/// [`dequeue`](Self::dequeue) or [`take_next`](Self::take_next); every [`sent`](Self::sent) or
/// [`resumed`](Self::resumed) is matched by one [`ended`](Self::ended) with the same cost.
#[derive(Debug, Default)]
pub(in crate::engine) struct Submissions {
    queue: BTreeSet<(Timestamp, JobId)>,
    in_flight: usize,
    /// The known cost of its tasks in flight, reserved against the budget (nano-units).
    reserved: u64,
}

impl Submissions {
    pub(in crate::engine) fn enqueue(&mut self, at: Timestamp, job: JobId) {
        self.queue.insert((at, job));
    }

    pub(in crate::engine) fn dequeue(&mut self, at: Timestamp, job: JobId) {
        self.queue.remove(&(at, job));
    }

    /// The job that waits longest, with when it may go.
    pub(in crate::engine) fn next(&self) -> Option<(Timestamp, JobId)> {
        self.queue.first().copied()
    }

    /// Takes the job [`next`](Self::next) named off the queue.
    pub(in crate::engine) fn take_next(&mut self) {
        self.queue.pop_first();
    }

    /// The jobs waiting, longest first.
    pub(in crate::engine) fn waiting(&self) -> Vec<JobId> {
        self.queue.iter().map(|(_, job)| *job).collect()
    }

    pub(in crate::engine) fn waiting_count(&self) -> usize {
        self.queue.len()
    }

    pub(in crate::engine) fn in_flight(&self) -> usize {
        self.in_flight
    }

    pub(in crate::engine) fn reserved(&self) -> u64 {
        self.reserved
    }

    /// A task was sent, reserving `cost` (nano-units).
    pub(in crate::engine) fn sent(&mut self, cost: u64) {
        self.in_flight += 1;
        self.reserved = self.reserved.saturating_add(cost);
    }

    /// A task recovered from the journal runs again (its cost was paid before).
    pub(in crate::engine) fn resumed(&mut self) {
        self.in_flight += 1;
    }

    /// A task sent ended, freeing what it reserved.
    pub(in crate::engine) fn ended(&mut self, cost: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.reserved = self.reserved.saturating_sub(cost);
    }
}
