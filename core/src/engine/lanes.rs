//! The engine's lanes themselves ([`Lanes`]), in configuration order, indexed by [`LaneId`]
//! (`lane_id.rs`). The public API (`FleetSync::lane`,
//! `Engine::fleet_synced`) keeps the bare index, which [`Lanes::id`] checks on the way in.

use core::ops::{Index, IndexMut};

use super::lane::Lane;
use super::lane_id::LaneId;

/// The engine's lanes, in configuration order, indexed by [`LaneId`].
///
/// Calling contract: built once with the engine (never empty, at most [`MAX_LANES`](super::lane_id::MAX_LANES)); index it
/// with ids it gave out. [`ids`](Self::ids) borrows nothing, so the engine may change itself
/// while it walks them.
#[derive(Debug)]
pub(crate) struct Lanes(Vec<Lane>);

impl Lanes {
    pub(crate) fn new(lanes: Vec<Lane>) -> Lanes {
        Lanes(lanes)
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Every lane's id, in order (a copy: nothing stays borrowed).
    pub(crate) fn ids(&self) -> impl Iterator<Item = LaneId> {
        (0..self.0.len()).map(LaneId::at)
    }

    /// The lane numbered `index` by the public API, if there is one.
    pub(crate) fn id(&self, index: usize) -> Option<LaneId> {
        (index < self.0.len()).then(|| LaneId::at(index))
    }

    /// The lane named `name`.
    pub(crate) fn named(&self, name: &str) -> Option<LaneId> {
        self.0.iter().position(|l| l.name() == name).map(LaneId::at)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Lane> {
        self.0.iter()
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Lane> {
        self.0.iter_mut()
    }

    /// Each lane with its id, in order.
    pub(crate) fn with_ids(&self) -> impl Iterator<Item = (LaneId, &Lane)> {
        self.0.iter().enumerate().map(|(i, lane)| (LaneId::at(i), lane))
    }
}

impl Index<LaneId> for Lanes {
    type Output = Lane;

    fn index(&self, lane: LaneId) -> &Lane {
        &self.0[lane.index()]
    }
}

impl IndexMut<LaneId> for Lanes {
    fn index_mut(&mut self, lane: LaneId) -> &mut Lane {
        &mut self.0[lane.index()]
    }
}
