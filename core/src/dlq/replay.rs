//! Replay policy: which dead-lettered records may be tried again, how often,
//! and when one is given up on and parked for an operator (the seeds'
//! "decide which failures retry automatically and which wait for review";
//! "6+ failures means the parameters are wrong").
//!
//! The policy only decides; the drivers receive records from a store, ask
//! [`ReplayPolicy::decide`], run the replays and tally a [`ReplayReport`].

use core::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::class::{reason, ErrorClass};
use crate::dlq::record::{DeadLetterRecord, RecordState};
use crate::dlq::store::Filter;
use crate::error::ConfigError;
use crate::support::json_read::{deserialize_from_json, read_fields, FieldError, Fields, FromJson};

/// How the DLQ is replayed. Unknown fields are rejected when deserializing, so a
/// misspelt setting is an error rather than silently ignored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplayPolicy {
    /// Classes replayed without an operator asking: the failure may well not
    /// happen again (default: transient, retry_after, task_terminal). The
    /// others (fix_input, account_terminal, cancelled, application) wait for
    /// review and are replayed only when asked for explicitly.
    pub auto_classes: Vec<ErrorClass>,
    /// A record whose task has had this many provider attempts in total is
    /// parked instead of replayed, even when asked for explicitly.
    pub park_after_attempts: u32,
    /// Provider attempts granted to one replay (capped so that the total never
    /// goes past `park_after_attempts`).
    pub replay_attempts: u32,
    /// How long a replayer holds a received record before another may take it.
    pub lease_seconds: u64,
}

impl Default for ReplayPolicy {
    fn default() -> Self {
        ReplayPolicy {
            auto_classes: vec![ErrorClass::Transient, ErrorClass::RetryAfter, ErrorClass::TaskTerminal],
            park_after_attempts: 6,
            replay_attempts: 2,
            lease_seconds: 600,
        }
    }
}

/// What to do with one record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ReplayDecision {
    /// Submit the task again with at most this many provider attempts.
    Replay { attempts_allowed: u32 },
    /// Give up on it: park it for review with this reason.
    Park { reason: String },
    /// Leave it where it is (return the lease untouched by this replay).
    Skip { why: String },
}

impl ReplayPolicy {
    pub fn lease(&self) -> Duration {
        Duration::from_secs(self.lease_seconds)
    }

    /// Rejects settings under which nothing could ever be replayed or leased.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.park_after_attempts == 0 {
            return Err(ConfigError::new("park_after_attempts", "must be at least 1"));
        }
        if self.replay_attempts == 0 {
            return Err(ConfigError::new("replay_attempts", "must be at least 1"));
        }
        if self.lease_seconds == 0 {
            return Err(ConfigError::new("lease_seconds", "must be at least 1"));
        }
        Ok(())
    }

    pub fn is_auto(&self, class: ErrorClass) -> bool {
        self.auto_classes.contains(&class)
    }

    /// Decides for `record`. `explicit` means an operator asked for these records
    /// (by reason or id), so review classes are replayed too; the attempt cap
    /// applies either way.
    pub fn decide(&self, record: &DeadLetterRecord, explicit: bool) -> ReplayDecision {
        if record.state == RecordState::Parked {
            let why = record.parked_reason.as_deref().unwrap_or("no reason recorded");
            return ReplayDecision::Skip { why: format!("parked for review ({why}); unpark it first") };
        }
        if record.attempts >= self.park_after_attempts {
            return ReplayDecision::Park { reason: reason::MAX_DELIVERY_COUNT_EXCEEDED.to_string() };
        }
        if !explicit && !self.is_auto(record.class) {
            return ReplayDecision::Skip {
                why: format!("class {} waits for operator review; replay it by reason or id", record.class),
            };
        }
        let attempts_allowed = self.replay_attempts.min(self.park_after_attempts - record.attempts);
        if attempts_allowed == 0 {
            return ReplayDecision::Skip { why: "the policy grants no attempts to a replay".to_string() };
        }
        ReplayDecision::Replay { attempts_allowed }
    }

    /// The record a failed replay returns to the DLQ as (`abandon` with it): its new
    /// attempts and history, the delivery count of the lease it came from, and parked
    /// with `MaxDeliveryCountExceeded` once its task has had `park_after_attempts`
    /// provider attempts in all (the seeds' "6+ failures means the parameters are wrong").
    pub fn settle(&self, leased: &DeadLetterRecord, mut failed: DeadLetterRecord) -> DeadLetterRecord {
        failed.deliveries = leased.deliveries;
        if failed.attempts >= self.park_after_attempts {
            failed.state = RecordState::Parked;
            failed.parked_reason = Some(reason::MAX_DELIVERY_COUNT_EXCEEDED.to_string());
        }
        failed
    }

    /// The filter selecting the records replayed automatically, or `None` when
    /// no class is (an empty class list in a [`Filter`] would match everything).
    pub fn auto_filter(&self) -> Option<Filter> {
        (!self.auto_classes.is_empty()).then(|| Filter { classes: self.auto_classes.clone(), ..Filter::default() })
    }
}

/// What one replay run did, for the drivers to report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(default)]
pub struct ReplayReport {
    /// Records leased from the store.
    pub received: u64,
    /// Records submitted again.
    pub retried: u64,
    /// Retried records that were solved (and completed in the store).
    pub recovered: u64,
    /// Retried records that failed again (and went back to the store).
    pub failed_again: u64,
    /// Records parked, by the policy or by the store's delivery limit.
    pub parked: u64,
    /// Records left alone (review classes, already parked).
    pub skipped: u64,
}

impl ReplayReport {
    /// Adds the counts of `other` (a report from another batch).
    pub fn merge(&mut self, other: &ReplayReport) {
        self.received += other.received;
        self.retried += other.retried;
        self.recovered += other.recovered;
        self.failed_again += other.failed_again;
        self.parked += other.parked;
        self.skipped += other.skipped;
    }

    /// Counts a decision taken for a received record.
    pub fn count_decision(&mut self, decision: &ReplayDecision) {
        match decision {
            ReplayDecision::Replay { .. } => self.retried += 1,
            ReplayDecision::Park { .. } => self.parked += 1,
            ReplayDecision::Skip { .. } => self.skipped += 1,
        }
    }
}

/// Every field may be left out; unknown fields are refused.
impl FromJson for ReplayPolicy {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let d = ReplayPolicy::default();
        let mut f = Fields::new(value)?;
        let policy = ReplayPolicy {
            auto_classes: f.or("auto_classes", d.auto_classes)?,
            park_after_attempts: f.or("park_after_attempts", d.park_after_attempts)?,
            replay_attempts: f.or("replay_attempts", d.replay_attempts)?,
            lease_seconds: f.or("lease_seconds", d.lease_seconds)?,
        };
        f.finish()?;
        Ok(policy)
    }
}

/// Tagged by `decision`; unknown fields are ignored.
impl FromJson for ReplayDecision {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(match f.tag("decision", &["replay", "park", "skip"])? {
            0 => ReplayDecision::Replay { attempts_allowed: f.req("attempts_allowed")? },
            1 => ReplayDecision::Park { reason: f.req("reason")? },
            _ => ReplayDecision::Skip { why: f.req("why")? },
        })
    }
}

read_fields!(
    /// Every field may be left out; unknown fields are ignored.
    ReplayReport, open, received: or_default, retried: or_default, recovered: or_default, failed_again: or_default,
    parked: or_default, skipped: or_default
);

deserialize_from_json!(ReplayPolicy, ReplayDecision, ReplayReport);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlq::testkit::sample_record;

    fn record(class: ErrorClass, attempts: u32) -> DeadLetterRecord {
        let mut r = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0);
        r.class = class;
        r.attempts = attempts;
        r
    }

    #[test]
    fn defaults_follow_the_seeds() {
        let p = ReplayPolicy::default();
        assert_eq!(p.park_after_attempts, 6);
        assert_eq!(p.replay_attempts, 2);
        assert_eq!(p.lease(), Duration::from_secs(600));
        assert!(p.validate().is_ok());
        // The seeds' batch: 4 attempts, one replay of 2 more, then parked.
        assert_eq!(
            p.decide(&record(ErrorClass::TaskTerminal, 4), false),
            ReplayDecision::Replay { attempts_allowed: 2 }
        );
        assert_eq!(
            p.decide(&record(ErrorClass::TaskTerminal, 5), false),
            ReplayDecision::Replay { attempts_allowed: 1 }
        );
        assert_eq!(
            p.decide(&record(ErrorClass::TaskTerminal, 6), false),
            ReplayDecision::Park { reason: "MaxDeliveryCountExceeded".into() }
        );
    }

    #[test]
    fn review_classes_wait_unless_asked_for() {
        let p = ReplayPolicy::default();
        for class in [ErrorClass::FixInput, ErrorClass::AccountTerminal, ErrorClass::Cancelled, ErrorClass::Application]
        {
            assert!(matches!(p.decide(&record(class, 1), false), ReplayDecision::Skip { .. }), "{class}");
            assert_eq!(p.decide(&record(class, 1), true), ReplayDecision::Replay { attempts_allowed: 2 }, "{class}");
            // Explicit never goes past the cap.
            assert!(matches!(p.decide(&record(class, 7), true), ReplayDecision::Park { .. }), "{class}");
        }
        for class in [ErrorClass::Transient, ErrorClass::RetryAfter, ErrorClass::TaskTerminal] {
            assert_eq!(p.decide(&record(class, 0), false), ReplayDecision::Replay { attempts_allowed: 2 }, "{class}");
        }
    }

    #[test]
    fn a_failed_replay_keeps_its_delivery_count_and_is_parked_at_the_cap() {
        let p = ReplayPolicy::default();
        let mut leased = record(ErrorClass::TaskTerminal, 4);
        leased.deliveries = 3;
        let again = p.settle(&leased, record(ErrorClass::TaskTerminal, 5));
        assert_eq!((again.deliveries, again.state, again.parked_reason.as_deref()), (3, RecordState::Ready, None));
        let worn = p.settle(&leased, record(ErrorClass::TaskTerminal, 6));
        assert_eq!(worn.state, RecordState::Parked);
        assert_eq!(worn.parked_reason.as_deref(), Some(reason::MAX_DELIVERY_COUNT_EXCEEDED));
    }

    #[test]
    fn parked_records_are_skipped() {
        let mut r = record(ErrorClass::Transient, 1);
        r.state = RecordState::Parked;
        r.parked_reason = Some("operator".into());
        match ReplayPolicy::default().decide(&r, true) {
            ReplayDecision::Skip { why } => assert!(why.contains("operator"), "{why}"),
            other => panic!("expected Skip, got {other:?}"),
        }
    }

    #[test]
    fn auto_filter_selects_auto_classes_only() {
        let p = ReplayPolicy::default();
        let f = p.auto_filter().expect("default policy replays some classes");
        assert!(f.matches(&record(ErrorClass::Transient, 1), RecordState::Ready));
        assert!(!f.matches(&record(ErrorClass::FixInput, 1), RecordState::Ready));
        let none = ReplayPolicy { auto_classes: vec![], ..p };
        assert_eq!(none.auto_filter(), None);
    }

    #[test]
    fn serde_uses_defaults_and_rejects_typos() {
        let p: ReplayPolicy = serde_json::from_str(r#"{"replay_attempts": 3}"#).unwrap();
        assert_eq!(p, ReplayPolicy { replay_attempts: 3, ..ReplayPolicy::default() });
        let classes: ReplayPolicy = serde_json::from_str(r#"{"auto_classes": ["transient"]}"#).unwrap();
        assert_eq!(classes.auto_classes, vec![ErrorClass::Transient]);
        let err = serde_json::from_str::<ReplayPolicy>(r#"{"replay_atempts": 3}"#).unwrap_err();
        assert!(err.to_string().contains("replay_atempts"), "{err}");
        let bad = ReplayPolicy { replay_attempts: 0, ..ReplayPolicy::default() };
        assert_eq!(bad.validate().unwrap_err().field, "replay_attempts");
        let decision = serde_json::to_value(ReplayDecision::Replay { attempts_allowed: 2 }).unwrap();
        assert_eq!(decision, serde_json::json!({"decision": "replay", "attempts_allowed": 2}));
    }

    #[test]
    fn report_counts_and_merges() {
        let mut a = ReplayReport { received: 3, ..ReplayReport::default() };
        a.count_decision(&ReplayDecision::Replay { attempts_allowed: 2 });
        a.count_decision(&ReplayDecision::Park { reason: "x".into() });
        a.count_decision(&ReplayDecision::Skip { why: "y".into() });
        let mut b = ReplayReport { recovered: 1, failed_again: 2, ..ReplayReport::default() };
        b.merge(&a);
        assert_eq!(b, ReplayReport { received: 3, retried: 1, recovered: 1, failed_again: 2, parked: 1, skipped: 1 });
    }
}
