//! Polling: which tasks a lane polls now (alone or riding in a batch, see `rounds`), the poll
//! requests, and what their answers mean for each task (solved, not ready yet, failed).

use super::job::{job_batchable, Pending, Stage};
use super::lane_id::LaneId;
use super::{Engine, Event, JobId, PauseScope, GARBLED_BATCHES_BEFORE_FALLBACK};
use crate::class::{reason, ErrorClass, Failure};
use crate::dlq::record::Phase;
use crate::provider::{PollOutcome, TaskPoll};
use crate::support::time::Timestamp;
use core::time::Duration;

impl Engine {
    pub(super) fn schedule_polls(&mut self, l: LaneId, now: Timestamp) {
        let batch = self.poll_batch(l);
        let lane = &self.lanes[l];
        let horizon = if batch > 1 { now.add(Duration::from_millis(lane.config().polling.coalesce_ms)) } else { now };
        while now >= self.lanes[l].paused_until(PauseScope::Polls) && self.lanes[l].circuit().allows_request() {
            let Some(&(at, _)) = self.lanes[l].poll_queue().first() else { break };
            if at > now {
                break;
            }
            if self.next_round_at(l).is_some_and(|round| round > now) {
                // The round waits for riders (see `rounds`); what is due now and cannot ride
                // is polled on its own (while every waiting job can ride, nothing is walked).
                if self.lanes[l].poll_queue().unbatchable() == 0 {
                    break;
                }
                let alone: Vec<(Timestamp, JobId)> = self.lanes[l]
                    .poll_queue()
                    .iter()
                    .take_while(|(t, _)| *t <= now)
                    .filter(|(_, j)| !self.batchable(*j))
                    .copied()
                    .collect();
                for entry in alone {
                    self.lanes[l].poll_queue_mut().remove(&entry, false);
                    self.send_poll(l, vec![entry.1]);
                }
                break;
            }
            let jobs_table = &self.jobs;
            let batchable = |job: JobId| job_batchable(jobs_table, job);
            let Some((_, first)) = self.lanes[l].poll_queue_mut().pop_first(batchable) else { break };
            let first_batchable = batchable(first);
            let mut jobs = Vec::with_capacity(if first_batchable { batch } else { 1 });
            jobs.push(first);
            if batch > 1 && first_batchable {
                // Gather more batchable jobs due soon; others stay queued for their own request.
                let queue = self.lanes[l].poll_queue_mut();
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
    pub(super) fn send_poll(&mut self, l: LaneId, mut jobs: Vec<JobId>) {
        // The request's id is the next one: each job is looked up once, to mark it polled
        // by that request and to read its provider task id.
        let rid = self.ids.next_request();
        let mut ids = Vec::with_capacity(jobs.len());
        jobs.retain(|job| {
            let Some(j) = self.jobs.get_mut(job) else { return false };
            let Some(pid) = j.attempt.polled() else { return false };
            j.stage = Stage::Polling(rid);
            ids.push(pid);
            true
        });
        if jobs.is_empty() {
            return;
        }
        let id_refs: Vec<&str> = ids.iter().map(|id| &**id).collect();
        let lane = &self.lanes[l];
        let request = lane.provider().poll_request(lane.key(), &id_refs);
        let sent = self.send(l, request);
        debug_assert_eq!(sent, rid);
        self.push_event(Event::Polled {
            tasks: jobs.len(),
            #[cfg(feature = "traces")]
            jobs: jobs.clone(),
        });
        self.requests.insert(rid, Pending::Poll { lane: l, jobs, ids });
    }

    /// Whether the job's answer can share a `|`-separated batch answer: tokens can, but
    /// FunCaptcha tokens, GeeTest's JSON and recognised image text may contain `|` themselves.
    pub(super) fn batchable(&self, job: JobId) -> bool {
        job_batchable(&self.jobs, job)
    }

    pub(super) fn on_poll_outcome(
        &mut self,
        l: LaneId,
        jobs: Vec<JobId>,
        outcome: PollOutcome,
        status: Option<u16>,
        now: Timestamp,
    ) {
        match outcome {
            PollOutcome::PerTask(polls) if polls.len() == jobs.len() => {
                self.record_outcome(l, false, now);
                if jobs.len() > 1 {
                    self.lanes[l].batch_answered();
                }
                for (job, poll) in jobs.into_iter().zip(polls) {
                    if !self.jobs.contains_key(&job) {
                        continue;
                    }
                    match poll {
                        TaskPoll::Ready(mut solution) => {
                            if solution.provider_task_id.is_none() {
                                solution.provider_task_id =
                                    self.jobs.get(&job).and_then(|j| j.attempt.provider_task_id().map(String::from));
                            }
                            self.solved(job, solution, now, true);
                        }
                        TaskPoll::NotReady => self.on_not_ready(job, now),
                        TaskPoll::Failed(f) => self.fail(job, Phase::Poll, f, status, now),
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

    pub(super) fn on_poll_failure(
        &mut self,
        l: LaneId,
        jobs: Vec<JobId>,
        f: Failure,
        status: Option<u16>,
        now: Timestamp,
    ) {
        let batch_garbled = jobs.len() > 1 && f.class == ErrorClass::Transient && status.is_some_and(|s| s < 500);
        if batch_garbled && self.lanes[l].batch_garbled(GARBLED_BATCHES_BEFORE_FALLBACK) {
            // The provider does not answer `ids=` the way the protocol says: poll one by one
            // from now on, and don't hold this against the tasks.
            self.record_outcome(l, false, now);
            let provider = self.label(l);
            self.push_event(Event::BatchPollingDisabled { reason: format!("{}: {}", f.code, f.description), provider });
            for job in jobs {
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.attempt.uncount_poll();
                    self.set_waiting(job, now);
                }
            }
            return;
        }
        self.record_outcome(l, f.class == ErrorClass::Transient, now);
        for job in jobs {
            if self.jobs.contains_key(&job) {
                self.fail(job, Phase::Poll, f.clone(), status, now);
            }
        }
    }

    pub(super) fn on_not_ready(&mut self, job: JobId, now: Timestamp) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.attempt.answered();
        let Some(l) = j.lane() else { return };
        // The poll budget follows the service's working time on the kind (config::PollingConfig).
        let kind = j.kind();
        let polling = &self.lanes[l].config().polling;
        match polling.next_poll(kind, j.attempt.submitted_at(), j.attempt.polls(), now) {
            Some(at) => self.set_waiting(job, at),
            None => {
                let description = format!(
                    "task {} timed out: not ready after {} polls ({} s; {kind} tasks are given up after {} s)",
                    j.attempt.provider_task_id().unwrap_or("?"),
                    j.attempt.polls(),
                    now.since(j.attempt.submitted_at()).as_secs(),
                    polling.give_up_ms.for_kind(kind).as_secs()
                );
                self.fail(
                    job,
                    Phase::Poll,
                    Failure::new(reason::TIMEOUT, ErrorClass::TaskTerminal, description),
                    None,
                    now,
                );
            }
        }
    }
}
