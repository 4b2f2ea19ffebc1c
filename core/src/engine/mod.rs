//! The solving engine: a deterministic state machine that never performs I/O.
//!
//! See [`Engine`] for the calling contract. This module holds the engine's state, its commands
//! and the loop that turns time and answers into actions; the rest is one job a file:
//! - what it keeps of a task and the bookkeeping of its stages: `job`;
//! - what the engine keeps per provider: [`lane`]; its share of a fleet's limits: `fleet`;
//! - sending submissions: `submits`; polling and what poll answers mean: `polls` and `rounds`
//!   (poll ids shared by batches);
//! - what a failure does to a task, decided once and applied once: `reaction`;
//! - which provider a task is sent to: [`routing`] (the policy) and `placement` (the rules
//!   that move tasks between providers); what answers say of a provider's health: `health`;
//! - the budget cap: `budget`; taking over a stopped process's tasks: `recovery`.

mod backoff;
mod budget;
#[cfg(test)]
mod checks_once;
mod circuit;
pub mod config;
pub mod event;
mod fleet;
mod health;
mod job;
pub mod lane;
mod lane_id;
mod lanes;
mod limiter;
mod placement;
mod polls;
mod reaction;
mod recovery;
mod rounds;
pub mod routing;
mod submits;

use core::time::Duration;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rustc_hash::FxHashMap;

use self::budget::Spending;
pub use self::config::{
    Backoff, CircuitConfig, EngineConfig, FirstPoll, KindMs, PollingConfig, RateConfig, RetryConfig,
};
pub use self::event::{Event, Level, PauseScope};
pub use self::fleet::FleetSync;
use self::job::{Ids, Job, Pending, Route, Stage};
pub use self::job::{JobId, RequestId};
use self::lane::Lane;
pub use self::lane::{LaneFleet, LaneSpec, LaneStatus, MAX_LANES};
use self::lane_id::{LaneId, LaneSet};
use self::lanes::Lanes;
use self::reaction::{circuit_open_failure, network_failure, Reaction};
pub use self::recovery::Expired;
use self::routing::Preference;
pub use self::routing::{Health, Policy, RoutingConfig, ROUTING_LABEL};
use crate::class::{reason, ErrorClass, Failure};
use crate::dlq::record::{DeadLetterRecord, Phase};
use crate::error::{ConfigError, InvalidTask};
use crate::http::{HttpRequest, HttpResponse, Secret, TransportError, TransportErrorKind};
use crate::journal::JournalEntry;
use crate::provider::{PollOutcome, Provider, SubmitOptions, SubmitOutcome};
use crate::solution::Solution;
use crate::spend::SpendReport;
use crate::support::quoted::Quoted;
use crate::support::time::Timestamp;
use crate::task::{TaskKind, ValidTask};

/// History entries kept per task; older ones are dropped first (the count of
/// attempts is kept separately and is never lost).
const MAX_HISTORY: usize = 50;

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
        /// Boxed: an entry is most of an action's size, and most actions are not this one.
        persist: Option<Box<JournalEntry>>,
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
    lanes: Lanes,
    rng: fastrand::Rng,
    jobs: FxHashMap<JobId, Job>,
    deadlines: BTreeSet<(Timestamp, JobId)>,
    requests: FxHashMap<RequestId, Pending>,
    actions: VecDeque<Action>,
    /// How its jobs and requests are numbered.
    ids: Ids,
    /// The driver's store cannot be written: no new submission until it can.
    store_down: bool,
    /// What was spent on solved tasks since this engine started, and what the tasks submitted
    /// and not finished reserve against the budget.
    spending: Spending,
    /// The lane `fastest` / `cheapest` preferred per kind at the last look (rebalancing).
    best: FxHashMap<(Policy, TaskKind), LaneId>,
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
        let config = lanes[0].config().clone();
        Engine {
            rng: fastrand::Rng::with_seed(config.seed),
            config,
            routing,
            lanes: Lanes::new(lanes),
            jobs: FxHashMap::default(),
            deadlines: BTreeSet::new(),
            requests: FxHashMap::default(),
            actions: VecDeque::new(),
            ids: Ids::default(),
            store_down: false,
            spending: Spending::default(),
            best: FxHashMap::default(),
        }
    }

    /// What every submission carries besides the task (`pingback`, `header_acao`). A
    /// `soft_id` given here goes to the engine's one provider only: with several, each lane
    /// sends its own ([`LaneSpec::soft_id`]) and no other, since a service's developer id means
    /// nothing to another service.
    pub fn with_submit_options(mut self, options: SubmitOptions) -> Self {
        let only = self.lanes.len() == 1;
        for lane in self.lanes.iter_mut() {
            lane.set_submit_options(&options, only);
        }
        self
    }

    /// The first provider (the only one of a single-provider engine).
    pub fn provider(&self) -> &Provider {
        self.lanes[LaneId::FIRST].provider()
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
        self.lanes.iter().map(Lane::in_flight).sum()
    }

    /// Current in-flight limit (lowered by `ERROR_NO_SLOT_AVAILABLE`), over every provider.
    pub fn concurrency_limit(&self) -> u32 {
        self.lanes.iter().fold(0u32, |sum, l| sum.saturating_add(l.limiter().limit()))
    }

    /// The account error that stopped submissions, if any: with several providers, only
    /// once every one of them has one (the first provider's is given).
    pub fn account_failure(&self) -> Option<&Failure> {
        let failures: Option<Vec<&Failure>> = self.lanes.iter().map(|l| l.circuit().account_failure()).collect();
        failures.and_then(|f| f.first().copied())
    }

    /// How often a provider was found unreachable (see `track_reachability`) since start.
    pub fn unreachable_episodes(&self) -> u32 {
        self.lanes.iter().map(Lane::unreachable_episodes).sum()
    }

    /// Each provider's state, in configuration order.
    pub fn lanes(&self) -> Vec<LaneStatus> {
        self.lanes.iter().map(Lane::status).collect()
    }

    /// What was spent on solved tasks since this engine started (recovered answers, paid by
    /// an earlier process, are not counted).
    pub fn spend(&self) -> SpendReport {
        self.spending.ledger().report(self.routing.budget)
    }

    /// The record id (ULID) of a live job.
    pub fn job_record_id(&self, job: JobId) -> Option<&str> {
        self.jobs.get(&job).map(|j| j.identity.record_id())
    }

    /// A live job's labels and how many times its task was replayed (for a front end's traces).
    pub fn job_labels(&self, job: JobId) -> Option<(&crate::labels::Labels, u32)> {
        self.jobs.get(&job).map(|j| (j.identity.labels(), j.life.replays()))
    }

    /// Whether this engine has several providers (events then name theirs).
    fn multi(&self) -> bool {
        self.lanes.len() > 1
    }

    /// A lane's name for its events, when there are several.
    fn label(&self, lane: LaneId) -> Option<String> {
        self.multi().then(|| self.lanes[lane].name().to_string())
    }

    fn lane_named(&self, name: &str) -> Option<LaneId> {
        self.lanes.named(name).or_else(|| (!self.multi()).then_some(LaneId::FIRST))
    }

    // ----- commands -------------------------------------------------------

    /// Accepts a task, already checked (a [`ValidTask`] is never checked again). Each
    /// provider is asked now whether it can take it, so a task that can never be sent (by any
    /// of them) is refused here rather than dead-lettered; a `routing` label must name a
    /// policy or a configured provider.
    /// `key` is the caller's stable name for it (settled by the store when it ends).
    /// The job's journal entry is written first ([`Action::Journal`] gating it).
    pub fn submit(
        &mut self,
        task: ValidTask,
        labels: BTreeMap<String, String>,
        key: Option<String>,
        now: Timestamp,
    ) -> Result<JobId, InvalidTask> {
        self.submit_wanted(task, labels, key, None, now)
    }

    /// [`submit`](Self::submit) for a caller that wants the task only for `ttl` (the task's
    /// `ttl_ms`): past `now + ttl`, a task not yet solved is dead-lettered as `TTLExpired`
    /// (class `task_terminal`: replay solves it again), whatever its stage, and nothing more is
    /// submitted for it. `None`: wanted until its task deadline.
    pub fn submit_wanted(
        &mut self,
        task: ValidTask,
        labels: BTreeMap<String, String>,
        key: Option<String>,
        ttl: Option<Duration>,
        now: Timestamp,
    ) -> Result<JobId, InvalidTask> {
        if ttl == Some(Duration::ZERO) {
            return Err(InvalidTask::new(
                "ttl_ms",
                "must be at least 1 (milliseconds the caller still wants the task)",
            ));
        }
        let unsupported = self.unsupported(&task)?;
        let preference = self.preference(labels.get(ROUTING_LABEL), true)?;
        let id = self.new_record_id(now);
        let job = self.insert_job(id.clone(), task, labels.into(), now, self.config.retry.max_attempts);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.identity.set_key(key);
            j.route = Route::new(unsupported, preference);
        }
        self.set_wanted_until(job, ttl.map(|d| now.add(d)));
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
        let unsupported = self.unsupported(&record.task)?;
        let preference = self.preference(record.labels.get(ROUTING_LABEL), false)?;
        let job = self.insert_job(record.id.clone(), record.task, record.labels.into(), now, attempts_allowed.max(1));
        if let Some(j) = self.jobs.get_mut(&job) {
            j.life.continues(record.attempts, record.replays + 1, record.history, Some(record.first_failed_at));
            j.identity.replays(record.id);
            j.route = Route::new(unsupported, preference);
        }
        self.persist_then_submit(job, now);
        Ok(job)
    }

    /// The lanes that cannot take `task` (a bit each); an error when none can. `task` is
    /// valid (its type says so): this asks each provider what building its request would,
    /// without building it.
    fn unsupported(&self, task: &ValidTask) -> Result<LaneSet, InvalidTask> {
        let mut mask = LaneSet::EMPTY;
        let mut first_error = None;
        for (i, lane) in self.lanes.with_ids() {
            if let Err(e) = lane.provider().check_submit(task) {
                mask.insert(i);
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(mut e) if mask.len() == self.lanes.len() => {
                if self.multi() {
                    e.problem = format!(
                        "{} (at {}; no configured provider can take this task)",
                        e.problem,
                        self.lanes[LaneId::FIRST].name()
                    );
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
        let names: Vec<&str> = self.lanes.iter().map(Lane::name).collect();
        match Preference::from_label(label, &names) {
            Err(e) if strict => Err(e),
            other => Ok(other.unwrap_or_default()),
        }
    }

    /// Writes the job's journal entry, holding its submission until the driver confirms it.
    fn persist_then_submit(&mut self, job: JobId, now: Timestamp) {
        if let Some(failure) = self.refusal(job) {
            return self.fail_as(job, Phase::Submit, failure, None, now, Reaction::DeadLetter);
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
        for (i, lane) in self.lanes.with_ids() {
            if j.route.unsupported_at(i) {
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
            self.fail_as(job, Phase::Submit, failure, None, now, Reaction::DeadLetter);
            return true;
        }
        self.enqueue_submit(job, now, now);
        // The best lane it could go to cannot be reached: fail fast rather than wait.
        let lane = self.jobs.get(&job).and_then(|j| j.lane());
        if let Some(failure) =
            lane.and_then(|l| self.lanes[l].unreachable().cloned().filter(|_| self.lanes[l].circuit().is_open()))
        {
            self.fail_as(job, Phase::Submit, failure, None, now, Reaction::DeadLetter);
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
            .map(|(job, j)| (*job, j.life.attempts()))
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
                self.fail_as(job, Phase::Submit, failure, None, now, Reaction::DeadLetter);
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
        for l in self.lanes.ids() {
            if let Some(limit) = self.lanes[l].limiter_mut().raise_ceiling(limit) {
                let provider = self.label(l);
                self.push_event(Event::ConcurrencyChanged { limit, provider });
            }
        }
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
                    j.life.spend_no_more();
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
        self.fail_as(job, phase, Failure::new(reason_code, class, description), None, now, Reaction::DeadLetter);
        true
    }

    /// A site's verdict on an answer of the provider named `provider` for a task of `kind`
    /// (the page front ends' acceptance check): `accepted` routing ranks by it. Unknown names
    /// are ignored (a record of another client's provider).
    pub fn page_verdict(&mut self, provider: &str, kind: TaskKind, accepted: bool, now: Timestamp) {
        if let Some(l) = self.lanes.named(provider) {
            self.lanes[l].stats_mut().observe_verdict(kind, accepted);
            self.rebalance(kind, now);
        }
    }

    /// Lets submissions flow again (at every provider) after an account error was fixed.
    pub fn reset_circuit(&mut self) {
        for l in self.lanes.ids() {
            self.resume_lane(l);
        }
    }

    /// Ends the account hold (or the account error's stop) of the provider named `provider`, or
    /// of every provider, at once: an operator says the account works again (a top-up), without
    /// waiting for the next balance probe. The fleet hears it with this client's next sync
    /// (`account_ok`), so every client holding for the account resumes. Answers the providers
    /// that were held or stopped; an unknown name is an error naming the configured ones.
    pub fn resume_accounts(&mut self, provider: Option<&str>) -> Result<Vec<String>, ConfigError> {
        let lanes: Vec<LaneId> = match provider {
            None => self.lanes.ids().collect(),
            Some(name) => match self.lanes.named(name) {
                Some(l) => vec![l],
                None => {
                    let names: Vec<&str> = self.lanes.iter().map(Lane::name).collect();
                    return Err(ConfigError::new(
                        "provider",
                        format!("no provider is named {}; the configured ones: {}", Quoted(name), names.join(", ")),
                    ));
                }
            },
        };
        let mut resumed = Vec::new();
        for l in lanes {
            let stopped = self.lanes[l].hold().is_some() || self.lanes[l].circuit().account_failure().is_some();
            if stopped {
                resumed.push(self.lanes[l].name().to_string());
            }
            // The fleet hears it either way: another client may hold for this account.
            self.resume_lane(l);
        }
        Ok(resumed)
    }

    fn resume_lane(&mut self, l: LaneId) {
        self.lanes[l].circuit_mut().reset_account();
        self.lanes[l].release_hold();
        if let Some(share) = self.lanes[l].fleet_mut() {
            share.report_account_ok();
        }
        let provider = self.label(l);
        self.push_event(Event::CircuitClosed { provider });
    }

    /// Whether submissions are held for an account error, and until when at the latest
    /// (the earliest end of a hold, with several providers).
    pub fn held_until(&self) -> Option<Timestamp> {
        self.lanes.iter().filter_map(|l| l.hold().map(|h| h.until)).min()
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
                    Ok(resp) => self.lanes[lane].provider().parse_submit(resp),
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
                if let (Some(_), SubmitOutcome::Failed(own)) = (self.lanes[lane].unreachable(), &outcome) {
                    // The provider cannot be reached: another takes the task, or it fails fast
                    // rather than wait for the deadline.
                    if own.class == ErrorClass::Transient {
                        let f = own.clone();
                        return self.fail_as(job, Phase::Submit, f, status, now, Reaction::FailOver);
                    }
                }
                match outcome {
                    SubmitOutcome::Accepted { provider_task_id } => self.on_accepted(job, lane, provider_task_id, now),
                    SubmitOutcome::Solved(solution) => self.on_solved_at_submit(job, lane, solution, now),
                    SubmitOutcome::Failed(f) => self.fail(job, Phase::Submit, f, status, now),
                }
            }
            Pending::Probe { lane } => self.on_probe(lane, result.ok(), now),
            Pending::Ping { lane } => {
                self.lanes[lane].set_pinging(false);
                let failed = result.as_ref().map_or(true, |r| r.status >= 500);
                self.record_outcome(lane, failed, now);
            }
            Pending::Poll { lane, jobs, ids } => {
                let id_refs: Vec<&str> = ids.iter().map(|id| &**id).collect();
                let outcome = match &result {
                    Ok(resp) => self.lanes[lane].provider().parse_poll(resp, &id_refs),
                    Err(e) => PollOutcome::Failed(network_failure(e)),
                };
                self.on_poll_outcome(lane, jobs, outcome, status, now);
            }
        }
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
        for (l, lane) in self.lanes.with_ids() {
            if let Some(hold) = lane.hold() {
                consider(hold.until);
                if !hold.probing {
                    consider(hold.next_probe);
                }
            }
            if let Some(reopen) = lane.circuit().reopens_at() {
                consider(reopen);
                continue;
            }
            if !lane.circuit().allows_request() {
                continue; // half-open with the probe in flight: wait for its answer
            }
            if let Some(at) = self.next_round_at(l) {
                consider(at.max(lane.paused_until(PauseScope::Polls)));
            }
            if let Some(share) = lane.fleet() {
                consider(share.next_sync_at(lane.waiting_count()));
            }
            let submits_blocked = self.store_down || lane.circuit().account_failure().is_some();
            if let Some((at, job)) = lane.next_waiting().filter(|_| !submits_blocked) {
                // A fleet lane without a permit on hand waits for the sync considered above.
                let permit = lane.fleet().map_or(Some(Timestamp::EPOCH), |share| share.next_permit_at());
                if let Some(permit) = permit.filter(|_| lane.in_flight() < lane.limiter().limit() as usize) {
                    if !self.budget_waits(l, job) {
                        consider(
                            at.max(lane.limiter().next_submit_at())
                                .max(lane.paused_until(PauseScope::Submits))
                                .max(permit),
                        );
                    }
                }
            }
        }
        next
    }

    // ----- the machine ----------------------------------------------------

    fn advance(&mut self, now: Timestamp) {
        self.tick_circuits(now);
        for l in self.lanes.ids() {
            self.advance_hold(l, now);
        }
        while let Some(&(at, job)) = self.deadlines.first() {
            if at > now {
                break;
            }
            self.deadlines.pop_first();
            let (attempts, polls, wanted_until) = self
                .jobs
                .get(&job)
                .map_or((0, 0, None), |j| (j.life.attempts(), j.attempt.polls(), j.life.wanted_until()));
            let failure = match wanted_until.filter(|until| *until <= at) {
                // The caller's time-to-live ran out first: nothing more is sent for it.
                Some(_) => ttl_expired_failure(format!(
                    "the caller's ttl_ms ran out before an answer came ({attempts} submission(s); {polls} poll(s) of the \
                     last one): not submitted again"
                )),
                None => {
                    let ms = self.config.retry.task_deadline_ms;
                    let description = format!(
                        "no answer within the task deadline of {} s ({attempts} submission(s); {polls} poll(s) of the last one)",
                        ms / 1000
                    );
                    Failure::new(reason::TIMEOUT, ErrorClass::TaskTerminal, description)
                }
            };
            self.fail_as(job, Phase::Deadline, failure, None, now, Reaction::DeadLetter);
        }
        for l in self.lanes.ids() {
            self.schedule_polls(l, now);
            self.schedule_submits(l, now);
            self.ping_if_probing(l);
        }
        self.ask_fleet_syncs(now);
    }

    /// The job is done. `persist`: a provider's fresh answer, to write into the journal entry
    /// before it is handed over; it is stamped with its provider and cost, observed for
    /// routing and counted as spent. Otherwise (a recovered answer, already in the entry and
    /// paid by an earlier process) it is handed over as it was stored.
    fn solved(&mut self, job: JobId, mut solution: Solution, now: Timestamp, persist: bool) {
        let Some(j) = self.jobs.get(&job) else { return };
        let kind = j.kind();
        if let Some(l) = j.lane().filter(|_| persist) {
            let lane = &mut self.lanes[l];
            solution.provider = Some(lane.name().to_string());
            // What the page added that this provider had no place for (docs/decisions/0077).
            solution.left_out = lane.provider().left_out(j.identity.task()).into_iter().map(str::to_string).collect();
            // Named by the kind's declaration; an answer without a declared value keeps its
            // text and fields as sent, the caller's to read.
            solution.answer =
                crate::task::kinds::answer::typed(j.identity.task().kind_decl(), &solution).unwrap_or_default();
            if let Some(cost) = solution.cost {
                lane.stats_mut().observe_cost(kind, cost);
            }
            if let Some(t) = j.attempt.sent_at() {
                lane.stats_mut().observe_latency(kind, now.since(t));
            }
            solution.cost = solution.cost.or_else(|| lane.prices().get(kind));
            // Its life starts now: the kind's declaration says how long a token or cookie lasts.
            solution.stamp(now, j.identity.task().kind_decl().life.ms());
            if let (Some(share), Some(cost)) = (lane.fleet_mut(), solution.cost) {
                share.report_spent(crate::spend::to_nano(cost), now);
            }
            self.spending.ledger_mut().record(lane.name(), kind, j.identity.labels().iter(), solution.cost);
        }
        let Some(j) = self.remove_job(job) else { return };
        self.push_event(Event::Solved {
            job,
            attempts: j.life.attempts(),
            elapsed_ms: millis(now.since(j.life.accepted_at())),
        });
        let (id, labels) = (j.identity.record_id().to_string(), j.identity.labels().to_map());
        // The job is gone: its entry takes its task and history rather than copies.
        let entry =
            persist.then(|| Box::new(JournalEntry { solution: Some(solution.clone()), ..self.entry_of(j, now) }));
        self.actions.push_back(Action::Solved { job, id, labels, solution, persist: entry });
        if persist {
            self.sweep_if_budget_spent(now);
            self.rebalance(kind, now);
        }
    }

    // ----- bookkeeping ----------------------------------------------------

    fn push_event(&mut self, e: Event) {
        self.actions.push_back(Action::Event(e));
    }
}

/// The dead letter of a task past a time-to-live: the caller's (`ttl_ms`) or its answer's
/// (the kind's `answer_life`). `task_terminal`: replaying it solves the task again.
pub(crate) fn ttl_expired_failure(description: String) -> Failure {
    Failure::new(reason::TTL_EXPIRED, ErrorClass::TaskTerminal, description)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
