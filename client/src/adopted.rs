//! What adoption hands out: the adopted answer a host's hook gets, the hook's type, and the
//! counts a client keeps of its adoption (see `adopt.rs` for how entries are adopted).

use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::answer::Answer;
use crate::runtime::BoxFuture;

/// An answer this client adopted from a dead fleet member, as its `on_adopted` hook gets it: an
/// [`Answer`] with the task's record id (the same id the dead owner's caller knew), the fields
/// of a recovered answer (hosts build the object `recover` yields from it).
pub type AdoptedAnswer = Answer;

/// A host's hook for adopted answers. Called once per answer; the answer's journal entry goes
/// once the returned future gives `Ok`. `Err` (the hook raised) means it did not take the
/// answer: the entry is released for `recover`, the error logged.
#[cfg(feature = "send")]
pub type AdoptedHook = Arc<dyn Fn(AdoptedAnswer) -> BoxFuture<'static, Result<(), String>> + Send + Sync>;
#[cfg(not(feature = "send"))]
pub type AdoptedHook = Arc<dyn Fn(AdoptedAnswer) -> BoxFuture<'static, Result<(), String>>>;

/// What this client's adoption did since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AdoptionStats {
    /// Whether adoption runs (a fleet ledger, `fleet.enabled` and `fleet.adopt`).
    pub enabled: bool,
    /// Rounds run (each reads the ledger's view).
    pub rounds: u64,
    /// Entries this client claimed from dead owners.
    pub claimed: u64,
    /// Entries another taker claimed first (the claim found another owner).
    pub lost_races: u64,
    /// Answers its `on_adopted` hook took.
    pub handed_to_hook: u64,
    /// Answers written into their entry and released for `recover`.
    pub released: u64,
    /// Adopted tasks that ended in the DLQ.
    pub dead_lettered: u64,
}

pub(crate) type SharedStats = Arc<Mutex<AdoptionStats>>;
