//! What the engine learns of each provider's health from its answers, and what it does
//! about it: reachability (transport failures in a row), the circuit breaker's
//! transitions, account holds and their balance probes, pauses a provider asks for, and,
//! with several providers, the balance check that decides a half-open circuit nothing is
//! sent through. Each change that makes a provider unusable hands the tasks waiting there
//! to placement (`Engine::evacuate`) before the provider's own rules deal with the rest.

use core::time::Duration;

use super::circuit::Transition;
use super::lane_id::LaneId;
use super::reaction::Reaction;
use super::{Engine, Event, JobId, PauseScope, Pending, Phase};
use crate::class::{reason, ErrorClass, Failure};
use crate::http::{HttpResponse, TransportError};
use crate::support::time::Timestamp;

impl Engine {
    /// The balance answered during a hold: a positive balance ends it (submissions resume,
    /// paced by the submit rate, so the waiting tasks do not go out in a storm).
    pub(super) fn on_probe(&mut self, l: LaneId, response: Option<HttpResponse>, now: Timestamp) {
        let lane = &mut self.lanes[l];
        let balance = response.and_then(|r| lane.provider().parse_balance(&r).ok());
        let probe_ms = lane.config().circuit.account_probe_ms;
        let Some(hold) = lane.hold_mut() else { return };
        hold.probing = false;
        if balance.is_some_and(|b| b > 0.0) {
            if let Some(share) = lane.fleet_mut() {
                share.report_account_ok();
            }
            self.end_hold(l);
        } else {
            hold.next_probe = now.add(Duration::from_millis(probe_ms));
            // Still failing: the fleet keeps holding on this client's word (the error it reports
            // again outlives the next turn), and no other client needs to check.
            let failure = hold.failure.clone();
            self.report_account_error(l, &failure);
        }
    }

    /// Ends lane `l`'s hold: the account works again (its balance check, or the fleet's).
    pub(super) fn end_hold(&mut self, l: LaneId) {
        let lane = &mut self.lanes[l];
        lane.release_hold();
        lane.circuit_mut().reset_account();
        let provider = self.label(l);
        self.push_event(Event::CircuitClosed { provider });
    }

    /// Checks the balance when a hold's probe is due; ends the hold at its deadline.
    pub(super) fn advance_hold(&mut self, l: LaneId, now: Timestamp) {
        let Some(hold) = self.lanes[l].hold() else { return };
        if now >= hold.until {
            let failure = hold.failure.clone();
            self.lanes[l].release_hold();
            self.evacuate(l, now);
            let queued: Vec<JobId> = self.lanes[l].waiting();
            for job in queued {
                self.dead_letter_circuit_open(job, &failure, now);
            }
            return;
        }
        if !hold.probing && now >= hold.next_probe {
            let lane = &mut self.lanes[l];
            let turn_ms = lane.config().circuit.account_probe_ms;
            if let Some(share) = lane.fleet_mut() {
                // One client checks for the fleet: without the turn, ask for it and wait (the
                // turn's holder reports what it finds; a grant with the turn probes at once).
                if !share.take_probe_turn() {
                    share.ask_probe(turn_ms);
                    if let Some(h) = lane.hold_mut() {
                        h.next_probe = now.add(Duration::from_millis(turn_ms));
                    }
                    return;
                }
            }
            let lane = &self.lanes[l];
            let request = lane.provider().balance_request(lane.key());
            let rid = self.send(l, request);
            self.requests.insert(rid, Pending::Probe { lane: l });
            if let Some(h) = self.lanes[l].hold_mut() {
                h.probing = true;
            }
        }
    }

    /// Follows whether a provider answers at all. A provider that never answered fails
    /// after `unreachable_after_failures` transport failures in a row; one that did, after
    /// failing that often for `unreachable_after_ms` with no answer in between. Then its
    /// circuit opens with the transport error as its cause, what waits for a submission
    /// there goes to another provider or is dead-lettered as `Network` (transient:
    /// replayable) instead of waiting for the task deadline; the circuit lets one probe
    /// through after `break_ms`.
    pub(super) fn track_reachability(&mut self, l: LaneId, error: Option<&TransportError>, now: Timestamp) {
        let lane = &mut self.lanes[l];
        let Some(error) = error else {
            lane.heard_from();
            return;
        };
        let (since, count) = lane.transport_failed(now);
        let cfg = &lane.config().circuit;
        let enough = count >= cfg.unreachable_after_failures.max(1);
        let long_enough = now.since(since) >= Duration::from_millis(cfg.unreachable_after_ms);
        if lane.unreachable().is_some() || !enough || (lane.ever_answered() && !long_enough) {
            return;
        }
        let failure = Failure::new(
            reason::NETWORK,
            ErrorClass::Transient,
            format!(
                "{} cannot be reached: {count} request(s) in a row got no answer over {} s: {}",
                lane.provider().base_url(),
                now.since(since).as_secs(),
                error.message
            ),
        );
        let until = lane.circuit_mut().open_until(now);
        lane.found_unreachable(failure.clone());
        let provider = self.label(l);
        self.push_event(Event::CircuitOpened { cause: failure.description, until: Some(until), provider });
        self.fail_waiting_submissions(l, now);
    }

    pub(super) fn tick_circuits(&mut self, now: Timestamp) {
        for l in self.lanes.ids() {
            if let Some(t) = self.lanes[l].circuit_mut().tick(now) {
                self.report_transition(l, t, now);
            }
        }
    }

    /// With several providers, a half-open circuit that nothing is sent through is decided
    /// by a balance check: a provider back from an outage is noticed although routing sends
    /// it nothing while it is not healthy.
    pub(super) fn ping_if_probing(&mut self, l: LaneId) {
        let lane = &self.lanes[l];
        if !self.multi() || lane.pinging() || !lane.circuit().is_half_open() || !lane.circuit().allows_request() {
            return;
        }
        let request = lane.provider().balance_request(lane.key());
        let rid = self.send(l, request);
        self.lanes[l].set_pinging(true);
        self.requests.insert(rid, Pending::Ping { lane: l });
    }

    pub(super) fn pause(&mut self, l: LaneId, scope: PauseScope, code: &str, until: Timestamp) {
        if self.lanes[l].pause(scope, until) {
            let provider = self.label(l);
            self.push_event(Event::Paused { scope, code: code.to_string(), until, provider });
        }
    }

    pub(super) fn record_outcome(&mut self, l: LaneId, transient_failure: bool, now: Timestamp) {
        if let Some(t) = self.lanes[l].circuit_mut().record(transient_failure, now) {
            let reopened_unreachable = matches!(t, Transition::Opened { .. }) && self.lanes[l].unreachable().is_some();
            self.report_transition(l, t, now);
            if reopened_unreachable {
                self.fail_waiting_submissions(l, now);
            }
        }
    }

    /// Moves what waits at lane `l` for a submission to another provider, and dead-letters
    /// with its unreachable failure what no provider has taken yet and none can take now.
    pub(super) fn fail_waiting_submissions(&mut self, l: LaneId, now: Timestamp) {
        let Some(failure) = self.lanes[l].unreachable().cloned() else { return };
        self.evacuate(l, now);
        let waiting: Vec<JobId> = self.lanes[l].waiting();
        for job in waiting {
            if self.jobs.get(&job).is_some_and(|j| j.attempt.provider_task_id().is_none()) {
                self.fail_as(job, Phase::Submit, failure.clone(), None, now, Reaction::DeadLetter);
            }
        }
    }

    pub(super) fn report_transition(&mut self, l: LaneId, t: Transition, now: Timestamp) {
        let provider = self.label(l);
        let event = match t {
            Transition::Opened { until } => {
                let cause = match self.lanes[l].unreachable() {
                    Some(f) => f.description.clone(),
                    None => "transient failure ratio".to_string(),
                };
                Event::CircuitOpened { cause, until: Some(until), provider }
            }
            Transition::HalfOpened => Event::CircuitHalfOpen { provider },
            Transition::Closed => {
                self.lanes[l].reachable_again();
                Event::CircuitClosed { provider }
            }
        };
        let opened = matches!(event, Event::CircuitOpened { .. });
        self.push_event(event);
        if opened {
            self.evacuate(l, now);
        }
    }
}
