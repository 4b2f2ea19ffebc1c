//! Whether a lane's provider can be reached: [`Reachability`].

use crate::class::Failure;
use crate::support::time::Timestamp;

/// What a lane knows of its provider's reachability: whether it ever answered, the transport
/// failures in a row, why it is found unreachable (while it is) and how often it was, and
/// whether a reachability check is out.
///
/// Calling contract: every answer is reported ([`heard_from`](Self::heard_from)) and every
/// transport failure ([`transport_failed`](Self::transport_failed), time as an argument); the
/// engine decides when that makes the provider unreachable
/// ([`found_unreachable`](Self::found_unreachable)) and reachable again.
#[derive(Debug, Default)]
pub(in crate::engine) struct Reachability {
    /// Whether the provider ever answered (any HTTP status) since this engine started.
    answered: bool,
    /// Transport failures in a row with no answer in between: (first at, count).
    streak: Option<(Timestamp, u32)>,
    /// Set while the circuit is open because the provider cannot be reached; tasks that would
    /// wait for it are dead-lettered with this failure instead (class transient: replayable).
    unreachable: Option<Failure>,
    /// Times the provider was found unreachable since this engine started.
    episodes: u32,
    /// A reachability check (balance request) is out while the circuit is half-open.
    pinging: bool,
}

impl Reachability {
    pub(in crate::engine) fn heard_from(&mut self) {
        self.answered = true;
        self.streak = None;
    }

    /// A transport failure: the streak's start and length, this one included.
    pub(in crate::engine) fn transport_failed(&mut self, now: Timestamp) -> (Timestamp, u32) {
        let (since, count) = self.streak.map_or((now, 1), |(since, n)| (since, n + 1));
        self.streak = Some((since, count));
        (since, count)
    }

    pub(in crate::engine) fn ever_answered(&self) -> bool {
        self.answered
    }

    pub(in crate::engine) fn unreachable(&self) -> Option<&Failure> {
        self.unreachable.as_ref()
    }

    pub(in crate::engine) fn found_unreachable(&mut self, failure: Failure) {
        self.unreachable = Some(failure);
        self.episodes += 1;
    }

    pub(in crate::engine) fn reachable_again(&mut self) -> Option<Failure> {
        self.unreachable.take()
    }

    pub(in crate::engine) fn episodes(&self) -> u32 {
        self.episodes
    }

    pub(in crate::engine) fn pinging(&self) -> bool {
        self.pinging
    }

    pub(in crate::engine) fn set_pinging(&mut self, out: bool) {
        self.pinging = out;
    }
}
