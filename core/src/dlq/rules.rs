//! The store rules, written once as pure functions: what every [`DlqStore`] backend decides
//! about leases, delivery counts, parking and the replay journal's fence (issue 47).
//!
//! The table store ([`TableStore`]: memory, IndexedDB, host stores) and SQLite call these
//! functions. Where SQLite keeps a rule as a `WHERE` filter (so one statement does the work
//! inside the writer's group commit), the function here is the documented source and a test
//! checks the filter against it. Redis keeps its rules in Lua, so that each operation stays one
//! atomic script; `dlq::rule_cases` (feature `testkit`) runs the case table of [`cases`] against
//! a store through its public calls, so the same table checks the pure functions and every
//! backend, Lua included. A change of contract touches a rule and its cases.
//!
//! [`DlqStore`]: crate::dlq::DlqStore
//! [`TableStore`]: crate::dlq::TableStore

use crate::class::reason;
use crate::dlq::record::{DeadLetterRecord, RecordState};
use crate::dlq::store::Settlement;
use crate::support::time::Timestamp;

/// Whether a lease ending at `lease_until` is still live at `now`: a lease is live while
/// `now < lease_until`, and ends at its last instant.
pub fn lease_live(lease_until: Option<Timestamp>, now: Timestamp) -> bool {
    lease_until.is_some_and(|until| now < until)
}

/// The state a record shows at `now`, from the state stored with it and its lease: parked
/// stays parked; a live lease shows as leased; anything else (an expired lease too) is ready.
pub fn visible_state(stored: RecordState, lease_until: Option<Timestamp>, now: Timestamp) -> RecordState {
    if stored == RecordState::Parked {
        RecordState::Parked
    } else if lease_live(lease_until, now) {
        RecordState::Leased
    } else {
        RecordState::Ready
    }
}

/// Whether `receive` may hand the record out at `now` (or park it at the delivery limit): not
/// parked, not under a live lease, and not being replayed (`replaying`: its id has a journal
/// entry; `recover` finishes such a record, not a second replayer).
pub fn lease_eligible(stored: RecordState, lease_until: Option<Timestamp>, now: Timestamp, replaying: bool) -> bool {
    !replaying && visible_state(stored, lease_until, now) == RecordState::Ready
}

/// Whether a lease token (its nonce) still holds the record: the record is not parked and its
/// lease nonce is the token's. An expired lease still holds until the record is delivered again.
pub fn holds_lease(stored: RecordState, lease_nonce: Option<&str>, token_nonce: &str) -> bool {
    stored != RecordState::Parked && lease_nonce == Some(token_nonce)
}

/// What `receive` does with an eligible record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Lease it; the record has then been delivered `deliveries` times.
    Deliver { deliveries: u32 },
    /// Park it with [`reason::MAX_DELIVERY_COUNT_EXCEEDED`]: its last allowed delivery is spent
    /// (its last lease expired without an abandon).
    Park,
}

/// The delivery rule: a record delivered `deliveries` times already is delivered once more
/// while under the limit `max_deliveries`, else parked. No record is delivered more than
/// `max_deliveries` times.
pub fn on_delivery(deliveries: u32, max_deliveries: u32) -> Delivery {
    if deliveries >= max_deliveries {
        Delivery::Park
    } else {
        Delivery::Deliver { deliveries: deliveries + 1 }
    }
}

/// Reason recorded when a replayer parks a record without naming a reason.
pub const PARKED_BY_REPLAYER: &str = "ParkedByReplayer";

/// A record given back with `abandon` together with the caller's edit, as every store keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReturnedRecord {
    /// The edited record under the lease token's id, stored as ready with no parked reason: the
    /// store decides where it goes with [`after_abandon`] and keeps its own delivery count.
    pub record: DeadLetterRecord,
    /// The replayer's own ask to park it, with its reason ([`PARKED_BY_REPLAYER`] when the edit
    /// parks the record without naming one).
    pub asked_park: Option<String>,
}

/// The abandon-edit rule: the lease token names the record (an edit cannot move it to another
/// id), and an edit whose state is parked is the replayer's ask to park, not a state to store.
pub fn returned_record(token_id: &str, mut edit: DeadLetterRecord) -> ReturnedRecord {
    edit.id = token_id.to_string();
    let asked_park = (edit.state == RecordState::Parked)
        .then(|| edit.parked_reason.take().unwrap_or_else(|| PARKED_BY_REPLAYER.to_string()));
    edit.state = RecordState::Ready;
    edit.parked_reason = None;
    ReturnedRecord { record: edit, asked_park }
}

/// Where an abandoned record goes: back to ready, or parked with the reason given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abandoned<'a> {
    Ready,
    Parked(&'a str),
}

/// The abandon rule: the replayer's own ask to park (`asked_park`, with its reason) wins;
/// otherwise a record whose `deliveries` (the store's count, this lease's included) reached
/// `max_deliveries` is parked with [`reason::MAX_DELIVERY_COUNT_EXCEEDED`]; otherwise it is
/// ready again.
pub fn after_abandon(deliveries: u32, max_deliveries: u32, asked_park: Option<&str>) -> Abandoned<'_> {
    match asked_park {
        Some(why) => Abandoned::Parked(why),
        None if deliveries >= max_deliveries => Abandoned::Parked(reason::MAX_DELIVERY_COUNT_EXCEEDED),
        None => Abandoned::Ready,
    }
}

/// The state a pushed record is stored with: a lease is the store's bookkeeping, not something
/// a caller can push, so `leased` is stored as `ready`.
pub fn pushed_state(given: RecordState) -> RecordState {
    match given {
        RecordState::Leased => RecordState::Ready,
        other => other,
    }
}

/// The parked reason a pushed record is stored with: a parked record always says why it waits
/// ([`PARKED_BY_REPLAYER`] when the pusher named nothing, as for a replayer's park); a record in
/// any other state has none.
pub fn pushed_parked_reason(state: RecordState, given: Option<String>) -> Option<String> {
    (pushed_state(state) == RecordState::Parked).then(|| given.unwrap_or_else(|| PARKED_BY_REPLAYER.to_string()))
}

/// Whether a push that replaces a record keeps the old record's lease: yes (the record is not
/// handed to a second replayer), unless the pushed record is parked, which cancels the lease.
pub fn push_keeps_lease(pushed: RecordState) -> bool {
    pushed_state(pushed) != RecordState::Parked
}

/// The journal's fence for `journal_upsert` (`must_exist` false) and `journal_update` (true):
/// whether `writer` may write the entry when the store holds `held` (`None`: no entry;
/// `Some(owner)`: an entry owned by `owner`, `None` for no owner). An entry another owner
/// holds is never overwritten; `journal_update` of an entry that is gone writes nothing.
pub fn journal_write_allowed(held: Option<Option<&str>>, writer: Option<&str>, must_exist: bool) -> bool {
    match held {
        Some(owner) => owner == writer,
        None => !must_exist,
    }
}

/// `journal_claim`'s compare-and-set: the entry (`held` as for [`journal_write_allowed`]) moves
/// to a new owner only if it exists and its owner is still `from`.
pub fn journal_claim_allowed(held: Option<Option<&str>>, from: Option<&str>) -> bool {
    held == Some(from)
}

/// How a replay's journal entry ends: the store call that removes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryEnd {
    /// `push` of a record with the entry's id: the replay failed into the DLQ.
    Pushed,
    /// `journal_forget`: the task was solved and its answer handed over.
    Forgotten,
    /// `abandon` of the record's lease: the replay failed and the record is back in the DLQ
    /// (ready or parked), to be replayed again.
    Abandoned,
}

/// What the entry's task key (if it has one) is settled as when the entry ends so: settle on
/// push as dead-lettered (at the record's `dead_lettered_at`), on forget as solved (at the
/// call's `now`); an abandon settles nothing, since the record may still be replayed and solved.
pub fn settles_as(end: EntryEnd) -> Option<Settlement> {
    match end {
        EntryEnd::Pushed => Some(Settlement::DeadLettered),
        EntryEnd::Forgotten => Some(Settlement::Solved),
        EntryEnd::Abandoned => None,
    }
}

pub mod cases;

#[cfg(test)]
mod tests {
    use super::{cases, returned_record, ReturnedRecord, PARKED_BY_REPLAYER};
    use crate::dlq::record::RecordState;
    use crate::dlq::testkit::sample_record;

    /// An edit is kept under the token's id as ready; its parked state becomes the ask to park.
    #[test]
    fn an_abandon_edit_is_kept_under_the_token_as_ready() {
        let ready = returned_record("held", sample_record("other", 1));
        assert_eq!(ready.record.id, "held");
        assert_eq!((ready.record.state, ready.asked_park), (RecordState::Ready, None));

        let mut parked = sample_record("held", 1);
        parked.state = RecordState::Parked;
        let unnamed = returned_record("held", parked.clone());
        assert_eq!(unnamed.asked_park.as_deref(), Some(PARKED_BY_REPLAYER));
        parked.parked_reason = Some("wrong sitekey".into());
        let ReturnedRecord { record, asked_park } = returned_record("held", parked);
        assert_eq!(asked_park.as_deref(), Some("wrong sitekey"));
        assert_eq!((record.state, record.parked_reason), (RecordState::Ready, None));
    }

    /// A parked push keeps its reason or gets the replayer's; other states keep none.
    #[test]
    fn a_pushed_parked_record_always_says_why() {
        use super::pushed_parked_reason as reason_of;
        assert_eq!(reason_of(RecordState::Parked, Some("NeedsReview".into())).as_deref(), Some("NeedsReview"));
        assert_eq!(reason_of(RecordState::Parked, None).as_deref(), Some(PARKED_BY_REPLAYER));
        assert_eq!(reason_of(RecordState::Ready, Some("stale".into())), None);
        assert_eq!(reason_of(RecordState::Leased, Some("stale".into())), None);
    }

    /// Every case of the table, against the pure functions: the table and the rules agree.
    #[test]
    fn the_rules_answer_every_case_of_the_table() {
        assert_eq!(cases::failures_of_the_rules(), Vec::<String>::new());
        let sizes = [
            cases::LEASE_CASES.len(),
            cases::DELIVERY_CASES.len(),
            cases::ABANDON_CASES.len(),
            cases::PUSH_CASES.len(),
            cases::JOURNAL_WRITE_CASES.len(),
            cases::CLAIM_CASES.len(),
            cases::SETTLE_CASES.len(),
            cases::HOLD_CASES.len(),
        ];
        assert!(sizes.iter().all(|&n| n > 0), "every rule has cases: {sizes:?}");
        assert_eq!(sizes.iter().sum::<usize>(), cases::count());
    }
}
