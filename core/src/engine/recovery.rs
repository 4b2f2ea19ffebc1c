//! Taking over a task a stopped process left in the journal: resumed (polled where the provider
//! has it, submitted where it never got it, handed over where its answer is already in the
//! entry) or dead-lettered as `Interrupted`.

use core::time::Duration;
use std::sync::Arc;

use super::job::{Next, Route};
use super::reaction::Reaction;
use super::{Engine, Event, JobId, ROUTING_LABEL};
use crate::class::{reason, ErrorClass, Failure};
use crate::dlq::record::Phase;
use crate::journal::JournalEntry;
use crate::support::quoted::Quoted;
use crate::support::time::Timestamp;
use crate::task::TaskKind;

/// What [`Engine::recover_with`] does with an answer past its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expired {
    /// A dead letter `TTLExpired` keeping the answer and its cost (the default: it was paid,
    /// and is never handed over as good).
    #[default]
    DeadLetter,
    /// The task is solved again (a new, paid submission): `recover --resolve-expired`.
    Resolve,
}

/// An answer's time for a description (`?` when it has none).
fn at_ms(ms: Option<u64>) -> String {
    ms.map_or_else(|| "?".into(), |ms| Timestamp::from_unix_millis(ms).to_rfc3339())
}

impl Engine {
    /// Resumes a task found in the journal at start-up: polls its provider
    /// task (at the provider the entry names) if it had one, else submits it again. An
    /// entry older than `retry.recover_max_age_ms` (its answer would be stale), or naming a
    /// provider task at a provider this client does not have, is dead-lettered as
    /// `Interrupted` instead.
    ///
    /// An answer already in the entry is handed over only while it is good: past its life
    /// (`Solution::expired`) it is dead-lettered as `TTLExpired`, its answer and cost kept in
    /// the record (see [`recover_with`](Self::recover_with) to solve it again instead). An
    /// entry past its caller's `wanted_until` without an answer is `TTLExpired` too.
    pub fn recover(&mut self, entry: JournalEntry, now: Timestamp) -> JobId {
        self.recover_with(entry, Expired::DeadLetter, now)
    }

    /// [`recover`](Self::recover), saying what becomes of an answer past its life.
    pub fn recover_with(&mut self, mut entry: JournalEntry, expired: Expired, now: Timestamp) -> JobId {
        let life = entry.task.kind_decl().life.ms();
        if let Some(solution) = entry.solution.as_mut().filter(|s| s.solved_at.is_none()) {
            // Written before answers carried their time: solved when the entry was last written.
            solution.stamp(entry.updated_at, life);
        }
        let stale = now.since(entry.updated_at) > Duration::from_millis(self.config.retry.recover_max_age_ms);
        let unsupported = self.unsupported(&entry.task).unwrap_or_default();
        let preference = self.preference_of(entry.labels.get(ROUTING_LABEL), false).unwrap_or_default();
        let lane = self.lane_named(&entry.provider);
        let allowed = self.config.retry.max_attempts.saturating_sub(entry.attempts).max(1);
        let job = self.insert_job(entry.id.clone(), entry.task, entry.labels, now, allowed);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.life.continues(entry.attempts, entry.replays, entry.history, None);
            j.identity.continues(entry.replay_of, entry.key);
            j.attempt
                .reset_for(Next::FromJournal { provider_task_id: entry.provider_task_id.as_deref().map(Arc::from) });
            j.route = Route::new(unsupported, preference);
            j.route.place(lane);
        }
        self.set_wanted_until(job, entry.wanted_until);
        let mut resolving = false;
        if let Some(solution) = entry.solution {
            if !solution.expired(now) {
                // Solved before the process stopped, and maybe never handed over: hand it over
                // now (the same record id and provider task id), since it was paid for.
                self.push_event(Event::Recovered { job, id: entry.id, resumed_polling: false });
                self.solved(job, solution, now, false);
                return job;
            }
            match expired {
                Expired::DeadLetter => {
                    let description = format!(
                        "the answer was solved at {} and expired at {} (its kind's answer life); found {} s after \
                         it was solved: kept here, not handed over",
                        at_ms(solution.solved_at),
                        at_ms(solution.expires_at),
                        now.as_unix_millis().saturating_sub(solution.solved_at.unwrap_or(0)) / 1000
                    );
                    if let Some(j) = self.jobs.get_mut(&job) {
                        j.life.keep_answer(solution);
                    }
                    let failure = super::ttl_expired_failure(description);
                    self.fail_as(job, Phase::Recover, failure, None, now, Reaction::DeadLetter);
                    return job;
                }
                // Solved again, by the caller's choice: a new submission (the provider's task
                // holds only the expired answer).
                Expired::Resolve => resolving = true,
            }
        }
        if entry.wanted_until.is_some_and(|until| until <= now) && !resolving {
            let description = format!(
                "found in the journal after the caller's ttl_ms ran out ({} attempt(s)): not resumed",
                entry.attempts
            );
            self.fail_as(job, Phase::Recover, super::ttl_expired_failure(description), None, now, Reaction::DeadLetter);
            return job;
        }
        if resolving {
            self.push_event(Event::Recovered { job, id: entry.id, resumed_polling: false });
            if let Some(j) = self.jobs.get_mut(&job) {
                j.attempt.reset_for(Next::Resubmission);
                j.life.forget_wanted_until();
                j.life.allow_another();
            }
            self.enqueue_submit(job, now, now);
            return job;
        }
        let lost_provider = entry.provider_task_id.is_some() && lane.is_none();
        // The entry's task was checked when it was read (a `ValidTask`), so only its age and its
        // provider can stop it from resuming.
        if stale || lost_provider {
            let description = if lost_provider {
                format!(
                    "found in the journal after a restart with task {} at {}, a provider this client does not have; \
                     replay it once that provider is configured again, or to submit it elsewhere",
                    entry.provider_task_id.as_deref().unwrap_or("?"),
                    Quoted(&entry.provider)
                )
            } else {
                format!(
                    "the process stopped with this task in flight; found in the journal {} s later, too late to resume",
                    now.since(entry.updated_at).as_secs()
                )
            };
            self.fail_as(
                job,
                Phase::Recover,
                Failure::new(reason::INTERRUPTED, ErrorClass::Transient, description),
                None,
                now,
                Reaction::DeadLetter,
            );
            return job;
        }
        let resumed_polling = entry.provider_task_id.is_some();
        self.push_event(Event::Recovered { job, id: entry.id, resumed_polling });
        match (entry.provider_task_id, lane) {
            (Some(pid), Some(l)) => {
                let working_time = self.lanes[l].working_time(self.jobs.get(&job).map_or(TaskKind::Raw, |j| j.kind()));
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.attempt.reset_for(Next::Accepted { provider_task_id: Some(Arc::from(pid)), at: now });
                    // The provider has been working on it since the entry was written.
                    j.route.pin_to(l, entry.updated_at.add(working_time));
                }
                self.lanes[l].resumed();
                self.set_waiting(job, now);
            }
            _ => self.enqueue_submit(job, now, now),
        }
        job
    }

    /// Dead-letters a journal entry as `Interrupted` without resuming it (an answer in it is
    /// handed over, or dead-lettered as `TTLExpired` when past its life).
    pub fn interrupt(&mut self, entry: JournalEntry, now: Timestamp) -> JobId {
        if entry.solution.is_some() {
            // An answer is never thrown away: hand it over instead.
            return self.recover(entry, now);
        }
        let lane = self.lane_named(&entry.provider);
        let job = self.insert_job(entry.id.clone(), entry.task, entry.labels, now, 0);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.life.continues(entry.attempts, entry.replays, entry.history, None);
            j.attempt.reset_for(Next::FromJournal { provider_task_id: entry.provider_task_id.map(Arc::from) });
            j.identity.continues(entry.replay_of, entry.key);
            j.route.place(lane);
        }
        let failure =
            Failure::new(reason::INTERRUPTED, ErrorClass::Transient, "the process stopped with this task in flight");
        self.fail_as(job, Phase::Recover, failure, None, now, Reaction::DeadLetter);
        job
    }
}
