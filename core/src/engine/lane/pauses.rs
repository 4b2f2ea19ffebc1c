//! Pauses a provider asked a lane for, and whether it polls in batches: [`Pauses`],
//! [`BatchPolling`].

use crate::engine::event::PauseScope;
use crate::support::time::Timestamp;

/// Until when a lane's submissions and polls are paused (the epoch: not paused).
///
/// Calling contract: [`pause`](Self::pause) only ever extends a pause; time is an argument.
#[derive(Debug)]
pub(in crate::engine) struct Pauses {
    submits_until: Timestamp,
    polls_until: Timestamp,
}

impl Default for Pauses {
    fn default() -> Self {
        Pauses { submits_until: Timestamp::EPOCH, polls_until: Timestamp::EPOCH }
    }
}

impl Pauses {
    pub(in crate::engine) fn until(&self, scope: PauseScope) -> Timestamp {
        match scope {
            PauseScope::Submits => self.submits_until,
            PauseScope::Polls => self.polls_until,
        }
    }

    /// Pauses `scope` until `until`, unless it is paused longer already; whether it was extended.
    pub(in crate::engine) fn pause(&mut self, scope: PauseScope, until: Timestamp) -> bool {
        let slot = match scope {
            PauseScope::Submits => &mut self.submits_until,
            PauseScope::Polls => &mut self.polls_until,
        };
        let extended = until > *slot;
        *slot = (*slot).max(until);
        extended
    }
}

/// Whether a lane still polls in batches: given up after garbled batch answers in a row.
///
/// Calling contract: each batch answer is reported, sensible ([`answered`](Self::answered))
/// or garbled ([`garbled`](Self::garbled)); once given up, it stays given up.
#[derive(Debug, Default)]
pub(in crate::engine) struct BatchPolling {
    disabled: bool,
    /// Garbled answers to batch polls in a row; one can be a truncated transfer, several mean
    /// the provider does not support `ids=`.
    garbled_in_a_row: u32,
}

impl BatchPolling {
    /// Whether batches were given up on.
    pub(in crate::engine) fn given_up(&self) -> bool {
        self.disabled
    }

    pub(in crate::engine) fn answered(&mut self) {
        self.garbled_in_a_row = 0;
    }

    /// A garbled answer; whether, `limit` in a row, batches are given up now.
    pub(in crate::engine) fn garbled(&mut self, limit: u32) -> bool {
        self.garbled_in_a_row += 1;
        if self.garbled_in_a_row >= limit && !self.disabled {
            self.disabled = true;
            return true;
        }
        false
    }
}
