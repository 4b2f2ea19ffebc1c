//! The task's current attempt at its provider: [`Attempt`], and what starts the next one
//! ([`Next`]).

use std::sync::Arc;

use crate::class::ErrorClass;
use crate::support::time::Timestamp;

/// The current submission of a task and what its requests met: the provider's task id, when
/// it was sent and accepted, the polls made, the failed requests in a row of each kind, and
/// the budget it reserves while submitted.
///
/// Calling contract: what begins a new attempt goes through [`reset_for`](Self::reset_for),
/// the one place its counters start again; the rest records one request each
/// ([`sent`](Self::sent), [`polled`](Self::polled), [`count_failure`](Self::count_failure),
/// [`answered`](Self::answered)). Times are arguments: it reads no clock.
#[derive(Clone, Debug)]
pub(in crate::engine) struct Attempt {
    /// Shared with the poll requests that carry it (a batch poll names up to 100).
    provider_task_id: Option<Arc<str>>,
    /// When the provider accepted it (the polling schedule counts from there).
    submitted_at: Timestamp,
    /// When this engine sent the submission (for the latency routing observes).
    sent_at: Option<Timestamp>,
    polls: u32,
    /// Transient failures in a row.
    request_failures: u32,
    /// Retry-after (slow down) failures in a row.
    retry_after_failures: u32,
    /// Its expected cost, reserved against the budget while it is submitted (nano-units).
    reserved: u64,
}

/// What starts a task's next attempt (see [`Attempt::reset_for`]).
#[derive(Clone, Debug)]
pub(in crate::engine) enum Next {
    /// The provider accepted a submission at `at` (or answered it at once): its task id,
    /// polled from zero.
    Accepted { provider_task_id: Option<Arc<str>>, at: Timestamp },
    /// Found in the journal (recovery): the provider task it names, if any.
    FromJournal { provider_task_id: Option<Arc<str>> },
    /// Submitted again where it was: no provider task yet. The last attempt's polls are kept
    /// until the next one is accepted (a deadline's dead letter counts "the last one's").
    Resubmission,
    /// Moved to another provider (failover): nothing of the last attempt is kept.
    Moved,
}

impl Attempt {
    /// No attempt yet (a task accepted at `now`).
    pub(in crate::engine) fn new(now: Timestamp) -> Attempt {
        Attempt {
            provider_task_id: None,
            submitted_at: now,
            sent_at: None,
            polls: 0,
            request_failures: 0,
            retry_after_failures: 0,
            reserved: 0,
        }
    }

    /// Starts the next attempt: every per-attempt counter starts again here and nowhere else.
    pub(in crate::engine) fn reset_for(&mut self, next: Next) {
        self.end_streaks();
        match next {
            Next::Accepted { provider_task_id, at } => {
                self.provider_task_id = provider_task_id;
                self.submitted_at = at;
                self.polls = 0;
            }
            Next::FromJournal { provider_task_id } => self.provider_task_id = provider_task_id,
            Next::Resubmission => self.provider_task_id = None,
            Next::Moved => {
                self.provider_task_id = None;
                self.polls = 0;
            }
        }
    }

    /// The submission went out at `now`, reserving `cost` (nano-units) against the budget.
    pub(in crate::engine) fn sent(&mut self, now: Timestamp, cost: u64) {
        self.sent_at = Some(now);
        self.reserved = cost;
    }

    /// The submission ended (or never was): what it reserved, now freed.
    pub(in crate::engine) fn release_reservation(&mut self) -> u64 {
        core::mem::take(&mut self.reserved)
    }

    /// A poll request asks for it: one more poll, and the provider task id it names (`None`,
    /// counting nothing, while there is no provider task to ask for).
    pub(in crate::engine) fn polled(&mut self) -> Option<Arc<str>> {
        let id = self.provider_task_id.clone()?;
        self.polls += 1;
        Some(id)
    }

    /// A poll is not held against it (a garbled batch answer, not the task's doing).
    pub(in crate::engine) fn uncount_poll(&mut self) {
        self.polls = self.polls.saturating_sub(1);
    }

    /// A request for it failed with `class`: the streak of its kind grows.
    pub(in crate::engine) fn count_failure(&mut self, class: ErrorClass) {
        match class {
            ErrorClass::Transient => self.request_failures += 1,
            ErrorClass::RetryAfter => self.retry_after_failures += 1,
            _ => {}
        }
    }

    /// The provider answered a poll for it (not ready yet): the failure streaks end.
    pub(in crate::engine) fn answered(&mut self) {
        self.end_streaks();
    }

    fn end_streaks(&mut self) {
        self.request_failures = 0;
        self.retry_after_failures = 0;
    }

    pub(in crate::engine) fn provider_task_id(&self) -> Option<&str> {
        self.provider_task_id.as_deref()
    }

    pub(in crate::engine) fn submitted_at(&self) -> Timestamp {
        self.submitted_at
    }

    pub(in crate::engine) fn sent_at(&self) -> Option<Timestamp> {
        self.sent_at
    }

    pub(in crate::engine) fn polls(&self) -> u32 {
        self.polls
    }

    pub(in crate::engine) fn request_failures(&self) -> u32 {
        self.request_failures
    }

    pub(in crate::engine) fn retry_after_failures(&self) -> u32 {
        self.retry_after_failures
    }
}
