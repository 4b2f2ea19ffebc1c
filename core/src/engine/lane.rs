//! A lane: everything the engine keeps per provider. A client with one provider has one
//! lane; with several, each has its own key, documented limits and schedule
//! (`EngineConfig::for_provider` under the user's settings), rate limiter and in-flight
//! window (AIMD), circuit breaker, reachability tracking, account hold, pauses,
//! batch-polling state, queues, and what routing learns of it (solve latency and cost
//! per kind).

use core::time::Duration;
use std::collections::BTreeSet;

use serde::Serialize;

use super::circuit::Circuit;
use super::config::EngineConfig;
use super::fleet::FleetShare;
use super::limiter::Limiter;
use super::rounds::PollQueue;
use super::routing::{ewma, Health};
use super::JobId;
use crate::class::Failure;
use crate::http::Secret;
use crate::provider::Provider;
use crate::spend::Prices;
use crate::task::TaskKind;
use crate::time::Timestamp;

/// Most providers in one client.
pub const MAX_LANES: usize = 16;

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
        LaneSpec { name: provider.name().to_string(), provider, key, config, prices: Prices::default(), fleet: None }
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
}

// Written out: `Default` is derived for arrays of at most 32 items, and there are more kinds.
impl Default for LaneStats {
    fn default() -> Self {
        LaneStats { latency_ms: [None; TaskKind::ALL.len()], cost: [None; TaskKind::ALL.len()] }
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

#[derive(Debug)]
pub(crate) struct Lane {
    pub name: String,
    pub provider: Provider,
    pub key: Secret,
    pub config: EngineConfig,
    pub prices: Prices,
    pub circuit: Circuit,
    pub limiter: Limiter,
    pub submit_queue: BTreeSet<(Timestamp, JobId)>,
    pub poll_queue: PollQueue,
    /// Jobs submitted here and not finished.
    pub in_flight: usize,
    pub submits_paused_until: Timestamp,
    pub polls_paused_until: Timestamp,
    pub batch_disabled: bool,
    /// Garbled answers to batch polls in a row; one can be a truncated transfer, several mean
    /// the provider does not support `ids=`.
    pub garbled_batches: u32,
    /// Whether the provider ever answered (any HTTP status) since this engine started.
    pub answered: bool,
    /// Transport failures in a row with no answer in between: (first at, count).
    pub transport_streak: Option<(Timestamp, u32)>,
    /// Set while the circuit is open because the provider cannot be reached; tasks that would
    /// wait for it are dead-lettered with this failure instead (class transient: replayable).
    pub unreachable: Option<Failure>,
    /// Times the provider was found unreachable since this engine started.
    pub unreachable_episodes: u32,
    pub hold: Option<Hold>,
    /// A reachability check (balance request) is out while the circuit is half-open.
    pub pinging: bool,
    pub stats: LaneStats,
    /// Its share of the account's fleet-wide limits, when the store keeps a fleet ledger.
    pub fleet: Option<FleetShare>,
    /// The known cost of its tasks in flight, reserved against the budget (nano-units).
    pub reserved: u64,
}

impl Lane {
    pub fn new(spec: LaneSpec) -> Lane {
        Lane {
            circuit: Circuit::new(spec.config.circuit.clone()),
            limiter: Limiter::new(&spec.config.rate),
            name: spec.name,
            provider: spec.provider,
            key: spec.key,
            config: spec.config,
            prices: spec.prices,
            submit_queue: BTreeSet::new(),
            poll_queue: PollQueue::default(),
            in_flight: 0,
            submits_paused_until: Timestamp::EPOCH,
            polls_paused_until: Timestamp::EPOCH,
            batch_disabled: false,
            garbled_batches: 0,
            answered: false,
            transport_streak: None,
            unreachable: None,
            unreachable_episodes: 0,
            hold: None,
            pinging: false,
            stats: LaneStats::default(),
            fleet: spec.fleet.map(|f| FleetShare::new(f.account, f.shares_budget)),
            reserved: 0,
        }
    }

    /// How usable the lane is for new submissions (whatever the task).
    pub fn health(&self) -> Health {
        if self.hold.is_some() {
            Health::Held
        } else if self.circuit.account_failure().is_some() {
            Health::AccountOut
        } else if self.circuit.is_open() && self.unreachable.is_some() {
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
        self.stats.reported_cost(kind).or_else(|| self.prices.get(kind))
    }

    /// How long after a submission the provider may still be working on a task of `kind`
    /// (the polling give-up point: its documented working time plus a grace).
    pub fn working_time(&self, kind: TaskKind) -> Duration {
        self.config.polling.give_up_ms.for_kind(kind)
    }

    /// Whether submissions are stopped here by an account error (not holding).
    pub fn account_stopped(&self) -> Option<&Failure> {
        self.circuit.account_failure().filter(|_| self.hold.is_none())
    }

    pub fn status(&self) -> LaneStatus {
        LaneStatus {
            name: self.name.clone(),
            base_url: self.provider.base_url().to_string(),
            health: self.health(),
            in_flight: self.in_flight,
            in_flight_limit: self.limiter.limit(),
            queued: self.submit_queue.len(),
            account_failure: self.circuit.account_failure().map(|f| format!("{}: {}", f.code, f.description)),
            held_until: self.hold.as_ref().map(|h| h.until),
            unreachable_episodes: self.unreachable_episodes,
        }
    }
}
