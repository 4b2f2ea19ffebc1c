//! The alert worker's memory of what it was told: which reasons it has seen, and how many dead
//! letters arrived in the last minute. From a [`Signal`] it makes the alerts to send (none, one
//! or two: a dead letter may both be of a new reason and pass the rate).
//!
//! "First" for a reason means: not among the reasons of the records in the DLQ when the client
//! started (the seed), nor seen by this client since. A reason that was purged from the DLQ
//! and comes back after a restart is therefore new again; one still in the DLQ is not.

use core::time::Duration;
use std::collections::{HashSet, VecDeque};

use crate::options::alerts::AlertKind;
use captcha_dlq_core::support::float_text::float_text;
use captcha_dlq_core::Timestamp;
use serde_json::{json, Value};

use super::signal::Signal;

/// The window of the dead-letter rate.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// One alert, before it is coalesced with others of its (kind, subject).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Candidate {
    pub kind: AlertKind,
    /// What it is about (a reason, a provider); empty for the client as a whole.
    pub subject: String,
    pub summary: String,
    pub details: Value,
    pub at: Timestamp,
    /// Adds to a message of its (kind, subject) still gathering, never starts one: a dead
    /// letter of a reason seen a moment ago counts in that reason's first message.
    pub only_counts: bool,
}

pub(crate) struct Trigger {
    dead_letters_per_minute: u64,
    seen_reasons: HashSet<String>,
    recent_dead_letters: VecDeque<Timestamp>,
}

impl Trigger {
    pub(crate) fn new(dead_letters_per_minute: u64) -> Trigger {
        Trigger { dead_letters_per_minute, seen_reasons: HashSet::new(), recent_dead_letters: VecDeque::new() }
    }

    /// Reasons already in the DLQ, which are not new.
    pub(crate) fn seed(&mut self, reasons: impl IntoIterator<Item = String>) {
        self.seen_reasons.extend(reasons);
    }

    /// The alerts `signal` makes.
    pub(crate) fn observe(&mut self, signal: Signal) -> Vec<Candidate> {
        match signal {
            Signal::DeadLettered { reason, at } => {
                let mut out = Vec::new();
                while self.recent_dead_letters.front().is_some_and(|t| at.since(*t) >= RATE_WINDOW) {
                    self.recent_dead_letters.pop_front();
                }
                self.recent_dead_letters.push_back(at);
                let per_minute = self.recent_dead_letters.len() as u64;
                if per_minute > self.dead_letters_per_minute {
                    out.push(Candidate {
                        kind: AlertKind::DeadLetterRate,
                        subject: String::new(),
                        summary: format!(
                            "{per_minute} dead letters in the last minute (alert above {})",
                            self.dead_letters_per_minute
                        ),
                        details: json!({"per_minute": per_minute, "threshold": self.dead_letters_per_minute}),
                        at,
                        only_counts: false,
                    });
                }
                // Every dead letter of a reason feeds its `new_reason` key: the coalescer
                // counts it only while that reason's first message is gathering.
                let new = self.seen_reasons.insert(reason.clone());
                out.push(Candidate {
                    kind: AlertKind::NewReason,
                    summary: format!("dead letters with a reason not seen before: {reason}"),
                    details: json!({"reason": reason}),
                    subject: reason,
                    at,
                    only_counts: !new,
                });
                out
            }
            Signal::AccountError { provider, code, at } => vec![Candidate {
                kind: AlertKind::AccountError,
                subject: format!("{}{code}", provider_prefix(&provider)),
                summary: format!("{}account error {code}: submissions stopped", provider_prefix(&provider)),
                details: json!({"provider": provider, "code": code}),
                at,
                only_counts: false,
            }],
            Signal::CircuitOpen { provider, cause, at } => vec![Candidate {
                kind: AlertKind::CircuitOpen,
                subject: provider.clone().unwrap_or_default(),
                summary: format!("{}circuit opened: {cause}", provider_prefix(&provider)),
                details: json!({"provider": provider, "cause": cause}),
                at,
                only_counts: false,
            }],
            Signal::StoreGaveUp { what, error, at } => vec![Candidate {
                kind: AlertKind::StoreGaveUp,
                subject: String::new(),
                summary: format!("the DLQ store gave up a write ({what}): {error}"),
                details: json!({"what": what, "error": error}),
                at,
                only_counts: false,
            }],
            Signal::Budget { spent, budget, fraction, at } => vec![Candidate {
                kind: AlertKind::Budget,
                subject: float_text(fraction),
                summary: format!(
                    "spent {} of the budget of {} (alert at {}%)",
                    float_text(spent),
                    float_text(budget),
                    float_text(fraction * 100.0)
                ),
                details: json!({"spent": spent, "budget": budget, "fraction": fraction}),
                at,
                only_counts: false,
            }],
        }
    }
}

fn provider_prefix(provider: &Option<String>) -> String {
    provider.as_ref().map_or_else(String::new, |p| format!("{p}: "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dead(reason: &str, ms: u64) -> Signal {
        Signal::DeadLettered { reason: reason.into(), at: Timestamp::from_unix_millis(ms) }
    }

    #[test]
    fn a_reason_is_new_once_and_the_rate_counts_the_last_minute() {
        let mut t = Trigger::new(2);
        t.seed(["ERROR_OLD".to_string()]);
        let new = |c: &[Candidate]| c.iter().any(|c| c.kind == AlertKind::NewReason && !c.only_counts);
        let rate = |c: &[Candidate]| c.iter().any(|c| c.kind == AlertKind::DeadLetterRate);
        assert!(!new(&t.observe(dead("ERROR_OLD", 0))), "seeded from the DLQ");
        let first = t.observe(dead("ERROR_X", 1));
        assert!(new(&first) && !rate(&first));
        let third = t.observe(dead("ERROR_X", 2));
        assert!(!new(&third) && rate(&third), "3 in a minute is above 2");
        assert!(!rate(&t.observe(dead("ERROR_X", 120_000))), "the minute moved on");
    }
}
