//! Where a task goes: [`Route`], its lane and what routing must respect for it.

use crate::engine::lane_id::{LaneId, LaneSet};
use crate::engine::routing::Preference;
use crate::support::time::Timestamp;

/// A task's place among the providers: the lane it waits at, is submitted to or last ran at;
/// its own routing (the `routing` label); the lanes that cannot take it and those that failed
/// it; a lane that may still be working on it (the pin); whether it was sent elsewhere to
/// measure a lane.
///
/// Calling contract: made when the engine takes the task ([`new`](Self::new), or the
/// default for a task every lane takes under the client's routing); placement moves it
/// ([`place`](Self::place)) and the answers of its providers mark it
/// ([`pin_to`](Self::pin_to), [`unpin`](Self::unpin), [`avoid`](Self::avoid),
/// [`mark_unsupported`](Self::mark_unsupported)). It decides nothing: `placement` reads it.
#[derive(Clone, Debug, Default)]
pub(in crate::engine) struct Route {
    lane: Option<LaneId>,
    preference: Preference,
    /// Lanes that cannot take it.
    unsupported: LaneSet,
    /// Lanes that answered a task-terminal error for it (avoided by routing).
    avoid: LaneSet,
    /// A lane that may still be working on it and until when: it is sent nowhere else before.
    pin: Option<(LaneId, Timestamp)>,
    /// Sent to another lane than the fastest to measure it (left there by rebalancing).
    explored: bool,
}

impl Route {
    /// A task `unsupported` lanes cannot take, routed by `preference`.
    pub(in crate::engine) fn new(unsupported: LaneSet, preference: Preference) -> Route {
        Route { unsupported, preference, ..Route::default() }
    }

    /// The lane it waits at, is submitted to, or last ran at.
    pub(in crate::engine) fn lane(&self) -> Option<LaneId> {
        self.lane
    }

    /// It waits at (or resumes at) `lane` now.
    pub(in crate::engine) fn place(&mut self, lane: Option<LaneId>) {
        self.lane = lane;
    }

    pub(in crate::engine) fn preference(&self) -> Preference {
        self.preference
    }

    /// Whether `lane` cannot take it (its request cannot be built, or its service refused it).
    pub(in crate::engine) fn unsupported_at(&self, lane: LaneId) -> bool {
        self.unsupported.contains(lane)
    }

    /// `lane`'s service refused the task's kind.
    pub(in crate::engine) fn mark_unsupported(&mut self, lane: LaneId) {
        self.unsupported.insert(lane);
    }

    pub(in crate::engine) fn avoids(&self, lane: LaneId) -> bool {
        self.avoid.contains(lane)
    }

    /// `lane` answered a task-terminal error for it: routing avoids it.
    pub(in crate::engine) fn avoid(&mut self, lane: LaneId) {
        self.avoid.insert(lane);
    }

    pub(in crate::engine) fn pin(&self) -> Option<(LaneId, Timestamp)> {
        self.pin
    }

    /// `lane` may be working on it until `until`.
    pub(in crate::engine) fn pin_to(&mut self, lane: LaneId, until: Timestamp) {
        self.pin = Some((lane, until));
    }

    /// Its provider answered for it: no lane works on it any more.
    pub(in crate::engine) fn unpin(&mut self) {
        self.pin = None;
    }

    pub(in crate::engine) fn explored(&self) -> bool {
        self.explored
    }

    pub(in crate::engine) fn set_explored(&mut self, explored: bool) {
        self.explored = explored;
    }
}
