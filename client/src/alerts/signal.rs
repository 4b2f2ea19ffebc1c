//! The engine's and the driver's events an alert may come from, taken on the solve path: the
//! [`AlertTap`] picks the few that matter, decides the budget threshold (it is handed the spend
//! the engine's budget counts) and hands them to the alert worker through a bounded queue,
//! never waiting: a full queue drops the alert, counts it and says so in the log.

use std::sync::Arc;

use captcha_dlq_core::{Event, Timestamp};
use futures::channel::mpsc;

use crate::ops_metrics::OpsCounters;

/// What the worker is told.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Signal {
    DeadLettered {
        reason: String,
        at: Timestamp,
    },
    /// An account error stopped submissions at a provider (a hold, or the circuit opened for it).
    AccountError {
        provider: Option<String>,
        code: String,
        at: Timestamp,
    },
    /// A circuit opened for failures or an unreachable provider.
    CircuitOpen {
        provider: Option<String>,
        cause: String,
        at: Timestamp,
    },
    StoreGaveUp {
        what: String,
        error: String,
        at: Timestamp,
    },
    Budget {
        spent: f64,
        budget: f64,
        fraction: f64,
        at: Timestamp,
    },
}

impl Signal {
    /// The signal an event gives, if any. The engine decides what an account error and an
    /// opening circuit are; this only names them: a circuit opened without an end (`until`) is
    /// the one an account error opens (`stop_for_account`), the others end after `break_ms`.
    pub(crate) fn of(event: &Event, at: Timestamp) -> Option<Signal> {
        match event {
            Event::DeadLettered { reason, .. } => Some(Signal::DeadLettered { reason: reason.clone(), at }),
            Event::AccountHold { code, provider, .. } => {
                Some(Signal::AccountError { provider: provider.clone(), code: code.clone(), at })
            }
            Event::CircuitOpened { cause, until: None, provider } => {
                Some(Signal::AccountError { provider: provider.clone(), code: cause.clone(), at })
            }
            Event::CircuitOpened { cause, until: Some(_), provider } => {
                Some(Signal::CircuitOpen { provider: provider.clone(), cause: cause.clone(), at })
            }
            Event::StoreGaveUp { what, error } => {
                Some(Signal::StoreGaveUp { what: what.clone(), error: error.clone(), at })
            }
            _ => None,
        }
    }
}

/// The driver's end of the alert queue.
pub(crate) struct AlertTap {
    queue: mpsc::Sender<Signal>,
    counters: Arc<OpsCounters>,
    budget_fraction: f64,
    budget_reached: bool,
    /// Whether alerts are being dropped right now (logged once per episode, counted each time).
    dropping: bool,
}

impl AlertTap {
    pub(crate) fn new(queue: mpsc::Sender<Signal>, counters: Arc<OpsCounters>, budget_fraction: f64) -> AlertTap {
        AlertTap { queue, counters, budget_fraction, budget_reached: false, dropping: false }
    }

    pub(crate) fn event(&mut self, event: &Event, now: Timestamp) {
        if let Some(signal) = Signal::of(event, now) {
            self.send(signal);
        }
    }

    /// Whether the budget threshold is still to be watched (it is sent once per client).
    pub(crate) fn watches_budget(&self) -> bool {
        !self.budget_reached
    }

    /// What the engine's budget counts as spent, and the budget, after a task was solved.
    pub(crate) fn spent(&mut self, used: Option<(f64, f64)>, now: Timestamp) {
        let Some((spent, budget)) = used else { return };
        if !self.budget_reached && spent >= budget * self.budget_fraction {
            self.budget_reached = true;
            self.send(Signal::Budget { spent, budget, fraction: self.budget_fraction, at: now });
        }
    }

    fn send(&mut self, signal: Signal) {
        match self.queue.try_send(signal) {
            Ok(()) => self.dropping = false,
            Err(e) if e.is_full() => {
                self.counters.alert_dropped();
                if !self.dropping {
                    self.dropping = true;
                    tracing::warn!(target: "captcha_dlq", "the alert queue is full: alerts are dropped (counted in captcha_dlq_alerts_dropped_total) until it drains");
                }
            }
            // The worker is gone (the client is closing): nothing is waiting for alerts.
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use captcha_dlq_core::{ErrorClass, JobId};

    #[test]
    fn the_engine_names_account_errors_and_openings_and_a_full_queue_drops_and_counts() {
        let at = Timestamp::from_unix_millis(1);
        let account = Event::CircuitOpened { cause: "ERROR_KEY_DOES_NOT_EXIST".into(), until: None, provider: None };
        assert!(matches!(Signal::of(&account, at), Some(Signal::AccountError { .. })));
        let failures =
            Event::CircuitOpened { cause: "transient failure ratio".into(), until: Some(at), provider: None };
        assert!(matches!(Signal::of(&failures, at), Some(Signal::CircuitOpen { .. })));
        assert_eq!(Signal::of(&Event::Polled { tasks: 1, jobs: Vec::new() }, at), None);
        let (tx, _rx) = mpsc::channel(0);
        let counters = Arc::new(OpsCounters::default());
        let mut tap = AlertTap::new(tx, counters.clone(), 0.5);
        let dead = Event::DeadLettered {
            job: JobId(1),
            id: "r".into(),
            reason: "ERROR_CAPTCHA_UNSOLVABLE".into(),
            class: ErrorClass::TaskTerminal,
            attempts: 1,
        };
        for _ in 0..3 {
            tap.event(&dead, at);
        }
        assert_eq!(counters.snapshot().alerts_dropped, 2, "a queue of one holds the first");
        tap.spent(Some((0.4, 1.0)), at);
        assert!(tap.watches_budget());
        tap.spent(Some((0.5, 1.0)), at);
        assert!(!tap.watches_budget());
    }
}
