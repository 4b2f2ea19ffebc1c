//! A lane: everything the engine keeps per provider. A client with one provider has one
//! lane; with several, each has its own key, documented limits and schedule
//! (`EngineConfig::for_provider` under the user's settings), rate limiter and in-flight
//! window (AIMD), circuit breaker, reachability tracking, account hold, pauses,
//! batch-polling state, queues, and what routing learns of it (solve latency and cost
//! per kind).

use core::time::Duration;

use serde::Serialize;

mod pauses;
mod reachability;
mod service;
mod submissions;

use self::pauses::{BatchPolling, Pauses};
use self::reachability::Reachability;
use self::service::Service;
use self::submissions::Submissions;

use super::circuit::Circuit;
use super::config::EngineConfig;
use super::event::PauseScope;
use super::fleet::FleetShare;
use super::limiter::Limiter;
use super::rounds::PollQueue;
use super::routing::{ewma, Health};
use super::JobId;
use crate::class::Failure;
use crate::http::Secret;
use crate::provider::{Provider, SubmitOptions};
use crate::spend::Prices;
use crate::support::time::Timestamp;
use crate::task::TaskKind;

/// Most providers in one client.
pub use super::lane_id::MAX_LANES;

/// One provider of a client, as configured.
#[derive(Clone, Debug)]
pub struct LaneSpec {
    /// How records, journal entries, solutions and events name it (unique in a client).
    pub name: String,
    pub provider: Provider,
    pub key: Secret,
    /// Its polling schedule, rate and circuit settings. `retry` and `seed` are the client's:
    /// the engine reads them from the first lane.
    pub config: EngineConfig,
    /// Its price per solved task, per kind, where it does not report costs itself.
    pub prices: Prices,
    /// Its software id for the service's developer programme (`soft_id`), sent to this
    /// provider only: 2captcha v1 `soft_id`, anti-captcha/CapMonster/2captcha-v2 `softId`,
    /// CapSolver `appId`.
    pub soft_id: Option<String>,
    /// Its account in the store's fleet ledger, when the store keeps one and the client shares
    /// the account's limits with the fleet (see [`crate::fleet`]).
    pub fleet: Option<LaneFleet>,
}

/// A lane's place in the fleet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneFleet {
    /// The account's id in the ledger (a keyed hash, never the key).
    pub account: String,
    /// Whether the client's `budget` binds the fleet (the default) or this client alone.
    pub shares_budget: bool,
}

impl LaneSpec {
    /// A provider under its own name with its documented defaults' replacement `config`.
    pub fn new(provider: Provider, key: Secret, config: EngineConfig) -> LaneSpec {
        LaneSpec {
            name: provider.name().to_string(),
            provider,
            key,
            config,
            prices: Prices::default(),
            soft_id: None,
            fleet: None,
        }
    }
}

/// Submissions held after an account error (`circuit.account_hold_ms` > 0): queued and new
/// tasks wait instead of being dead-lettered, the balance is checked every
/// `circuit.account_probe_ms`, and submissions resume once it answers a positive balance.
#[derive(Debug)]
pub(crate) struct Hold {
    pub failure: Failure,
    pub until: Timestamp,
    pub next_probe: Timestamp,
    pub probing: bool,
}

/// What routing has observed of a lane, per kind.
#[derive(Debug)]
pub(crate) struct LaneStats {
    /// Submission to answer (or to a task-terminal failure), in ms, EWMA.
    latency_ms: [Option<f64>; TaskKind::ALL.len()],
    /// Reported cost of a solved task, EWMA.
    cost: [Option<f64>; TaskKind::ALL.len()],
    /// Answers sites accepted, and answers they judged (page verdicts).
    verdicts: [(u32, u32); TaskKind::ALL.len()],
}

// Written out: `Default` is derived for arrays of at most 32 items, and there are more kinds.
impl Default for LaneStats {
    fn default() -> Self {
        LaneStats {
            latency_ms: [None; TaskKind::ALL.len()],
            cost: [None; TaskKind::ALL.len()],
            verdicts: [(0, 0); TaskKind::ALL.len()],
        }
    }
}

impl LaneStats {
    pub fn observe_latency(&mut self, kind: TaskKind, d: Duration) {
        let slot = &mut self.latency_ms[kind.index()];
        *slot = Some(ewma(*slot, d.as_secs_f64() * 1000.0));
    }

    pub fn observe_cost(&mut self, kind: TaskKind, cost: f64) {
        let slot = &mut self.cost[kind.index()];
        *slot = Some(ewma(*slot, cost));
    }

    pub fn latency_ms(&self, kind: TaskKind) -> Option<f64> {
        self.latency_ms[kind.index()]
    }

    pub fn reported_cost(&self, kind: TaskKind) -> Option<f64> {
        self.cost[kind.index()]
    }

    pub fn observe_verdict(&mut self, kind: TaskKind, accepted: bool) {
        let (took, judged) = &mut self.verdicts[kind.index()];
        *took = took.saturating_add(u32::from(accepted));
        *judged = judged.saturating_add(1);
    }

    /// The share of answers sites accepted, with one accepted and one refused assumed (so a
    /// lane without verdicts counts at half, and one refusal does not rule a lane out).
    pub fn accepted_share(&self, kind: TaskKind) -> f64 {
        let (took, judged) = self.verdicts[kind.index()];
        (f64::from(took) + 1.0) / (f64::from(judged) + 2.0)
    }
}

/// One lane's state, for dashboards (`DriverStatus`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaneStatus {
    pub name: String,
    pub base_url: String,
    pub health: Health,
    pub in_flight: usize,
    pub in_flight_limit: u32,
    /// Tasks waiting at this lane for a submission slot.
    pub queued: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_failure: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_until: Option<Timestamp>,
    pub unreachable_episodes: u32,
}

/// A lane's state, in small owned parts reached through the methods below: what it is as
/// configured ([`Service`]), its circuit, limiter, submissions ([`Submissions`]) and poll
/// queue, the pauses its provider asked for ([`Pauses`]), batch polling ([`BatchPolling`]),
/// reachability ([`Reachability`]), the account hold, routing's stats, the kinds its service
/// refused, and its fleet share. Each method states one rule.
#[derive(Debug)]
pub(crate) struct Lane {
    service: Service,
    circuit: Circuit,
    limiter: Limiter,
    submissions: Submissions,
    poll_queue: PollQueue,
    pauses: Pauses,
    batch: BatchPolling,
    reach: Reachability,
    hold: Option<Hold>,
    stats: LaneStats,
    /// Kinds the service answered it does not solve, skipped by routing for a while.
    refused_kinds: RefusedKinds,
    /// Its share of the account's fleet-wide limits, when the store keeps a fleet ledger.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    fleet: Option<FleetShare>,
}

/// How long a service's "this task type is not supported" keeps routing away from it for that
/// kind: services drop and add kinds (most dropped hCaptcha), so the mark is not forever, and
/// a task that finds no other service is tried there again (the refusal costs nothing).
pub(crate) const KIND_REFUSED_FOR: Duration = Duration::from_secs(15 * 60);

/// The kinds a lane's service refused as a whole ([`crate::classify::says_kind_unsupported`]),
/// each until when routing skips the lane for it.
#[derive(Debug, Default)]
pub(crate) struct RefusedKinds(Vec<(TaskKind, Timestamp)>);

impl RefusedKinds {
    pub fn refuse(&mut self, kind: TaskKind, until: Timestamp) {
        self.0.retain(|(k, _)| *k != kind);
        self.0.push((kind, until));
    }

    pub fn refuses(&self, kind: TaskKind, now: Timestamp) -> bool {
        self.0.iter().any(|(k, until)| *k == kind && *until > now)
    }
}

impl Lane {
    pub fn new(spec: LaneSpec) -> Lane {
        Lane {
            circuit: Circuit::new(spec.config.circuit.clone()),
            limiter: Limiter::new(&spec.config.rate),
            service: Service::new(spec.name, spec.provider, spec.key, spec.config, spec.prices, spec.soft_id),
            submissions: Submissions::default(),
            poll_queue: PollQueue::default(),
            pauses: Pauses::default(),
            batch: BatchPolling::default(),
            reach: Reachability::default(),
            hold: None,
            stats: LaneStats::default(),
            refused_kinds: RefusedKinds::default(),
            fleet: spec.fleet.map(|f| FleetShare::new(f.account, f.shares_budget)),
        }
    }

    // ----- what it is (as configured) and its parts

    pub fn name(&self) -> &str {
        self.service.name()
    }

    pub fn provider(&self) -> &Provider {
        self.service.provider()
    }

    pub fn key(&self) -> &Secret {
        self.service.key()
    }

    pub fn submit_options(&self) -> &SubmitOptions {
        self.service.submit_options()
    }

    /// The client's `pingback` and `header_acao`; `soft_id` is the lane's own, else (`only`:
    /// the engine's one lane) the one given here.
    pub fn set_submit_options(&mut self, options: &SubmitOptions, only: bool) {
        self.service.set_submit_options(options, only);
    }

    pub fn config(&self) -> &EngineConfig {
        self.service.config()
    }

    pub fn circuit(&self) -> &Circuit {
        &self.circuit
    }

    pub fn circuit_mut(&mut self) -> &mut Circuit {
        &mut self.circuit
    }

    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    pub fn limiter_mut(&mut self) -> &mut Limiter {
        &mut self.limiter
    }

    pub fn poll_queue(&self) -> &PollQueue {
        &self.poll_queue
    }

    pub fn poll_queue_mut(&mut self) -> &mut PollQueue {
        &mut self.poll_queue
    }

    pub fn prices(&self) -> &Prices {
        self.service.prices()
    }

    pub fn stats(&self) -> &LaneStats {
        &self.stats
    }

    pub fn stats_mut(&mut self) -> &mut LaneStats {
        &mut self.stats
    }

    /// Its fleet share. Never without feature `fleet`: no store keeps a fleet ledger then (the
    /// client gives no lane a fleet account), and answering `None` outright lets the compiler
    /// leave the fleet's code out (of the `.wasm`, where it matters).
    pub fn fleet(&self) -> Option<&FleetShare> {
        #[cfg(not(feature = "fleet"))]
        return None;
        #[cfg(feature = "fleet")]
        self.fleet.as_ref()
    }

    pub fn fleet_mut(&mut self) -> Option<&mut FleetShare> {
        #[cfg(not(feature = "fleet"))]
        return None;
        #[cfg(feature = "fleet")]
        self.fleet.as_mut()
    }

    // ----- submissions waiting here

    /// `job` waits here for a submission from `at`.
    pub fn enqueue(&mut self, at: Timestamp, job: JobId) {
        self.submissions.enqueue(at, job);
    }

    /// `job` (waiting from `at`) no longer waits here.
    pub fn dequeue(&mut self, at: Timestamp, job: JobId) {
        self.submissions.dequeue(at, job);
    }

    /// The job that waits longest, with when it may go.
    pub fn next_waiting(&self) -> Option<(Timestamp, JobId)> {
        self.submissions.next()
    }

    /// Takes the job [`next_waiting`](Self::next_waiting) named off the queue.
    pub fn take_next_waiting(&mut self) {
        self.submissions.take_next();
    }

    /// The jobs waiting here, longest first.
    pub fn waiting(&self) -> Vec<JobId> {
        self.submissions.waiting()
    }

    pub fn waiting_count(&self) -> usize {
        self.submissions.waiting_count()
    }

    // ----- what it has in flight

    pub fn in_flight(&self) -> usize {
        self.submissions.in_flight()
    }

    /// The known cost of its tasks in flight (nano-units).
    pub fn reserved(&self) -> u64 {
        self.submissions.reserved()
    }

    /// A task was sent here, reserving `cost` (nano-units) against the budget.
    pub fn sent(&mut self, cost: u64) {
        self.submissions.sent(cost);
    }

    /// A task recovered from the journal runs here again (its cost was paid before).
    pub fn resumed(&mut self) {
        self.submissions.resumed();
    }

    /// A task sent here ended, freeing what it reserved.
    pub fn ended(&mut self, cost: u64) {
        self.submissions.ended(cost);
    }

    // ----- pauses a provider asked for

    /// Until when `scope` is paused (the epoch: not paused).
    pub fn paused_until(&self, scope: PauseScope) -> Timestamp {
        self.pauses.until(scope)
    }

    /// Pauses `scope` until `until`, unless it is paused longer already; whether it was extended.
    pub fn pause(&mut self, scope: PauseScope, until: Timestamp) -> bool {
        self.pauses.pause(scope, until)
    }

    // ----- batch polling

    /// Whether answers are fetched several at a time here: configured, supported by the
    /// provider, and not given up on after garbled answers.
    pub fn polls_in_batches(&self) -> bool {
        self.config().polling.batch && !self.batch.given_up() && self.provider().supports_batch_poll()
    }

    /// A batch poll was answered sensibly.
    pub fn batch_answered(&mut self) {
        self.batch.answered();
    }

    /// A batch poll's answer was garbled; whether, `limit` in a row, batches are given up now.
    pub fn batch_garbled(&mut self, limit: u32) -> bool {
        self.batch.garbled(limit)
    }

    // ----- reachability

    /// The provider answered (any HTTP status): it is reachable, whatever failed before.
    pub fn heard_from(&mut self) {
        self.reach.heard_from();
    }

    /// A transport failure: the streak's start and length, this one included.
    pub fn transport_failed(&mut self, now: Timestamp) -> (Timestamp, u32) {
        self.reach.transport_failed(now)
    }

    /// Whether the provider ever answered since this engine started.
    pub fn ever_answered(&self) -> bool {
        self.reach.ever_answered()
    }

    /// Why the provider is unreachable, while it is found so.
    pub fn unreachable(&self) -> Option<&Failure> {
        self.reach.unreachable()
    }

    /// The provider is found unreachable for `failure` (one more episode).
    pub fn found_unreachable(&mut self, failure: Failure) {
        self.reach.found_unreachable(failure);
    }

    /// The provider is reachable again; what it had been unreachable for.
    pub fn reachable_again(&mut self) -> Option<Failure> {
        self.reach.reachable_again()
    }

    /// Times the provider was found unreachable since this engine started.
    pub fn unreachable_episodes(&self) -> u32 {
        self.reach.episodes()
    }

    /// Whether a reachability check (a balance request while half-open) is out.
    pub fn pinging(&self) -> bool {
        self.reach.pinging()
    }

    pub fn set_pinging(&mut self, out: bool) {
        self.reach.set_pinging(out);
    }

    // ----- kinds the service refused

    /// Routing skips this lane for `kind` until `until` (the service said it does not solve it).
    pub fn refuse_kind(&mut self, kind: TaskKind, until: Timestamp) {
        self.refused_kinds.refuse(kind, until);
    }

    pub fn refuses_kind(&self, kind: TaskKind, now: Timestamp) -> bool {
        self.refused_kinds.refuses(kind, now)
    }

    // ----- the account hold

    pub fn hold(&self) -> Option<&Hold> {
        self.hold.as_ref()
    }

    pub fn hold_mut(&mut self) -> Option<&mut Hold> {
        self.hold.as_mut()
    }

    pub fn start_hold(&mut self, hold: Hold) {
        self.hold = Some(hold);
    }

    /// Ends the hold (if any): the account works again, or the hold's time is up.
    pub fn release_hold(&mut self) {
        self.hold = None;
    }

    /// How usable the lane is for new submissions (whatever the task).
    pub fn health(&self) -> Health {
        if self.hold.is_some() {
            Health::Held
        } else if self.circuit.account_failure().is_some() {
            Health::AccountOut
        } else if self.circuit.is_open() && self.reach.unreachable().is_some() {
            Health::Unreachable
        } else if self.circuit.is_open() {
            Health::Open
        } else if self.circuit.is_half_open() {
            Health::Probing
        } else {
            Health::Ready
        }
    }

    /// The cost of a solved task of `kind` here, as far as it is known: what the provider
    /// reported lately, else the configured price.
    pub fn expected_cost(&self, kind: TaskKind) -> Option<f64> {
        self.stats.reported_cost(kind).or_else(|| self.prices().get(kind))
    }

    /// The cost of a token of `kind` that a site accepts here (`accepted` routing).
    pub fn cost_per_accepted(&self, kind: TaskKind) -> Option<f64> {
        Some(self.expected_cost(kind)? / self.stats.accepted_share(kind))
    }

    /// How long after a submission the provider may still be working on a task of `kind`
    /// (the polling give-up point: its documented working time plus a grace).
    pub fn working_time(&self, kind: TaskKind) -> Duration {
        self.config().polling.give_up_ms.for_kind(kind)
    }

    /// Whether submissions are stopped here by an account error (not holding).
    pub fn account_stopped(&self) -> Option<&Failure> {
        self.circuit.account_failure().filter(|_| self.hold.is_none())
    }

    pub fn status(&self) -> LaneStatus {
        LaneStatus {
            name: self.name().to_string(),
            base_url: self.provider().base_url().to_string(),
            health: self.health(),
            in_flight: self.in_flight(),
            in_flight_limit: self.limiter.limit(),
            queued: self.waiting_count(),
            account_failure: self.circuit.account_failure().map(|f| format!("{}: {}", f.code, f.description)),
            held_until: self.hold.as_ref().map(|h| h.until),
            unreachable_episodes: self.unreachable_episodes(),
        }
    }
}
