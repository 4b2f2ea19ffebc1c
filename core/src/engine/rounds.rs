//! When a lane's next poll request goes out, and how many ids it may carry.
//!
//! Batched polls go out in rounds: a round carries every batchable job due within
//! `polling.coalesce_ms` after it (each may be polled up to that much early). A round
//! whose first job is due also waits up to `coalesce_ms` for the jobs due just after
//! its window, when there are any and the round is not full: tasks that come ready
//! spread over time (submitted at the rate limit) are then polled in rounds twice as
//! far apart, each carrying twice the ids, and no answer waits more than `coalesce_ms`
//! past its due time for it. A job alone (nothing due soon after it) is not held, and a
//! full round goes out at once. Polling one id per request, each job is polled when due.
//!
//! Planning a round walks up to one batch of waiting jobs, and the driver asks for it
//! after every step ([`Engine::poll_timeout`]); the plan is kept in the lane's
//! [`PollQueue`] until a job due by the last time it looked at comes or goes.

use core::time::Duration;
use std::collections::BTreeSet;
use std::ops::RangeFrom;
use std::sync::atomic::{AtomicU64, Ordering};

use super::lane_id::LaneId;
use super::{Engine, JobId};
use crate::support::time::Timestamp;

/// No plan kept.
const NO_PLAN: u64 = u64::MAX;

/// The jobs of one lane waiting for their next poll, by due time, with the plan of the
/// next round kept between changes that could alter it.
#[derive(Debug)]
pub(crate) struct PollQueue {
    due: BTreeSet<(Timestamp, JobId)>,
    /// Waiting jobs whose answers cannot share a batch (`Engine::batchable`): while there
    /// are none, planning a round looks up no job.
    unbatchable: usize,
    /// The kept plan (ms; `NO_PLAN`: none), the batch size it was made for, and the latest
    /// due time it depends on: a job due by then coming or going drops it. Atomics rather
    /// than cells so that the engine stays `Sync` ([`Engine::poll_timeout`] takes `&self`);
    /// the engine is used from one thread at a time, so relaxed ordering is enough.
    plan: AtomicU64,
    plan_batch: AtomicU64,
    plan_horizon: AtomicU64,
}

impl Default for PollQueue {
    fn default() -> Self {
        PollQueue {
            due: BTreeSet::new(),
            unbatchable: 0,
            plan: AtomicU64::new(NO_PLAN),
            plan_batch: AtomicU64::new(0),
            plan_horizon: AtomicU64::new(0),
        }
    }
}

impl PollQueue {
    pub fn first(&self) -> Option<&(Timestamp, JobId)> {
        self.due.first()
    }

    pub fn iter(&self) -> impl Iterator<Item = &(Timestamp, JobId)> {
        self.due.iter()
    }

    pub fn range(&self, from: RangeFrom<(Timestamp, JobId)>) -> impl Iterator<Item = &(Timestamp, JobId)> {
        self.due.range(from)
    }

    /// Jobs waiting that cannot ride a batch.
    pub fn unbatchable(&self) -> usize {
        self.unbatchable
    }

    /// Adds a job due at `at`; `false` if it was there already.
    pub fn insert(&mut self, at: Timestamp, job: JobId, batchable: bool) -> bool {
        let added = self.due.insert((at, job));
        if added {
            self.unbatchable += usize::from(!batchable);
            self.changed(at);
        }
        added
    }

    /// Takes a job out; `false` if it was not there.
    pub fn remove(&mut self, entry: &(Timestamp, JobId), batchable: bool) -> bool {
        let removed = self.due.remove(entry);
        if removed {
            self.unbatchable = self.unbatchable.saturating_sub(usize::from(!batchable));
            self.changed(entry.0);
        }
        removed
    }

    /// Takes out the first job due; `batchable` tells of it.
    pub fn pop_first(&mut self, batchable: impl FnOnce(JobId) -> bool) -> Option<(Timestamp, JobId)> {
        let entry = self.due.pop_first()?;
        self.unbatchable = self.unbatchable.saturating_sub(usize::from(!batchable(entry.1)));
        self.changed(entry.0);
        Some(entry)
    }

    /// A job due at `at` came or went: the kept plan holds unless it looked that far.
    fn changed(&mut self, at: Timestamp) {
        if at.as_unix_millis() <= *self.plan_horizon.get_mut() {
            *self.plan.get_mut() = NO_PLAN;
        }
    }

    fn kept_plan(&self, batch: usize) -> Option<Timestamp> {
        let plan = self.plan.load(Ordering::Relaxed);
        (plan != NO_PLAN && self.plan_batch.load(Ordering::Relaxed) == batch as u64)
            .then(|| Timestamp::from_unix_millis(plan))
    }

    fn keep_plan(&self, batch: usize, at: Timestamp, horizon: Timestamp) {
        self.plan_batch.store(batch as u64, Ordering::Relaxed);
        self.plan_horizon.store(horizon.as_unix_millis(), Ordering::Relaxed);
        self.plan.store(at.as_unix_millis().min(NO_PLAN - 1), Ordering::Relaxed);
    }
}

impl Engine {
    /// Ids one poll request of lane `l` may carry (1: one task per request).
    pub(super) fn poll_batch(&self, l: LaneId) -> usize {
        let lane = &self.lanes[l];
        if lane.polls_in_batches() {
            lane.provider().max_batch().max(1)
        } else {
            1
        }
    }

    /// When lane `l`'s next poll request should go out (`None`: nothing to poll): when its
    /// first job is due, or later for a batched round that gains riders by waiting (see
    /// the module doc).
    pub(super) fn next_round_at(&self, l: LaneId) -> Option<Timestamp> {
        let queue = &self.lanes[l].poll_queue();
        let &first = queue.first()?;
        let batch = self.poll_batch(l);
        if let Some(at) = queue.kept_plan(batch) {
            return Some(at);
        }
        let (at, horizon) = self.plan_round(l, batch, first);
        queue.keep_plan(batch, at, horizon);
        Some(at)
    }

    /// The next round of lane `l`, whose first waiting job is `first`, and the latest due
    /// time the plan depends on.
    fn plan_round(&self, l: LaneId, batch: usize, (due, first): (Timestamp, JobId)) -> (Timestamp, Timestamp) {
        let lane = &self.lanes[l];
        let queue = &lane.poll_queue();
        let window = Duration::from_millis(lane.config().polling.coalesce_ms);
        // While every waiting job can ride, none is looked up.
        let all_ride = queue.unbatchable() == 0;
        let rides = |job: JobId| all_ride || self.batchable(job);
        if batch <= 1 || window.is_zero() || !rides(first) {
            return (due, due);
        }
        // Riders of a round sent at `due` are due by `due + window`; sent at `due + window`,
        // by `due + 2 window`.
        let (window_end, held_end) = (due.add(window), due.add(window * 2));
        let after_window = (window_end.add(Duration::from_millis(1)), JobId(0));
        let gains = queue.range(after_window..).take_while(|(at, _)| *at <= held_end).any(|(_, j)| rides(*j));
        if !gains {
            return (due, held_end);
        }
        // Full as soon as its last rider is within the window.
        let last_rider = queue.iter().take_while(|(at, _)| *at <= held_end).filter(|(_, j)| rides(*j)).nth(batch - 1);
        let at = match last_rider {
            Some(&(at, _)) => due.max(before(at, window)),
            None => window_end,
        };
        (at, held_end)
    }
}

/// `at - d`, not before the epoch.
fn before(at: Timestamp, d: Duration) -> Timestamp {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    Timestamp::from_unix_millis(at.as_unix_millis().saturating_sub(ms))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::EngineConfig;
    use crate::http::Secret;
    use crate::labels::Labels;
    use crate::provider::Provider;
    use crate::task::Task;

    /// The kept plan is always the plan a fresh look gives, whatever comes and goes.
    #[test]
    fn kept_plan_matches_a_fresh_plan() {
        let provider = Provider::preset("captchaai").expect("preset");
        let mut engine = Engine::new(provider, Secret::new("test-key-0123456789abcdef0123"), EngineConfig::default());
        let window = engine.lanes[LaneId::FIRST].config().polling.coalesce_ms;
        assert!(engine.poll_batch(LaneId::FIRST) > 1 && window > 0, "the preset polls in batched rounds");
        let mut rng = fastrand::Rng::with_seed(18);
        let mut waiting: Vec<(Timestamp, JobId, bool)> = Vec::new();
        let base = 1_000_000u64;
        for step in 0..5_000u64 {
            // Mostly inserts spread over a few windows, some removals, now and then the first.
            match rng.u8(..10) {
                0..=5 => {
                    let at = Timestamp::from_unix_millis(base + step / 4 + rng.u64(..window * 4));
                    let batchable = rng.u8(..20) != 0;
                    let task = if batchable {
                        json!({"type": "recaptcha_v2", "sitekey": "6Le-SITEKEY", "page_url": "https://example.com/"})
                    } else {
                        json!({"type": "image", "body": "aGVsbG8gd29ybGQ="})
                    };
                    let task = Task::from_json_value(task).expect("a valid task");
                    let job = engine.insert_job(step.to_string(), task, Labels::default(), at, 1);
                    assert_eq!(engine.batchable(job), batchable);
                    assert!(engine.lanes[LaneId::FIRST].poll_queue_mut().insert(at, job, batchable));
                    waiting.push((at, job, batchable));
                }
                6..=7 if !waiting.is_empty() => {
                    let (at, job, batchable) = waiting.swap_remove(rng.usize(..waiting.len()));
                    assert!(engine.lanes[LaneId::FIRST].poll_queue_mut().remove(&(at, job), batchable));
                }
                8 if !waiting.is_empty() => {
                    let first = engine.lanes[LaneId::FIRST].poll_queue().first().copied();
                    let popped = engine.lanes[LaneId::FIRST]
                        .poll_queue_mut()
                        .pop_first(|job| waiting.iter().find(|(_, j, _)| *j == job).is_some_and(|(_, _, b)| *b));
                    assert_eq!(popped, first);
                    waiting.retain(|(at, job, _)| Some((*at, *job)) != popped);
                }
                _ => {}
            }
            let unbatchable = waiting.iter().filter(|(_, _, b)| !b).count();
            assert_eq!(engine.lanes[LaneId::FIRST].poll_queue().unbatchable(), unbatchable);
            let fresh = engine.lanes[LaneId::FIRST]
                .poll_queue()
                .first()
                .map(|&first| engine.plan_round(LaneId::FIRST, engine.poll_batch(LaneId::FIRST), first).0);
            assert_eq!(engine.next_round_at(LaneId::FIRST), fresh, "step {step}");
            // Asked twice without a change, the kept plan answers.
            assert_eq!(engine.next_round_at(LaneId::FIRST), fresh, "step {step}, kept");
        }
    }
}
