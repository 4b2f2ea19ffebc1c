//! Retention without silent loss: the `dlq_retention` option and which records it evicts.
//!
//! A DLQ may be kept to a maximum age and/or a maximum count. Eviction takes the oldest
//! records that are ready or parked (a leased record is being replayed: it is never taken)
//! beyond those limits. The client (`captcha-dlq-client`'s `retention` module) applies the
//! plan made here: it archives the records first when asked, counts and logs them, and purges
//! exactly the archived ids, so nothing leaves the DLQ without a trace. Sidekiq's dead set drops
//! jobs beyond 10,000 without a word; this is the opposite.

use core::time::Duration;

use serde_json::Value;

use crate::dlq::record::RecordState;
use crate::dlq::store::Filter;
use crate::support::json_read::{spelled, FieldError, Fields, FromJson};
use crate::support::time::Timestamp;

/// The `dlq_retention` option.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RetentionOptions {
    /// Records dead-lettered longer ago than this are evicted.
    pub max_age_ms: Option<u64>,
    /// Beyond this many records (of every state), the oldest ready or parked ones are evicted.
    pub max_count: Option<u64>,
    /// A JSONL file the evicted records are appended to (and synced) before they are removed.
    pub archive: Option<String>,
    /// How often a client applies it (the CLI's `dlq retain` applies it once).
    pub interval_ms: u64,
}

impl RetentionOptions {
    pub const DEFAULT_INTERVAL_MS: u64 = 60_000;
}

impl FromJson for RetentionOptions {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let o = RetentionOptions {
            max_age_ms: f.opt("max_age_ms")?,
            max_count: f.opt("max_count")?,
            archive: f.opt("archive")?,
            interval_ms: f.or("interval_ms", Self::DEFAULT_INTERVAL_MS)?,
        };
        f.finish()?;
        if o.max_age_ms.is_none() && o.max_count.is_none() {
            return Err(FieldError::whole("sets no limit: give `max_age_ms`, `max_count` or both"));
        }
        if o.max_age_ms == Some(0) {
            return Err(FieldError::new(spelled("max_age_ms"), "must be at least 1"));
        }
        if o.interval_ms == 0 {
            return Err(FieldError::new(spelled("interval_ms"), "must be at least 1"));
        }
        if o.archive.as_deref().is_some_and(|a| a.trim().is_empty() || a.contains('\0')) {
            return Err(FieldError::new(spelled("archive"), "must name a file (not empty, no NUL)"));
        }
        Ok(o)
    }
}

/// Why a record was evicted (the `reason` label of `captcha_dlq_dlq_evicted_total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EvictionReason {
    MaxAge,
    MaxCount,
}

impl EvictionReason {
    pub const ALL: [EvictionReason; 2] = [EvictionReason::MaxAge, EvictionReason::MaxCount];

    pub fn as_str(self) -> &'static str {
        match self {
            EvictionReason::MaxAge => "max_age",
            EvictionReason::MaxCount => "max_count",
        }
    }
}

/// The records eviction may take: ready or parked, never leased.
fn evictable() -> Filter {
    Filter { states: vec![RecordState::Ready, RecordState::Parked], ..Filter::default() }
}

/// The records too old at `now` (oldest first when peeked), when there is an age limit.
pub fn too_old(options: &RetentionOptions, now: Timestamp) -> Option<Filter> {
    let max_age = options.max_age_ms?;
    let cutoff = Timestamp::from_unix_millis(now.as_unix_millis().saturating_sub(max_age));
    Some(Filter { dead_lettered_before: Some(cutoff), ..evictable() })
}

/// How many of the oldest evictable records go for the count limit, with `total` records in
/// the DLQ (every state: a leased record counts but is not taken); with the filter that
/// selects them (peek its first `n`, oldest first).
pub fn over_count(options: &RetentionOptions, total: u64) -> Option<(u64, Filter)> {
    let max = options.max_count?;
    let n = total.saturating_sub(max);
    (n > 0).then(evictable).map(|f| (n, f))
}

/// The filter that removes exactly `ids` and only while they are still evictable, so that a
/// record received meanwhile (leased) or arriving meanwhile is left alone.
pub fn exactly(ids: Vec<String>) -> Filter {
    Filter { ids, ..evictable() }
}

/// How often a client applies `options`.
pub fn interval(options: &RetentionOptions) -> Duration {
    Duration::from_millis(options.interval_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::json_read::{read_cased, Casing};
    use serde_json::json;

    #[test]
    fn read_and_checked() {
        let o: RetentionOptions = read_cased(json!({"maxAgeMs": 1000, "archive": "old.jsonl"}), Casing::Camel).unwrap();
        assert_eq!((o.max_age_ms, o.max_count, o.archive.as_deref()), (Some(1000), None, Some("old.jsonl")));
        assert_eq!(o.interval_ms, RetentionOptions::DEFAULT_INTERVAL_MS);
        for (bad, field) in [
            (json!({}), ""),
            (json!({"max_age_ms": 0}), "max_age_ms"),
            (json!({"max_count": 5, "archive": " "}), "archive"),
            (json!({"max_count": 5, "interval_ms": 0}), "interval_ms"),
            (json!({"max_count": -1}), "max_count"),
            (json!({"max_count": 5, "keep": 1}), "keep"),
        ] {
            let e = read_cased::<RetentionOptions>(bad.clone(), Casing::Snake).unwrap_err();
            assert_eq!(e.field, field, "{bad}");
        }
    }

    #[test]
    fn the_limits_select_the_oldest_evictable_records_only() {
        let o = RetentionOptions { max_age_ms: Some(1_000), max_count: Some(10), ..RetentionOptions::default() };
        let old = too_old(&o, Timestamp::from_unix_millis(5_000)).unwrap();
        assert_eq!(old.dead_lettered_before, Some(Timestamp::from_unix_millis(4_000)));
        assert_eq!(old.states, [RecordState::Ready, RecordState::Parked]);
        assert_eq!(over_count(&o, 10), None);
        let (n, f) = over_count(&o, 13).unwrap();
        assert_eq!((n, f.states.len()), (3, 2));
        let none = RetentionOptions { max_count: Some(1), ..RetentionOptions::default() };
        assert!(too_old(&none, Timestamp::from_unix_millis(5_000)).is_none());
        let exact = exactly(vec!["a".into()]);
        assert_eq!((exact.ids.len(), exact.states.len()), (1, 2));
    }
}
