//! The solving engine: a deterministic state machine that never performs I/O.
//!
//! See [`Engine`] for the calling contract.

mod backoff;
mod circuit;
pub mod config;
pub mod event;
mod limiter;

use core::fmt;
use core::time::Duration;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use serde::Serialize;

use self::circuit::{Circuit, Transition};
pub use self::config::{
    Backoff, CircuitConfig, EngineConfig, FirstPoll, KindMs, PollingConfig, RateConfig, RetryConfig,
};
pub use self::event::{Event, Level, PauseScope};
use self::limiter::Limiter;
use crate::class::{reason, ErrorClass, Failure};
use crate::dlq::record::{DeadLetterRecord, HistoryEntry, Phase, RecordState, SCHEMA};
use crate::error::InvalidTask;
use crate::http::{HttpRequest, HttpResponse, Secret, TransportError, TransportErrorKind};
use crate::journal::JournalEntry;
use crate::json_read::{deserialize_from_json, FieldError, FromJson};
use crate::provider::{PollOutcome, Provider, SubmitOptions, SubmitOutcome, TaskPoll};
use crate::solution::Solution;
use crate::task::{Task, TaskKind};
use crate::time::Timestamp;

/// History entries kept per task; older ones are dropped first (the count of
/// attempts is kept separately and is never lost).
const MAX_HISTORY: usize = 50;

/// A task the engine is working on. Unique within one engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct JobId(pub u64);

/// The bare number, as serde reads a newtype struct.
impl FromJson for JobId {
    fn from_json(value: serde_json::Value) -> Result<Self, FieldError> {
        u64::from_json(value).map(JobId)
    }
}

deserialize_from_json!(JobId);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job#{}", self.0)
    }
}

/// Names one [`Action::Send`], to be handed back with its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

/// What the engine asks its driver to do, in order.
#[derive(Debug, Clone)]
pub enum Action {
    /// Perform this exchange and pass the result to [`Engine::handle_response`].
    Send { request_id: RequestId, request: HttpRequest },
    /// Write this journal entry (insert or replace by id; stamp the driver's owner on it).
    /// When `gates` names a job, that job is not submitted until the driver confirms the
    /// write with [`Engine::journaled`]; if the write cannot be made, the driver calls
    /// [`Engine::withdraw`] and nothing is ever sent (nothing is paid that could not be
    /// recovered). Later writes of the same id replace earlier ones.
    Journal { entry: JournalEntry, gates: Option<JobId> },
    /// The task is solved. When `persist` is set, write that journal entry (it carries the
    /// solution) before handing `solution` to whoever waits for `job`; remove the entry
    /// (`journal_forget`) only once the answer reached its caller. With nobody waiting
    /// (the caller cancelled or went away), leave it in the journal for `recover`.
    Solved {
        job: JobId,
        id: String,
        labels: BTreeMap<String, String>,
        solution: Solution,
        persist: Option<JournalEntry>,
    },
    /// The task failed for good. With `push`, store `record` with `DlqStore::push` (which also
    /// removes its journal entry); otherwise the job replays a record whose lease the driver
    /// holds, and the driver settles that lease with `record` (see `ReplayPolicy::settle`).
    /// Then tell whoever waits for `job`.
    DeadLetter { job: JobId, record: DeadLetterRecord, push: bool },
    /// For logs, progress and metrics.
    Event(Event),
}

/// What [`Engine::cancel`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cancelled {
    /// The task had not been sent: it is dead-lettered as `Cancelled` (nothing was paid).
    DeadLettered,
    /// The provider is working on it: it runs on and its answer stays in the journal for
    /// `recover`, so cancelling never makes anyone submit it twice.
    RunsOn,
    /// No such job (it already ended).
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Accepted; its journal entry is being written. Nothing is sent before it is durable.
    Persisting,
    /// Waiting for a submission slot, not before `at`.
    Queued {
        at: Timestamp,
    },
    Submitting(RequestId),
    /// Submitted; next poll not before `at`.
    Waiting {
        at: Timestamp,
    },
    Polling(RequestId),
}

impl Stage {
    fn is_submitted(self) -> bool {
        !matches!(self, Stage::Queued { .. } | Stage::Persisting)
    }
}

#[derive(Debug)]
struct Job {
    id: String,
    task: Task,
    labels: BTreeMap<String, String>,
    /// Provider submissions made over the task's whole life.
    attempts: u32,
    /// Submissions still allowed in this life (fresh, replayed or recovered).
    attempts_left: u32,
    replays: u32,
    history: Vec<HistoryEntry>,
    first_failed_at: Option<Timestamp>,
    accepted_at: Timestamp,
    deadline: Timestamp,
    stage: Stage,
    provider_task_id: Option<String>,
    submitted_at: Timestamp,
    polls: u32,
    request_failures: u32,
    retry_after_failures: u32,
    last_delay: Duration,
    /// The caller's stable name for the task (see `JournalEntry::key`).
    key: Option<String>,
    replay_of: Option<String>,
    /// A replay whose lease the driver holds: its dead letter settles that lease instead of
    /// being pushed (a replay found in the journal after a restart has lost its lease).
    lease_held: bool,
}

#[derive(Debug)]
enum Pending {
    Submit {
        job: JobId,
    },
    Poll {
        jobs: Vec<JobId>,
        ids: Vec<String>,
    },
    /// A balance check while submissions are held for an account error.
    Probe,
}

/// Submissions held after an account error (`circuit.account_hold_ms` > 0): queued and new
/// tasks wait instead of being dead-lettered, the balance is checked every
/// `circuit.account_probe_ms`, and submissions resume once it answers a positive balance.
#[derive(Debug)]
struct Hold {
    failure: Failure,
    until: Timestamp,
    next_probe: Timestamp,
    probing: bool,
}

/// The CAPTCHA-solving state machine.
///
/// # Calling contract
///
/// The engine owns no socket, timer or file; a driver runs it:
///
/// - **Commands**: [`submit`](Self::submit) a task, [`cancel`](Self::cancel) or
///   [`dead_letter`](Self::dead_letter) a job, [`replay`](Self::replay) a record
///   leased from the DLQ, [`recover`](Self::recover) a journal entry found at
///   start-up, [`reset_circuit`](Self::reset_circuit) after an account problem
///   was fixed.
/// - **Inputs**: [`handle_response`](Self::handle_response) with the result of
///   every `Action::Send`, exactly once, in any order.
/// - **Outputs**: call [`poll_action`](Self::poll_action) until it returns
///   `None`, performing each action in order (journal writes before the sends
///   that follow them); then sleep until [`poll_timeout`](Self::poll_timeout)
///   or until a response arrives, whichever is first, and repeat.
///
/// Every method that depends on time takes `now`; the engine never reads a
/// clock, so a virtual clock replays any scenario exactly. Every job ends in
/// exactly one `Solved` or `DeadLetter` action.
#[derive(Debug)]
pub struct Engine {
    config: EngineConfig,
    provider: Provider,
    key: Secret,
    submit_options: SubmitOptions,
    rng: fastrand::Rng,
    jobs: HashMap<JobId, Job>,
    submit_queue: BTreeSet<(Timestamp, JobId)>,
    poll_queue: BTreeSet<(Timestamp, JobId)>,
    deadlines: BTreeSet<(Timestamp, JobId)>,
    requests: HashMap<RequestId, Pending>,
    actions: VecDeque<Action>,
    next_job: u64,
    next_request: u64,
    /// Jobs submitted to the provider and not finished.
    in_flight: usize,
    circuit: Circuit,
    limiter: Limiter,
    submits_paused_until: Timestamp,
    polls_paused_until: Timestamp,
    batch_disabled: bool,
    /// Garbled answers to batch polls in a row; one can be a truncated transfer, several mean
    /// the provider does not support `ids=`.
    garbled_batches: u32,
    /// Whether the provider ever answered (any HTTP status) since this engine started.
    answered: bool,
    /// Transport failures in a row with no answer in between: (first at, count).
    transport_streak: Option<(Timestamp, u32)>,
    /// Set while the circuit is open because the provider cannot be reached; tasks that would
    /// wait for it are dead-lettered with this failure instead (class transient: replayable).
    unreachable: Option<Failure>,
    /// The driver's store cannot be written: no new submission until it can.
    store_down: bool,
    /// Times the provider was found unreachable since this engine started.
    unreachable_episodes: u32,
    hold: Option<Hold>,
}

/// Garbled batch answers in a row after which polling falls back to one id per request.
const GARBLED_BATCHES_BEFORE_FALLBACK: u32 = 3;

impl Engine {
    pub fn new(provider: Provider, key: Secret, config: EngineConfig) -> Self {
        Engine {
            rng: fastrand::Rng::with_seed(config.seed),
            circuit: Circuit::new(config.circuit.clone()),
            limiter: Limiter::new(&config.rate),
            config,
            provider,
            key,
            submit_options: SubmitOptions::default(),
            jobs: HashMap::new(),
            submit_queue: BTreeSet::new(),
            poll_queue: BTreeSet::new(),
            deadlines: BTreeSet::new(),
            requests: HashMap::new(),
            actions: VecDeque::new(),
            next_job: 1,
            next_request: 1,
            in_flight: 0,
            submits_paused_until: Timestamp::EPOCH,
            polls_paused_until: Timestamp::EPOCH,
            batch_disabled: false,
            garbled_batches: 0,
            answered: false,
            transport_streak: None,
            unreachable: None,
            store_down: false,
            unreachable_episodes: 0,
            hold: None,
        }
    }

    pub fn with_submit_options(mut self, options: SubmitOptions) -> Self {
        self.submit_options = options;
        self
    }

    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Jobs not yet solved or dead-lettered.
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }

    /// Jobs submitted to the provider and not finished.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Current in-flight limit (lowered by `ERROR_NO_SLOT_AVAILABLE`).
    pub fn concurrency_limit(&self) -> u32 {
        self.limiter.limit()
    }

    /// The account error that stopped submissions, if any.
    pub fn account_failure(&self) -> Option<&Failure> {
        self.circuit.account_failure()
    }

    /// How often the provider was found unreachable (see `track_reachability`) since start.
    pub fn unreachable_episodes(&self) -> u32 {
        self.unreachable_episodes
    }

    /// The record id (ULID) of a live job.
    pub fn job_record_id(&self, job: JobId) -> Option<&str> {
        self.jobs.get(&job).map(|j| j.id.as_str())
    }

    // ----- commands -------------------------------------------------------

    /// Accepts a task. It is validated and encoded for the provider now, so a
    /// task that can never be sent is refused here rather than dead-lettered.
    /// Accepts a task. It is validated and encoded for the provider now, so a
    /// task that can never be sent is refused here rather than dead-lettered.
    /// `key` is the caller's stable name for it (settled by the store when it ends).
    /// The job's journal entry is written first ([`Action::Journal`] gating it).
    pub fn submit(
        &mut self,
        task: Task,
        labels: BTreeMap<String, String>,
        key: Option<String>,
        now: Timestamp,
    ) -> Result<JobId, InvalidTask> {
        task.validate()?;
        self.provider.submit_request(&self.key, &task, &self.submit_options)?;
        let id = self.new_record_id(now);
        let job = self.insert_job(id.clone(), task, labels, now, self.config.retry.max_attempts);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.key = key;
        }
        self.push_event(Event::Accepted { job, id });
        self.persist_then_submit(job, now);
        Ok(job)
    }

    /// Takes a record leased from the DLQ and tries it again with
    /// `attempts_allowed` submissions. The job is journaled under the record's id
    /// before it is sent, so the store hands the record to nobody else while it runs
    /// and `recover` finishes it if the process dies; its failure settles the lease
    /// the driver holds ([`Action::DeadLetter`] with `push: false`).
    pub fn replay(
        &mut self,
        record: DeadLetterRecord,
        attempts_allowed: u32,
        now: Timestamp,
    ) -> Result<JobId, InvalidTask> {
        record.task.validate()?;
        self.provider.submit_request(&self.key, &record.task, &self.submit_options)?;
        let job = self.insert_job(record.id.clone(), record.task, record.labels, now, attempts_allowed.max(1));
        if let Some(j) = self.jobs.get_mut(&job) {
            j.attempts = record.attempts;
            j.replays = record.replays + 1;
            j.history = record.history;
            j.first_failed_at = Some(record.first_failed_at);
            j.replay_of = Some(record.id);
            j.lease_held = true;
        }
        self.persist_then_submit(job, now);
        Ok(job)
    }

    /// Writes the job's journal entry, holding its submission until the driver confirms it.
    fn persist_then_submit(&mut self, job: JobId, now: Timestamp) {
        if let Some(failure) = self.circuit.account_failure().cloned().filter(|_| self.hold.is_none()) {
            return self.dead_letter_circuit_open(job, &failure, now);
        }
        if let Some(entry) = self.journal_entry(job, now) {
            self.actions.push_back(Action::Journal { entry, gates: Some(job) });
        }
    }

    /// The journal entry gating `job` is written: it may be submitted now.
    /// Returns `false` if the job is not waiting for that (it ended meanwhile).
    pub fn journaled(&mut self, job: JobId, now: Timestamp) -> bool {
        if !self.jobs.get(&job).is_some_and(|j| j.stage == Stage::Persisting) {
            return false;
        }
        self.tick_circuit(now);
        if let Some(failure) = self.circuit.account_failure().cloned().filter(|_| self.hold.is_none()) {
            self.dead_letter_circuit_open(job, &failure, now);
        } else if let Some(failure) = self.unreachable.clone().filter(|_| self.circuit.is_open()) {
            self.fail(job, Phase::Submit, failure, None, now, true);
        } else {
            self.enqueue_submit(job, now);
        }
        true
    }

    /// The journal entry gating `job` could not be written: the job is dropped without a
    /// trace (it was never sent; the driver tells its caller why). Returns `false` if the job
    /// was not waiting for its entry.
    pub fn withdraw(&mut self, job: JobId) -> bool {
        if !self.jobs.get(&job).is_some_and(|j| j.stage == Stage::Persisting) {
            return false;
        }
        self.remove_job(job);
        true
    }

    /// Tells the engine whether the driver's store can be written. While it cannot, no task
    /// is submitted (its answer could not be kept); polling goes on.
    pub fn set_store_available(&mut self, available: bool) {
        self.store_down = !available;
    }

    /// Raises the in-flight limit to at least `limit` (a caller asked for that much
    /// concurrency); `ERROR_NO_SLOT_AVAILABLE` still halves it.
    pub fn ensure_in_flight_limit(&mut self, limit: u32) {
        if let Some(limit) = self.limiter.raise_ceiling(limit) {
            self.push_event(Event::ConcurrencyChanged { limit });
        }
    }

    /// Resumes a task found in the journal at start-up: polls its provider
    /// task if it had one, else submits it again. An entry older than
    /// `retry.recover_max_age_ms` (its answer would be stale) is dead-lettered
    /// as `Interrupted` instead.
    pub fn recover(&mut self, entry: JournalEntry, now: Timestamp) -> JobId {
        let stale = now.since(entry.updated_at) > Duration::from_millis(self.config.retry.recover_max_age_ms);
        let invalid = entry.task.validate().err();
        let allowed = self.config.retry.max_attempts.saturating_sub(entry.attempts).max(1);
        let job = self.insert_job(entry.id.clone(), entry.task, entry.labels, now, allowed);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.attempts = entry.attempts;
            j.replays = entry.replays;
            j.history = entry.history;
            j.replay_of = entry.replay_of;
            j.key = entry.key;
            j.provider_task_id = entry.provider_task_id.clone();
        }
        if let Some(solution) = entry.solution {
            // Solved before the process stopped, and maybe never handed over: hand it over now
            // (the same record id and provider task id), however old, since it was paid for.
            self.push_event(Event::Recovered { job, id: entry.id, resumed_polling: false });
            self.solved(job, solution, now, false);
            return job;
        }
        if stale || invalid.is_some() {
            let description = match invalid {
                Some(e) => format!("found in the journal after a restart, but the task is invalid: {e}"),
                None => format!(
                    "the process stopped with this task in flight; found in the journal {} s later, too late to resume",
                    now.since(entry.updated_at).as_secs()
                ),
            };
            self.fail(
                job,
                Phase::Recover,
                Failure::new(reason::INTERRUPTED, ErrorClass::Transient, description),
                None,
                now,
                true,
            );
            return job;
        }
        let resumed_polling = entry.provider_task_id.is_some();
        self.push_event(Event::Recovered { job, id: entry.id, resumed_polling });
        match entry.provider_task_id {
            Some(pid) => {
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.provider_task_id = Some(pid);
                    j.submitted_at = now;
                }
                self.in_flight += 1;
                self.set_waiting(job, now);
            }
            None => self.enqueue_submit(job, now),
        }
        job
    }

    /// Dead-letters a journal entry as `Interrupted` without resuming it.
    pub fn interrupt(&mut self, entry: JournalEntry, now: Timestamp) -> JobId {
        if entry.solution.is_some() {
            // An answer is never thrown away: hand it over instead.
            return self.recover(entry, now);
        }
        let job = self.insert_job(entry.id.clone(), entry.task, entry.labels, now, 0);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.attempts = entry.attempts;
            j.replays = entry.replays;
            j.history = entry.history;
            j.provider_task_id = entry.provider_task_id;
            j.key = entry.key;
            j.replay_of = entry.replay_of;
        }
        let failure =
            Failure::new(reason::INTERRUPTED, ErrorClass::Transient, "the process stopped with this task in flight");
        self.fail(job, Phase::Recover, failure, None, now, true);
        job
    }

    /// The caller no longer wants `job`. Not sent yet: it is dead-lettered as `Cancelled`.
    /// Already with the provider: it runs on, and its answer is kept in the journal for
    /// `recover` (cancelling must never lead anyone to pay for it twice).
    pub fn cancel(&mut self, job: JobId, now: Timestamp) -> Cancelled {
        match self.jobs.get(&job).map(|j| j.stage) {
            None => Cancelled::Unknown,
            Some(stage) if stage.is_submitted() => {
                // Nothing more is spent on it: if this submission ends without an answer, the
                // task is dead-lettered with that reason instead of being submitted again.
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.attempts_left = 0;
                }
                Cancelled::RunsOn
            }
            Some(_) => {
                self.dead_letter(job, reason::CANCELLED, "cancelled by the application before it was sent", now);
                Cancelled::DeadLettered
            }
        }
    }

    /// Dead-letters a job with the application's own reason and description.
    pub fn dead_letter(&mut self, job: JobId, reason_code: &str, description: &str, now: Timestamp) -> bool {
        if !self.jobs.contains_key(&job) {
            return false;
        }
        let (class, phase) = if reason_code == reason::CANCELLED {
            (ErrorClass::Cancelled, Phase::Cancel)
        } else {
            (ErrorClass::Application, Phase::Application)
        };
        self.fail(job, phase, Failure::new(reason_code, class, description), None, now, true);
        true
    }

    /// Lets submissions flow again after an account error was fixed.
    pub fn reset_circuit(&mut self) {
        self.circuit.reset_account();
        self.hold = None;
        self.push_event(Event::CircuitClosed);
    }

    /// Whether submissions are held for an account error, and until when at the latest.
    pub fn held_until(&self) -> Option<Timestamp> {
        self.hold.as_ref().map(|h| h.until)
    }

    // ----- inputs ---------------------------------------------------------

    /// Feeds back the result of an `Action::Send`. Unknown ids are ignored.
    pub fn handle_response(
        &mut self,
        request_id: RequestId,
        result: Result<HttpResponse, TransportError>,
        now: Timestamp,
    ) {
        let Some(pending) = self.requests.remove(&request_id) else { return };
        let status = result.as_ref().ok().map(|r| r.status);
        self.track_reachability(result.as_ref().err(), now);
        match pending {
            Pending::Submit { job } => {
                let outcome = match &result {
                    Ok(resp) => self.provider.parse_submit(resp),
                    Err(e) => SubmitOutcome::Failed(network_failure(e)),
                };
                let transient = matches!(&outcome, SubmitOutcome::Failed(f) if f.class == ErrorClass::Transient);
                self.record_outcome(transient, now);
                if !self.jobs.contains_key(&job) {
                    return; // ended meanwhile (deadline, cancel); nothing waits for this answer
                }
                if let Err(e) = &result {
                    if e.kind != TransportErrorKind::Connect {
                        // The request may have reached the service (a timeout, a reset, a browser
                        // that hides the answer): count it as a submission, so a service that
                        // takes tasks without our seeing the answer is not paid without bound.
                        self.count_unconfirmed_submission(job);
                    }
                }
                if let (Some(_), SubmitOutcome::Failed(own)) = (&self.unreachable, &outcome) {
                    // The provider cannot be reached: fail fast rather than wait for the deadline.
                    if own.class == ErrorClass::Transient {
                        let f = own.clone();
                        return self.fail(job, Phase::Submit, f, status, now, true);
                    }
                }
                match outcome {
                    SubmitOutcome::Accepted { provider_task_id } => self.on_accepted(job, provider_task_id, now),
                    SubmitOutcome::Solved(solution) => self.on_solved_at_submit(job, solution, now),
                    SubmitOutcome::Failed(f) => self.fail(job, Phase::Submit, f, status, now, false),
                }
            }
            Pending::Probe => self.on_probe(result.ok(), now),
            Pending::Poll { jobs, ids } => {
                let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                let outcome = match &result {
                    Ok(resp) => self.provider.parse_poll(resp, &id_refs),
                    Err(e) => PollOutcome::Failed(network_failure(e)),
                };
                self.on_poll_outcome(jobs, outcome, status, now);
            }
        }
    }

    /// The balance answered during a hold: a positive balance ends it (submissions resume,
    /// paced by the submit rate, so the waiting tasks do not go out in a storm).
    fn on_probe(&mut self, response: Option<HttpResponse>, now: Timestamp) {
        let Some(hold) = self.hold.as_mut() else { return };
        hold.probing = false;
        let balance = response.and_then(|r| self.provider.parse_balance(&r).ok());
        if balance.is_some_and(|b| b > 0.0) {
            self.hold = None;
            self.circuit.reset_account();
            self.push_event(Event::CircuitClosed);
        } else {
            hold.next_probe = now.add(Duration::from_millis(self.config.circuit.account_probe_ms));
        }
    }

    /// Checks the balance when a hold's probe is due; ends the hold at its deadline.
    fn advance_hold(&mut self, now: Timestamp) {
        let Some(hold) = &self.hold else { return };
        if now >= hold.until {
            let failure = hold.failure.clone();
            self.hold = None;
            let queued: Vec<JobId> = self.submit_queue.iter().map(|(_, j)| *j).collect();
            for job in queued {
                self.dead_letter_circuit_open(job, &failure, now);
            }
            return;
        }
        if !hold.probing && now >= hold.next_probe {
            let request = self.provider.balance_request(&self.key);
            let rid = self.send(request);
            self.requests.insert(rid, Pending::Probe);
            if let Some(h) = self.hold.as_mut() {
                h.probing = true;
            }
        }
    }

    /// Counts a submission whose answer was lost on the way (see `handle_response`).
    fn count_unconfirmed_submission(&mut self, job: JobId) {
        if let Some(j) = self.jobs.get_mut(&job) {
            j.attempts += 1;
            j.attempts_left = j.attempts_left.saturating_sub(1);
        }
    }

    /// Follows whether the provider answers at all. A provider that never answered fails
    /// after `unreachable_after_failures` transport failures in a row; one that did, after
    /// failing that often for `unreachable_after_ms` with no answer in between. Then the
    /// circuit opens with the transport error as its cause, and what waits for a submission
    /// is dead-lettered as `Network` (transient: replayable) instead of waiting for the
    /// task deadline; the circuit lets one probe through after `break_ms`.
    fn track_reachability(&mut self, error: Option<&TransportError>, now: Timestamp) {
        let Some(error) = error else {
            self.answered = true;
            self.transport_streak = None;
            return;
        };
        let (since, count) = self.transport_streak.map_or((now, 1), |(since, n)| (since, n + 1));
        self.transport_streak = Some((since, count));
        let cfg = &self.config.circuit;
        let enough = count >= cfg.unreachable_after_failures.max(1);
        let long_enough = now.since(since) >= Duration::from_millis(cfg.unreachable_after_ms);
        if self.unreachable.is_some() || !enough || (self.answered && !long_enough) {
            return;
        }
        let failure = Failure::new(
            reason::NETWORK,
            ErrorClass::Transient,
            format!(
                "{} cannot be reached: {count} request(s) in a row got no answer over {} s: {}",
                self.provider.base_url(),
                now.since(since).as_secs(),
                error.message
            ),
        );
        let until = self.circuit.open_until(now);
        self.unreachable = Some(failure.clone());
        self.unreachable_episodes += 1;
        self.push_event(Event::CircuitOpened { cause: failure.description, until: Some(until) });
        self.fail_waiting_submissions(now);
    }

    // ----- outputs --------------------------------------------------------

    /// The next thing to do, given that it is `now`.
    pub fn poll_action(&mut self, now: Timestamp) -> Option<Action> {
        if self.actions.is_empty() {
            self.advance(now);
        }
        self.actions.pop_front()
    }

    /// When the engine next wants [`poll_action`](Self::poll_action) called if
    /// no response arrives first; `None` when only responses can move it.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let mut next: Option<Timestamp> = self.deadlines.first().map(|(t, _)| *t);
        let mut consider = |t: Timestamp| next = Some(next.map_or(t, |n| n.min(t)));
        if let Some(hold) = &self.hold {
            consider(hold.until);
            if !hold.probing {
                consider(hold.next_probe);
            }
        }
        if let Some(reopen) = self.circuit.reopens_at() {
            consider(reopen);
            return next;
        }
        if !self.circuit.allows_request() {
            return next; // half-open with the probe in flight: wait for its answer
        }
        if let Some((at, _)) = self.poll_queue.first() {
            consider((*at).max(self.polls_paused_until));
        }
        let submits_blocked = self.store_down || self.circuit.account_failure().is_some();
        if let Some((at, _)) = self.submit_queue.first().filter(|_| !submits_blocked) {
            if self.in_flight < self.limiter.limit() as usize {
                consider((*at).max(self.limiter.next_submit_at()).max(self.submits_paused_until));
            }
        }
        next
    }

    // ----- the machine ----------------------------------------------------

    fn tick_circuit(&mut self, now: Timestamp) {
        if let Some(t) = self.circuit.tick(now) {
            self.report_transition(t);
        }
    }

    fn advance(&mut self, now: Timestamp) {
        self.tick_circuit(now);
        self.advance_hold(now);
        while let Some(&(at, job)) = self.deadlines.first() {
            if at > now {
                break;
            }
            self.deadlines.pop_first();
            let (attempts, polls) = self.jobs.get(&job).map_or((0, 0), |j| (j.attempts, j.polls));
            let ms = self.config.retry.task_deadline_ms;
            let description = format!(
                "no answer within the task deadline of {} s ({attempts} submission(s); {polls} poll(s) of the last one)",
                ms / 1000
            );
            self.fail(
                job,
                Phase::Deadline,
                Failure::new(reason::TIMEOUT, ErrorClass::TaskTerminal, description),
                None,
                now,
                true,
            );
        }
        self.schedule_polls(now);
        self.schedule_submits(now);
    }

    fn schedule_polls(&mut self, now: Timestamp) {
        let batch = if self.config.polling.batch && !self.batch_disabled && self.provider.supports_batch_poll() {
            self.provider.max_batch().max(1)
        } else {
            1
        };
        let horizon = if batch > 1 { now.add(Duration::from_millis(self.config.polling.coalesce_ms)) } else { now };
        while now >= self.polls_paused_until && self.circuit.allows_request() {
            let Some(&(at, first)) = self.poll_queue.first() else { break };
            if at > now {
                break;
            }
            self.poll_queue.pop_first();
            let mut jobs = vec![first];
            if batch > 1 && self.batchable(first) {
                // Gather more batchable jobs due soon; others stay queued for their own request.
                let riders: Vec<(Timestamp, JobId)> = self
                    .poll_queue
                    .iter()
                    .take_while(|(t, _)| *t <= horizon)
                    .filter(|(_, j)| self.batchable(*j))
                    .take(batch - 1)
                    .copied()
                    .collect();
                for entry in riders {
                    self.poll_queue.remove(&entry);
                    jobs.push(entry.1);
                }
            }
            let (jobs, ids): (Vec<JobId>, Vec<String>) =
                jobs.into_iter().filter_map(|j| Some((j, self.jobs.get(&j)?.provider_task_id.clone()?))).unzip();
            if jobs.is_empty() {
                continue;
            }
            let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            let request = self.provider.poll_request(&self.key, &id_refs);
            let rid = self.send(request);
            for job in &jobs {
                if let Some(j) = self.jobs.get_mut(job) {
                    j.stage = Stage::Polling(rid);
                    j.polls += 1;
                }
            }
            self.push_event(Event::Polled { tasks: jobs.len() });
            self.requests.insert(rid, Pending::Poll { jobs, ids });
        }
    }

    /// Whether the job's answer can share a `|`-separated batch answer: tokens can, but
    /// FunCaptcha tokens, GeeTest's JSON and recognised image text may contain `|` themselves.
    fn batchable(&self, job: JobId) -> bool {
        self.jobs.get(&job).is_some_and(|j| {
            matches!(
                j.task.kind(),
                TaskKind::RecaptchaV2 | TaskKind::RecaptchaV3 | TaskKind::Turnstile | TaskKind::Hcaptcha
            )
        })
    }

    fn schedule_submits(&mut self, now: Timestamp) {
        while !self.store_down
            && now >= self.submits_paused_until
            && self.circuit.allows_request()
            && self.circuit.account_failure().is_none()
            && self.limiter.may_submit(self.in_flight, now)
        {
            match self.submit_queue.first() {
                Some(&(at, _)) if at <= now => {}
                _ => break,
            }
            let Some((_, job)) = self.submit_queue.pop_first() else { break };
            let Some(j) = self.jobs.get(&job) else { continue };
            let request = match self.provider.submit_request(&self.key, &j.task, &self.submit_options) {
                Ok(r) => r,
                Err(e) => {
                    // Validated at acceptance; reachable only for recovered or replayed tasks
                    // from an older version. Review, never retry.
                    let f = Failure::new(reason::INVALID_TASK, ErrorClass::FixInput, e.to_string());
                    self.fail(job, Phase::Submit, f, None, now, true);
                    continue;
                }
            };
            let rid = self.send(request);
            self.limiter.on_submit(now);
            if let Some(j) = self.jobs.get_mut(&job) {
                j.stage = Stage::Submitting(rid);
            }
            self.in_flight += 1;
            self.requests.insert(rid, Pending::Submit { job });
        }
    }

    fn send(&mut self, mut request: HttpRequest) -> RequestId {
        let rid = RequestId(self.next_request);
        self.next_request += 1;
        request.timeout = Duration::from_millis(self.config.retry.request_timeout_ms);
        self.circuit.on_send();
        self.actions.push_back(Action::Send { request_id: rid, request });
        rid
    }

    fn on_accepted(&mut self, job: JobId, provider_task_id: String, now: Timestamp) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.attempts += 1;
        j.attempts_left = j.attempts_left.saturating_sub(1);
        j.provider_task_id = Some(provider_task_id.clone());
        j.submitted_at = now;
        j.polls = 0;
        j.request_failures = 0;
        j.retry_after_failures = 0;
        let attempt = j.attempts;
        let first_poll = self.config.polling.first_poll_ms.for_kind(j.task.kind());
        self.push_event(Event::Submitted { job, attempt, provider_task_id });
        if let Some(limit) = self.limiter.on_accepted() {
            self.push_event(Event::ConcurrencyChanged { limit });
        }
        self.journal_upsert(job, now);
        self.set_waiting(job, now.add(first_poll));
    }

    /// The service answered in the submission itself (CapSolver's recognition tasks): the
    /// attempt counts and the job ends without a poll.
    fn on_solved_at_submit(&mut self, job: JobId, solution: Solution, now: Timestamp) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.attempts += 1;
        j.attempts_left = j.attempts_left.saturating_sub(1);
        j.provider_task_id = solution.provider_task_id.clone();
        let (attempt, provider_task_id) = (j.attempts, solution.provider_task_id.clone().unwrap_or_default());
        self.push_event(Event::Submitted { job, attempt, provider_task_id });
        if let Some(limit) = self.limiter.on_accepted() {
            self.push_event(Event::ConcurrencyChanged { limit });
        }
        self.solved(job, solution, now, true);
    }

    fn on_poll_outcome(&mut self, jobs: Vec<JobId>, outcome: PollOutcome, status: Option<u16>, now: Timestamp) {
        match outcome {
            PollOutcome::PerTask(polls) if polls.len() == jobs.len() => {
                self.record_outcome(false, now);
                if jobs.len() > 1 {
                    self.garbled_batches = 0;
                }
                for (job, poll) in jobs.into_iter().zip(polls) {
                    if !self.jobs.contains_key(&job) {
                        continue;
                    }
                    match poll {
                        TaskPoll::Ready(mut solution) => {
                            if solution.provider_task_id.is_none() {
                                solution.provider_task_id =
                                    self.jobs.get(&job).and_then(|j| j.provider_task_id.clone());
                            }
                            self.solved(job, solution, now, true);
                        }
                        TaskPoll::NotReady => self.on_not_ready(job, now),
                        TaskPoll::Failed(f) => self.fail(job, Phase::Poll, f, status, now, false),
                    }
                }
            }
            PollOutcome::PerTask(polls) => {
                let f = Failure::new(
                    reason::UNPARSEABLE,
                    ErrorClass::Transient,
                    format!("{} answer(s) for {} polled task(s)", polls.len(), jobs.len()),
                );
                self.on_poll_failure(jobs, f, status, now);
            }
            PollOutcome::Failed(f) => self.on_poll_failure(jobs, f, status, now),
        }
    }

    fn on_poll_failure(&mut self, jobs: Vec<JobId>, f: Failure, status: Option<u16>, now: Timestamp) {
        let batch_garbled = jobs.len() > 1 && f.class == ErrorClass::Transient && status.is_some_and(|s| s < 500);
        if batch_garbled {
            self.garbled_batches += 1;
            if self.garbled_batches >= GARBLED_BATCHES_BEFORE_FALLBACK {
                // The provider does not answer `ids=` the way the protocol says: poll one by one
                // from now on, and don't hold this against the tasks.
                self.batch_disabled = true;
                self.record_outcome(false, now);
                self.push_event(Event::BatchPollingDisabled { reason: format!("{}: {}", f.code, f.description) });
                for job in jobs {
                    if let Some(j) = self.jobs.get_mut(&job) {
                        j.polls = j.polls.saturating_sub(1);
                        self.set_waiting(job, now);
                    }
                }
                return;
            }
        }
        self.record_outcome(f.class == ErrorClass::Transient, now);
        for job in jobs {
            if self.jobs.contains_key(&job) {
                self.fail(job, Phase::Poll, f.clone(), status, now, false);
            }
        }
    }

    fn on_not_ready(&mut self, job: JobId, now: Timestamp) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.request_failures = 0;
        j.retry_after_failures = 0;
        // The poll budget follows the service's working time on the kind (config::PollingConfig).
        let kind = j.task.kind();
        match self.config.polling.next_poll(kind, j.submitted_at, j.polls, now) {
            Some(at) => self.set_waiting(job, at),
            None => {
                let description = format!(
                    "task {} timed out: not ready after {} polls ({} s; {kind} tasks are given up after {} s)",
                    j.provider_task_id.as_deref().unwrap_or("?"),
                    j.polls,
                    now.since(j.submitted_at).as_secs(),
                    self.config.polling.give_up_ms.for_kind(kind).as_secs()
                );
                self.fail(
                    job,
                    Phase::Poll,
                    Failure::new(reason::TIMEOUT, ErrorClass::TaskTerminal, description),
                    None,
                    now,
                    false,
                );
            }
        }
    }

    /// Decides what a failure means for `job`. `fatal` forces dead-lettering.
    fn fail(&mut self, job: JobId, phase: Phase, f: Failure, status: Option<u16>, now: Timestamp, fatal: bool) {
        let retry = &self.config.retry;
        let (max_req, max_ra) = (retry.max_request_retries, retry.max_retry_after_retries);
        let min_transient = Duration::from_millis(retry.transient_min_delay_ms);
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.history.push(HistoryEntry {
            at: now,
            phase,
            error: f.code.clone(),
            provider_task_id: j.provider_task_id.clone(),
            http_status: status,
        });
        if j.history.len() > MAX_HISTORY {
            j.history.remove(0);
        }
        j.first_failed_at.get_or_insert(now);
        let at_submit = matches!(j.stage, Stage::Submitting(_));
        if fatal {
            return self.finish_dead(job, &f, now);
        }
        match f.class {
            ErrorClass::NotReady => self.on_not_ready(job, now),
            ErrorClass::Transient => {
                j.request_failures += 1;
                // A submission whose answer was lost counts as an attempt (see handle_response).
                let out_of_attempts = at_submit && j.attempts_left == 0;
                if j.request_failures > max_req || out_of_attempts {
                    return self.finish_dead(job, &f, now);
                }
                if phase == Phase::Poll {
                    j.polls = j.polls.saturating_sub(1); // an unanswered poll doesn't count against the budget
                }
                let n = j.request_failures - 1;
                let delay = self.backoff(job, n).max(min_transient);
                self.retry_request(job, phase, &f, delay, now);
            }
            ErrorClass::RetryAfter => {
                j.retry_after_failures += 1;
                if j.retry_after_failures > max_ra {
                    return self.finish_dead(job, &f, now);
                }
                let n = j.retry_after_failures - 1;
                let wanted = f.retry_after.unwrap_or(min_transient);
                let delay = self.backoff(job, n).max(wanted);
                // No free worker (CaptchaAI says it with ERROR_ZERO_BALANCE): fewer tasks at once.
                // Anything else asks the whole client to hold off for the named time.
                if f.code == "ERROR_NO_SLOT_AVAILABLE" || f.code == "ERROR_ZERO_BALANCE" {
                    if let Some(limit) = self.limiter.on_no_slot() {
                        self.push_event(Event::ConcurrencyChanged { limit });
                    }
                } else {
                    let scope = if at_submit { PauseScope::Submits } else { PauseScope::Polls };
                    self.pause(scope, &f.code, now.add(wanted));
                }
                self.retry_request(job, phase, &f, delay, now);
            }
            ErrorClass::TaskTerminal => {
                if at_submit {
                    j.attempts += 1;
                    j.attempts_left = j.attempts_left.saturating_sub(1);
                }
                if j.attempts_left == 0 {
                    return self.finish_dead(job, &f, now);
                }
                j.provider_task_id = None;
                j.request_failures = 0;
                j.retry_after_failures = 0;
                let n = j.attempts.saturating_sub(1);
                let attempt = j.attempts + 1;
                let delay = self.backoff(job, n);
                self.push_event(Event::Retrying {
                    job,
                    code: f.code.clone(),
                    class: f.class,
                    delay_ms: millis(delay),
                    attempt,
                });
                self.leave_flight(job);
                self.journal_upsert(job, now);
                self.enqueue_submit(job, now.add(delay));
            }
            ErrorClass::AccountTerminal => {
                let hold_ms = self.config.circuit.account_hold_ms;
                let first = self.circuit.account_failure().is_none();
                self.circuit.open_for_account(f.clone());
                if hold_ms > 0 && (first || self.hold.is_some()) {
                    // The service refused the submission, so nothing was paid: the task waits
                    // with the others until the account works again (or the hold ends).
                    if self.hold.is_none() {
                        let until = now.add(Duration::from_millis(hold_ms));
                        let next_probe = now.add(Duration::from_millis(self.config.circuit.account_probe_ms));
                        self.hold = Some(Hold { failure: f.clone(), until, next_probe, probing: false });
                        self.push_event(Event::AccountHold { code: f.code.clone(), until });
                    }
                    self.leave_flight(job);
                    self.enqueue_submit(job, now);
                    return;
                }
                if at_submit {
                    j.attempts += 1;
                }
                if first {
                    self.push_event(Event::CircuitOpened { cause: f.code.clone(), until: None });
                }
                self.finish_dead(job, &f, now);
                let queued: Vec<JobId> = self.submit_queue.iter().map(|(_, j)| *j).collect();
                for other in queued {
                    self.dead_letter_circuit_open(other, &f, now);
                }
            }
            ErrorClass::FixInput | ErrorClass::Cancelled | ErrorClass::Application => {
                if at_submit {
                    j.attempts += 1;
                }
                self.finish_dead(job, &f, now);
            }
        }
    }

    fn retry_request(&mut self, job: JobId, phase: Phase, f: &Failure, delay: Duration, now: Timestamp) {
        let attempt = self.jobs.get(&job).map_or(0, |j| j.attempts + u32::from(phase == Phase::Submit));
        self.push_event(Event::Retrying {
            job,
            code: f.code.clone(),
            class: f.class,
            delay_ms: millis(delay),
            attempt,
        });
        match phase {
            Phase::Submit => {
                self.leave_flight(job);
                self.enqueue_submit(job, now.add(delay));
            }
            _ => self.set_waiting(job, now.add(delay)),
        }
    }

    fn pause(&mut self, scope: PauseScope, code: &str, until: Timestamp) {
        let slot = match scope {
            PauseScope::Submits => &mut self.submits_paused_until,
            PauseScope::Polls => &mut self.polls_paused_until,
        };
        if until > *slot {
            *slot = until;
            self.push_event(Event::Paused { scope, code: code.to_string(), until });
        }
    }

    fn dead_letter_circuit_open(&mut self, job: JobId, cause: &Failure, now: Timestamp) {
        let f = Failure::new(
            reason::CIRCUIT_OPEN,
            ErrorClass::AccountTerminal,
            format!("not sent: submissions stopped after {} ({})", cause.code, cause.description),
        );
        self.fail(job, Phase::Submit, f, None, now, true);
    }

    /// The job is done. `persist`: write the answer into its journal entry before it is
    /// handed over (false when the entry already holds it).
    fn solved(&mut self, job: JobId, solution: Solution, now: Timestamp, persist: bool) {
        let entry = persist.then(|| self.journal_entry(job, now)).flatten().map(|mut entry| {
            entry.solution = Some(solution.clone());
            entry
        });
        let Some(j) = self.remove_job(job) else { return };
        self.push_event(Event::Solved { job, attempts: j.attempts, elapsed_ms: millis(now.since(j.accepted_at)) });
        self.actions.push_back(Action::Solved { job, id: j.id, labels: j.labels, solution, persist: entry });
    }

    fn finish_dead(&mut self, job: JobId, f: &Failure, now: Timestamp) {
        let Some(j) = self.remove_job(job) else { return };
        let context = match (&j.provider_task_id, j.history.last()) {
            (Some(pid), Some(h)) => format!(" ({} phase, provider task {pid})", h.phase.as_str()),
            _ => String::new(),
        };
        let record = DeadLetterRecord {
            schema: SCHEMA,
            id: j.id.clone(),
            provider: self.provider.name().to_string(),
            reason: f.code.clone(),
            description: format!("{}{context}", f.description),
            class: f.class,
            attempts: j.attempts,
            replays: j.replays,
            first_failed_at: j.first_failed_at.unwrap_or(now),
            dead_lettered_at: now,
            labels: j.labels,
            state: RecordState::Ready,
            deliveries: 0,
            parked_reason: None,
            history: j.history,
            task: j.task,
        };
        self.push_event(Event::DeadLettered {
            job,
            id: record.id.clone(),
            reason: record.reason.clone(),
            class: record.class,
            attempts: record.attempts,
        });
        self.actions.push_back(Action::DeadLetter { job, record, push: !j.lease_held });
    }

    // ----- bookkeeping ----------------------------------------------------

    fn insert_job(
        &mut self,
        id: String,
        task: Task,
        labels: BTreeMap<String, String>,
        now: Timestamp,
        attempts_left: u32,
    ) -> JobId {
        let job = JobId(self.next_job);
        self.next_job += 1;
        let deadline = now.add(Duration::from_millis(self.config.retry.task_deadline_ms));
        self.deadlines.insert((deadline, job));
        self.jobs.insert(
            job,
            Job {
                id,
                task,
                labels,
                attempts: 0,
                attempts_left,
                replays: 0,
                history: Vec::new(),
                first_failed_at: None,
                accepted_at: now,
                deadline,
                stage: Stage::Persisting,
                provider_task_id: None,
                submitted_at: now,
                polls: 0,
                request_failures: 0,
                retry_after_failures: 0,
                last_delay: Duration::ZERO,
                key: None,
                replay_of: None,
                lease_held: false,
            },
        );
        job
    }

    fn remove_job(&mut self, job: JobId) -> Option<Job> {
        self.leave_flight(job);
        self.unqueue(job);
        let j = self.jobs.remove(&job)?;
        self.deadlines.remove(&(j.deadline, job));
        Some(j)
    }

    /// Takes the job out of the submit and poll queues (not out of pending requests:
    /// their answers find no job and are dropped).
    fn unqueue(&mut self, job: JobId) {
        if let Some(j) = self.jobs.get(&job) {
            match j.stage {
                Stage::Queued { at } => {
                    self.submit_queue.remove(&(at, job));
                }
                Stage::Waiting { at } => {
                    self.poll_queue.remove(&(at, job));
                }
                Stage::Persisting | Stage::Submitting(_) | Stage::Polling(_) => {}
            }
        }
    }

    /// The job's current submission ended (or never was): it no longer counts in flight.
    fn leave_flight(&mut self, job: JobId) {
        if let Some(j) = self.jobs.get_mut(&job) {
            if j.stage.is_submitted() {
                self.in_flight = self.in_flight.saturating_sub(1);
                j.stage = Stage::Queued { at: Timestamp::EPOCH };
            }
        }
    }

    fn enqueue_submit(&mut self, job: JobId, at: Timestamp) {
        self.unqueue(job);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.stage = Stage::Queued { at };
            self.submit_queue.insert((at, job));
        }
    }

    fn set_waiting(&mut self, job: JobId, at: Timestamp) {
        self.unqueue(job);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.stage = Stage::Waiting { at };
            self.poll_queue.insert((at, job));
        }
    }

    fn backoff(&mut self, job: JobId, n: u32) -> Duration {
        let previous = self.jobs.get(&job).map_or(Duration::ZERO, |j| j.last_delay);
        let d = backoff::delay(&self.config.retry.backoff, n, previous, &mut self.rng);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.last_delay = d;
        }
        d
    }

    fn record_outcome(&mut self, transient_failure: bool, now: Timestamp) {
        if let Some(t) = self.circuit.record(transient_failure, now) {
            let reopened_unreachable = matches!(t, Transition::Opened { .. }) && self.unreachable.is_some();
            self.report_transition(t);
            if reopened_unreachable {
                self.fail_waiting_submissions(now);
            }
        }
    }

    /// Dead-letters, with the unreachable failure, every task waiting to be submitted that no
    /// provider has taken yet.
    fn fail_waiting_submissions(&mut self, now: Timestamp) {
        let Some(failure) = self.unreachable.clone() else { return };
        let waiting: Vec<JobId> = self.submit_queue.iter().map(|(_, j)| *j).collect();
        for job in waiting {
            if self.jobs.get(&job).is_some_and(|j| j.provider_task_id.is_none()) {
                self.fail(job, Phase::Submit, failure.clone(), None, now, true);
            }
        }
    }

    fn report_transition(&mut self, t: Transition) {
        let event = match t {
            Transition::Opened { until } => {
                let cause = match &self.unreachable {
                    Some(f) => f.description.clone(),
                    None => "transient failure ratio".to_string(),
                };
                Event::CircuitOpened { cause, until: Some(until) }
            }
            Transition::HalfOpened => Event::CircuitHalfOpen,
            Transition::Closed => {
                self.unreachable = None;
                Event::CircuitClosed
            }
        };
        self.push_event(event);
    }

    /// Rewrites the job's journal entry (attempts, provider task id) without holding it up.
    fn journal_upsert(&mut self, job: JobId, now: Timestamp) {
        if let Some(entry) = self.journal_entry(job, now) {
            self.actions.push_back(Action::Journal { entry, gates: None });
        }
    }

    fn journal_entry(&self, job: JobId, now: Timestamp) -> Option<JournalEntry> {
        let j = self.jobs.get(&job)?;
        Some(JournalEntry {
            id: j.id.clone(),
            task: j.task.clone(),
            provider: self.provider.name().to_string(),
            labels: j.labels.clone(),
            provider_task_id: j.provider_task_id.clone(),
            attempts: j.attempts,
            replays: j.replays,
            history: j.history.clone(),
            accepted_at: j.accepted_at,
            updated_at: now,
            replay_of: j.replay_of.clone(),
            owner: None,
            key: j.key.clone(),
            solution: None,
        })
    }

    fn push_event(&mut self, e: Event) {
        self.actions.push_back(Action::Event(e));
    }

    fn new_record_id(&mut self, now: Timestamp) -> String {
        let random = (u128::from(self.rng.u64(..)) << 16) | u128::from(self.rng.u16(..));
        ulid::Ulid::from_parts(now.as_unix_millis(), random).to_string()
    }
}

fn network_failure(e: &TransportError) -> Failure {
    Failure::new(reason::NETWORK, ErrorClass::Transient, format!("no answer from the service: {}", e.message))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
