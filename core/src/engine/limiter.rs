//! Submission pacing: a minimum spacing between submits and an in-flight
//! limit that halves on `ERROR_NO_SLOT_AVAILABLE` and grows back by one per
//! accepted submission (AIMD, as TCP does with its window).

use core::time::Duration;

use super::config::RateConfig;
use crate::time::Timestamp;

#[derive(Debug)]
pub(crate) struct Limiter {
    spacing: Duration,
    max_in_flight: u32,
    limit: u32,
    next_submit_at: Timestamp,
}

impl Limiter {
    pub(crate) fn new(config: &RateConfig) -> Self {
        let spacing = Duration::from_secs_f64(1.0 / config.submits_per_second);
        Limiter {
            spacing,
            max_in_flight: config.max_in_flight,
            limit: config.max_in_flight,
            next_submit_at: Timestamp::EPOCH,
        }
    }

    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// Whether a submission may go out now, with `in_flight` tasks already submitted.
    pub(crate) fn may_submit(&self, in_flight: usize, now: Timestamp) -> bool {
        in_flight < self.limit as usize && now >= self.next_submit_at
    }

    pub(crate) fn next_submit_at(&self) -> Timestamp {
        self.next_submit_at
    }

    pub(crate) fn on_submit(&mut self, now: Timestamp) {
        self.next_submit_at = now.add(self.spacing);
    }

    /// The service has no free worker: halve the window. Returns the new limit if it changed.
    pub(crate) fn on_no_slot(&mut self) -> Option<u32> {
        let halved = (self.limit / 2).max(1);
        (halved != self.limit).then(|| {
            self.limit = halved;
            halved
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
    fn spaces_submissions() {
        let mut l = Limiter::new(&RateConfig { submits_per_second: 10.0, max_in_flight: 8 });
        let t = Timestamp::from_unix_millis(1000);
        assert!(l.may_submit(0, t));
        l.on_submit(t);
        assert!(!l.may_submit(0, Timestamp::from_unix_millis(1099)));
        assert!(l.may_submit(0, Timestamp::from_unix_millis(1100)));
    }
}
