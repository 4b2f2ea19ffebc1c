//! How the engine names its providers: [`LaneId`] (one lane, by its place in the
//! configuration) and [`LaneSet`] (a set of lanes, one bit each). Plain values that every part
//! of the engine passes around, kept apart from the lanes themselves (`lanes.rs`) so that naming
//! a lane imports nothing of what a lane holds.
//!
//! A lane's id is its index among the configured providers; it never changes while the engine
//! lives (lanes are neither added nor removed).

/// Most providers in one client.
pub const MAX_LANES: usize = 16;

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
