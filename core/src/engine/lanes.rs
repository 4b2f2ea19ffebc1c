//! How the engine names its providers: [`LaneId`] (one lane, by its place in the
//! configuration), [`LaneSet`] (a set of lanes, one bit each) and [`Lanes`] (the lanes
//! themselves, in configuration order, indexed by id).
//!
//! A lane's id is its index among the configured providers; it never changes while the engine
//! lives (lanes are neither added nor removed). The public API (`FleetSync::lane`,
//! `Engine::fleet_synced`) keeps the bare index, which [`Lanes::id`] checks on the way in.

use core::ops::{Index, IndexMut};

use super::lane::{Lane, MAX_LANES};

/// One lane of an engine, by its place in the configuration order.
///
/// Calling contract: made by [`Lanes`] (its [`ids`](Lanes::ids), [`id`](Lanes::id) and
/// [`named`](Lanes::named)) or as [`LaneId::FIRST`], so it always names a lane of the engine
/// that made it; [`LaneId::at`] is for positions already known to be lanes (routing's
/// candidates, which are the lanes in order).
///
/// A `u32`: a lane is below [`MAX_LANES`], which a [`LaneSet`]'s `u32` holds, and the narrow
/// index keeps a job's routing state small.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct LaneId(u32);

impl LaneId {
    /// The first configured lane (the only one of a single-provider engine).
    pub(crate) const FIRST: LaneId = LaneId(0);

    /// The lane at `index` in the configuration order (the caller knows there is one).
    pub(crate) fn at(index: usize) -> LaneId {
        debug_assert!(index < MAX_LANES, "lane {index} of at most {MAX_LANES}");
        LaneId(index as u32)
    }

    /// Its place in the configuration order (the public API's lane number).
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// A set of lanes (one bit each: at most [`MAX_LANES`], which fits).
///
/// Calling contract: a plain value; [`insert`](Self::insert) adds a lane,
/// [`contains`](Self::contains) asks, [`len`](Self::len) counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LaneSet(u32);

const _: () = assert!(MAX_LANES <= u32::BITS as usize, "a LaneSet holds every lane in one u32");

impl LaneSet {
    /// No lane.
    pub(crate) const EMPTY: LaneSet = LaneSet(0);

    pub(crate) fn insert(&mut self, lane: LaneId) {
        self.0 |= 1 << lane.0;
    }

    pub(crate) fn contains(self, lane: LaneId) -> bool {
        self.0 & (1 << lane.0) != 0
    }

    /// How many lanes are in it.
    pub(crate) fn len(self) -> usize {
        self.0.count_ones() as usize
    }
}

/// The engine's lanes, in configuration order, indexed by [`LaneId`].
///
/// Calling contract: built once with the engine (never empty, at most [`MAX_LANES`]); index it
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
