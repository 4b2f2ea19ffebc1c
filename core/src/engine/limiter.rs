//! Submission pacing and the in-flight window.
//!
//! Pacing keeps a theoretical schedule, in microseconds: each submit moves
//! the next slot forward by exactly `1/rate` from the previous *slot*, not
//! from the actual send, so a driver whose timers fire a little late (up to
//! one interval) keeps the configured rate instead of losing that lateness
//! on every submit (spacing from the actual send gave 86–90/s of 100/s). A
//! submit later than that (the window was full, the queue was empty)
//! restarts the schedule from now, so an idle period never becomes a burst.
//! On top, the last `ceil(rate)` submits are remembered, so that no
//! one-second window ever holds more, as configured.
//! The in-flight limit halves on `ERROR_NO_SLOT_AVAILABLE` and grows back by
//! one per accepted submission (AIMD, as TCP does with its window).

use std::collections::VecDeque;

use super::config::RateConfig;
use crate::support::time::Timestamp;

const SECOND_US: u64 = 1_000_000;

#[derive(Debug)]
pub(crate) struct Limiter {
    /// `1/rate`, in microseconds.
    interval_us: u64,
    /// The next slot, in microseconds since the epoch.
    next_us: u64,
    /// The times of the last `window_cap` submits, oldest first.
    recent: VecDeque<Timestamp>,
    /// Submits allowed in any one-second window (`rate`, at least one).
    window_cap: usize,
    max_in_flight: u32,
    limit: u32,
}

impl Limiter {
    pub(crate) fn new(config: &RateConfig) -> Self {
        let rate = config.submits_per_second;
        Limiter {
            interval_us: ((SECOND_US as f64) / rate).round().max(1.0) as u64,
            next_us: 0,
            recent: VecDeque::new(),
            window_cap: (rate.ceil() as usize).max(1),
            max_in_flight: config.max_in_flight,
            limit: config.max_in_flight,
        }
    }

    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// Whether a submission may go out now, with `in_flight` tasks already submitted.
    pub(crate) fn may_submit(&self, in_flight: usize, now: Timestamp) -> bool {
        in_flight < self.limit as usize && now >= self.next_submit_at()
    }

    /// The earliest time the next submission may go out.
    pub(crate) fn next_submit_at(&self) -> Timestamp {
        let paced = Timestamp::from_unix_millis(self.next_us.div_ceil(1000));
        let window = match self.recent.front() {
            Some(oldest) if self.recent.len() >= self.window_cap => {
                Timestamp::from_unix_millis(oldest.as_unix_millis().saturating_add(1000))
            }
            _ => Timestamp::EPOCH,
        };
        paced.max(window)
    }

    pub(crate) fn on_submit(&mut self, now: Timestamp) {
        let now_us = now.as_unix_millis().saturating_mul(1000);
        let on_schedule = now_us <= self.next_us.saturating_add(self.interval_us);
        let slot = if on_schedule { self.next_us } else { now_us };
        self.next_us = slot.saturating_add(self.interval_us);
        // Only the last second matters: the memory stays bounded by what a
        // second holds, however high the configured rate.
        let horizon = now.as_unix_millis().saturating_sub(1000);
        while self.recent.front().is_some_and(|t| t.as_unix_millis() <= horizon) || self.recent.len() >= self.window_cap
        {
            self.recent.pop_front();
        }
        self.recent.push_back(now);
    }

    /// The service has no free worker: halve the window. Returns the new limit if it changed.
    pub(crate) fn on_no_slot(&mut self) -> Option<u32> {
        let halved = (self.limit / 2).max(1);
        (halved != self.limit).then(|| {
            self.limit = halved;
            halved
        })
    }

    /// A caller asked for at least `ceiling` tasks at once: the maximum (and the current
    /// limit, unless the service asked us to back off) rise to it. Returns the new limit.
    pub(crate) fn raise_ceiling(&mut self, ceiling: u32) -> Option<u32> {
        if ceiling <= self.max_in_flight {
            return None;
        }
        let backed_off = self.limit < self.max_in_flight;
        self.max_in_flight = ceiling;
        (!backed_off).then(|| {
            self.limit = ceiling;
            ceiling
        })
    }

    /// A submission was accepted: grow by one up to the configured maximum.
    pub(crate) fn on_accepted(&mut self) -> Option<u32> {
        (self.limit < self.max_in_flight).then(|| {
            self.limit += 1;
            self.limit
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_and_grows_back() {
        let mut l = Limiter::new(&RateConfig { submits_per_second: 10.0, max_in_flight: 8 });
        assert_eq!(l.on_no_slot(), Some(4));
        assert_eq!(l.on_no_slot(), Some(2));
        assert_eq!(l.on_no_slot(), Some(1));
        assert_eq!(l.on_no_slot(), None, "never below one");
        assert!(!l.may_submit(1, Timestamp::from_unix_millis(10)));
        for expected in 2..=8 {
            assert_eq!(l.on_accepted(), Some(expected));
        }
        assert_eq!(l.on_accepted(), None, "never above the configured maximum");
    }

    #[test]
    fn a_caller_may_raise_the_ceiling_but_not_undo_a_back_off() {
        let mut l = Limiter::new(&RateConfig { submits_per_second: 10.0, max_in_flight: 100 });
        assert_eq!(l.raise_ceiling(50), None, "lower than the configured maximum: no change");
        assert_eq!(l.raise_ceiling(300), Some(300));
        assert!(l.may_submit(299, Timestamp::from_unix_millis(10)));
        assert_eq!(l.on_no_slot(), Some(150));
        assert_eq!(l.raise_ceiling(400), None, "a back-off stands; the limit grows back towards 400");
        assert_eq!(l.on_accepted(), Some(151));
    }

    /// Submits as a driver would: whenever allowed, but each wake-up `late_ms` late.
    fn run(rate: f64, late_ms: u64, until_ms: u64) -> Vec<u64> {
        let mut l = Limiter::new(&RateConfig { submits_per_second: rate, max_in_flight: 1_000_000 });
        let mut now = 1_000_000u64;
        let mut sent = Vec::new();
        while now < 1_000_000 + until_ms {
            let t = Timestamp::from_unix_millis(now);
            if l.may_submit(0, t) {
                l.on_submit(t);
                sent.push(now - 1_000_000);
            } else {
                now = l.next_submit_at().as_unix_millis().max(now + 1) + late_ms;
            }
        }
        sent
    }

    fn max_in_any_second(sent: &[u64]) -> usize {
        sent.iter().enumerate().map(|(i, t)| sent[i..].iter().take_while(|u| **u < t + 1000).count()).max().unwrap_or(0)
    }

    #[test]
    fn late_timers_do_not_lower_the_rate_and_no_second_exceeds_it() {
        for (rate, late_ms) in [(100.0, 0), (100.0, 1), (100.0, 3), (300.0, 1), (7.0, 10), (2.5, 5)] {
            let sent = run(rate, late_ms, 20_000);
            let achieved = sent.len() as f64 / 20.0;
            assert!(achieved >= rate * 0.97, "{rate}/s with timers {late_ms} ms late: {achieved}/s");
            assert!(max_in_any_second(&sent) <= rate.ceil() as usize, "{rate}/s: a second held more");
        }
    }

    #[test]
    fn an_idle_period_does_not_become_a_burst() {
        let mut l = Limiter::new(&RateConfig { submits_per_second: 10.0, max_in_flight: 100 });
        l.on_submit(Timestamp::from_unix_millis(1000));
        let later = Timestamp::from_unix_millis(60_000);
        assert!(l.may_submit(0, later));
        l.on_submit(later);
        assert!(!l.may_submit(0, later), "the schedule restarts from now");
        assert_eq!(l.next_submit_at(), Timestamp::from_unix_millis(60_100));
    }

    #[test]
    fn spaces_submissions() {
        let mut l = Limiter::new(&RateConfig { submits_per_second: 10.0, max_in_flight: 8 });
        let t = Timestamp::from_unix_millis(1000);
        assert!(l.may_submit(0, t));
        l.on_submit(t);
        assert!(!l.may_submit(0, Timestamp::from_unix_millis(1099)));
        assert!(l.may_submit(0, Timestamp::from_unix_millis(1100)));
    }
}
