//! The budget cap (`budget` in the client options): once the client spent that much on
//! solved tasks (reported costs, else configured prices), nothing more is submitted and
//! every task waiting for a submission is dead-lettered `BudgetExhausted` (class
//! `account_terminal`: nothing was paid for it; replay it once the budget is raised).
//!
//! Before that point a submission that could take the spend past the budget is not made:
//! each submitted task reserves its provider's known cost for the kind until it ends; a
//! task whose known cost does not fit beside what was spent and what is reserved waits
//! while tasks are in flight (they may fail and free their share) and is dead-lettered
//! `BudgetExhausted` when nothing is. With known prices the cap is never passed; a task
//! whose cost is unknown reserves nothing. Reservations are whole nano-units: their sum is
//! exact.
//!
//! When the store keeps a fleet ledger the budget is the fleet's (unless `fleet.budget` says
//! `process`): what was spent is the fleet's spend at the client's accounts (as the last sync
//! said, plus this client's since), what is reserved includes the other clients'
//! reservations, and the ledger grants no permit the budget could not pay (see
//! [`crate::fleet`]). The fleet's total then stays within the budget, give or take what other
//! clients committed since this one's last sync.

use super::lane_id::LaneId;
use super::reaction::Reaction;
use super::{Engine, JobId, Phase};
use crate::class::{reason, ErrorClass, Failure};
use crate::support::float_text::float_text;
use crate::support::time::Timestamp;

use crate::spend::{to_nano, SpendLedger, NANO};

/// What this engine spent on solved tasks (its ledger) and what the tasks it has submitted and
/// not finished reserve against the budget (their expected cost, nano-units; an exact sum).
///
/// Calling contract: every [`reserve`](Self::reserve) is matched by one
/// [`release`](Self::release) of the same cost when its submission ends; solved and
/// dead-lettered tasks are recorded in the [`ledger`](Self::ledger_mut).
#[derive(Debug, Default)]
pub(super) struct Spending {
    ledger: SpendLedger,
    reserved: u64,
}

impl Spending {
    pub(super) fn ledger(&self) -> &SpendLedger {
        &self.ledger
    }

    pub(super) fn ledger_mut(&mut self) -> &mut SpendLedger {
        &mut self.ledger
    }

    /// What the tasks in flight reserve (nano-units).
    pub(super) fn reserved(&self) -> u64 {
        self.reserved
    }

    pub(super) fn reserve(&mut self, cost: u64) {
        self.reserved = self.reserved.saturating_add(cost);
    }

    pub(super) fn release(&mut self, cost: u64) {
        self.reserved = self.reserved.saturating_sub(cost);
    }
}

impl Engine {
    /// Whether the budget is the fleet's: some lane shares it through the store's ledger.
    fn fleet_budget(&self) -> bool {
        self.lanes.iter().any(|lane| lane.fleet().is_some_and(|share| share.shares_budget()))
    }

    /// What was spent (in money) and what is reserved (nano-units), as the budget counts them:
    /// the fleet's when it shares the budget, else this client's.
    fn budget_counts(&self) -> (f64, u64) {
        if !self.fleet_budget() {
            return (self.spending.ledger().total_cost(), self.spending.reserved());
        }
        let (spent, others) = self
            .lanes
            .iter()
            .filter_map(|lane| lane.fleet().map(|share| share.fleet_budget_view()))
            .fold((0u64, 0u64), |(s, o), (spent, others)| (s.saturating_add(spent), o.saturating_add(others)));
        (spent as f64 / NANO, self.spending.reserved().saturating_add(others))
    }

    /// What the budget counts as spent (the fleet's when it shares the budget) and the budget,
    /// when there is one: what the client's `budget` alert compares.
    pub fn budget_used(&self) -> Option<(f64, f64)> {
        let budget = self.routing.budget?;
        Some((self.budget_counts().0, budget))
    }

    /// The failure of a task not yet submitted once the budget is spent.
    pub(super) fn budget_refusal(&self) -> Option<Failure> {
        let budget = self.routing.budget?;
        (self.budget_counts().0 >= budget).then(|| self.exhausted())
    }

    fn exhausted(&self) -> Failure {
        let budget = float_text(self.routing.budget.unwrap_or_default());
        let description = if self.fleet_budget() {
            format!(
                "not sent: the fleet's budget of {budget} is spent ({} by the clients on this store; {} on {} \
                 solved task(s) by this one); raise `budget` and replay this record",
                float_text(self.budget_counts().0),
                float_text(self.spending.ledger().total_cost()),
                self.spending.ledger().solved()
            )
        } else {
            format!(
                "not sent: the client's budget of {budget} is spent ({} on {} solved task(s)); raise `budget` \
                 (or start a new client) and replay this record",
                float_text(self.spending.ledger().total_cost()),
                self.spending.ledger().solved()
            )
        };
        Failure::new(reason::BUDGET_EXHAUSTED, ErrorClass::AccountTerminal, description)
    }

    /// Whether `job`'s submission at lane `l` would not fit the budget beside what was spent
    /// and what the tasks in flight reserved.
    fn over_budget(&self, l: LaneId, job: JobId) -> bool {
        let Some(budget) = self.routing.budget else { return false };
        let (spent, reserved) = self.budget_counts();
        let committed = reserved.saturating_add(self.expected_cost(l, job));
        spent + committed as f64 / NANO > budget
    }

    /// Whether `job`'s submission at lane `l` waits for the tasks in flight (the fleet's, when it
    /// shares the budget) to end.
    pub(super) fn budget_waits(&self, l: LaneId, job: JobId) -> bool {
        self.routing.budget.is_some() && self.budget_counts().1 > 0 && self.over_budget(l, job)
    }

    /// Why `job` cannot be submitted at lane `l` at all: the budget is spent, or its cost
    /// alone would pass it with nothing in flight.
    pub(super) fn budget_refuses(&self, l: LaneId, job: JobId) -> Option<Failure> {
        self.budget_refusal().or_else(|| {
            (self.routing.budget.is_some() && self.budget_counts().1 == 0 && self.over_budget(l, job)).then(|| {
                let mut f = self.exhausted();
                f.description = format!(
                    "not sent: its known cost ({}) would take the spend ({}) past the client's budget of {}; \
                     raise `budget` (or start a new client) and replay this record",
                    float_text(self.expected_cost(l, job) as f64 / NANO),
                    float_text(self.budget_counts().0),
                    float_text(self.routing.budget.unwrap_or_default())
                );
                f
            })
        })
    }

    /// The known cost of `job` at lane `l`, in nano-units (0 when unknown).
    pub(super) fn expected_cost(&self, l: LaneId, job: JobId) -> u64 {
        let Some(kind) = self.jobs.get(&job).map(|j| j.kind()) else { return 0 };
        // A finite price of at least 0 (checked where prices are read); the cast saturates.
        self.lanes[l].expected_cost(kind).map_or(0, to_nano)
    }

    /// After a solved task: once the budget is spent, what waits for a submission anywhere
    /// is dead-lettered now rather than when its turn comes.
    pub(super) fn sweep_if_budget_spent(&mut self, now: Timestamp) {
        let Some(failure) = self.budget_refusal() else { return };
        let waiting: Vec<JobId> = self.lanes.iter().flat_map(|lane| lane.waiting().into_iter()).collect();
        for job in waiting {
            self.fail_as(job, Phase::Submit, failure.clone(), None, now, Reaction::DeadLetter);
        }
    }
}
