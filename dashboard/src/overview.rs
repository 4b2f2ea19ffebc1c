//! The overview's numbers: records grouped by reason, class, sitekey, page
//! host, provider and task type (count, first and last seen), failures per
//! hour — computed in one pass over the DLQ.
//!
//! The store contract has counts by filter but no "group by", and a store's
//! `count` with a filter may walk every record (Redis does), so one keyset
//! scan ([`crate::scan`]) that folds every record is the cheapest way to all
//! the breakdowns at once. The result is shared by every page for a few
//! seconds (one scan at a time however many browsers ask) and goes stale when
//! an action changes the DLQ; a page waits a moment for a new scan and is
//! otherwise answered with the previous result while the scan runs on (a
//! large queue takes seconds to scan). The counts by state come from the
//! store's own counters on every request.

use core::time::Duration;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use captcha_dlq_client::{Dlq, Result};
use captcha_dlq_core::dlq::analysis::NONE_KEY;
use captcha_dlq_core::dlq::{DeadLetterRecord, Filter, RecordState};
use captcha_dlq_core::Timestamp;
use tokio::sync::Notify;

use crate::scan;

/// Records read per store call while scanning.
const SCAN_BATCH: usize = 1000;
const HOUR_MS: u64 = 3_600_000;
/// The fewest bars a chart has, so that one busy hour does not fill it.
const MIN_BARS: u64 = 24;

/// What records are grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Dimension {
    Reason,
    Class,
    Sitekey,
    Host,
    Provider,
    TaskType,
}

impl Dimension {
    pub(crate) const ALL: [Dimension; 6] = [
        Dimension::Reason,
        Dimension::Class,
        Dimension::Sitekey,
        Dimension::Host,
        Dimension::Provider,
        Dimension::TaskType,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Dimension::Reason => "reason",
            Dimension::Class => "class",
            Dimension::Sitekey => "sitekey",
            Dimension::Host => "host",
            Dimension::Provider => "provider",
            Dimension::TaskType => "task_type",
        }
    }

    pub(crate) fn title(self) -> &'static str {
        match self {
            Dimension::Reason => "Reason",
            Dimension::Class => "Error class",
            Dimension::Sitekey => "Sitekey",
            Dimension::Host => "Page host",
            Dimension::Provider => "Provider",
            Dimension::TaskType => "Task type",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Dimension> {
        Dimension::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The records query parameter selecting one group, if the store's filter can express it
    /// (it has no provider or task type condition, and no "has no sitekey").
    pub(crate) fn filter_param(self, key: &str) -> Option<&'static str> {
        if key == NONE_KEY {
            return None;
        }
        match self {
            Dimension::Reason => Some("reason"),
            Dimension::Class => Some("class"),
            Dimension::Sitekey => Some("sitekey"),
            Dimension::Host => Some("host"),
            Dimension::Provider | Dimension::TaskType => None,
        }
    }

    fn key_of(self, r: &DeadLetterRecord) -> String {
        match self {
            Dimension::Reason => r.reason.clone(),
            Dimension::Class => r.class.as_str().to_string(),
            Dimension::Sitekey => r.task.sitekey().unwrap_or(NONE_KEY).to_string(),
            Dimension::Host => r.page_host().unwrap_or_else(|| NONE_KEY.to_string()),
            Dimension::Provider => r.provider.clone(),
            Dimension::TaskType => r.task.kind().as_str().to_string(),
        }
    }
}

/// Records sharing one value of a dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) key: String,
    pub(crate) count: u64,
    pub(crate) parked: u64,
    pub(crate) first: Timestamp,
    pub(crate) last: Timestamp,
}

/// The breakdowns of the whole DLQ at one moment.
#[derive(Clone, Debug)]
pub(crate) struct Overview {
    pub(crate) computed_at: Timestamp,
    /// How long the scan took.
    pub(crate) scan_ms: f64,
    pub(crate) records: u64,
    /// Most common first, ties by key.
    pub(crate) groups: BTreeMap<Dimension, Vec<Group>>,
    /// Records by the hour (`dead_lettered_at / 1h`) they were dead-lettered in.
    pub(crate) hours: BTreeMap<u64, u64>,
}

impl Overview {
    pub(crate) fn groups(&self, dimension: Dimension) -> &[Group] {
        self.groups.get(&dimension).map_or(&[], Vec::as_slice)
    }

    /// Failures per bucket for a chart ending at `now`: hourly when the records span two
    /// days or less, else daily; at least [`MIN_BARS`] and at most `max_bars` buckets.
    /// Returns the bucket length, the `(bucket start, count)` pairs, and how many older
    /// records fell before the first bar.
    pub(crate) fn timeline(&self, max_bars: u64, now: Timestamp) -> (Duration, Vec<(Timestamp, u64)>, u64) {
        let Some(first) = self.hours.keys().next() else {
            return (Duration::from_secs(3600), Vec::new(), 0);
        };
        let newest = self.hours.keys().next_back().copied().unwrap_or(*first);
        let last_hour = (now.as_unix_millis() / HOUR_MS).max(newest);
        let per_bucket = if last_hour - first < 48 { 1 } else { 24 };
        let last_bucket = last_hour / per_bucket;
        let oldest_shown = last_bucket.saturating_sub(max_bars.max(MIN_BARS) - 1);
        let first_bucket = (first / per_bucket).min(last_bucket.saturating_sub(MIN_BARS - 1)).max(oldest_shown);
        let mut bars: Vec<(Timestamp, u64)> =
            (first_bucket..=last_bucket).map(|b| (Timestamp::from_unix_millis(b * per_bucket * HOUR_MS), 0)).collect();
        let mut earlier = 0;
        for (hour, count) in &self.hours {
            let bucket = hour / per_bucket;
            match bucket.checked_sub(first_bucket).and_then(|i| bars.get_mut(usize::try_from(i).ok()?)) {
                Some(bar) => bar.1 += count,
                None => earlier += count,
            }
        }
        (Duration::from_secs(per_bucket * 3600), bars, earlier)
    }
}

#[derive(Default)]
struct Fold {
    records: u64,
    groups: HashMap<(Dimension, String), Group>,
    hours: BTreeMap<u64, u64>,
}

impl Fold {
    fn add(&mut self, r: &DeadLetterRecord) {
        self.records += 1;
        let at = r.dead_lettered_at;
        for dimension in Dimension::ALL {
            let key = dimension.key_of(r);
            let group = self.groups.entry((dimension, key.clone())).or_insert(Group {
                key,
                count: 0,
                parked: 0,
                first: at,
                last: at,
            });
            group.count += 1;
            group.parked += u64::from(r.state == RecordState::Parked);
            group.first = group.first.min(at);
            group.last = group.last.max(at);
        }
        *self.hours.entry(at.as_unix_millis() / HOUR_MS).or_default() += 1;
    }

    fn finish(self, computed_at: Timestamp, scan_ms: f64) -> Overview {
        let mut groups: BTreeMap<Dimension, Vec<Group>> = BTreeMap::new();
        for ((dimension, _), group) in self.groups {
            groups.entry(dimension).or_default().push(group);
        }
        for list in groups.values_mut() {
            list.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key)));
        }
        Overview { computed_at, scan_ms, records: self.records, groups, hours: self.hours }
    }
}

/// Scans the whole DLQ once.
pub(crate) async fn compute(dlq: &Dlq, now: Timestamp) -> Result<Overview> {
    let started = Instant::now();
    let mut fold = Fold::default();
    scan::for_each(dlq, &Filter::all(), SCAN_BATCH, |r| fold.add(r)).await?;
    Ok(fold.finish(now, started.elapsed().as_secs_f64() * 1000.0))
}

/// The latest overview, shared for `fresh_for`. A stale or missing one is recomputed in the
/// background (one scan at a time however many requests ask); a request waits for it at
/// most `wait`, then is answered with the previous result (or none yet) so that a page never
/// hangs on a scan of a large queue. The scan's error, if it failed, is kept to be shown.
pub(crate) struct OverviewCache {
    latest: Mutex<Latest>,
    running: AtomicBool,
    done: Notify,
    /// Bumped by every action that changes the DLQ: a result of an older generation is stale.
    generation: AtomicU64,
    fresh_for: Duration,
}

#[derive(Default)]
struct Latest {
    result: Option<(u64, Instant, Arc<Overview>)>,
    error: Option<String>,
}

/// What a page gets: the freshest result there is, and whether a newer one is on its way.
pub(crate) struct Snapshot {
    pub(crate) overview: Option<Arc<Overview>>,
    pub(crate) refreshing: bool,
    pub(crate) error: Option<String>,
}

impl OverviewCache {
    pub(crate) fn new(fresh_for: Duration) -> Self {
        OverviewCache {
            latest: Mutex::new(Latest::default()),
            running: AtomicBool::new(false),
            done: Notify::new(),
            generation: AtomicU64::new(0),
            fresh_for,
        }
    }

    pub(crate) fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn fresh(&self) -> Option<Arc<Overview>> {
        let generation = self.generation.load(Ordering::SeqCst);
        let latest = self.latest.lock().ok()?;
        let (g, at, overview) = latest.result.as_ref()?;
        (*g == generation && at.elapsed() < self.fresh_for).then(|| overview.clone())
    }

    /// The overview: fresh from the cache, or from a scan that ends within `wait`, or the
    /// previous one while the scan goes on.
    pub(crate) async fn get(self: &Arc<Self>, dlq: &Dlq, now: Timestamp, wait: Duration) -> Snapshot {
        if let Some(overview) = self.fresh() {
            return Snapshot { overview: Some(overview), refreshing: false, error: None };
        }
        let notified = self.done.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if !self.running.swap(true, Ordering::SeqCst) {
            let cache = self.clone();
            let dlq = dlq.clone();
            tokio::spawn(async move {
                let generation = cache.generation.load(Ordering::SeqCst);
                let result = compute(&dlq, now).await;
                if let Ok(mut latest) = cache.latest.lock() {
                    match result {
                        Ok(overview) => {
                            latest.result = Some((generation, Instant::now(), Arc::new(overview)));
                            latest.error = None;
                        }
                        Err(e) => latest.error = Some(e.to_string()),
                    }
                }
                cache.running.store(false, Ordering::SeqCst);
                cache.done.notify_waiters();
            });
        }
        let _ = tokio::time::timeout(wait, notified).await;
        let latest = self.latest.lock().ok();
        Snapshot {
            overview: latest.as_ref().and_then(|l| l.result.as_ref().map(|(_, _, o)| o.clone())),
            refreshing: self.running.load(Ordering::SeqCst),
            error: latest.and_then(|l| l.error.clone()),
        }
    }

    /// The last overview whatever its age (for hints such as known reasons), if any.
    pub(crate) fn peek(&self) -> Option<Arc<Overview>> {
        self.latest.lock().ok().and_then(|l| l.result.as_ref().map(|(_, _, o)| o.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, reason: &str, at_hour: u64, parked: bool) -> DeadLetterRecord {
        let mut r = captcha_dlq_core::dlq::testkit::sample_record(id, 0);
        r.reason = reason.to_string();
        r.dead_lettered_at = Timestamp::from_unix_millis(at_hour * HOUR_MS + 5);
        if parked {
            r.state = RecordState::Parked;
        }
        r
    }

    #[test]
    fn groups_count_and_span_their_records() {
        let mut fold = Fold::default();
        fold.add(&record("a", "Timeout", 10, false));
        fold.add(&record("b", "Timeout", 12, true));
        fold.add(&record("c", "ERROR_X", 11, false));
        let o = fold.finish(Timestamp::EPOCH, 0.0);
        let reasons = o.groups(Dimension::Reason);
        assert_eq!(
            reasons.iter().map(|g| (g.key.as_str(), g.count, g.parked)).collect::<Vec<_>>(),
            [("Timeout", 2, 1), ("ERROR_X", 1, 0)]
        );
        assert_eq!(reasons[0].first, Timestamp::from_unix_millis(10 * HOUR_MS + 5));
        assert_eq!(reasons[0].last, Timestamp::from_unix_millis(12 * HOUR_MS + 5));
        assert_eq!(o.records, 3);
        let now = Timestamp::from_unix_millis(13 * HOUR_MS);
        let (bucket, bars, earlier) = o.timeline(48, now);
        assert_eq!(bucket, Duration::from_secs(3600));
        // Hours 0..=13: at least 24 bars are asked for, but none before the epoch.
        assert_eq!(bars.len(), 14);
        assert_eq!(bars.iter().map(|b| b.1).skip(10).collect::<Vec<_>>(), [1, 1, 1, 0]);
        assert_eq!(earlier, 0);
        let (_, bars, _) = o.timeline(48, Timestamp::from_unix_millis(40 * HOUR_MS));
        assert_eq!(bars.len(), 31, "a chart ends now and starts at its oldest record within two days");
    }

    #[test]
    fn long_spans_chart_by_day_and_count_what_falls_before_the_first_bar() {
        let mut fold = Fold::default();
        fold.add(&record("a", "X", 0, false));
        fold.add(&record("b", "X", 24 * 100, false));
        fold.add(&record("c", "X", 24 * 100 + 3, false));
        let now = Timestamp::from_unix_millis((24 * 100 + 3) * HOUR_MS);
        let (bucket, bars, earlier) = fold.finish(Timestamp::EPOCH, 0.0).timeline(30, now);
        assert_eq!(bucket, Duration::from_secs(86_400));
        assert_eq!(bars.len(), 30);
        assert_eq!(bars.last().unwrap().1, 2);
        assert_eq!(earlier, 1);
    }

    #[test]
    fn groups_the_store_cannot_filter_have_no_parameter() {
        assert_eq!(Dimension::Reason.filter_param("Timeout"), Some("reason"));
        assert_eq!(Dimension::Sitekey.filter_param(NONE_KEY), None);
        assert_eq!(Dimension::Provider.filter_param("captchaai"), None);
    }
}
