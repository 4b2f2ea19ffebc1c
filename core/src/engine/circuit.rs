//! Circuit breaker (resilience4j/Polly shape) over request outcomes.
//!
//! Two causes open it. A failure ratio over a sliding window of transient
//! failures opens it for `break_ms`, then one probe request is let through
//! (half-open). An account error opens it for submissions until the
//! application resets it: a wrong key or an empty balance does not heal by
//! waiting, and every submission would be charged nothing but refused.

use std::collections::VecDeque;

use super::config::CircuitConfig;
use crate::class::Failure;
use crate::support::time::Timestamp;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum State {
    Closed,
    Open { until: Timestamp },
    HalfOpen { probe_in_flight: bool },
}

#[derive(Debug)]
pub(crate) struct Circuit {
    config: CircuitConfig,
    state: State,
    /// `true` = failure, newest last.
    window: VecDeque<bool>,
    account: Option<Failure>,
}

/// What changed, for the engine to report as an event.
#[derive(Debug, PartialEq)]
pub(crate) enum Transition {
    Opened { until: Timestamp },
    HalfOpened,
    Closed,
}

impl Circuit {
    pub(crate) fn new(config: CircuitConfig) -> Self {
        Circuit { config, state: State::Closed, window: VecDeque::new(), account: None }
    }

    pub(crate) fn account_failure(&self) -> Option<&Failure> {
        self.account.as_ref()
    }

    pub(crate) fn open_for_account(&mut self, failure: Failure) {
        self.account.get_or_insert(failure);
    }

    pub(crate) fn reset_account(&mut self) {
        self.account = None;
    }

    /// Moves an expired open state to half-open.
    pub(crate) fn tick(&mut self, now: Timestamp) -> Option<Transition> {
        match self.state {
            State::Open { until } if now >= until => {
                self.state = State::HalfOpen { probe_in_flight: false };
                Some(Transition::HalfOpened)
            }
            _ => None,
        }
    }

    /// Whether a request may be sent now (call `on_send` if it is).
    pub(crate) fn allows_request(&self) -> bool {
        match self.state {
            State::Closed => true,
            State::Open { .. } => false,
            State::HalfOpen { probe_in_flight } => !probe_in_flight,
        }
    }

    pub(crate) fn on_send(&mut self) {
        if let State::HalfOpen { probe_in_flight } = &mut self.state {
            *probe_in_flight = true;
        }
    }

    /// When an open circuit will let a probe through.
    pub(crate) fn reopens_at(&self) -> Option<Timestamp> {
        match self.state {
            State::Open { until } => Some(until),
            _ => None,
        }
    }

    /// Records the outcome of one request: `failed` for transient failures.
    pub(crate) fn record(&mut self, failed: bool, now: Timestamp) -> Option<Transition> {
        match self.state {
            State::HalfOpen { .. } => {
                if failed {
                    self.open(now)
                } else {
                    self.state = State::Closed;
                    self.window.clear();
                    Some(Transition::Closed)
                }
            }
            // Answers to requests sent before the circuit opened change nothing.
            State::Open { .. } => None,
            State::Closed => {
                self.window.push_back(failed);
                while self.window.len() > self.config.window as usize {
                    self.window.pop_front();
                }
                let calls = self.window.len();
                let failures = self.window.iter().filter(|f| **f).count();
                if calls >= self.config.min_calls as usize
                    && failed
                    && failures as f64 >= self.config.failure_ratio * calls as f64
                {
                    self.open(now)
                } else {
                    None
                }
            }
        }
    }

    /// Opens the circuit now (the provider cannot be reached), or keeps it open; returns when
    /// it lets a probe through.
    pub(crate) fn open_until(&mut self, now: Timestamp) -> Timestamp {
        match self.state {
            State::Open { until } => until,
            _ => {
                let until = now.add(core::time::Duration::from_millis(self.config.break_ms));
                self.state = State::Open { until };
                self.window.clear();
                until
            }
        }
    }

    /// Whether the circuit is open right now (not half-open).
    pub(crate) fn is_open(&self) -> bool {
        matches!(self.state, State::Open { .. })
    }

    /// Whether one probe decides if the circuit closes again.
    pub(crate) fn is_half_open(&self) -> bool {
        matches!(self.state, State::HalfOpen { .. })
    }

    fn open(&mut self, now: Timestamp) -> Option<Transition> {
        let until = now.add(core::time::Duration::from_millis(self.config.break_ms));
        self.state = State::Open { until };
        self.window.clear();
        Some(Transition::Opened { until })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> CircuitConfig {
        CircuitConfig { window: 10, min_calls: 4, failure_ratio: 0.5, break_ms: 1000, ..CircuitConfig::default() }
    }

    #[test]
    fn opens_on_failure_ratio_then_probes_once_and_closes() {
        let mut c = Circuit::new(cfg());
        let t0 = Timestamp::from_unix_millis(1_000_000);
        assert_eq!(c.record(false, t0), None);
        assert_eq!(c.record(true, t0), None);
        assert_eq!(c.record(false, t0), None);
        // 2 of 4 failed: ratio reached with enough calls.
        assert_eq!(c.record(true, t0), Some(Transition::Opened { until: t0.add(core::time::Duration::from_secs(1)) }));
        assert!(!c.allows_request());
        assert_eq!(c.tick(t0.add(core::time::Duration::from_millis(999))), None);
        assert_eq!(c.tick(t0.add(core::time::Duration::from_secs(1))), Some(Transition::HalfOpened));
        assert!(c.allows_request());
        c.on_send();
        assert!(!c.allows_request(), "only one probe while half-open");
        assert_eq!(c.record(false, t0), Some(Transition::Closed));
        assert!(c.allows_request());
    }

    #[test]
    fn failed_probe_opens_again() {
        let mut c = Circuit::new(cfg());
        let t0 = Timestamp::from_unix_millis(5);
        for _ in 0..4 {
            c.record(true, t0);
        }
        c.tick(t0.add(core::time::Duration::from_secs(2)));
        c.on_send();
        assert!(matches!(c.record(true, t0), Some(Transition::Opened { .. })));
    }

    #[test]
    fn successes_keep_it_closed() {
        let mut c = Circuit::new(cfg());
        let t0 = Timestamp::from_unix_millis(5);
        for i in 0..100 {
            assert_eq!(c.record(i % 4 == 0, t0), None, "25% failures must not open a 50% breaker");
        }
    }
}
