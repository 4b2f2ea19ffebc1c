//! Submissions: which waiting task a lane sends now (its circuit, pauses, limiter, fleet share
//! and the budget allowing), the request itself, and what an accepted submission starts.

use core::time::Duration;
use std::sync::Arc;

use super::job::{Next, Pending, Stage};
use super::lane_id::LaneId;
use super::reaction::Reaction;
use super::{Action, Engine, Event, JobId, PauseScope, RequestId};
use crate::class::{reason, ErrorClass, Failure};
use crate::dlq::record::Phase;
use crate::http::HttpRequest;
use crate::solution::Solution;
use crate::support::time::Timestamp;

impl Engine {
    pub(super) fn schedule_submits(&mut self, l: LaneId, now: Timestamp) {
        while !self.store_down
            && now >= self.lanes[l].paused_until(PauseScope::Submits)
            && {
                let lane = &self.lanes[l];
                lane.circuit().allows_request()
                    && lane.circuit().account_failure().is_none()
                    && lane.limiter().may_submit(lane.in_flight(), now)
            }
            && self.fleet_allows(l, now)
        {
            let Some((at, job)) = self.lanes[l].next_waiting() else { break };
            if at > now {
                break;
            }
            if let Some(f) = self.budget_refuses(l, job) {
                self.fail_as(job, Phase::Submit, f, None, now, Reaction::DeadLetter);
                continue;
            }
            if self.budget_waits(l, job) {
                break; // what is in flight may use the rest of the budget: wait for it
            }
            self.lanes[l].take_next_waiting();
            let Some(j) = self.jobs.get(&job) else { continue };
            let lane = &self.lanes[l];
            // Validated once, when the engine took it (submit, replay, recover).
            let request = match lane.provider().submit_request(lane.key(), j.identity.task(), lane.submit_options()) {
                Ok(r) => r,
                Err(e) => {
                    // Checked against the providers at acceptance; reachable only for recovered
                    // or replayed tasks from an older version. Review, never retry.
                    let f = Failure::new(reason::INVALID_TASK, ErrorClass::FixInput, e.to_string());
                    self.fail_as(job, Phase::Submit, f, None, now, Reaction::DeadLetter);
                    continue;
                }
            };
            let expected = self.expected_cost(l, job);
            let rid = self.send(l, request);
            self.lanes[l].limiter_mut().on_submit(now);
            if let Some(share) = self.lanes[l].fleet_mut() {
                share.take();
            }
            if let Some(j) = self.jobs.get_mut(&job) {
                j.stage = Stage::Submitting(rid);
                j.attempt.sent(now, expected);
            }
            self.spending.reserve(expected);
            self.lanes[l].sent(expected);
            self.requests.insert(rid, Pending::Submit { job, lane: l });
        }
    }

    pub(super) fn send(&mut self, l: LaneId, mut request: HttpRequest) -> RequestId {
        let rid = self.ids.new_request();
        request.timeout = Duration::from_millis(self.config.retry.request_timeout_ms);
        self.lanes[l].circuit_mut().on_send();
        self.actions.push_back(Action::Send { request_id: rid, request });
        rid
    }

    pub(super) fn on_accepted(&mut self, job: JobId, l: LaneId, provider_task_id: String, now: Timestamp) {
        let working_time = match self.jobs.get(&job) {
            Some(j) => self.lanes[l].working_time(j.kind()),
            None => return,
        };
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.life.count_submission();
        j.attempt.reset_for(Next::Accepted { provider_task_id: Some(Arc::from(provider_task_id.as_str())), at: now });
        j.route.pin_to(l, now.add(working_time));
        let attempt = j.life.attempts();
        let first_poll = self.lanes[l].config().polling.first_poll_ms.for_kind(j.kind());
        let provider = self.label(l);
        self.push_event(Event::Submitted { job, attempt, provider_task_id, provider: provider.clone() });
        self.on_lane_accepted(l, provider);
        self.journal_upsert(job, now);
        self.set_waiting(job, now.add(first_poll));
    }

    /// The service answered in the submission itself (CapSolver's recognition tasks): the
    /// attempt counts and the job ends without a poll.
    pub(super) fn on_solved_at_submit(&mut self, job: JobId, l: LaneId, solution: Solution, now: Timestamp) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.life.count_submission();
        let provider_task_id = solution.provider_task_id.as_deref().map(Arc::from);
        j.attempt.reset_for(Next::Accepted { provider_task_id, at: now });
        let (attempt, provider_task_id) = (j.life.attempts(), solution.provider_task_id.clone().unwrap_or_default());
        let provider = self.label(l);
        self.push_event(Event::Submitted { job, attempt, provider_task_id, provider: provider.clone() });
        self.on_lane_accepted(l, provider);
        self.solved(job, solution, now, true);
    }

    /// A submission was accepted at lane `l`: its window (and the fleet's) grows by one.
    pub(super) fn on_lane_accepted(&mut self, l: LaneId, provider: Option<String>) {
        if let Some(share) = self.lanes[l].fleet_mut() {
            share.report_accepted();
        }
        if let Some(limit) = self.lanes[l].limiter_mut().on_accepted() {
            self.push_event(Event::ConcurrencyChanged { limit, provider });
        }
    }

    /// Counts a submission whose answer was lost on the way (see `handle_response`): the
    /// provider may be working on it until its working time for the kind is over.
    pub(super) fn count_unconfirmed_submission(&mut self, job: JobId, lane: LaneId, now: Timestamp) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.life.count_submission();
        j.route.pin_to(lane, now.add(self.lanes[lane].working_time(j.kind())));
    }
}
