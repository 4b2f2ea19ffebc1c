//! Routing: which provider (lane) a task is submitted to when a client has several.
//!
//! A task is routed each time it needs a submission: when it is first accepted, when it
//! is retried, and again whenever the lane it waits at stops being usable. The rules,
//! in order:
//!
//! 1. **Health first.** A lane that does not support the task's kind (its request cannot be
//!    built), whose account failed (until `reset_circuit`), that is in an account hold,
//!    whose circuit is open or that cannot be reached is skipped while a usable lane
//!    exists. A lane probing after an outage (half-open) is used only when no healthy
//!    one is left. With no usable lane the task waits at the lane that will come back
//!    first (a hold, then an open circuit), or fails as the lane's own rules say (an
//!    unreachable provider fails fast; an account error dead-letters `CircuitOpen`).
//! 2. **A lane that answered a task-terminal error for it** (unsolvable, given up) is
//!    avoided for the next attempt when `failover_on_unsolvable` is set, as long as a
//!    usable lane is left.
//! 3. **The policy** ranks the rest: `ordered` (the configuration order: failover), `fastest`
//!    (the lowest solve latency observed for the kind, an EWMA; a healthy lane not yet
//!    measured for the kind gets a task whenever it has none in flight, measured lanes
//!    come before unmeasured ones otherwise, and `explore` of the tasks go to another
//!    healthy lane so a recovered one is measured again), `cheapest` (the lowest known
//!    cost for the kind: the provider's reported costs, else the configured price; lanes
//!    without either last). Ties keep the configuration order.
//!
//! A task chooses its own policy with its `routing` label ([`ROUTING_LABEL`]): `ordered`,
//! `fastest`, `cheapest`, or the name of a configured provider (that one first, then the
//! others in order). The label travels with the task into its DLQ record, so a replay
//! keeps it.
//!
//! What routing never overrides (the engine's rules): a task a provider may still be
//! working on (accepted, or submitted without an answer) is sent again only to that
//! provider until its working time for the kind has passed.

use serde::Serialize;
use serde_json::Value;

use super::lane_id::LaneId;
use crate::error::{ConfigError, InvalidTask};
use crate::support::json_read::{unit_variant, FieldError, FromJson};
use crate::support::quoted::Quoted;

/// The label that overrides the client's routing for one task.
pub const ROUTING_LABEL: &str = "routing";

/// How a client ranks its providers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// The configuration order: the first usable provider takes every task (failover).
    #[default]
    Ordered,
    /// The lowest observed solve latency for the task's kind.
    Fastest,
    /// The lowest known cost for the task's kind.
    Cheapest,
    /// The lowest known cost per token sites accepted, for the task's kind: the cost divided by
    /// the share of its answers the sites took (page verdicts, `Engine::page_verdict`).
    Accepted,
}

impl Policy {
    pub const ALL: [Policy; 4] = [Policy::Ordered, Policy::Fastest, Policy::Cheapest, Policy::Accepted];

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Ordered => "ordered",
            Policy::Fastest => "fastest",
            Policy::Cheapest => "cheapest",
            Policy::Accepted => "accepted",
        }
    }

    pub fn parse(s: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

impl FromJson for Policy {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        unit_variant(value, &Policy::ALL, Policy::as_str)
    }
}

/// Routing settings of a client with several providers (ignored with one).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoutingConfig {
    pub policy: Policy,
    /// After a task-terminal answer (unsolvable, given up at the provider's working time),
    /// the next attempt goes to another provider if one is usable.
    pub failover_on_unsolvable: bool,
    /// Share of `fastest` tasks sent to another healthy provider than the fastest, so a
    /// provider without observations or back from an outage is measured (0 to 0.5).
    pub explore: f64,
    /// Stop submitting once the client spent this much (solved tasks' costs: reported, else
    /// configured prices); tasks not yet submitted are then dead-lettered `BudgetExhausted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<f64>,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig { policy: Policy::Ordered, failover_on_unsolvable: true, explore: 0.05, budget: None }
    }
}

/// Weight of a new observation in the latency and cost averages (EWMA).
pub const EWMA_WEIGHT: f64 = 0.2;

impl RoutingConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(0.0..=0.5).contains(&self.explore) {
            return Err(ConfigError::new("routing_explore", "must be between 0 and 0.5"));
        }
        if let Some(b) = self.budget {
            if !(b.is_finite() && b > 0.0) {
                return Err(ConfigError::new("budget", "must be a positive number"));
            }
        }
        Ok(())
    }
}

/// A task's own routing, from its `routing` label.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Preference {
    /// The client's policy.
    #[default]
    Client,
    Policy(Policy),
    /// This lane first, then the others in order.
    First(LaneId),
}

impl Preference {
    /// The `routing` label read against the lanes' names; an unknown value names the label.
    pub(crate) fn from_label(value: Option<&str>, lane_names: &[&str]) -> Result<Preference, InvalidTask> {
        let Some(value) = value else { return Ok(Preference::Client) };
        if let Some(p) = Policy::parse(value) {
            return Ok(Preference::Policy(p));
        }
        if let Some(i) = lane_names.iter().position(|n| *n == value) {
            return Ok(Preference::First(LaneId::at(i)));
        }
        Err(InvalidTask::new(
            format!("labels.{ROUTING_LABEL}"),
            format!(
                "{} is neither a routing policy (ordered, fastest, cheapest, accepted) nor a configured provider ({})",
                Quoted(value),
                lane_names.join(", ")
            ),
        ))
    }

    /// The policy this task is ranked by.
    pub(crate) fn policy(self, client: Policy) -> Policy {
        match self {
            Preference::Client => client,
            Preference::Policy(p) => p,
            Preference::First(_) => Policy::Ordered,
        }
    }
}

/// How usable a lane is for a new submission, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    Ready,
    /// Half-open after an outage: one probe decides.
    Probing,
    /// In an account hold: the balance is being checked.
    Held,
    /// The circuit is open after a failure storm; it probes again after `break_ms`.
    Open,
    /// The circuit is open because the provider cannot be reached.
    Unreachable,
    /// An account error stopped submissions until `reset_circuit`.
    AccountOut,
    /// The provider cannot take this task (its request cannot be built).
    Unsupported,
}

impl Health {
    pub fn usable(self) -> bool {
        matches!(self, Health::Ready | Health::Probing)
    }
}

/// What routing sees of one lane for one task.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Candidate {
    pub health: Health,
    /// The lane answered a task-terminal error for this task.
    pub avoided: bool,
    /// Latency (`fastest`) or cost (`cheapest`) for the task's kind, if known.
    pub score: Option<f64>,
    /// Nothing is in flight at the lane.
    pub idle: bool,
}

/// The lane a task goes to (see the module documentation). `candidates` is in
/// configuration order and not empty.
pub(crate) fn choose(candidates: &[Candidate], policy: Policy, first: Option<usize>) -> usize {
    let key = |i: usize| {
        let c = &candidates[i];
        let policy_key = match (first, policy) {
            (Some(f), _) => f64::from(u8::from(f != i)),
            (None, Policy::Ordered) => 0.0,
            (None, Policy::Fastest | Policy::Cheapest | Policy::Accepted) => c.score.unwrap_or(f64::INFINITY),
        };
        (!c.health.usable(), c.avoided && c.health.usable(), c.health, policy_key)
    };
    (0..candidates.len())
        .min_by(|a, b| {
            let (ka, kb) = (key(*a), key(*b));
            (ka.0, ka.1, ka.2).cmp(&(kb.0, kb.1, kb.2)).then(ka.3.total_cmp(&kb.3)).then(a.cmp(b))
        })
        .unwrap_or(0)
}

/// Under `fastest`: the first ready lane, not avoided, that has no latency observation for
/// the kind and nothing in flight — one task measures it.
pub(crate) fn unmeasured(candidates: &[Candidate]) -> Option<usize> {
    candidates.iter().position(|c| c.health == Health::Ready && !c.avoided && c.score.is_none() && c.idle)
}

/// The lanes an exploring `fastest` task may go to instead of `chosen`: the other ready
/// lanes it does not avoid.
pub(crate) fn alternatives(candidates: &[Candidate], chosen: usize) -> Vec<usize> {
    (0..candidates.len())
        .filter(|i| *i != chosen && candidates[*i].health == Health::Ready && !candidates[*i].avoided)
        .collect()
}

/// A new observation folded into a running average.
pub(crate) fn ewma(previous: Option<f64>, sample: f64) -> f64 {
    match previous {
        Some(p) => p + EWMA_WEIGHT * (sample - p),
        None => sample,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(health: Health, score: Option<f64>) -> Candidate {
        Candidate { health, avoided: false, score, idle: false }
    }

    #[test]
    fn ordered_takes_the_first_healthy_lane() {
        let lanes =
            [c(Health::AccountOut, None), c(Health::Open, None), c(Health::Ready, None), c(Health::Ready, None)];
        assert_eq!(choose(&lanes, Policy::Ordered, None), 2);
        let probing = [c(Health::Probing, None), c(Health::Ready, None)];
        assert_eq!(choose(&probing, Policy::Ordered, None), 1, "a healthy lane before a probing one");
        let none = [c(Health::Unreachable, None), c(Health::Held, None), c(Health::Open, None)];
        assert_eq!(choose(&none, Policy::Ordered, None), 1, "no usable lane: wait where it comes back first");
    }

    #[test]
    fn fastest_and_cheapest_rank_by_score_unknown_last() {
        let lanes = [c(Health::Ready, None), c(Health::Ready, Some(9.0)), c(Health::Ready, Some(3.0))];
        assert_eq!(choose(&lanes, Policy::Fastest, None), 2);
        assert_eq!(choose(&lanes, Policy::Cheapest, None), 2);
        let unknown = [c(Health::Ready, None), c(Health::Ready, None)];
        assert_eq!(choose(&unknown, Policy::Cheapest, None), 0, "ties keep the configuration order");
        let unhealthy_fast = [c(Health::Open, Some(1.0)), c(Health::Ready, Some(50.0))];
        assert_eq!(choose(&unhealthy_fast, Policy::Fastest, None), 1, "health before speed");
    }

    #[test]
    fn an_idle_unmeasured_lane_is_measured_first() {
        let mut lanes = [c(Health::Ready, Some(5.0)), c(Health::Ready, None), c(Health::Ready, None)];
        assert_eq!(unmeasured(&lanes), None, "busy lanes wait for their measurement");
        lanes[2].idle = true;
        assert_eq!(unmeasured(&lanes), Some(2));
        lanes[2].health = Health::Probing;
        assert_eq!(unmeasured(&lanes), None, "only healthy lanes are measured");
    }

    #[test]
    fn an_avoided_lane_is_used_only_when_nothing_else_is_usable() {
        let mut lanes = [c(Health::Ready, None), c(Health::Ready, None)];
        lanes[0].avoided = true;
        assert_eq!(choose(&lanes, Policy::Ordered, None), 1);
        lanes[1].health = Health::Open;
        assert_eq!(choose(&lanes, Policy::Ordered, None), 0, "avoided but usable beats waiting");
        assert_eq!(alternatives(&lanes, 0), Vec::<usize>::new());
    }

    #[test]
    fn a_named_provider_goes_first() {
        let lanes = [c(Health::Ready, Some(1.0)), c(Health::Ready, Some(5.0)), c(Health::Ready, None)];
        assert_eq!(choose(&lanes, Policy::Fastest, Some(2)), 2);
        let names = ["capsolver", "2captcha"];
        assert_eq!(Preference::from_label(Some("2captcha"), &names).unwrap(), Preference::First(LaneId::at(1)));
        assert_eq!(Preference::from_label(Some("cheapest"), &names).unwrap(), Preference::Policy(Policy::Cheapest));
        assert_eq!(Preference::from_label(None, &names).unwrap(), Preference::Client);
        let e = Preference::from_label(Some("fast"), &names).unwrap_err();
        assert_eq!(e.field, "labels.routing");
        assert!(e.problem.contains("capsolver, 2captcha"), "{}", e.problem);
    }

    #[test]
    fn averages_move_a_fifth_of_the_way() {
        assert_eq!(ewma(None, 10.0), 10.0);
        assert!((ewma(Some(10.0), 20.0) - 12.0).abs() < 1e-12);
    }
}
