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

use core::time::Duration;

use super::{Engine, JobId};
use crate::time::Timestamp;

impl Engine {
    /// Ids one poll request of lane `l` may carry (1: one task per request).
    pub(super) fn poll_batch(&self, l: usize) -> usize {
        let lane = &self.lanes[l];
        if lane.config.polling.batch && !lane.batch_disabled && lane.provider.supports_batch_poll() {
            lane.provider.max_batch().max(1)
        } else {
            1
        }
    }

    /// When lane `l`'s next poll request should go out (`None`: nothing to poll): when its
    /// first job is due, or later for a batched round that gains riders by waiting (see
    /// the module doc).
    pub(super) fn next_round_at(&self, l: usize) -> Option<Timestamp> {
        let lane = &self.lanes[l];
        let &(due, first) = lane.poll_queue.first()?;
        let batch = self.poll_batch(l);
        let window = Duration::from_millis(lane.config.polling.coalesce_ms);
        // While every waiting job can ride, none is looked up (this runs at each `poll_timeout`).
        let all_ride = lane.unbatchable_waiting == 0;
        let rides = |job: JobId| all_ride || self.batchable(job);
        if batch <= 1 || window.is_zero() || !rides(first) {
            return Some(due);
        }
        // Riders of a round sent at `due` are due by `due + window`; sent at `due + window`,
        // by `due + 2 window`.
        let (window_end, held_end) = (due.add(window), due.add(window * 2));
        let after_window = (window_end.add(Duration::from_millis(1)), JobId(0));
        let gains = lane.poll_queue.range(after_window..).take_while(|(at, _)| *at <= held_end).any(|(_, j)| rides(*j));
        if !gains {
            return Some(due);
        }
        // Full as soon as its last rider is within the window.
        let last_rider =
            lane.poll_queue.iter().take_while(|(at, _)| *at <= held_end).filter(|(_, j)| rides(*j)).nth(batch - 1);
        Some(match last_rider {
            Some(&(at, _)) => due.max(before(at, window)),
            None => window_end,
        })
    }
}

/// `at - d`, not before the epoch.
fn before(at: Timestamp, d: Duration) -> Timestamp {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    Timestamp::from_unix_millis(at.as_unix_millis().saturating_sub(ms))
}
