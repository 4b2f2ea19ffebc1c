//! Deduplication and rate limiting per (kind, subject), with time as an argument.
//!
//! A key quiet until now opens with its first event and is sent `gather` later, with every
//! event of it meanwhile counted in that one message (so a burst is one message with its
//! count, and the first message still arrives promptly). After a message, the key's events
//! for `coalesce` are held and sent together, as one message with their count, when that
//! window ends; a window without events closes the key, and the next event opens it again.

use core::time::Duration;
use std::collections::HashMap;

use crate::options::alerts::AlertKind;
use captcha_dlq_core::Timestamp;

use super::trigger::Candidate;

/// One message to send: the latest candidate of its key and how many were coalesced into it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Message {
    pub latest: Candidate,
    pub count: u64,
    pub first_at: Timestamp,
    pub last_at: Timestamp,
}

struct Pending {
    latest: Candidate,
    count: u64,
    first_at: Timestamp,
    /// When the key is next looked at: the end of the gathering, or of the window.
    due: Timestamp,
    /// Whether the key's first message is still gathering.
    gathering: bool,
}

pub(crate) struct Coalescer {
    gather: Duration,
    coalesce: Duration,
    keys: HashMap<(AlertKind, String), Pending>,
}

impl Coalescer {
    pub(crate) fn new(gather: Duration, coalesce: Duration) -> Coalescer {
        Coalescer { gather, coalesce, keys: HashMap::new() }
    }

    pub(crate) fn add(&mut self, candidate: Candidate) {
        let key = (candidate.kind, candidate.subject.clone());
        let at = candidate.at;
        match self.keys.get_mut(&key) {
            Some(p) if candidate.only_counts && !p.gathering => {}
            Some(p) => {
                if p.count == 0 {
                    p.first_at = at;
                }
                p.count += 1;
                p.latest = candidate;
            }
            None if candidate.only_counts => {}
            None => {
                let due = at.add(self.gather);
                self.keys.insert(key, Pending { latest: candidate, count: 1, first_at: at, due, gathering: true });
            }
        }
    }

    /// When [`due`](Self::due) next has something to do.
    pub(crate) fn next_due(&self) -> Option<Timestamp> {
        self.keys.values().map(|p| p.due).min()
    }

    /// The messages due at `now`.
    pub(crate) fn due(&mut self, now: Timestamp) -> Vec<Message> {
        let mut out = Vec::new();
        let coalesce = self.coalesce;
        self.keys.retain(|_, p| {
            if p.due > now {
                return true;
            }
            if p.count == 0 {
                return false;
            }
            out.push(Message { latest: p.latest.clone(), count: p.count, first_at: p.first_at, last_at: p.latest.at });
            p.count = 0;
            p.gathering = false;
            p.due = now.add(coalesce);
            true
        });
        out
    }

    /// Every message held, at once (the client is closing).
    pub(crate) fn flush(&mut self) -> Vec<Message> {
        self.keys
            .drain()
            .filter(|(_, p)| p.count > 0)
            .map(|(_, p)| Message { first_at: p.first_at, last_at: p.latest.at, count: p.count, latest: p.latest })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_unix_millis(ms)
    }

    fn c(kind: AlertKind, subject: &str, ms: u64, only_counts: bool) -> Candidate {
        Candidate { kind, subject: subject.into(), summary: String::new(), details: json!({}), at: at(ms), only_counts }
    }

    #[test]
    fn a_burst_is_one_prompt_message_then_one_per_window() {
        let mut q = Coalescer::new(Duration::from_millis(500), Duration::from_secs(60));
        for i in 0..1000 {
            q.add(c(AlertKind::DeadLetterRate, "", i / 10, false));
        }
        q.add(c(AlertKind::NewReason, "ERROR_X", 0, false));
        assert_eq!(q.next_due(), Some(at(500)));
        assert!(q.due(at(499)).is_empty());
        let first = q.due(at(500));
        assert_eq!(first.len(), 2);
        let rate = first.iter().find(|m| m.latest.kind == AlertKind::DeadLetterRate).unwrap();
        assert_eq!((rate.count, rate.first_at, rate.last_at), (1000, at(0), at(99)));
        q.add(c(AlertKind::DeadLetterRate, "", 1_000, false));
        q.add(c(AlertKind::DeadLetterRate, "", 2_000, false));
        assert!(q.due(at(59_000)).is_empty(), "held for the window");
        let held = q.due(at(60_500));
        assert_eq!((held.len(), held[0].count, held[0].first_at), (1, 2, at(1_000)));
        assert!(q.due(at(120_500)).is_empty(), "a quiet window closes the key");
        assert_eq!(q.next_due(), None);
    }

    #[test]
    fn repeats_count_only_while_the_first_message_gathers() {
        let mut q = Coalescer::new(Duration::from_millis(500), Duration::from_secs(60));
        q.add(c(AlertKind::NewReason, "R", 0, true));
        assert_eq!(q.next_due(), None, "a repeat starts nothing");
        q.add(c(AlertKind::NewReason, "R", 0, false));
        q.add(c(AlertKind::NewReason, "R", 100, true));
        assert_eq!(q.due(at(500))[0].count, 2);
        q.add(c(AlertKind::NewReason, "R", 600, true));
        assert!(q.flush().is_empty(), "after the first message a repeat is not news");
    }
}
