//! Placement: which provider (lane) a task waits at, and when it moves to another.
//!
//! [`super::routing`] ranks the providers; this applies the ranking under the rules that
//! keep a task from being lost or paid twice, all decided here:
//!
//! - **Never two providers at once.** A task a provider may still be working on (it was
//!   accepted, or its submission got no answer and may have reached the service) is
//!   pinned to that provider until the provider's working time for the kind (the polling
//!   give-up point) has passed: it is resubmitted only there (idempotency first), and when
//!   that provider stops being usable it moves elsewhere with "not before" set to the end
//!   of that time. A definite answer from the provider about the task (solved, unsolvable,
//!   an error code) ends the pin.
//! - **Failover without a dead letter.** A task moves off a provider, without a DLQ entry,
//!   when that provider stops taking submissions (account error, account hold, open
//!   circuit, unreachable) or gives up on its requests (transient or slow-down failures
//!   past their limits), as long as another provider is usable and the task's deadline
//!   leaves time after the pin. With none, the provider's own rules decide, as with one
//!   provider.
//! - **Rebalancing.** Under `fastest`, `cheapest` and `accepted`, tasks waiting for a submission move
//!   when another provider becomes the best for their kind; tasks sent elsewhere to
//!   explore stay where they are.
//!
//! With one provider none of this applies: every task waits at its only lane.

use super::job::Next;
use super::lane_id::LaneId;
use super::routing::{self, Candidate, Health, Policy, Preference};
use super::{Engine, Event, JobId, Lane, Stage};
use crate::class::Failure;
use crate::support::time::Timestamp;
use crate::task::TaskKind;

/// What `policy` ranks `lane` by for `kind`.
fn score(lane: &Lane, policy: Policy, kind: TaskKind) -> Option<f64> {
    match policy {
        Policy::Ordered => None,
        Policy::Fastest => lane.stats().latency_ms(kind),
        Policy::Cheapest => lane.expected_cost(kind),
        Policy::Accepted => lane.cost_per_accepted(kind),
    }
}

/// Why tasks leave a lane in `health`, for the `rerouted` event.
fn leaving(health: Health) -> &'static str {
    match health {
        Health::Ready | Health::Probing => "another provider is now preferred",
        Health::Held => "it holds submissions after an account error",
        Health::Open => "its circuit opened after a failure storm",
        Health::Unreachable => "it cannot be reached",
        Health::AccountOut => "an account error stopped its submissions",
        Health::Unsupported => "it cannot take the task",
    }
}

impl Engine {
    /// The lane `job` goes to now, and the time before which it must not be sent there.
    /// `exclude`: a lane the task is leaving. `explore`: a `fastest` task may be sent to
    /// another ready lane (`routing.explore` of the time) so that lane gets measured.
    pub(super) fn route(
        &mut self,
        job: JobId,
        now: Timestamp,
        exclude: Option<LaneId>,
        explore: bool,
    ) -> (LaneId, Timestamp) {
        if !self.multi() {
            return (LaneId::FIRST, Timestamp::EPOCH);
        }
        let Some(j) = self.jobs.get(&job) else { return (LaneId::FIRST, Timestamp::EPOCH) };
        let kind = j.kind();
        let policy = j.route.preference().policy(self.routing.policy);
        let first = match j.route.preference() {
            Preference::First(lane) => Some(lane),
            Preference::Client | Preference::Policy(_) => None,
        };
        let candidates: Vec<Candidate> = self
            .lanes
            .with_ids()
            .map(|(i, lane)| Candidate {
                health: if j.route.unsupported_at(i) || Some(i) == exclude || lane.refuses_kind(kind, now) {
                    Health::Unsupported
                } else {
                    lane.health()
                },
                avoided: j.route.avoids(i),
                score: score(lane, policy, kind),
                idle: lane.in_flight() == 0,
            })
            .collect();
        if let Some((pinned, until)) = j.route.pin().filter(|(_, until)| *until > now) {
            // It may still be worked on there: only there, or elsewhere once that time is over.
            if candidates[pinned.index()].health.usable() {
                return (pinned, Timestamp::EPOCH);
            }
            let chosen = LaneId::at(routing::choose(&candidates, policy, first.map(LaneId::index)));
            return (chosen, if chosen == pinned { Timestamp::EPOCH } else { until });
        }
        let mut chosen = routing::choose(&candidates, policy, first.map(LaneId::index));
        let mut explored = false;
        if explore && policy == Policy::Fastest && first.is_none() && candidates[chosen].health == Health::Ready {
            if let Some(lane) = routing::unmeasured(&candidates) {
                explored = lane != chosen;
                chosen = lane;
            } else {
                let others = routing::alternatives(&candidates, chosen);
                if !others.is_empty() && self.rng.f64() < self.routing.explore {
                    chosen = others[self.rng.usize(..others.len())];
                    explored = true;
                }
            }
        }
        if let Some(j) = self.jobs.get_mut(&job) {
            j.route.set_explored(explored);
        }
        (LaneId::at(chosen), Timestamp::EPOCH)
    }

    /// Routes `job` and queues it for a submission not before `at`.
    pub(super) fn enqueue_submit(&mut self, job: JobId, at: Timestamp, now: Timestamp) {
        self.unqueue(job);
        let (lane, not_before) = self.route(job, now, None, true);
        self.queue_at(job, lane, at.max(not_before));
    }

    fn queue_at(&mut self, job: JobId, lane: LaneId, at: Timestamp) {
        self.unqueue(job);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.route.place(Some(lane));
            j.stage = Stage::Queued { at };
            self.lanes[lane].enqueue(at, job);
        }
    }

    /// Lane `l` stopped being usable: what waits there for a submission goes where routing
    /// now sends it, if that lane is usable. The rest stays, for `l`'s own rules to decide.
    pub(super) fn evacuate(&mut self, l: LaneId, now: Timestamp) {
        if !self.multi() {
            return;
        }
        let reason = format!("{}: {}", self.lanes[l].name(), leaving(self.lanes[l].health()));
        let queued: Vec<JobId> = self.lanes[l].waiting();
        for job in queued {
            self.reroute(job, now, &reason);
        }
    }

    /// Moves a queued job to the lane routing picks now, if that is another, usable lane
    /// and the job's deadline leaves time.
    fn reroute(&mut self, job: JobId, now: Timestamp, reason: &str) -> bool {
        let Some(j) = self.jobs.get(&job) else { return false };
        let (Some(current), Stage::Queued { at }) = (j.lane(), j.stage) else { return false };
        let deadline = j.life.deadline();
        let (lane, not_before) = self.route(job, now, None, false);
        if lane == current || !self.lanes[lane].health().usable() || not_before >= deadline {
            return false;
        }
        self.queue_at(job, lane, at.max(not_before));
        self.moved(job, current, lane, reason.to_string());
        true
    }

    /// Lane of `job` failed it with `f` (an account error, requests failing past their
    /// limits, an unreachable provider): it goes to another usable provider instead of the
    /// DLQ, unless none is usable, it has no attempt left (or was cancelled), or its
    /// deadline comes before the provider that may have it is done with it.
    pub(super) fn fail_over(&mut self, job: JobId, f: &Failure, now: Timestamp) -> bool {
        if !self.multi() {
            return false;
        }
        let Some(j) = self.jobs.get(&job) else { return false };
        let Some(from) = j.lane() else { return false };
        if j.life.attempts_left() == 0 {
            return false;
        }
        let deadline = j.life.deadline();
        let (lane, not_before) = self.route(job, now, Some(from), false);
        let at = now.max(not_before);
        let refused = self.jobs.get(&job).is_some_and(|j| self.lanes[lane].refuses_kind(j.kind(), now));
        if lane == from || !self.lanes[lane].health().usable() || refused || at >= deadline {
            return false;
        }
        self.leave_flight(job);
        if let Some(j) = self.jobs.get_mut(&job) {
            // Its journal entry keeps naming the task at `from` until the next provider
            // accepts it: a restart before then polls `from` rather than pay again.
            j.attempt.reset_for(Next::Moved);
        }
        self.queue_at(job, lane, at);
        let reason = format!("{} at {}", f.code, self.lanes[from].name());
        self.moved(job, from, lane, reason);
        true
    }

    fn moved(&mut self, job: JobId, from: LaneId, to: LaneId, reason: String) {
        let (from, to) = (self.lanes[from].name().to_string(), self.lanes[to].name().to_string());
        self.push_event(Event::Rerouted { job, from, to, reason });
    }

    /// After an observation of `kind` (latency, cost, a page verdict): if a policy now prefers
    /// another lane for it, the tasks of that kind waiting elsewhere under that policy move.
    pub(super) fn rebalance(&mut self, kind: TaskKind, now: Timestamp) {
        if !self.multi() {
            return;
        }
        for policy in [Policy::Fastest, Policy::Cheapest, Policy::Accepted] {
            let candidates: Vec<Candidate> = self
                .lanes
                .iter()
                .map(|lane| Candidate {
                    health: lane.health(),
                    avoided: false,
                    score: score(lane, policy, kind),
                    idle: lane.in_flight() == 0,
                })
                .collect();
            let best = LaneId::at(routing::choose(&candidates, policy, None));
            if self.best.insert((policy, kind), best) == Some(best) {
                continue;
            }
            let client = self.routing.policy;
            let movable: Vec<JobId> = self
                .lanes
                .with_ids()
                .filter(|(i, _)| *i != best)
                .flat_map(|(_, lane)| lane.waiting().into_iter())
                .filter(|job| {
                    self.jobs.get(job).is_some_and(|j| {
                        j.kind() == kind
                            && !j.route.explored()
                            && j.route.pin().is_none()
                            && !matches!(j.route.preference(), Preference::First(_))
                            && j.route.preference().policy(client) == policy
                    })
                })
                .collect();
            let reason = format!("{} is now the {} provider for {kind}", self.lanes[best].name(), policy.as_str());
            for job in movable {
                self.reroute(job, now, &reason);
            }
        }
    }
}
