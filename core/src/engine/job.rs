//! A task inside the engine: its ids, its stage, what the engine keeps of it ([`Job`]), the
//! requests waiting for an answer ([`Pending`]), and the bookkeeping every stage change goes
//! through (entering and leaving flight, queues, backoff, its journal entry).

use core::fmt;
use core::time::Duration;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::Serialize;

mod attempt;
mod identity;
mod route;

pub(super) use self::attempt::{Attempt, Next};
pub(super) use self::identity::Identity;
pub(super) use self::route::Route;
use super::backoff;
use super::lanes::LaneId;
use super::{Action, Engine};
use crate::dlq::record::HistoryEntry;
use crate::journal::JournalEntry;
use crate::json_read::{deserialize_from_json, FieldError, FromJson};
use crate::labels::Labels;
use crate::task::{TaskKind, ValidTask};
use crate::time::Timestamp;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
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
    pub(super) fn is_submitted(self) -> bool {
        !matches!(self, Stage::Queued { .. } | Stage::Persisting)
    }
}

#[derive(Clone, Debug)]
pub(super) struct Job {
    /// Its record id, task and labels, the caller's key, the record it replays.
    pub(super) identity: Identity,
    /// Provider submissions made over the task's whole life.
    pub(super) attempts: u32,
    /// Submissions still allowed in this life (fresh, replayed or recovered).
    pub(super) attempts_left: u32,
    pub(super) replays: u32,
    pub(super) history: Vec<HistoryEntry>,
    pub(super) first_failed_at: Option<Timestamp>,
    pub(super) accepted_at: Timestamp,
    pub(super) deadline: Timestamp,
    pub(super) stage: Stage,
    /// Its current submission: the provider's task id, polls, failure streaks, reservation.
    pub(super) attempt: Attempt,
    /// Failures the service charged for (`Failure::billed`), over every attempt.
    pub(super) billed_failures: u32,
    pub(super) last_delay: Duration,
    /// Where it goes: its lane, its own routing, the lanes it cannot or should not go to.
    pub(super) route: Route,
    /// The caller wants it only until then (`ttl_ms`): its deadline is this when earlier, and
    /// reaching it is `TTLExpired` rather than `Timeout`.
    pub(super) wanted_until: Option<Timestamp>,
    /// A paid answer its dead letter keeps (an answer past its life).
    pub(super) kept_answer: Option<crate::solution::Solution>,
}

impl Job {
    /// Its task's kind.
    pub(super) fn kind(&self) -> TaskKind {
        self.identity.kind()
    }

    /// The lane it waits at, is submitted to or last ran at.
    pub(super) fn lane(&self) -> Option<LaneId> {
        self.route.lane()
    }
}

#[derive(Debug)]
pub(super) enum Pending {
    Submit {
        job: JobId,
        lane: LaneId,
    },
    Poll {
        lane: LaneId,
        jobs: Vec<JobId>,
        ids: Vec<Arc<str>>,
    },
    /// A balance check while submissions are held for an account error.
    Probe {
        lane: LaneId,
    },
    /// A balance check that decides a half-open circuit nobody else sends to (several
    /// providers only: with one, the next task is the probe).
    Ping {
        lane: LaneId,
    },
}

impl Pending {
    pub(super) fn lane(&self) -> LaneId {
        match self {
            Pending::Submit { lane, .. }
            | Pending::Poll { lane, .. }
            | Pending::Probe { lane }
            | Pending::Ping { lane } => *lane,
        }
    }
}

impl Engine {
    pub(super) fn insert_job(
        &mut self,
        id: String,
        task: ValidTask,
        labels: Labels,
        now: Timestamp,
        attempts_left: u32,
    ) -> JobId {
        let job = JobId(self.next_job);
        self.next_job += 1;
        let deadline = now.add(Duration::from_millis(self.config.retry.task_deadline_ms));
        self.deadlines.insert((deadline, job));
        self.jobs.insert(
            job,
            Job {
                identity: Identity::new(id, task, labels),
                attempts: 0,
                attempts_left,
                replays: 0,
                history: Vec::new(),
                first_failed_at: None,
                accepted_at: now,
                deadline,
                stage: Stage::Persisting,
                attempt: Attempt::new(now),
                billed_failures: 0,
                last_delay: Duration::ZERO,
                route: Route::default(),
                wanted_until: None,
                kept_answer: None,
            },
        );
        job
    }

    /// The caller wants `job` only until `until`: its deadline moves there when that is earlier.
    pub(super) fn set_wanted_until(&mut self, job: JobId, until: Option<Timestamp>) {
        let Some(until) = until else { return };
        let Some(j) = self.jobs.get_mut(&job) else { return };
        j.wanted_until = Some(until);
        if until < j.deadline {
            self.deadlines.remove(&(j.deadline, job));
            j.deadline = until;
            self.deadlines.insert((until, job));
        }
    }

    pub(super) fn remove_job(&mut self, job: JobId) -> Option<Job> {
        self.leave_flight(job);
        self.unqueue(job);
        let j = self.jobs.remove(&job)?;
        self.deadlines.remove(&(j.deadline, job));
        Some(j)
    }

    /// Takes the job out of its lane's submit and poll queues (not out of pending requests:
    /// their answers find no job and are dropped).
    pub(super) fn unqueue(&mut self, job: JobId) {
        let Some(j) = self.jobs.get(&job) else { return };
        let Some(l) = j.lane() else { return };
        let lane = &mut self.lanes[l];
        match j.stage {
            Stage::Queued { at } => {
                lane.dequeue(at, job);
            }
            Stage::Waiting { at } => {
                lane.poll_queue_mut().remove(&(at, job), batchable_kind(j.kind()));
            }
            Stage::Persisting | Stage::Submitting(_) | Stage::Polling(_) => {}
        }
    }

    /// The job's current submission ended (or never was): it no longer counts in flight.
    pub(super) fn leave_flight(&mut self, job: JobId) {
        let Some(j) = self.jobs.get_mut(&job) else { return };
        if j.stage.is_submitted() {
            let reserved = j.attempt.release_reservation();
            if let Some(l) = j.lane() {
                self.lanes[l].ended(reserved);
            }
            self.reserved = self.reserved.saturating_sub(reserved);
            j.stage = Stage::Queued { at: Timestamp::EPOCH };
        }
    }

    pub(super) fn set_waiting(&mut self, job: JobId, at: Timestamp) {
        self.unqueue(job);
        let Some(j) = self.jobs.get_mut(&job) else { return };
        let Some(l) = j.lane() else { return };
        j.stage = Stage::Waiting { at };
        self.lanes[l].poll_queue_mut().insert(at, job, batchable_kind(j.kind()));
    }

    pub(super) fn backoff(&mut self, job: JobId, n: u32) -> Duration {
        let previous = self.jobs.get(&job).map_or(Duration::ZERO, |j| j.last_delay);
        let d = backoff::delay(&self.config.retry.backoff, n, previous, &mut self.rng);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.last_delay = d;
        }
        d
    }

    /// Rewrites the job's journal entry (attempts, provider, provider task id) without
    /// holding it up.
    pub(super) fn journal_upsert(&mut self, job: JobId, now: Timestamp) {
        if let Some(entry) = self.journal_entry(job, now) {
            self.actions.push_back(Action::Journal { entry, gates: None });
        }
    }

    /// The journal entry of a live job, as of `now`. Its task and labels are the job's own
    /// (shared, not copied).
    pub(super) fn journal_entry(&self, job: JobId, now: Timestamp) -> Option<JournalEntry> {
        let j = self.jobs.get(&job)?;
        Some(JournalEntry {
            id: j.identity.record_id().to_string(),
            task: j.identity.task().clone(),
            provider: self.lanes[j.lane().unwrap_or(LaneId::FIRST)].name().to_string(),
            labels: j.identity.labels().clone(),
            provider_task_id: j.attempt.provider_task_id().map(String::from),
            attempts: j.attempts,
            replays: j.replays,
            history: j.history.clone(),
            accepted_at: j.accepted_at,
            updated_at: now,
            replay_of: j.identity.replay_of().cloned(),
            owner: None,
            key: j.identity.key().cloned(),
            solution: None,
            wanted_until: j.wanted_until,
        })
    }

    /// The journal entry of `j`, which it is made of.
    pub(super) fn entry_of(&self, j: Job, now: Timestamp) -> JournalEntry {
        let provider = self.lanes[j.lane().unwrap_or(LaneId::FIRST)].name().to_string();
        let provider_task_id = j.attempt.provider_task_id().map(String::from);
        let identity = j.identity.into_parts();
        JournalEntry {
            id: identity.record_id,
            task: identity.task,
            provider,
            labels: identity.labels,
            provider_task_id,
            attempts: j.attempts,
            replays: j.replays,
            history: j.history,
            accepted_at: j.accepted_at,
            updated_at: now,
            replay_of: identity.replay_of,
            owner: None,
            key: identity.key,
            solution: None,
            wanted_until: j.wanted_until,
        }
    }

    pub(super) fn new_record_id(&mut self, now: Timestamp) -> String {
        let random = (u128::from(self.rng.u64(..)) << 16) | u128::from(self.rng.u16(..));
        ulid::Ulid::from_parts(now.as_unix_millis(), random).to_string()
    }
}

/// Whether answers of `kind` can share a batch answer (see `Engine::batchable`).
pub(super) fn batchable_kind(kind: TaskKind) -> bool {
    matches!(kind, TaskKind::RecaptchaV2 | TaskKind::RecaptchaV3 | TaskKind::Turnstile | TaskKind::Hcaptcha)
}

/// Whether `job`'s answer can share a batch poll (an unknown job cannot). A free function so
/// that `poll_action` can ask while it holds a lane's poll queue mutably.
pub(super) fn job_batchable(jobs: &FxHashMap<JobId, Job>, job: JobId) -> bool {
    jobs.get(&job).is_some_and(|j| batchable_kind(j.kind()))
}
