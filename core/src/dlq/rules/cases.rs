//! The case table of the store rules: inputs and the verdict every backend must reach.
//!
//! One table for all: `the_rules_answer_every_case_of_the_table` runs it against the pure
//! functions of [`super`], and `dlq::rule_cases` (feature `testkit`) runs it against a store
//! through its public calls — the table store, SQLite and Redis's Lua scripts alike. Times are
//! seconds after a fixed instant; `None` for no lease.

use super::{
    after_abandon, holds_lease, journal_claim_allowed, journal_write_allowed, lease_eligible, on_delivery,
    push_keeps_lease, pushed_state, settles_as, visible_state, Abandoned, Delivery, EntryEnd,
};
use crate::class::reason;
use crate::dlq::record::RecordState::{self, Leased, Parked, Ready};
use crate::dlq::store::Settlement;

/// Lease eligibility and the state a record shows: the record as stored (`stored`, with a lease
/// ending `lease_until` seconds in), looked at `now` seconds in.
#[derive(Clone, Copy, Debug)]
pub struct LeaseCase {
    pub stored: RecordState,
    pub lease_until: Option<u64>,
    pub now: u64,
    /// Its id has a journal entry.
    pub replaying: bool,
    pub visible: RecordState,
    pub eligible: bool,
}

const fn lease(
    stored: RecordState,
    lease_until: Option<u64>,
    now: u64,
    replaying: bool,
    visible: RecordState,
    eligible: bool,
) -> LeaseCase {
    LeaseCase { stored, lease_until, now, replaying, visible, eligible }
}

pub const LEASE_CASES: &[LeaseCase] = &[
    lease(Ready, None, 0, false, Ready, true),
    lease(Ready, None, 0, true, Ready, false),
    lease(Leased, Some(30), 0, false, Leased, false),
    lease(Leased, Some(30), 29, false, Leased, false),
    // A lease ends at its last instant: at `lease_until` the record is ready again.
    lease(Leased, Some(30), 30, false, Ready, true),
    lease(Leased, Some(30), 31, false, Ready, true),
    lease(Leased, Some(30), 31, true, Ready, false),
    lease(Parked, None, 0, false, Parked, false),
    lease(Parked, None, 0, true, Parked, false),
];

/// `receive` of an eligible record delivered `deliveries` times, under the limit `max`.
#[derive(Clone, Copy, Debug)]
pub struct DeliveryCase {
    pub deliveries: u32,
    pub max: u32,
    pub verdict: Delivery,
}

const fn delivery(deliveries: u32, max: u32, verdict: Delivery) -> DeliveryCase {
    DeliveryCase { deliveries, max, verdict }
}

pub const DELIVERY_CASES: &[DeliveryCase] = &[
    delivery(0, 1, Delivery::Deliver { deliveries: 1 }),
    delivery(1, 1, Delivery::Park),
    delivery(0, 3, Delivery::Deliver { deliveries: 1 }),
    delivery(2, 3, Delivery::Deliver { deliveries: 3 }),
    delivery(3, 3, Delivery::Park),
    // A count above the limit (the limit was lowered since) parks too.
    delivery(5, 3, Delivery::Park),
    delivery(9, 10, Delivery::Deliver { deliveries: 10 }),
    delivery(10, 10, Delivery::Park),
];

/// `abandon` of a record delivered `deliveries` times (this lease included), under the limit
/// `max`, the replayer asking to park it with `asked_park` or not.
#[derive(Clone, Copy, Debug)]
pub struct AbandonCase {
    pub deliveries: u32,
    pub max: u32,
    pub asked_park: Option<&'static str>,
    pub verdict: Abandoned<'static>,
}

const fn abandon(
    deliveries: u32,
    max: u32,
    asked_park: Option<&'static str>,
    verdict: Abandoned<'static>,
) -> AbandonCase {
    AbandonCase { deliveries, max, asked_park, verdict }
}

const AT_LIMIT: Abandoned<'static> = Abandoned::Parked(reason::MAX_DELIVERY_COUNT_EXCEEDED);

pub const ABANDON_CASES: &[AbandonCase] = &[
    abandon(1, 3, None, Abandoned::Ready),
    abandon(2, 3, None, Abandoned::Ready),
    abandon(3, 3, None, AT_LIMIT),
    abandon(1, 1, None, AT_LIMIT),
    abandon(1, 3, Some("needs a person"), Abandoned::Parked("needs a person")),
    // The replayer's reason wins over the limit's.
    abandon(3, 3, Some("needs a person"), Abandoned::Parked("needs a person")),
];

/// A push of a record in state `pushed` over a record of the same id under a live lease.
#[derive(Clone, Copy, Debug)]
pub struct PushCase {
    pub pushed: RecordState,
    pub stored: RecordState,
    pub keeps_lease: bool,
}

pub const PUSH_CASES: &[PushCase] = &[
    PushCase { pushed: Ready, stored: Ready, keeps_lease: true },
    PushCase { pushed: Leased, stored: Ready, keeps_lease: true },
    PushCase { pushed: Parked, stored: Parked, keeps_lease: false },
];

/// A journal write by `writer` (`journal_update` when `must_exist`, else `journal_upsert`) while
/// the store holds `held` (`None`: no entry; `Some(owner)`).
#[derive(Clone, Copy, Debug)]
pub struct JournalWriteCase {
    pub held: Option<Option<&'static str>>,
    pub writer: Option<&'static str>,
    pub must_exist: bool,
    pub allowed: bool,
}

const fn write(
    held: Option<Option<&'static str>>,
    writer: Option<&'static str>,
    must_exist: bool,
    allowed: bool,
) -> JournalWriteCase {
    JournalWriteCase { held, writer, must_exist, allowed }
}

pub const JOURNAL_WRITE_CASES: &[JournalWriteCase] = &[
    write(None, None, false, true),
    write(None, Some("a"), false, true),
    write(None, None, true, false),
    write(None, Some("a"), true, false),
    write(Some(None), None, false, true),
    write(Some(None), None, true, true),
    write(Some(None), Some("a"), false, false),
    write(Some(Some("a")), Some("a"), false, true),
    write(Some(Some("a")), Some("a"), true, true),
    write(Some(Some("a")), Some("b"), false, false),
    write(Some(Some("a")), Some("b"), true, false),
    write(Some(Some("a")), None, false, false),
];

/// `journal_claim(id, from, to)` while the store holds `held`.
#[derive(Clone, Copy, Debug)]
pub struct ClaimCase {
    pub held: Option<Option<&'static str>>,
    pub from: Option<&'static str>,
    pub to: Option<&'static str>,
    pub allowed: bool,
}

const fn claim(
    held: Option<Option<&'static str>>,
    from: Option<&'static str>,
    to: Option<&'static str>,
    allowed: bool,
) -> ClaimCase {
    ClaimCase { held, from, to, allowed }
}

pub const CLAIM_CASES: &[ClaimCase] = &[
    claim(None, None, Some("b"), false),
    claim(Some(None), None, Some("b"), true),
    claim(Some(None), Some("a"), Some("b"), false),
    claim(Some(Some("a")), Some("a"), Some("b"), true),
    claim(Some(Some("a")), Some("a"), None, true),
    claim(Some(Some("a")), None, Some("b"), false),
    claim(Some(Some("a")), Some("b"), Some("c"), false),
];

/// A journal entry with a task key ending by `end`: its key is then settled as `settled`.
#[derive(Clone, Copy, Debug)]
pub struct SettleCase {
    pub end: EntryEnd,
    pub settled: Option<Settlement>,
}

pub const SETTLE_CASES: &[SettleCase] = &[
    SettleCase { end: EntryEnd::Pushed, settled: Some(Settlement::DeadLettered) },
    SettleCase { end: EntryEnd::Forgotten, settled: Some(Settlement::Solved) },
    SettleCase { end: EntryEnd::Abandoned, settled: None },
];

/// Whether a token still holds a record stored as `stored` with the lease nonce `nonce`. Not
/// in the store-driven table: nonces are the store's own (`dlq::rule_cases` checks a token
/// after a park and after a redelivery instead).
#[derive(Clone, Copy, Debug)]
pub struct HoldCase {
    pub stored: RecordState,
    pub nonce: Option<&'static str>,
    pub token: &'static str,
    pub holds: bool,
}

pub const HOLD_CASES: &[HoldCase] = &[
    HoldCase { stored: Leased, nonce: Some("1.1"), token: "1.1", holds: true },
    // An expired lease still holds until the record is delivered again.
    HoldCase { stored: Ready, nonce: Some("1.1"), token: "1.1", holds: true },
    HoldCase { stored: Leased, nonce: Some("2.2"), token: "1.1", holds: false },
    HoldCase { stored: Ready, nonce: None, token: "1.1", holds: false },
    HoldCase { stored: Parked, nonce: Some("1.1"), token: "1.1", holds: false },
];

/// How many cases the table holds.
pub fn count() -> usize {
    LEASE_CASES.len()
        + DELIVERY_CASES.len()
        + ABANDON_CASES.len()
        + PUSH_CASES.len()
        + JOURNAL_WRITE_CASES.len()
        + CLAIM_CASES.len()
        + SETTLE_CASES.len()
        + HOLD_CASES.len()
}

/// Every case the pure functions answer otherwise than the table, described (none: they agree).
pub fn failures_of_the_rules() -> Vec<String> {
    use crate::support::time::Timestamp;
    let secs = |s: u64| Timestamp::from_unix_millis(s * 1000);
    let mut out = Vec::new();
    let mut check = |ok: bool, case: &dyn core::fmt::Debug| {
        if !ok {
            out.push(format!("{case:?}"));
        }
    };
    for c in LEASE_CASES {
        let (until, now) = (c.lease_until.map(secs), secs(c.now));
        check(visible_state(c.stored, until, now) == c.visible, c);
        check(lease_eligible(c.stored, until, now, c.replaying) == c.eligible, c);
    }
    for c in DELIVERY_CASES {
        check(on_delivery(c.deliveries, c.max) == c.verdict, c);
    }
    for c in ABANDON_CASES {
        check(after_abandon(c.deliveries, c.max, c.asked_park) == c.verdict, c);
    }
    for c in PUSH_CASES {
        check(pushed_state(c.pushed) == c.stored && push_keeps_lease(c.pushed) == c.keeps_lease, c);
    }
    for c in JOURNAL_WRITE_CASES {
        check(journal_write_allowed(c.held, c.writer, c.must_exist) == c.allowed, c);
    }
    for c in CLAIM_CASES {
        check(journal_claim_allowed(c.held, c.from) == c.allowed, c);
    }
    for c in SETTLE_CASES {
        check(settles_as(c.end) == c.settled, c);
    }
    for c in HOLD_CASES {
        check(holds_lease(c.stored, c.nonce, c.token) == c.holds, c);
    }
    out
}
