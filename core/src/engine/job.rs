//! A task inside the engine: its ids, its stage, what the engine keeps of it ([`Job`], in the
//! small owned parts of `job/`: identity, lifetime, current attempt, route), the
//! requests waiting for an answer ([`Pending`]), and the bookkeeping every stage change goes
//! through (entering and leaving flight, queues, backoff, its journal entry).

use core::fmt;
use core::time::Duration;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::Serialize;

mod attempt;
mod identity;
mod lifetime;
mod route;

pub(super) use self::attempt::{Attempt, Next};
pub(super) use self::identity::Identity;
pub(super) use self::lifetime::Lifetime;
pub(super) use self::route::Route;
use super::backoff;
use super::lane_id::LaneId;
use super::{Action, Engine};
use crate::journal::JournalEntry;
use crate::labels::Labels;
use crate::support::json_read::{deserialize_from_json, FieldError, FromJson};
use crate::support::time::Timestamp;
use crate::task::{TaskKind, ValidTask};

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

/// A task the engine is working on, in small owned parts: who it is ([`Identity`]), its life
/// across attempts ([`Lifetime`]), its current attempt ([`Attempt`]), where it goes ([`Route`]),
/// and its stage. Each part changes only through its own methods; the engine's bookkeeping of
/// stages (queues, flight, the deadline index) is the `impl Engine` below.
#[derive(Clone, Debug)]
pub(super) struct Job {
    pub(super) identity: Identity,
    pub(super) life: Lifetime,
    pub(super) attempt: Attempt,
    pub(super) route: Route,
    pub(super) stage: Stage,
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

    /// Its journal entry as of `now`, naming `provider`. Its task and labels are shared, not
    /// copied.
    fn journal_entry(&self, provider: String, now: Timestamp) -> JournalEntry {
        JournalEntry {
            id: self.identity.record_id().to_string(),
            task: self.identity.task().clone(),
            provider,
            labels: self.identity.labels().clone(),
            provider_task_id: self.attempt.provider_task_id().map(String::from),
            attempts: self.life.attempts(),
            replays: self.life.replays(),
            history: self.life.history().to_vec(),
            accepted_at: self.life.accepted_at(),
            updated_at: now,
            replay_of: self.identity.replay_of().cloned(),
            owner: None,
            key: self.identity.key().cloned(),
            solution: None,
            wanted_until: self.life.wanted_until(),
        }
    }

    /// The journal entry the ended job becomes (its parts moved into it).
    fn into_journal_entry(self, provider: String, now: Timestamp) -> JournalEntry {
        let provider_task_id = self.attempt.provider_task_id().map(String::from);
        let (attempts, replays, accepted_at, wanted_until) =
            (self.life.attempts(), self.life.replays(), self.life.accepted_at(), self.life.wanted_until());
        let (history, _) = self.life.into_history_and_answer();
        let identity = self.identity.into_parts();
        JournalEntry {
            id: identity.record_id,
            task: identity.task,
            provider,
            labels: identity.labels,
            provider_task_id,
            attempts,
            replays,
            history,
            accepted_at,
            updated_at: now,
            replay_of: identity.replay_of,
            owner: None,
            key: identity.key,
            solution: None,
            wanted_until,
        }
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

/// The engine's numbering of its jobs and requests: each id is given once (from 1 up).
///
/// Calling contract: [`new_job`](Self::new_job) and [`new_request`](Self::new_request) hand
/// out the next id; [`next_request`](Self::next_request) says which the next request gets
/// without taking it.
#[derive(Debug)]
pub(super) struct Ids {
    next_job: u64,
    next_request: u64,
}

impl Default for Ids {
    fn default() -> Self {
        Ids { next_job: 1, next_request: 1 }
    }
}

impl Ids {
    pub(super) fn new_job(&mut self) -> JobId {
        let id = JobId(self.next_job);
        self.next_job += 1;
        id
    }

    pub(super) fn new_request(&mut self) -> RequestId {
        let id = RequestId(self.next_request);
        self.next_request += 1;
        id
    }

    pub(super) fn next_request(&self) -> RequestId {
        RequestId(self.next_request)
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
        let job = self.ids.new_job();
        let deadline = now.add(Duration::from_millis(self.config.retry.task_deadline_ms));
        self.deadlines.insert((deadline, job));
        self.jobs.insert(
            job,
            Job {
                identity: Identity::new(id, task, labels),
                life: Lifetime::new(now, deadline, attempts_left),
                attempt: Attempt::new(now),
                route: Route::default(),
                stage: Stage::Persisting,
            },
        );
        job
    }

    /// The caller wants `job` only until `until`: its deadline moves there when that is earlier.
    pub(super) fn set_wanted_until(&mut self, job: JobId, until: Option<Timestamp>) {
        let Some(until) = until else { return };
        let Some(j) = self.jobs.get_mut(&job) else { return };
        if let Some(earlier) = j.life.want_until(until) {
            self.deadlines.remove(&(earlier, job));
            self.deadlines.insert((until, job));
        }
    }

    pub(super) fn remove_job(&mut self, job: JobId) -> Option<Job> {
        self.leave_flight(job);
        self.unqueue(job);
        let j = self.jobs.remove(&job)?;
        self.deadlines.remove(&(j.life.deadline(), job));
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
            self.spending.release(reserved);
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
        let previous = self.jobs.get(&job).map_or(Duration::ZERO, |j| j.life.last_delay());
        let d = backoff::delay(&self.config.retry.backoff, n, previous, &mut self.rng);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.life.remember_delay(d);
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
        Some(j.journal_entry(self.provider_of(j), now))
    }

    /// The journal entry of `j`, which it is made of.
    pub(super) fn entry_of(&self, j: Job, now: Timestamp) -> JournalEntry {
        let provider = self.provider_of(&j);
        j.into_journal_entry(provider, now)
    }

    /// The name of the provider `j` is at (the first one's before it was placed).
    pub(super) fn provider_of(&self, j: &Job) -> String {
        self.lanes[j.lane().unwrap_or(LaneId::FIRST)].name().to_string()
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
