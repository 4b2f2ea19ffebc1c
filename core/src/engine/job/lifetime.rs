//! What a job keeps over its whole life, across attempts: [`Lifetime`].

use core::time::Duration;

use crate::dlq::record::HistoryEntry;
use crate::engine::MAX_HISTORY;
use crate::solution::Solution;
use crate::support::time::Timestamp;

/// A task's life in this engine and before it (replays, an earlier process): when it was
/// accepted and until when it is worked on, the provider submissions made and still allowed,
/// its failures (history, the billed ones, the first), the backoff reached, and a paid answer
/// its dead letter keeps.
///
/// Calling contract: made when the engine takes the task ([`new`](Self::new)), with what an
/// earlier life left added at once ([`continues`](Self::continues)). Every change is one
/// event of the task's life, named by its method; the engine keeps its deadline index in step
/// with [`want_until`](Self::want_until)'s answer. Nothing here is reset between attempts
/// (that is [`super::Attempt`]).
#[derive(Clone, Debug)]
pub(in crate::engine) struct Lifetime {
    accepted_at: Timestamp,
    deadline: Timestamp,
    /// The caller wants it only until then (`ttl_ms`): its deadline is this when earlier, and
    /// reaching it is `TTLExpired` rather than `Timeout`.
    wanted_until: Option<Timestamp>,
    /// Provider submissions made over the task's whole life.
    attempts: u32,
    /// Submissions still allowed in this life (fresh, replayed or recovered).
    attempts_left: u32,
    replays: u32,
    /// Failures the service charged for (`Failure::billed`), over every attempt.
    billed_failures: u32,
    history: Vec<HistoryEntry>,
    first_failed_at: Option<Timestamp>,
    /// The last backoff delay: the next one is drawn from it (decorrelated jitter).
    last_delay: Duration,
    /// A paid answer its dead letter keeps (an answer past its life).
    kept_answer: Option<Solution>,
}

impl Lifetime {
    pub(in crate::engine) fn new(accepted_at: Timestamp, deadline: Timestamp, attempts_left: u32) -> Lifetime {
        Lifetime {
            accepted_at,
            deadline,
            wanted_until: None,
            attempts: 0,
            attempts_left,
            replays: 0,
            billed_failures: 0,
            history: Vec::new(),
            first_failed_at: None,
            last_delay: Duration::ZERO,
            kept_answer: None,
        }
    }

    /// What an earlier life left: its submissions, replays and history (a replayed record or
    /// a journal entry), and when it first failed if that is known.
    pub(in crate::engine) fn continues(
        &mut self,
        attempts: u32,
        replays: u32,
        history: Vec<HistoryEntry>,
        first_failed_at: Option<Timestamp>,
    ) {
        self.attempts = attempts;
        self.replays = replays;
        self.history = history;
        self.first_failed_at = first_failed_at;
    }

    pub(in crate::engine) fn accepted_at(&self) -> Timestamp {
        self.accepted_at
    }

    pub(in crate::engine) fn deadline(&self) -> Timestamp {
        self.deadline
    }

    pub(in crate::engine) fn wanted_until(&self) -> Option<Timestamp> {
        self.wanted_until
    }

    /// The caller wants the task only until `until`; the deadline moves there when that is
    /// earlier, and then the deadline it had is answered (for the engine's deadline index).
    pub(in crate::engine) fn want_until(&mut self, until: Timestamp) -> Option<Timestamp> {
        self.wanted_until = Some(until);
        (until < self.deadline).then(|| core::mem::replace(&mut self.deadline, until))
    }

    /// The caller chose to have it solved again (`recover --resolve-expired`): its
    /// time-to-live no longer counts (the deadline it set stays).
    pub(in crate::engine) fn forget_wanted_until(&mut self) {
        self.wanted_until = None;
    }

    pub(in crate::engine) fn attempts(&self) -> u32 {
        self.attempts
    }

    pub(in crate::engine) fn attempts_left(&self) -> u32 {
        self.attempts_left
    }

    pub(in crate::engine) fn replays(&self) -> u32 {
        self.replays
    }

    pub(in crate::engine) fn billed_failures(&self) -> u32 {
        self.billed_failures
    }

    /// A submission reached the provider (accepted, answered at once, or its answer lost on
    /// the way): one attempt made, one fewer left.
    pub(in crate::engine) fn count_submission(&mut self) {
        self.attempts += 1;
        self.attempts_left = self.attempts_left.saturating_sub(1);
    }

    /// A submission the provider refused counts as an attempt; whether it also uses one of
    /// those left is the reaction's to say ([`use_one_left`](Self::use_one_left)).
    pub(in crate::engine) fn count_refused_submission(&mut self) {
        self.attempts += 1;
    }

    /// One fewer submission left (a refused one the task is resubmitted after).
    pub(in crate::engine) fn use_one_left(&mut self) {
        self.attempts_left = self.attempts_left.saturating_sub(1);
    }

    /// Nothing more is spent on it (cancelled while submitted).
    pub(in crate::engine) fn spend_no_more(&mut self) {
        self.attempts_left = 0;
    }

    /// It may be submitted at least once more (solving an expired answer again).
    pub(in crate::engine) fn allow_another(&mut self) {
        self.attempts_left = self.attempts_left.max(1);
    }

    pub(in crate::engine) fn count_billed_failure(&mut self) {
        self.billed_failures += 1;
    }

    pub(in crate::engine) fn history(&self) -> &[HistoryEntry] {
        &self.history
    }

    /// A failure, for its history (the oldest dropped past `MAX_HISTORY`; the count of
    /// attempts is kept apart and never lost).
    pub(in crate::engine) fn record_failure(&mut self, entry: HistoryEntry, now: Timestamp) {
        self.history.push(entry);
        if self.history.len() > MAX_HISTORY {
            self.history.remove(0);
        }
        self.first_failed_at.get_or_insert(now);
    }

    pub(in crate::engine) fn first_failed_at(&self) -> Option<Timestamp> {
        self.first_failed_at
    }

    pub(in crate::engine) fn last_delay(&self) -> Duration {
        self.last_delay
    }

    pub(in crate::engine) fn remember_delay(&mut self, delay: Duration) {
        self.last_delay = delay;
    }

    /// Its dead letter keeps `answer` (paid, but past its life).
    pub(in crate::engine) fn keep_answer(&mut self, answer: Solution) {
        self.kept_answer = Some(answer);
    }

    /// Its history and kept answer, for the record the ended job becomes.
    pub(in crate::engine) fn into_history_and_answer(self) -> (Vec<HistoryEntry>, Option<Solution>) {
        (self.history, self.kept_answer)
    }
}
