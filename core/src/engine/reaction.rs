//! What a failure does to a task, decided in one place and applied in one place.
//!
//! [`decide`] is pure: from the job's counters, whether its lane would hold for an account
//! error, the failure (its class, the wait the service asked for, whether it says the service
//! is congested) and the retry policy, it picks one [`Reaction`]. [`Engine::fail`] records the
//! failure in the job's history, asks `decide`, then applies the reaction; a caller that
//! already knows the answer (a deadline, a refusal before sending, an unreachable provider)
//! applies one directly with [`Engine::fail_as`]. Every way a job ends in failure goes through
//! [`Engine::fail_as`]: the dead letter is written by one function ([`Engine::dead_letter_job`]).

use core::time::Duration;

use super::config::RetryConfig;
use super::event::PauseScope;
use super::job::{Job, Next};
use super::lane::{Hold, KIND_REFUSED_FOR};
use super::lane_id::LaneId;
use super::{millis, Action, Engine, Event, JobId, Stage};
use crate::class::{reason, ErrorClass, Failure};
use crate::dlq::record::{DeadLetterRecord, HistoryEntry, Phase, RecordState, SCHEMA};
use crate::http::TransportError;
use crate::support::time::Timestamp;

/// What a failure does to a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reaction {
    /// The provider is still working on it: poll again, or give up once its polls are spent.
    PollAgain,
    /// The same request again after the `backoff_n`-th backoff step, at least `at_least` later.
    /// `pause`: the provider asked its lane to hold off (submissions or polls) for that long;
    /// `fewer_at_once`: the provider has no free worker, so its window halves instead.
    RetryRequest { backoff_n: u32, at_least: Duration, pause: Option<(PauseScope, Duration)>, fewer_at_once: bool },
    /// The provider answered that it cannot solve it: another attempt (here or at another
    /// provider) when `resubmit`, else the dead letter.
    Unsolved { resubmit: bool },
    /// The provider keeps failing the request: another provider takes the task, if one can.
    FailOver,
    /// An account error in hold mode: the task waits with its lane until the account works.
    HoldForAccount,
    /// An account error without a hold: the lane stops; the task goes elsewhere or dies, and
    /// what waits at the lane follows it.
    AccountStopped,
    /// The service refused the task's kind as a whole at submission (nothing was paid): the
    /// lane is skipped for the kind a while, and another service takes the task; with none
    /// left, the dead letter `NoServiceForKind`, naming the services tried.
    KindUnsupported,
    /// The dead letter, now.
    DeadLetter,
}

/// A reaction and whether the failed request counts as one of the task's provider attempts
/// (a submission the provider answered with a refusal of the task).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Decision {
    pub reaction: Reaction,
    pub counts_attempt: bool,
}

/// What [`decide`] reads of a job.
#[derive(Clone, Copy, Debug)]
pub(super) struct JobFacts {
    /// The failed request was a submission.
    pub at_submit: bool,
    pub attempts_left: u32,
    /// Transient and retry-after failures in a row before this one.
    pub request_failures: u32,
    pub retry_after_failures: u32,
    /// Failures the service charged for before this one.
    pub billed_failures: u32,
}

/// A task is charged for at most this many failures by default: after the second failure the
/// service bills (anti-captcha's `ERROR_CAPTCHA_UNSOLVABLE`), it is not resubmitted to that
/// service again, however many attempts are left (issue 33: a challenge one worker could not
/// solve is most often unsolvable for the next one too, and each try is paid).
pub(super) const MAX_BILLED_FAILURES: u32 = 2;

/// The one decision: what `f` does to a job, given its counters, whether its lane would hold
/// for an account error (hold mode, on the first error or while holding), and the policy.
pub(super) fn decide(job: JobFacts, lane_holds: bool, f: &Failure, retry: &RetryConfig) -> Decision {
    let min_transient = Duration::from_millis(retry.transient_min_delay_ms);
    let decision = |reaction, counts_attempt| Decision { reaction, counts_attempt };
    if job.at_submit && crate::classify::says_kind_unsupported(&f.code) {
        return decision(Reaction::KindUnsupported, false);
    }
    match f.class {
        ErrorClass::NotReady => decision(Reaction::PollAgain, false),
        ErrorClass::Transient => {
            let failures = job.request_failures + 1;
            if job.at_submit && job.attempts_left == 0 {
                // A submission whose answer was lost counted as an attempt (see handle_response).
                decision(Reaction::DeadLetter, false)
            } else if failures > retry.max_request_retries {
                decision(Reaction::FailOver, false)
            } else {
                let retry = Reaction::RetryRequest {
                    backoff_n: failures - 1,
                    at_least: min_transient,
                    pause: None,
                    fewer_at_once: false,
                };
                decision(retry, false)
            }
        }
        ErrorClass::RetryAfter => {
            let failures = job.retry_after_failures + 1;
            if failures > retry.max_retry_after_retries {
                return decision(Reaction::FailOver, false);
            }
            let wanted = f.retry_after.unwrap_or(min_transient);
            let scope = if job.at_submit { PauseScope::Submits } else { PauseScope::Polls };
            let retry = Reaction::RetryRequest {
                backoff_n: failures - 1,
                at_least: wanted,
                pause: (!f.congestion).then_some((scope, wanted)),
                fewer_at_once: f.congestion,
            };
            decision(retry, false)
        }
        ErrorClass::TaskTerminal => {
            let left = job.attempts_left.saturating_sub(u32::from(job.at_submit));
            let billed_out = f.billed && job.billed_failures + 1 >= MAX_BILLED_FAILURES;
            decision(Reaction::Unsolved { resubmit: left > 0 && !billed_out }, job.at_submit)
        }
        ErrorClass::AccountTerminal if lane_holds => decision(Reaction::HoldForAccount, false),
        ErrorClass::AccountTerminal => decision(Reaction::AccountStopped, job.at_submit),
        ErrorClass::FixInput | ErrorClass::Cancelled | ErrorClass::Application => {
            decision(Reaction::DeadLetter, job.at_submit)
        }
    }
}

impl Engine {
    /// Records `f` for `job`, decides what it does ([`decide`]) and does it.
    pub(super) fn fail(&mut self, job: JobId, phase: Phase, f: Failure, status: Option<u16>, now: Timestamp) {
        let Some(j) = self.jobs.get(&job) else { return };
        let facts = JobFacts {
            at_submit: matches!(j.stage, Stage::Submitting(_)),
            attempts_left: j.life.attempts_left(),
            request_failures: j.attempt.request_failures(),
            retry_after_failures: j.attempt.retry_after_failures(),
            billed_failures: j.life.billed_failures(),
        };
        let lane = &self.lanes[j.lane().unwrap_or(LaneId::FIRST)];
        let lane_holds = lane.config().circuit.holds_for(&f)
            && (lane.circuit().account_failure().is_none() || lane.hold().is_some());
        let decision = decide(facts, lane_holds, &f, &self.config.retry);
        if f.billed {
            if let Some(j) = self.jobs.get_mut(&job) {
                j.life.count_billed_failure();
            }
        }
        self.fail_with(job, phase, f, status, now, decision);
    }

    /// Records `f` for `job` and applies `reaction` (the caller decided: a deadline, a refusal
    /// before anything was sent, a provider that cannot be reached).
    pub(super) fn fail_as(
        &mut self,
        job: JobId,
        phase: Phase,
        f: Failure,
        status: Option<u16>,
        now: Timestamp,
        reaction: Reaction,
    ) {
        self.fail_with(job, phase, f, status, now, Decision { reaction, counts_attempt: false });
    }

    fn fail_with(&mut self, job: JobId, phase: Phase, f: Failure, status: Option<u16>, now: Timestamp, d: Decision) {
        self.record_failure(job, phase, &f, status, now);
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let l = j.lane().unwrap_or(LaneId::FIRST);
        if d.counts_attempt {
            j.life.count_refused_submission();
        }
        j.attempt.count_failure(f.class);
        match d.reaction {
            Reaction::PollAgain => self.on_not_ready(job, now),
            Reaction::RetryRequest { backoff_n, at_least, pause, fewer_at_once } => {
                if fewer_at_once {
                    self.fewer_at_once(l);
                }
                if let Some((scope, wanted)) = pause {
                    if let Some(share) = self.lanes[l].fleet_mut().filter(|_| scope == PauseScope::Submits) {
                        // The provider's limit binds its account: the whole fleet pauses.
                        share.report_pause(&f.code, millis(wanted));
                    }
                    self.pause(l, scope, &f.code, now.add(wanted));
                }
                if f.class == ErrorClass::Transient && phase == Phase::Poll {
                    // An unanswered poll doesn't count against the poll budget.
                    if let Some(j) = self.jobs.get_mut(&job) {
                        j.attempt.uncount_poll();
                    }
                }
                let delay = self.backoff(job, backoff_n).max(at_least);
                self.retry_request(job, phase, &f, delay, now);
            }
            Reaction::Unsolved { resubmit } => {
                if d.counts_attempt {
                    j.life.use_one_left();
                }
                let spent = self.provider_answered(job, l, phase, now);
                if resubmit {
                    self.resubmit(job, &f, now);
                    if let Some(kind) = spent {
                        self.rebalance(kind, now);
                    }
                } else {
                    self.dead_letter_job(job, &f, now);
                }
            }
            Reaction::FailOver => self.fail_over_or_dead(job, &f, now),
            Reaction::KindUnsupported => {
                j.route.unpin();
                j.route.mark_unsupported(l);
                let kind = j.kind();
                self.lanes[l].refuse_kind(kind, now.add(KIND_REFUSED_FOR));
                if let Some(share) = self.lanes[l].fleet_mut() {
                    // Every client of the account skips the kind there too (the fleet ledger).
                    share.report_refused_kind(kind, millis(KIND_REFUSED_FOR));
                }
                if !self.fail_over(job, &f, now) {
                    let none_left = self.no_service_for_kind(job, kind);
                    self.dead_letter_job(job, &none_left, now);
                }
            }
            Reaction::HoldForAccount => {
                // The service refused the submission, so nothing was paid: the task waits with
                // the others until the account works again (or the hold ends), unless another
                // provider takes it meanwhile.
                j.route.unpin();
                self.report_account_error(l, &f);
                self.stop_for_account(l, &f, now);
                self.leave_flight(job);
                self.enqueue_submit(job, now, now);
                self.evacuate(l, now);
            }
            Reaction::AccountStopped => {
                // The provider refused: it works on nothing of this task any more.
                j.route.unpin();
                self.report_account_error(l, &f);
                self.stop_for_account(l, &f, now);
                // Another provider takes the task and those waiting here, without a dead letter;
                // with none left, they are dead-lettered as before.
                self.fail_over_or_dead(job, &f, now);
                self.clear_lane_for_account(l, &f, now);
            }
            Reaction::DeadLetter => self.dead_letter_job(job, &f, now),
        }
    }

    /// Adds `f` to the job's history, naming the provider it happened at.
    fn record_failure(&mut self, job: JobId, phase: Phase, f: &Failure, status: Option<u16>, now: Timestamp) {
        let provider = self.jobs.get(&job).and_then(Job::lane).map(|l| self.lanes[l].name().to_string());
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let entry = HistoryEntry {
            at: now,
            phase,
            error: f.code.clone(),
            provider_task_id: j.attempt.provider_task_id().map(String::from),
            http_status: status,
            provider,
        };
        j.life.record_failure(entry, now);
    }

    /// The provider answered for the task (it cannot solve it): it no longer works on it, routing
    /// avoids it for this task, and the time it spent counts against its speed. Returns the
    /// task's kind when that time was observed (the routing may then move waiting tasks).
    fn provider_answered(
        &mut self,
        job: JobId,
        l: LaneId,
        phase: Phase,
        now: Timestamp,
    ) -> Option<crate::task::TaskKind> {
        let avoid = self.routing.failover_on_unsolvable && self.lanes.len() > 1;
        let j = self.jobs.get_mut(&job)?;
        j.route.unpin();
        if avoid {
            j.route.avoid(l);
        }
        let spent = j.attempt.sent_at().filter(|_| phase == Phase::Poll).map(|t| now.since(t))?;
        let kind = j.kind();
        self.lanes[l].stats_mut().observe_latency(kind, spent);
        Some(kind)
    }

    /// Another attempt after the backoff for the attempts made so far.
    fn resubmit(&mut self, job: JobId, f: &Failure, now: Timestamp) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.attempt.reset_for(Next::Resubmission);
        let (n, attempt) = (j.life.attempts().saturating_sub(1), j.life.attempts() + 1);
        let delay = self.backoff(job, n);
        self.retrying(job, f, delay, attempt);
        self.leave_flight(job);
        self.journal_upsert(job, now);
        self.enqueue_submit(job, now.add(delay), now);
    }

    fn retry_request(&mut self, job: JobId, phase: Phase, f: &Failure, delay: Duration, now: Timestamp) {
        let attempt = self.jobs.get(&job).map_or(0, |j| j.life.attempts() + u32::from(phase == Phase::Submit));
        self.retrying(job, f, delay, attempt);
        match phase {
            Phase::Submit => {
                self.leave_flight(job);
                self.enqueue_submit(job, now.add(delay), now);
            }
            _ => self.set_waiting(job, now.add(delay)),
        }
    }

    fn retrying(&mut self, job: JobId, f: &Failure, delay: Duration, attempt: u32) {
        self.push_event(Event::Retrying {
            job,
            code: f.code.clone(),
            class: f.class,
            delay_ms: millis(delay),
            attempt,
        });
    }

    /// The provider has no free worker: its window (and the fleet's) halves.
    fn fewer_at_once(&mut self, l: LaneId) {
        if let Some(share) = self.lanes[l].fleet_mut() {
            share.report_no_slot();
        }
        if let Some(limit) = self.lanes[l].limiter_mut().on_no_slot() {
            let provider = self.label(l);
            self.push_event(Event::ConcurrencyChanged { limit, provider });
        }
    }

    /// The dead letter's failure for a task whose kind every service tried refused: the services
    /// and what each answered, from the task's history.
    fn no_service_for_kind(&self, job: JobId, kind: crate::task::TaskKind) -> Failure {
        let mut tried: Vec<String> = Vec::new();
        if let Some(j) = self.jobs.get(&job) {
            for h in j.life.history().iter().filter(|h| crate::classify::says_kind_unsupported(&h.error)) {
                let said = format!("{} ({})", h.provider.as_deref().unwrap_or("the provider"), h.error);
                if !tried.contains(&said) {
                    tried.push(said);
                }
            }
        }
        Failure::new(
            reason::NO_SERVICE_FOR_KIND,
            ErrorClass::FixInput,
            format!(
                "no configured service solves {}: {} said it does not; configure one that does, then replay",
                kind.as_str(),
                tried.join(", ")
            ),
        )
    }

    fn fail_over_or_dead(&mut self, job: JobId, f: &Failure, now: Timestamp) {
        if !self.fail_over(job, f, now) {
            self.dead_letter_job(job, f, now);
        }
    }

    /// Tells the fleet (when the lane shares its account) of an account error it was answered.
    /// It holds the fleet for one probe period; in hold mode for two, so that the hold outlives
    /// the turn of the client that checks the balance for all (each failed check renews it).
    pub(super) fn report_account_error(&mut self, l: LaneId, f: &Failure) {
        let lane = &mut self.lanes[l];
        let circuit = &lane.config().circuit;
        let hold_ms =
            if circuit.holds_for(f) { circuit.account_probe_ms.saturating_mul(2) } else { circuit.account_probe_ms };
        if let Some(share) = lane.fleet_mut() {
            share.report_account_error(f, hold_ms);
        }
    }

    /// Stops submissions at lane `l` for an account error: with hold mode (on the first error, or
    /// while holding) the lane holds and this answers `true`; otherwise its circuit opens until
    /// `reset_circuit`.
    pub(super) fn stop_for_account(&mut self, l: LaneId, f: &Failure, now: Timestamp) -> bool {
        let hold_ms = self.lanes[l].config().circuit.account_hold_ms;
        let holds = self.lanes[l].config().circuit.holds_for(f);
        let first = self.lanes[l].circuit().account_failure().is_none();
        self.lanes[l].circuit_mut().open_for_account(f.clone());
        if holds && (first || self.lanes[l].hold().is_some()) {
            if self.lanes[l].hold().is_none() {
                let until = now.add(Duration::from_millis(hold_ms));
                let next_probe = now.add(Duration::from_millis(self.lanes[l].config().circuit.account_probe_ms));
                self.lanes[l].start_hold(Hold { failure: f.clone(), until, next_probe, probing: false });
                let provider = self.label(l);
                self.push_event(Event::AccountHold { code: f.code.clone(), until, provider });
            }
            return true;
        }
        if first {
            let provider = self.label(l);
            self.push_event(Event::CircuitOpened { cause: f.code.clone(), until: None, provider });
        }
        false
    }

    /// After an account error without a hold: what waits at lane `l` goes to another provider,
    /// or is dead-lettered as `CircuitOpen`.
    pub(super) fn clear_lane_for_account(&mut self, l: LaneId, f: &Failure, now: Timestamp) {
        self.evacuate(l, now);
        let queued: Vec<JobId> = self.lanes[l].waiting();
        for other in queued {
            self.dead_letter_circuit_open(other, f, now);
        }
    }

    /// Another client of the fleet was answered an account error at lane `l`'s account: this
    /// lane stops as if it had been answered it, without a request of its own.
    pub(super) fn account_failed_elsewhere(&mut self, l: LaneId, f: Failure, now: Timestamp) {
        if self.stop_for_account(l, &f, now) {
            self.evacuate(l, now);
        } else {
            self.clear_lane_for_account(l, &f, now);
        }
    }

    /// Dead-letters a task that was never sent because submissions stopped on `cause`.
    pub(super) fn dead_letter_circuit_open(&mut self, job: JobId, cause: &Failure, now: Timestamp) {
        self.fail_as(job, Phase::Submit, circuit_open_failure(cause), None, now, Reaction::DeadLetter);
    }

    /// Ends `job` with its dead letter (pushed, or settling the replay lease the driver holds).
    fn dead_letter_job(&mut self, job: JobId, f: &Failure, now: Timestamp) {
        let Some(j) = self.remove_job(job) else { return };
        let provider = self.provider_of(&j);
        self.spending.ledger_mut().record_dead_letter(&provider, j.kind(), j.identity.labels().iter());
        let context = match (j.attempt.provider_task_id(), j.life.history().last()) {
            (Some(pid), Some(h)) => format!(" ({} phase, provider task {pid})", h.phase.as_str()),
            _ => String::new(),
        };
        let (attempts, replays, first_failed_at) =
            (j.life.attempts(), j.life.replays(), j.life.first_failed_at().unwrap_or(now));
        let (history, kept_answer) = j.life.into_history_and_answer();
        let identity = j.identity.into_parts();
        let record = DeadLetterRecord {
            schema: SCHEMA,
            id: identity.record_id,
            provider,
            reason: f.code.clone(),
            description: format!("{}{context}", f.description),
            class: f.class,
            attempts,
            replays,
            first_failed_at,
            dead_lettered_at: now,
            labels: identity.labels.to_map(),
            state: RecordState::Ready,
            deliveries: 0,
            parked_reason: None,
            solution: kept_answer,
            history,
            // The journal entries written for it are gone (the driver performed them): no copy.
            task: identity.task,
        };
        self.push_event(Event::DeadLettered {
            job,
            id: record.id.clone(),
            reason: record.reason.clone(),
            class: record.class,
            attempts: record.attempts,
        });
        self.actions.push_back(Action::DeadLetter { job, record, push: !identity.lease_held });
    }
}

/// What a task gets when submissions stopped on `cause` (an account error) before it was sent.
pub(super) fn circuit_open_failure(cause: &Failure) -> Failure {
    Failure::new(
        reason::CIRCUIT_OPEN,
        ErrorClass::AccountTerminal,
        format!("not sent: submissions stopped after {} ({})", cause.code, cause.description),
    )
}

pub(super) fn network_failure(e: &TransportError) -> Failure {
    Failure::new(reason::NETWORK, ErrorClass::Transient, format!("no answer from the service: {}", e.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(at_submit: bool, attempts_left: u32) -> JobFacts {
        JobFacts { at_submit, attempts_left, request_failures: 0, retry_after_failures: 0, billed_failures: 0 }
    }

    fn failure(class: ErrorClass) -> Failure {
        Failure::new("CODE", class, "why")
    }

    /// A failure the service bills ends the resubmissions after the second one, with attempts left.
    #[test]
    fn billed_failures_are_resubmitted_once() {
        let retry = RetryConfig::default();
        let billed = Failure { billed: true, ..failure(ErrorClass::TaskTerminal) };
        let first = decide(job(false, 3), false, &billed, &retry);
        assert_eq!(first.reaction, Reaction::Unsolved { resubmit: true });
        let second = decide(JobFacts { billed_failures: 1, ..job(false, 2) }, false, &billed, &retry);
        assert_eq!(second.reaction, Reaction::Unsolved { resubmit: false }, "two billed failures");
        let free =
            decide(JobFacts { billed_failures: 1, ..job(false, 2) }, false, &failure(ErrorClass::TaskTerminal), &retry);
        assert_eq!(free.reaction, Reaction::Unsolved { resubmit: true }, "an unbilled failure keeps its attempts");
    }

    #[test]
    fn each_class_has_one_reaction() {
        let retry = RetryConfig::default();
        let react = |j: JobFacts, holds: bool, f: &Failure| decide(j, holds, f, &retry);
        assert_eq!(react(job(false, 3), false, &failure(ErrorClass::NotReady)).reaction, Reaction::PollAgain);
        let unsolved = react(job(true, 3), false, &failure(ErrorClass::TaskTerminal));
        assert_eq!((unsolved.reaction, unsolved.counts_attempt), (Reaction::Unsolved { resubmit: true }, true));
        let last = react(job(true, 1), false, &failure(ErrorClass::TaskTerminal));
        assert_eq!(last.reaction, Reaction::Unsolved { resubmit: false }, "its last attempt was used");
        let polled = react(job(false, 1), false, &failure(ErrorClass::TaskTerminal));
        assert_eq!((polled.reaction, polled.counts_attempt), (Reaction::Unsolved { resubmit: true }, false));
        assert_eq!(react(job(true, 3), true, &failure(ErrorClass::AccountTerminal)).reaction, Reaction::HoldForAccount);
        let stopped = react(job(true, 3), false, &failure(ErrorClass::AccountTerminal));
        assert_eq!((stopped.reaction, stopped.counts_attempt), (Reaction::AccountStopped, true));
        let fix = react(job(true, 3), false, &failure(ErrorClass::FixInput));
        assert_eq!((fix.reaction, fix.counts_attempt), (Reaction::DeadLetter, true));
    }

    #[test]
    fn requests_are_retried_then_moved_and_a_spent_submission_is_not_retried() {
        let retry = RetryConfig::default();
        let transient = failure(ErrorClass::Transient);
        let first = decide(job(false, 3), false, &transient, &retry).reaction;
        assert!(matches!(first, Reaction::RetryRequest { backoff_n: 0, pause: None, fewer_at_once: false, .. }));
        let worn = JobFacts { request_failures: retry.max_request_retries, ..job(false, 3) };
        assert_eq!(decide(worn, false, &transient, &retry).reaction, Reaction::FailOver);
        assert_eq!(decide(job(true, 0), false, &transient, &retry).reaction, Reaction::DeadLetter);
    }

    #[test]
    fn a_provider_asking_to_wait_pauses_its_lane_unless_it_is_only_congested() {
        let retry = RetryConfig::default();
        let ban = failure(ErrorClass::RetryAfter).with_retry_after(Duration::from_secs(10));
        let paused = decide(job(true, 3), false, &ban, &retry).reaction;
        let ten = Duration::from_secs(10);
        assert_eq!(
            paused,
            Reaction::RetryRequest {
                backoff_n: 0,
                at_least: ten,
                pause: Some((PauseScope::Submits, ten)),
                fewer_at_once: false
            }
        );
        let busy = failure(ErrorClass::RetryAfter).with_retry_after(ten).congested();
        let fewer = decide(job(false, 3), false, &busy, &retry).reaction;
        assert_eq!(fewer, Reaction::RetryRequest { backoff_n: 0, at_least: ten, pause: None, fewer_at_once: true });
        let worn = JobFacts { retry_after_failures: retry.max_retry_after_retries, ..job(false, 3) };
        assert_eq!(decide(worn, false, &busy, &retry).reaction, Reaction::FailOver);
    }
}
