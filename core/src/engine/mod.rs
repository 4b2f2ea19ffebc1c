//! The solving engine: a deterministic state machine that never performs I/O.
//!
//! See [`Engine`] for the calling contract. What the engine keeps per provider is in
//! [`lane`]; which provider a task is sent to, in [`routing`] (the policy) and
//! `placement` (the rules that move tasks between providers); what its answers say of a
//! provider's health, in `health`; the budget cap, in `budget`.

mod backoff;
mod budget;
mod circuit;
pub mod config;
pub mod event;
mod fleet;
mod health;
pub mod lane;
mod limiter;
mod placement;
mod rounds;
pub mod routing;

use core::fmt;
use core::time::Duration;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use serde::Serialize;

pub use self::config::{
    Backoff, CircuitConfig, EngineConfig, FirstPoll, KindMs, PollingConfig, RateConfig, RetryConfig,
};
pub use self::event::{Event, Level, PauseScope};
pub use self::fleet::FleetSync;
use self::lane::{Hold, Lane};
pub use self::lane::{LaneSpec, LaneStatus, MAX_LANES};
use self::routing::Preference;
pub use self::routing::{Health, Policy, RoutingConfig, ROUTING_LABEL};
use crate::class::{reason, ErrorClass, Failure};
use crate::dlq::record::{DeadLetterRecord, HistoryEntry, Phase, RecordState, SCHEMA};
use crate::error::{ConfigError, InvalidTask};
use crate::http::{HttpRequest, HttpResponse, Secret, TransportError, TransportErrorKind};
use crate::journal::JournalEntry;
use crate::json_read::{deserialize_from_json, FieldError, FromJson};
use crate::labels::Labels;
use crate::provider::{PollOutcome, Provider, SubmitOptions, SubmitOutcome, TaskPoll};
use crate::quoted::Quoted;
use crate::solution::Solution;
use crate::spend::{SpendLedger, SpendReport};
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
    /// Settle this report with the store's fleet ledger (`FleetLedger::sync`) and hand the
    /// grant (or the failure) to [`Engine::fleet_synced`]. At most one per lane is out at once.
    FleetSync(FleetSync),
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
    /// Waiting at its lane for a submission slot, not before `at`.
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

#[derive(Clone, Debug)]
struct Job {
    id: String,
    /// Shared with the journal entries written for it.
    task: Arc<Task>,
    labels: Labels,
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
    /// The lane the task waits at, is submitted to, or last ran at.
    lane: Option<usize>,
    /// Shared with the poll requests that carry it (a batch poll names up to 100).
    provider_task_id: Option<Arc<str>>,
    submitted_at: Timestamp,
    /// When this engine sent the current submission (for the latency routing observes).
    sent_at: Option<Timestamp>,
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
    /// Its own routing (the `routing` label).
    preference: Preference,
    /// Lanes that cannot take it (one bit per lane).
    unsupported: u32,
    /// Lanes that answered a task-terminal error for it (avoided by routing).
    avoid: u32,
    /// A lane that may still be working on it and until when: it is sent nowhere else before.
    pin: Option<(usize, Timestamp)>,
    /// Sent to another lane than the fastest to measure it (left there by rebalancing).
    explored: bool,
    /// Its expected cost, reserved against the budget while it is submitted (nano-units).
    reserved: u64,
}

#[derive(Debug)]
enum Pending {
    Submit {
        job: JobId,
        lane: usize,
    },
    Poll {
        lane: usize,
        jobs: Vec<JobId>,
        ids: Vec<Arc<str>>,
    },
    /// A balance check while submissions are held for an account error.
    Probe {
        lane: usize,
    },
    /// A balance check that decides a half-open circuit nobody else sends to (several
    /// providers only: with one, the next task is the probe).
    Ping {
        lane: usize,
    },
}

impl Pending {
    fn lane(&self) -> usize {
        match self {
            Pending::Submit { lane, .. }
            | Pending::Poll { lane, .. }
            | Pending::Probe { lane }
            | Pending::Ping { lane } => *lane,
        }
    }
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
///
/// An engine talks to one provider ([`Engine::new`]) or several ([`Engine::with_lanes`]):
/// each is a lane with its own limits, circuit and queues, and each task is routed to one
/// at a time (see [`routing`]).
#[derive(Debug)]
pub struct Engine {
    /// The first lane's configuration: its `retry` and `seed` are the whole engine's.
    config: EngineConfig,
    routing: RoutingConfig,
    lanes: Vec<Lane>,
    submit_options: SubmitOptions,
    rng: fastrand::Rng,
    jobs: FxHashMap<JobId, Job>,
    deadlines: BTreeSet<(Timestamp, JobId)>,
    requests: FxHashMap<RequestId, Pending>,
    actions: VecDeque<Action>,
    next_job: u64,
    next_request: u64,
    /// The driver's store cannot be written: no new submission until it can.
    store_down: bool,
    /// What was spent on solved tasks since this engine started.
    spend: SpendLedger,
    /// Expected cost of the tasks submitted and not finished, in nano-units (budget).
    reserved: u64,
    /// The lane `fastest` / `cheapest` preferred per kind at the last look (rebalancing).
    best: FxHashMap<(Policy, TaskKind), usize>,
}

/// Garbled batch answers in a row after which polling falls back to one id per request.
const GARBLED_BATCHES_BEFORE_FALLBACK: u32 = 3;

impl Engine {
    /// An engine over one provider.
    pub fn new(provider: Provider, key: Secret, config: EngineConfig) -> Self {
        Engine::build(vec![Lane::new(LaneSpec::new(provider, key, config))], RoutingConfig::default())
    }

    /// An engine over several providers, routed by `routing`. Names must be unique; the
    /// first lane's `retry` and `seed` settings are the engine's.
    pub fn with_lanes(lanes: Vec<LaneSpec>, routing: RoutingConfig) -> Result<Self, ConfigError> {
        if lanes.is_empty() || lanes.len() > MAX_LANES {
            return Err(ConfigError::new(
                "providers",
                format!("expected 1 to {MAX_LANES} providers, got {}", lanes.len()),
            ));
        }
        for (i, lane) in lanes.iter().enumerate() {
            if lanes[..i].iter().any(|other| other.name == lane.name) {
                return Err(ConfigError::new(
                    format!("providers[{i}].name"),
                    format!("two providers are named {}: give each a distinct name", Quoted(&lane.name)),
                ));
            }
            lane.config.validate().map_err(|e| ConfigError::new(format!("providers[{i}].{}", e.field), e.problem))?;
        }
        routing.validate()?;
        Ok(Engine::build(lanes.into_iter().map(Lane::new).collect(), routing))
    }

    fn build(lanes: Vec<Lane>, routing: RoutingConfig) -> Self {
        let config = lanes[0].config.clone();
        Engine {
            rng: fastrand::Rng::with_seed(config.seed),
            config,
            routing,
            lanes,
            submit_options: SubmitOptions::default(),
            jobs: FxHashMap::default(),
            deadlines: BTreeSet::new(),
            requests: FxHashMap::default(),
            actions: VecDeque::new(),
            next_job: 1,
            next_request: 1,
            store_down: false,
            spend: SpendLedger::default(),
            reserved: 0,
            best: FxHashMap::default(),
        }
    }

    pub fn with_submit_options(mut self, options: SubmitOptions) -> Self {
        self.submit_options = options;
        self
    }

    /// The first provider (the only one of a single-provider engine).
    pub fn provider(&self) -> &Provider {
        &self.lanes[0].provider
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub fn routing(&self) -> &RoutingConfig {
        &self.routing
    }

    /// Jobs not yet solved or dead-lettered.
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }

    /// Jobs submitted to a provider and not finished.
    pub fn in_flight(&self) -> usize {
        self.lanes.iter().map(|l| l.in_flight).sum()
    }

    /// Current in-flight limit (lowered by `ERROR_NO_SLOT_AVAILABLE`), over every provider.
    pub fn concurrency_limit(&self) -> u32 {
        self.lanes.iter().fold(0u32, |sum, l| sum.saturating_add(l.limiter.limit()))
    }

    /// The account error that stopped submissions, if any: with several providers, only
    /// once every one of them has one (the first provider's is given).
    pub fn account_failure(&self) -> Option<&Failure> {
        let failures: Option<Vec<&Failure>> = self.lanes.iter().map(|l| l.circuit.account_failure()).collect();
        failures.and_then(|f| f.first().copied())
    }

    /// How often a provider was found unreachable (see `track_reachability`) since start.
    pub fn unreachable_episodes(&self) -> u32 {
        self.lanes.iter().map(|l| l.unreachable_episodes).sum()
    }

    /// Each provider's state, in configuration order.
    pub fn lanes(&self) -> Vec<LaneStatus> {
        self.lanes.iter().map(Lane::status).collect()
    }

    /// What was spent on solved tasks since this engine started (recovered answers, paid by
    /// an earlier process, are not counted).
    pub fn spend(&self) -> SpendReport {
        self.spend.report(self.routing.budget)
    }

    /// The record id (ULID) of a live job.
    pub fn job_record_id(&self, job: JobId) -> Option<&str> {
        self.jobs.get(&job).map(|j| j.id.as_str())
    }

    /// Whether this engine has several providers (events then name theirs).
    fn multi(&self) -> bool {
        self.lanes.len() > 1
    }

    /// A lane's name for its events, when there are several.
    fn label(&self, lane: usize) -> Option<String> {
        self.multi().then(|| self.lanes[lane].name.clone())
    }

    fn lane_named(&self, name: &str) -> Option<usize> {
        self.lanes.iter().position(|l| l.name == name).or_else(|| (!self.multi()).then_some(0))
    }

    // ----- commands -------------------------------------------------------

    /// Accepts a task. It is validated and encoded for the providers now, so a task that
    /// can never be sent (by any of them) is refused here rather than dead-lettered; a
    /// `routing` label must name a policy or a configured provider.
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
        let unsupported = self.unsupported(&task)?;
        let preference = self.preference(labels.get(ROUTING_LABEL), true)?;
        let id = self.new_record_id(now);
        let job = self.insert_job(id.clone(), Arc::new(task), labels.into(), now, self.config.retry.max_attempts);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.key = key;
            j.unsupported = unsupported;
            j.preference = preference;
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
        let unsupported = self.unsupported(&record.task)?;
        let preference = self.preference(record.labels.get(ROUTING_LABEL), false)?;
        let job = self.insert_job(
            record.id.clone(),
            Arc::new(record.task),
            record.labels.into(),
            now,
            attempts_allowed.max(1),
        );
        if let Some(j) = self.jobs.get_mut(&job) {
            j.attempts = record.attempts;
            j.replays = record.replays + 1;
            j.history = record.history;
            j.first_failed_at = Some(record.first_failed_at);
            j.replay_of = Some(record.id);
            j.lease_held = true;
            j.unsupported = unsupported;
            j.preference = preference;
        }
        self.persist_then_submit(job, now);
        Ok(job)
    }

    /// The lanes that cannot take `task` (a bit each); an error when none can. `task` is
    /// valid (checked by the caller): this asks each provider what building its request would.
    fn unsupported(&self, task: &Task) -> Result<u32, InvalidTask> {
        let mut mask = 0u32;
        let mut first_error = None;
        for (i, lane) in self.lanes.iter().enumerate() {
            if let Err(e) = lane.provider.check_submit(task) {
                mask |= 1 << i;
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(mut e) if mask.count_ones() as usize == self.lanes.len() => {
                if self.multi() {
                    e.problem =
                        format!("{} (at {}; no configured provider can take this task)", e.problem, self.lanes[0].name);
                }
                Err(e)
            }
            _ => Ok(mask),
        }
    }

    /// The task's own routing from its `routing` label. `strict`: an unknown value is an
    /// error (new tasks); otherwise it is ignored (a replayed record naming a provider
    /// this client no longer has).
    fn preference(&self, label: Option<&String>, strict: bool) -> Result<Preference, InvalidTask> {
        self.preference_of(label.map(String::as_str), strict)
    }

    fn preference_of(&self, label: Option<&str>, strict: bool) -> Result<Preference, InvalidTask> {
        let names: Vec<&str> = self.lanes.iter().map(|l| l.name.as_str()).collect();
        match Preference::from_label(label, &names) {
            Err(e) if strict => Err(e),
            other => Ok(other.unwrap_or_default()),
        }
    }

    /// Writes the job's journal entry, holding its submission until the driver confirms it.
    fn persist_then_submit(&mut self, job: JobId, now: Timestamp) {
        if let Some(failure) = self.refusal(job) {
            return self.fail(job, Phase::Submit, failure, None, now, true);
        }
        if let Some(entry) = self.journal_entry(job, now) {
            self.actions.push_back(Action::Journal { entry, gates: Some(job) });
        }
    }

    /// Why `job` cannot be submitted anywhere now and never will be without the application
    /// stepping in: the budget is spent, or every provider that takes it stopped on an
    /// account error (and is not holding).
    fn refusal(&self, job: JobId) -> Option<Failure> {
        if let Some(f) = self.budget_refusal() {
            return Some(f);
        }
        let j = self.jobs.get(&job)?;
        let mut stopped = None;
        for (i, lane) in self.lanes.iter().enumerate() {
            if j.unsupported & (1 << i) != 0 {
                continue;
            }
            match lane.account_stopped() {
                Some(f) => {
                    stopped.get_or_insert(f);
                }
                None => return None,
            }
        }
        stopped.map(circuit_open_failure)
    }

    /// The journal entry gating `job` is written: it may be submitted now.
    /// Returns `false` if the job is not waiting for that (it ended meanwhile).
    pub fn journaled(&mut self, job: JobId, now: Timestamp) -> bool {
        if !self.jobs.get(&job).is_some_and(|j| j.stage == Stage::Persisting) {
            return false;
        }
        self.tick_circuits(now);
        if let Some(failure) = self.refusal(job) {
            self.fail(job, Phase::Submit, failure, None, now, true);
            return true;
        }
        self.enqueue_submit(job, now, now);
        // The best lane it could go to cannot be reached: fail fast rather than wait.
        let lane = self.jobs.get(&job).and_then(|j| j.lane);
        if let Some(failure) =
            lane.and_then(|l| self.lanes[l].unreachable.clone().filter(|_| self.lanes[l].circuit.is_open()))
        {
            self.fail(job, Phase::Submit, failure, None, now, true);
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

    /// Another client of the fleet took `job` over (its journal entry names that client now; a
    /// write of it was fenced off): the job is dropped without a trace, since the new owner
    /// finishes it. Returns whether there was such a job.
    pub fn let_go(&mut self, job: JobId) -> bool {
        self.remove_job(job).is_some()
    }

    /// The driver's store has not answered for as long as the driver waits for it: every
    /// task waiting for a submission is let go rather than held until its deadline. A task
    /// never sent is removed and returned (nothing was paid; its journal entry, if it was
    /// written, lets `recover` run it later); a task sent before and waiting to be sent
    /// again is dead-lettered as `StoreUnavailable` (transient: replayable).
    pub fn release_unsent(&mut self, waited: Duration, now: Timestamp) -> Vec<JobId> {
        let waiting: Vec<(JobId, u32)> = self
            .jobs
            .iter()
            .filter(|(_, j)| matches!(j.stage, Stage::Queued { .. }))
            .map(|(job, j)| (*job, j.attempts))
            .collect();
        let mut released = Vec::new();
        for (job, attempts) in waiting {
            if attempts == 0 {
                self.remove_job(job);
                released.push(job);
            } else {
                let why = format!(
                    "the DLQ store did not answer for {} s: not submitted again (its answer could not be kept)",
                    waited.as_secs()
                );
                let failure = Failure::new(reason::STORE_UNAVAILABLE, ErrorClass::Transient, why);
                self.fail(job, Phase::Submit, failure, None, now, true);
            }
        }
        released
    }

    /// Tells the engine whether the driver's store can be written. While it cannot, no task
    /// is submitted (its answer could not be kept); polling goes on.
    pub fn set_store_available(&mut self, available: bool) {
        self.store_down = !available;
    }

    /// Raises the in-flight limit of every provider to at least `limit` (a caller asked for
    /// that much concurrency); `ERROR_NO_SLOT_AVAILABLE` still halves it.
    pub fn ensure_in_flight_limit(&mut self, limit: u32) {
        for l in 0..self.lanes.len() {
            if let Some(limit) = self.lanes[l].limiter.raise_ceiling(limit) {
                let provider = self.label(l);
                self.push_event(Event::ConcurrencyChanged { limit, provider });
            }
        }
    }

    /// Resumes a task found in the journal at start-up: polls its provider
    /// task (at the provider the entry names) if it had one, else submits it again. An
    /// entry older than `retry.recover_max_age_ms` (its answer would be stale), or naming a
    /// provider task at a provider this client does not have, is dead-lettered as
    /// `Interrupted` instead.
    pub fn recover(&mut self, entry: JournalEntry, now: Timestamp) -> JobId {
        let stale = now.since(entry.updated_at) > Duration::from_millis(self.config.retry.recover_max_age_ms);
        let invalid = entry.task.validate().err();
        let unsupported = self.unsupported(&entry.task).unwrap_or(0);
        let preference = self.preference_of(entry.labels.get(ROUTING_LABEL), false).unwrap_or_default();
        let lane = self.lane_named(&entry.provider);
        let allowed = self.config.retry.max_attempts.saturating_sub(entry.attempts).max(1);
        let job = self.insert_job(entry.id.clone(), entry.task, entry.labels, now, allowed);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.attempts = entry.attempts;
            j.replays = entry.replays;
            j.history = entry.history;
            j.replay_of = entry.replay_of;
            j.key = entry.key;
            j.provider_task_id = entry.provider_task_id.as_deref().map(Arc::from);
            j.lane = lane;
            j.unsupported = unsupported;
            j.preference = preference;
        }
        if let Some(solution) = entry.solution {
            // Solved before the process stopped, and maybe never handed over: hand it over now
            // (the same record id and provider task id), however old, since it was paid for.
            self.push_event(Event::Recovered { job, id: entry.id, resumed_polling: false });
            self.solved(job, solution, now, false);
            return job;
        }
        let lost_provider = entry.provider_task_id.is_some() && lane.is_none();
        if stale || invalid.is_some() || lost_provider {
            let description = match invalid {
                Some(e) => format!("found in the journal after a restart, but the task is invalid: {e}"),
                None if lost_provider => format!(
                    "found in the journal after a restart with task {} at {}, a provider this client does not have; \
                     replay it once that provider is configured again, or to submit it elsewhere",
                    entry.provider_task_id.as_deref().unwrap_or("?"),
                    Quoted(&entry.provider)
                ),
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
        match (entry.provider_task_id, lane) {
            (Some(pid), Some(l)) => {
                let working_time =
                    self.lanes[l].working_time(self.jobs.get(&job).map_or(TaskKind::Raw, |j| j.task.kind()));
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.provider_task_id = Some(Arc::from(pid));
                    j.submitted_at = now;
                    // The provider has been working on it since the entry was written.
                    j.pin = Some((l, entry.updated_at.add(working_time)));
                }
                self.lanes[l].in_flight += 1;
                self.set_waiting(job, now);
            }
            _ => self.enqueue_submit(job, now, now),
        }
        job
    }

    /// Dead-letters a journal entry as `Interrupted` without resuming it.
    pub fn interrupt(&mut self, entry: JournalEntry, now: Timestamp) -> JobId {
        if entry.solution.is_some() {
            // An answer is never thrown away: hand it over instead.
            return self.recover(entry, now);
        }
        let lane = self.lane_named(&entry.provider);
        let job = self.insert_job(entry.id.clone(), entry.task, entry.labels, now, 0);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.attempts = entry.attempts;
            j.replays = entry.replays;
            j.history = entry.history;
            j.provider_task_id = entry.provider_task_id.map(Arc::from);
            j.key = entry.key;
            j.replay_of = entry.replay_of;
            j.lane = lane;
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

    /// Lets submissions flow again (at every provider) after an account error was fixed.
    pub fn reset_circuit(&mut self) {
        for l in 0..self.lanes.len() {
            self.lanes[l].circuit.reset_account();
            self.lanes[l].hold = None;
            if let Some(share) = self.lanes[l].fleet.as_mut() {
                share.report_account_ok();
            }
            let provider = self.label(l);
            self.push_event(Event::CircuitClosed { provider });
        }
    }

    /// Whether submissions are held for an account error, and until when at the latest
    /// (the earliest end of a hold, with several providers).
    pub fn held_until(&self) -> Option<Timestamp> {
        self.lanes.iter().filter_map(|l| l.hold.as_ref().map(|h| h.until)).min()
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
        let lane = pending.lane();
        self.track_reachability(lane, result.as_ref().err(), now);
        match pending {
            Pending::Submit { job, lane } => {
                let outcome = match &result {
                    Ok(resp) => self.lanes[lane].provider.parse_submit(resp),
                    Err(e) => SubmitOutcome::Failed(network_failure(e)),
                };
                let transient = matches!(&outcome, SubmitOutcome::Failed(f) if f.class == ErrorClass::Transient);
                self.record_outcome(lane, transient, now);
                if !self.jobs.contains_key(&job) {
                    return; // ended meanwhile (deadline, cancel); nothing waits for this answer
                }
                if let Err(e) = &result {
                    if e.kind != TransportErrorKind::Connect {
                        // The request may have reached the service (a timeout, a reset, a browser
                        // that hides the answer): count it as a submission, so a service that
                        // takes tasks without our seeing the answer is not paid without bound,
                        // and send it nowhere else while the service may be working on it.
                        self.count_unconfirmed_submission(job, lane, now);
                    }
                }
                if let (Some(_), SubmitOutcome::Failed(own)) = (&self.lanes[lane].unreachable, &outcome) {
                    // The provider cannot be reached: another takes the task, or it fails fast
                    // rather than wait for the deadline.
                    if own.class == ErrorClass::Transient {
                        let f = own.clone();
                        return self.fail_here(job, Phase::Submit, f, status, now);
                    }
                }
                match outcome {
                    SubmitOutcome::Accepted { provider_task_id } => self.on_accepted(job, lane, provider_task_id, now),
                    SubmitOutcome::Solved(solution) => self.on_solved_at_submit(job, lane, solution, now),
                    SubmitOutcome::Failed(f) => self.fail(job, Phase::Submit, f, status, now, false),
                }
            }
            Pending::Probe { lane } => self.on_probe(lane, result.ok(), now),
            Pending::Ping { lane } => {
                self.lanes[lane].pinging = false;
                let failed = result.as_ref().map_or(true, |r| r.status >= 500);
                self.record_outcome(lane, failed, now);
            }
            Pending::Poll { lane, jobs, ids } => {
                let id_refs: Vec<&str> = ids.iter().map(|id| &**id).collect();
                let outcome = match &result {
                    Ok(resp) => self.lanes[lane].provider.parse_poll(resp, &id_refs),
                    Err(e) => PollOutcome::Failed(network_failure(e)),
                };
                self.on_poll_outcome(lane, jobs, outcome, status, now);
            }
        }
    }

    /// Counts a submission whose answer was lost on the way (see `handle_response`): the
    /// provider may be working on it until its working time for the kind is over.
    fn count_unconfirmed_submission(&mut self, job: JobId, lane: usize, now: Timestamp) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.attempts += 1;
        j.attempts_left = j.attempts_left.saturating_sub(1);
        j.pin = Some((lane, now.add(self.lanes[lane].working_time(j.task.kind()))));
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
        for (l, lane) in self.lanes.iter().enumerate() {
            if let Some(hold) = &lane.hold {
                consider(hold.until);
                if !hold.probing {
                    consider(hold.next_probe);
                }
            }
            if let Some(reopen) = lane.circuit.reopens_at() {
                consider(reopen);
                continue;
            }
            if !lane.circuit.allows_request() {
                continue; // half-open with the probe in flight: wait for its answer
            }
            if let Some(at) = self.next_round_at(l) {
                consider(at.max(lane.polls_paused_until));
            }
            if let Some(share) = &lane.fleet {
                consider(share.next_sync_at(lane.submit_queue.len()));
            }
            let submits_blocked = self.store_down || lane.circuit.account_failure().is_some();
            if let Some((at, job)) = lane.submit_queue.first().filter(|_| !submits_blocked) {
                // A fleet lane without a permit on hand waits for the sync considered above.
                let permit = lane.fleet.as_ref().map_or(Some(Timestamp::EPOCH), |share| share.next_permit_at());
                if let Some(permit) = permit.filter(|_| lane.in_flight < lane.limiter.limit() as usize) {
                    if !self.budget_waits(l, *job) {
                        consider((*at).max(lane.limiter.next_submit_at()).max(lane.submits_paused_until).max(permit));
                    }
                }
            }
        }
        next
    }

    // ----- the machine ----------------------------------------------------

    fn advance(&mut self, now: Timestamp) {
        self.tick_circuits(now);
        for l in 0..self.lanes.len() {
            self.advance_hold(l, now);
        }
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
        for l in 0..self.lanes.len() {
            self.schedule_polls(l, now);
            self.schedule_submits(l, now);
            self.ping_if_probing(l);
        }
        self.ask_fleet_syncs(now);
    }

    fn schedule_polls(&mut self, l: usize, now: Timestamp) {
        let batch = self.poll_batch(l);
        let lane = &self.lanes[l];
        let horizon = if batch > 1 { now.add(Duration::from_millis(lane.config.polling.coalesce_ms)) } else { now };
        while now >= self.lanes[l].polls_paused_until && self.lanes[l].circuit.allows_request() {
            let Some(&(at, _)) = self.lanes[l].poll_queue.first() else { break };
            if at > now {
                break;
            }
            if self.next_round_at(l).is_some_and(|round| round > now) {
                // The round waits for riders (see `rounds`); what is due now and cannot ride
                // is polled on its own (while every waiting job can ride, nothing is walked).
                if self.lanes[l].poll_queue.unbatchable() == 0 {
                    break;
                }
                let alone: Vec<(Timestamp, JobId)> = self.lanes[l]
                    .poll_queue
                    .iter()
                    .take_while(|(t, _)| *t <= now)
                    .filter(|(_, j)| !self.batchable(*j))
                    .copied()
                    .collect();
                for entry in alone {
                    self.lanes[l].poll_queue.remove(&entry, false);
                    self.send_poll(l, vec![entry.1]);
                }
                break;
            }
            let jobs_table = &self.jobs;
            let batchable = |job: JobId| job_batchable(jobs_table, job);
            let Some((_, first)) = self.lanes[l].poll_queue.pop_first(batchable) else { break };
            let first_batchable = batchable(first);
            let mut jobs = Vec::with_capacity(if first_batchable { batch } else { 1 });
            jobs.push(first);
            if batch > 1 && first_batchable {
                // Gather more batchable jobs due soon; others stay queued for their own request.
                let queue = &mut self.lanes[l].poll_queue;
                if queue.unbatchable() == 0 {
                    // Every waiting job can ride: the riders are the first ones due.
                    while jobs.len() < batch && queue.first().is_some_and(|(t, _)| *t <= horizon) {
                        jobs.extend(queue.pop_first(|_| true).map(|(_, j)| j));
                    }
                } else {
                    let riders: Vec<(Timestamp, JobId)> = queue
                        .iter()
                        .take_while(|(t, _)| *t <= horizon)
                        .filter(|(_, j)| batchable(*j))
                        .take(batch - 1)
                        .copied()
                        .collect();
                    for entry in riders {
                        queue.remove(&entry, true);
                        jobs.push(entry.1);
                    }
                }
            }
            self.send_poll(l, jobs);
        }
    }

    /// One poll request for `jobs` (taken out of the poll queue) at lane `l`.
    fn send_poll(&mut self, l: usize, mut jobs: Vec<JobId>) {
        // The request's id is the next one: each job is looked up once, to mark it polled
        // by that request and to read its provider task id.
        let rid = RequestId(self.next_request);
        let mut ids = Vec::with_capacity(jobs.len());
        jobs.retain(|job| {
            let Some(j) = self.jobs.get_mut(job) else { return false };
            let Some(pid) = j.provider_task_id.clone() else { return false };
            j.stage = Stage::Polling(rid);
            j.polls += 1;
            ids.push(pid);
            true
        });
        if jobs.is_empty() {
            return;
        }
        let id_refs: Vec<&str> = ids.iter().map(|id| &**id).collect();
        let lane = &self.lanes[l];
        let request = lane.provider.poll_request(&lane.key, &id_refs);
        let sent = self.send(l, request);
        debug_assert_eq!(sent, rid);
        self.push_event(Event::Polled { tasks: jobs.len() });
        self.requests.insert(rid, Pending::Poll { lane: l, jobs, ids });
    }

    /// Whether the job's answer can share a `|`-separated batch answer: tokens can, but
    /// FunCaptcha tokens, GeeTest's JSON and recognised image text may contain `|` themselves.
    fn batchable(&self, job: JobId) -> bool {
        job_batchable(&self.jobs, job)
    }

    fn schedule_submits(&mut self, l: usize, now: Timestamp) {
        while !self.store_down
            && now >= self.lanes[l].submits_paused_until
            && {
                let lane = &self.lanes[l];
                lane.circuit.allows_request()
                    && lane.circuit.account_failure().is_none()
                    && lane.limiter.may_submit(lane.in_flight, now)
            }
            && self.fleet_allows(l, now)
        {
            let Some(&(at, job)) = self.lanes[l].submit_queue.first() else { break };
            if at > now {
                break;
            }
            if let Some(f) = self.budget_refuses(l, job) {
                self.fail(job, Phase::Submit, f, None, now, true);
                continue;
            }
            if self.budget_waits(l, job) {
                break; // what is in flight may use the rest of the budget: wait for it
            }
            self.lanes[l].submit_queue.pop_first();
            let Some(j) = self.jobs.get(&job) else { continue };
            let lane = &self.lanes[l];
            // Validated once, when the engine took it (submit, replay, recover).
            let request = match lane.provider.encode_submit(&lane.key, &j.task, &self.submit_options) {
                Ok(r) => r,
                Err(e) => {
                    // Checked against the providers at acceptance; reachable only for recovered
                    // or replayed tasks from an older version. Review, never retry.
                    let f = Failure::new(reason::INVALID_TASK, ErrorClass::FixInput, e.to_string());
                    self.fail(job, Phase::Submit, f, None, now, true);
                    continue;
                }
            };
            let expected = self.expected_cost(l, job);
            let rid = self.send(l, request);
            self.lanes[l].limiter.on_submit(now);
            if let Some(share) = self.lanes[l].fleet.as_mut() {
                share.take();
            }
            if let Some(j) = self.jobs.get_mut(&job) {
                j.stage = Stage::Submitting(rid);
                j.sent_at = Some(now);
                j.reserved = expected;
            }
            self.reserved = self.reserved.saturating_add(expected);
            self.lanes[l].in_flight += 1;
            self.requests.insert(rid, Pending::Submit { job, lane: l });
        }
    }

    fn send(&mut self, l: usize, mut request: HttpRequest) -> RequestId {
        let rid = RequestId(self.next_request);
        self.next_request += 1;
        request.timeout = Duration::from_millis(self.config.retry.request_timeout_ms);
        self.lanes[l].circuit.on_send();
        self.actions.push_back(Action::Send { request_id: rid, request });
        rid
    }

    fn on_accepted(&mut self, job: JobId, l: usize, provider_task_id: String, now: Timestamp) {
        let working_time = match self.jobs.get(&job) {
            Some(j) => self.lanes[l].working_time(j.task.kind()),
            None => return,
        };
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.attempts += 1;
        j.attempts_left = j.attempts_left.saturating_sub(1);
        j.provider_task_id = Some(Arc::from(provider_task_id.as_str()));
        j.submitted_at = now;
        j.polls = 0;
        j.request_failures = 0;
        j.retry_after_failures = 0;
        j.pin = Some((l, now.add(working_time)));
        let attempt = j.attempts;
        let first_poll = self.lanes[l].config.polling.first_poll_ms.for_kind(j.task.kind());
        let provider = self.label(l);
        self.push_event(Event::Submitted { job, attempt, provider_task_id, provider: provider.clone() });
        self.on_lane_accepted(l, provider);
        self.journal_upsert(job, now);
        self.set_waiting(job, now.add(first_poll));
    }

    /// The service answered in the submission itself (CapSolver's recognition tasks): the
    /// attempt counts and the job ends without a poll.
    fn on_solved_at_submit(&mut self, job: JobId, l: usize, solution: Solution, now: Timestamp) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.attempts += 1;
        j.attempts_left = j.attempts_left.saturating_sub(1);
        j.provider_task_id = solution.provider_task_id.as_deref().map(Arc::from);
        let (attempt, provider_task_id) = (j.attempts, solution.provider_task_id.clone().unwrap_or_default());
        let provider = self.label(l);
        self.push_event(Event::Submitted { job, attempt, provider_task_id, provider: provider.clone() });
        self.on_lane_accepted(l, provider);
        self.solved(job, solution, now, true);
    }

    /// A submission was accepted at lane `l`: its window (and the fleet's) grows by one.
    fn on_lane_accepted(&mut self, l: usize, provider: Option<String>) {
        if let Some(share) = self.lanes[l].fleet.as_mut() {
            share.report_accepted();
        }
        if let Some(limit) = self.lanes[l].limiter.on_accepted() {
            self.push_event(Event::ConcurrencyChanged { limit, provider });
        }
    }

    fn on_poll_outcome(
        &mut self,
        l: usize,
        jobs: Vec<JobId>,
        outcome: PollOutcome,
        status: Option<u16>,
        now: Timestamp,
    ) {
        match outcome {
            PollOutcome::PerTask(polls) if polls.len() == jobs.len() => {
                self.record_outcome(l, false, now);
                if jobs.len() > 1 {
                    self.lanes[l].garbled_batches = 0;
                }
                for (job, poll) in jobs.into_iter().zip(polls) {
                    if !self.jobs.contains_key(&job) {
                        continue;
                    }
                    match poll {
                        TaskPoll::Ready(mut solution) => {
                            if solution.provider_task_id.is_none() {
                                solution.provider_task_id =
                                    self.jobs.get(&job).and_then(|j| j.provider_task_id.as_deref().map(String::from));
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
                self.on_poll_failure(l, jobs, f, status, now);
            }
            PollOutcome::Failed(f) => self.on_poll_failure(l, jobs, f, status, now),
        }
    }

    fn on_poll_failure(&mut self, l: usize, jobs: Vec<JobId>, f: Failure, status: Option<u16>, now: Timestamp) {
        let batch_garbled = jobs.len() > 1 && f.class == ErrorClass::Transient && status.is_some_and(|s| s < 500);
        if batch_garbled {
            self.lanes[l].garbled_batches += 1;
            if self.lanes[l].garbled_batches >= GARBLED_BATCHES_BEFORE_FALLBACK {
                // The provider does not answer `ids=` the way the protocol says: poll one by one
                // from now on, and don't hold this against the tasks.
                self.lanes[l].batch_disabled = true;
                self.record_outcome(l, false, now);
                let provider = self.label(l);
                self.push_event(Event::BatchPollingDisabled {
                    reason: format!("{}: {}", f.code, f.description),
                    provider,
                });
                for job in jobs {
                    if let Some(j) = self.jobs.get_mut(&job) {
                        j.polls = j.polls.saturating_sub(1);
                        self.set_waiting(job, now);
                    }
                }
                return;
            }
        }
        self.record_outcome(l, f.class == ErrorClass::Transient, now);
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
        let Some(l) = j.lane else { return };
        // The poll budget follows the service's working time on the kind (config::PollingConfig).
        let kind = j.task.kind();
        let polling = &self.lanes[l].config.polling;
        match polling.next_poll(kind, j.submitted_at, j.polls, now) {
            Some(at) => self.set_waiting(job, at),
            None => {
                let description = format!(
                    "task {} timed out: not ready after {} polls ({} s; {kind} tasks are given up after {} s)",
                    j.provider_task_id.as_deref().unwrap_or("?"),
                    j.polls,
                    now.since(j.submitted_at).as_secs(),
                    polling.give_up_ms.for_kind(kind).as_secs()
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

    /// Adds `f` to the job's history, naming the provider it happened at.
    fn record_failure(&mut self, job: JobId, phase: Phase, f: &Failure, status: Option<u16>, now: Timestamp) {
        let provider = self.jobs.get(&job).and_then(|j| j.lane).map(|l| self.lanes[l].name.clone());
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.history.push(HistoryEntry {
            at: now,
            phase,
            error: f.code.clone(),
            provider_task_id: j.provider_task_id.as_deref().map(String::from),
            http_status: status,
            provider,
        });
        if j.history.len() > MAX_HISTORY {
            j.history.remove(0);
        }
        j.first_failed_at.get_or_insert(now);
    }

    /// A failure that ends the task's time at its provider: recorded, then the task goes to
    /// another provider if one can take it, else it is dead-lettered.
    fn fail_here(&mut self, job: JobId, phase: Phase, f: Failure, status: Option<u16>, now: Timestamp) {
        self.record_failure(job, phase, &f, status, now);
        if !self.fail_over(job, &f, now) {
            self.finish_dead(job, &f, now);
        }
    }

    /// Decides what a failure means for `job`. `fatal` forces dead-lettering.
    fn fail(&mut self, job: JobId, phase: Phase, f: Failure, status: Option<u16>, now: Timestamp, fatal: bool) {
        let retry = &self.config.retry;
        let (max_req, max_ra) = (retry.max_request_retries, retry.max_retry_after_retries);
        let min_transient = Duration::from_millis(retry.transient_min_delay_ms);
        self.record_failure(job, phase, &f, status, now);
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let at_submit = matches!(j.stage, Stage::Submitting(_));
        let l = j.lane.unwrap_or(0);
        if fatal {
            return self.finish_dead(job, &f, now);
        }
        match f.class {
            ErrorClass::NotReady => self.on_not_ready(job, now),
            ErrorClass::Transient => {
                j.request_failures += 1;
                // A submission whose answer was lost counts as an attempt (see handle_response).
                if at_submit && j.attempts_left == 0 {
                    return self.finish_dead(job, &f, now);
                }
                if j.request_failures > max_req {
                    // This provider failed the request too often: another may take the task.
                    if !self.fail_over(job, &f, now) {
                        self.finish_dead(job, &f, now);
                    }
                    return;
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
                    if !self.fail_over(job, &f, now) {
                        self.finish_dead(job, &f, now);
                    }
                    return;
                }
                let n = j.retry_after_failures - 1;
                let wanted = f.retry_after.unwrap_or(min_transient);
                let delay = self.backoff(job, n).max(wanted);
                // No free worker (CaptchaAI says it with ERROR_ZERO_BALANCE): fewer tasks at once.
                // Anything else asks the whole provider to hold off for the named time.
                if f.code == "ERROR_NO_SLOT_AVAILABLE" || f.code == "ERROR_ZERO_BALANCE" {
                    if let Some(share) = self.lanes[l].fleet.as_mut() {
                        share.report_no_slot();
                    }
                    if let Some(limit) = self.lanes[l].limiter.on_no_slot() {
                        let provider = self.label(l);
                        self.push_event(Event::ConcurrencyChanged { limit, provider });
                    }
                } else {
                    let scope = if at_submit { PauseScope::Submits } else { PauseScope::Polls };
                    if let Some(share) = self.lanes[l].fleet.as_mut().filter(|_| at_submit) {
                        // The provider's limit binds its account: the whole fleet pauses.
                        share.report_pause(&f.code, millis(wanted));
                    }
                    self.pause(l, scope, &f.code, now.add(wanted));
                }
                self.retry_request(job, phase, &f, delay, now);
            }
            ErrorClass::TaskTerminal => {
                if at_submit {
                    j.attempts += 1;
                    j.attempts_left = j.attempts_left.saturating_sub(1);
                }
                // The provider answered for this task: it no longer works on it.
                j.pin = None;
                if self.routing.failover_on_unsolvable && self.lanes.len() > 1 {
                    j.avoid |= 1 << l;
                }
                let spent = j.sent_at.filter(|_| phase == Phase::Poll).map(|t| now.since(t));
                let kind = j.task.kind();
                if let Some(d) = spent {
                    // Time spent for nothing counts against the provider's speed.
                    self.lanes[l].stats.observe_latency(kind, d);
                }
                let Some(j) = self.jobs.get_mut(&job) else { return };
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
                self.enqueue_submit(job, now.add(delay), now);
                if spent.is_some() {
                    self.rebalance(kind, now);
                }
            }
            ErrorClass::AccountTerminal => {
                // The provider refused: it works on nothing of this task any more.
                j.pin = None;
                let lane = &mut self.lanes[l];
                if let Some(share) = lane.fleet.as_mut() {
                    share.report_account_error(&f, lane.config.circuit.account_probe_ms);
                }
                if self.stop_for_account(l, &f, now) {
                    // The service refused the submission, so nothing was paid: the task waits
                    // with the others until the account works again (or the hold ends), unless
                    // another provider takes it meanwhile.
                    self.leave_flight(job);
                    self.enqueue_submit(job, now, now);
                    self.evacuate(l, now);
                    return;
                }
                if at_submit {
                    if let Some(j) = self.jobs.get_mut(&job) {
                        j.attempts += 1;
                    }
                }
                // Another provider takes the task and those waiting here, without a dead letter;
                // with none left, they are dead-lettered as before.
                if !self.fail_over(job, &f, now) {
                    self.finish_dead(job, &f, now);
                }
                self.clear_lane_for_account(l, &f, now);
            }
            ErrorClass::FixInput | ErrorClass::Cancelled | ErrorClass::Application => {
                if at_submit {
                    j.attempts += 1;
                }
                self.finish_dead(job, &f, now);
            }
        }
    }

    /// Stops submissions at lane `l` for an account error: with hold mode (on the first error, or
    /// while holding) the lane holds and this answers `true`; otherwise its circuit opens until
    /// `reset_circuit`.
    fn stop_for_account(&mut self, l: usize, f: &Failure, now: Timestamp) -> bool {
        let hold_ms = self.lanes[l].config.circuit.account_hold_ms;
        let first = self.lanes[l].circuit.account_failure().is_none();
        self.lanes[l].circuit.open_for_account(f.clone());
        if hold_ms > 0 && (first || self.lanes[l].hold.is_some()) {
            if self.lanes[l].hold.is_none() {
                let until = now.add(Duration::from_millis(hold_ms));
                let next_probe = now.add(Duration::from_millis(self.lanes[l].config.circuit.account_probe_ms));
                self.lanes[l].hold = Some(Hold { failure: f.clone(), until, next_probe, probing: false });
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
    fn clear_lane_for_account(&mut self, l: usize, f: &Failure, now: Timestamp) {
        self.evacuate(l, now);
        let queued: Vec<JobId> = self.lanes[l].submit_queue.iter().map(|(_, j)| *j).collect();
        for other in queued {
            self.dead_letter_circuit_open(other, f, now);
        }
    }

    /// Another client of the fleet was answered an account error at lane `l`'s account: this
    /// lane stops as if it had been answered it, without a request of its own.
    fn account_failed_elsewhere(&mut self, l: usize, f: Failure, now: Timestamp) {
        if self.stop_for_account(l, &f, now) {
            self.evacuate(l, now);
        } else {
            self.clear_lane_for_account(l, &f, now);
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
                self.enqueue_submit(job, now.add(delay), now);
            }
            _ => self.set_waiting(job, now.add(delay)),
        }
    }

    fn dead_letter_circuit_open(&mut self, job: JobId, cause: &Failure, now: Timestamp) {
        self.fail(job, Phase::Submit, circuit_open_failure(cause), None, now, true);
    }

    /// The job is done. `persist`: a provider's fresh answer, to write into the journal entry
    /// before it is handed over; it is stamped with its provider and cost, observed for
    /// routing and counted as spent. Otherwise (a recovered answer, already in the entry and
    /// paid by an earlier process) it is handed over as it was stored.
    fn solved(&mut self, job: JobId, mut solution: Solution, now: Timestamp, persist: bool) {
        let Some(j) = self.jobs.get(&job) else { return };
        let kind = j.task.kind();
        if let Some(l) = j.lane.filter(|_| persist) {
            let lane = &mut self.lanes[l];
            solution.provider = Some(lane.name.clone());
            if let Some(cost) = solution.cost {
                lane.stats.observe_cost(kind, cost);
            }
            if let Some(t) = j.sent_at {
                lane.stats.observe_latency(kind, now.since(t));
            }
            solution.cost = solution.cost.or_else(|| lane.prices.get(kind));
            self.spend.record(&lane.name, kind, j.labels.iter(), solution.cost);
        }
        let Some(j) = self.remove_job(job) else { return };
        self.push_event(Event::Solved { job, attempts: j.attempts, elapsed_ms: millis(now.since(j.accepted_at)) });
        let (id, labels) = (j.id.clone(), j.labels.to_map());
        // The job is gone: its entry takes its task and history rather than copies.
        let entry = persist.then(|| JournalEntry { solution: Some(solution.clone()), ..self.entry_of(j, now) });
        self.actions.push_back(Action::Solved { job, id, labels, solution, persist: entry });
        if persist {
            self.sweep_if_budget_spent(now);
            self.rebalance(kind, now);
        }
    }

    fn finish_dead(&mut self, job: JobId, f: &Failure, now: Timestamp) {
        let Some(j) = self.remove_job(job) else { return };
        let provider = &self.lanes[j.lane.unwrap_or(0)].name;
        self.spend.record_dead_letter(provider, j.task.kind(), j.labels.iter());
        let context = match (&j.provider_task_id, j.history.last()) {
            (Some(pid), Some(h)) => format!(" ({} phase, provider task {pid})", h.phase.as_str()),
            _ => String::new(),
        };
        let record = DeadLetterRecord {
            schema: SCHEMA,
            id: j.id.clone(),
            provider: self.lanes[j.lane.unwrap_or(0)].name.clone(),
            reason: f.code.clone(),
            description: format!("{}{context}", f.description),
            class: f.class,
            attempts: j.attempts,
            replays: j.replays,
            first_failed_at: j.first_failed_at.unwrap_or(now),
            dead_lettered_at: now,
            labels: j.labels.to_map(),
            state: RecordState::Ready,
            deliveries: 0,
            parked_reason: None,
            history: j.history,
            // The journal entries written for it are gone (the driver performed them): no copy.
            task: Arc::unwrap_or_clone(j.task),
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

    fn insert_job(&mut self, id: String, task: Arc<Task>, labels: Labels, now: Timestamp, attempts_left: u32) -> JobId {
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
                lane: None,
                provider_task_id: None,
                submitted_at: now,
                sent_at: None,
                polls: 0,
                request_failures: 0,
                retry_after_failures: 0,
                last_delay: Duration::ZERO,
                key: None,
                replay_of: None,
                lease_held: false,
                preference: Preference::Client,
                unsupported: 0,
                avoid: 0,
                pin: None,
                explored: false,
                reserved: 0,
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

    /// Takes the job out of its lane's submit and poll queues (not out of pending requests:
    /// their answers find no job and are dropped).
    fn unqueue(&mut self, job: JobId) {
        let Some(j) = self.jobs.get(&job) else { return };
        let Some(lane) = j.lane.and_then(|l| self.lanes.get_mut(l)) else { return };
        match j.stage {
            Stage::Queued { at } => {
                lane.submit_queue.remove(&(at, job));
            }
            Stage::Waiting { at } => {
                lane.poll_queue.remove(&(at, job), batchable_kind(j.task.kind()));
            }
            Stage::Persisting | Stage::Submitting(_) | Stage::Polling(_) => {}
        }
    }

    /// The job's current submission ended (or never was): it no longer counts in flight.
    fn leave_flight(&mut self, job: JobId) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        if j.stage.is_submitted() {
            if let Some(l) = j.lane {
                self.lanes[l].in_flight = self.lanes[l].in_flight.saturating_sub(1);
            }
            self.reserved = self.reserved.saturating_sub(j.reserved);
            j.reserved = 0;
            j.stage = Stage::Queued { at: Timestamp::EPOCH };
        }
    }

    fn set_waiting(&mut self, job: JobId, at: Timestamp) {
        self.unqueue(job);
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let Some(l) = j.lane else { return };
        j.stage = Stage::Waiting { at };
        self.lanes[l].poll_queue.insert(at, job, batchable_kind(j.task.kind()));
    }

    fn backoff(&mut self, job: JobId, n: u32) -> Duration {
        let previous = self.jobs.get(&job).map_or(Duration::ZERO, |j| j.last_delay);
        let d = backoff::delay(&self.config.retry.backoff, n, previous, &mut self.rng);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.last_delay = d;
        }
        d
    }

    /// Rewrites the job's journal entry (attempts, provider, provider task id) without
    /// holding it up.
    fn journal_upsert(&mut self, job: JobId, now: Timestamp) {
        if let Some(entry) = self.journal_entry(job, now) {
            self.actions.push_back(Action::Journal { entry, gates: None });
        }
    }

    /// The journal entry of a live job, as of `now`. Its task and labels are the job's own
    /// (shared, not copied).
    fn journal_entry(&self, job: JobId, now: Timestamp) -> Option<JournalEntry> {
        let j = self.jobs.get(&job)?;
        Some(JournalEntry {
            id: j.id.clone(),
            task: Arc::clone(&j.task),
            provider: self.lanes[j.lane.unwrap_or(0)].name.clone(),
            labels: j.labels.clone(),
            provider_task_id: j.provider_task_id.as_deref().map(String::from),
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

    /// The journal entry of `j`, which it is made of.
    fn entry_of(&self, j: Job, now: Timestamp) -> JournalEntry {
        JournalEntry {
            id: j.id,
            task: j.task,
            provider: self.lanes[j.lane.unwrap_or(0)].name.clone(),
            labels: j.labels,
            provider_task_id: j.provider_task_id.as_deref().map(String::from),
            attempts: j.attempts,
            replays: j.replays,
            history: j.history,
            accepted_at: j.accepted_at,
            updated_at: now,
            replay_of: j.replay_of,
            owner: None,
            key: j.key,
            solution: None,
        }
    }

    fn push_event(&mut self, e: Event) {
        self.actions.push_back(Action::Event(e));
    }

    fn new_record_id(&mut self, now: Timestamp) -> String {
        let random = (u128::from(self.rng.u64(..)) << 16) | u128::from(self.rng.u16(..));
        ulid::Ulid::from_parts(now.as_unix_millis(), random).to_string()
    }
}

/// Whether answers of `kind` can share a batch answer (see `Engine::batchable`).
fn batchable_kind(kind: TaskKind) -> bool {
    matches!(kind, TaskKind::RecaptchaV2 | TaskKind::RecaptchaV3 | TaskKind::Turnstile | TaskKind::Hcaptcha)
}

/// Whether `job`'s answer can share a batch poll (an unknown job cannot). A free function so
/// that `poll_action` can ask while it holds a lane's poll queue mutably.
fn job_batchable(jobs: &FxHashMap<JobId, Job>, job: JobId) -> bool {
    jobs.get(&job).is_some_and(|j| batchable_kind(j.task.kind()))
}

/// What a task gets when submissions stopped on `cause` (an account error) before it was sent.
fn circuit_open_failure(cause: &Failure) -> Failure {
    Failure::new(
        reason::CIRCUIT_OPEN,
        ErrorClass::AccountTerminal,
        format!("not sent: submissions stopped after {} ({})", cause.code, cause.description),
    )
}

fn network_failure(e: &TransportError) -> Failure {
    Failure::new(reason::NETWORK, ErrorClass::Transient, format!("no answer from the service: {}", e.message))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
