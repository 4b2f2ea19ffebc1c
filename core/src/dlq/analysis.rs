//! DLQ analysis: the operational signals the seeds ask for (counts by reason,
//! sitekey, page host and hour; age of the oldest record; repeat-failure rate;
//! replay throughput), computed from a set of records and the store's counters;
//! and, for clients with several providers, by task kind, by label, by the provider
//! each record ended at and by the provider each failure in its history happened at.
//! Dead letters cost nothing (providers charge solved tasks): what was spent is the
//! spend report's (`crate::spend`).
//!
//! Every breakdown is sorted most common first, ties by key, so the output
//! (JSON or [`render_table`]) is the same for the same input.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::dlq::record::DeadLetterRecord;
use crate::dlq::store::StoreStats;
use crate::support::time::Timestamp;

/// Key used for records without a value for a breakdown (no sitekey, no page URL).
pub const NONE_KEY: &str = "(none)";

/// One row of a breakdown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub key: String,
    pub count: u64,
}

/// Replay outcomes over the store's life.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Throughput {
    /// Records replayed successfully and removed from the DLQ.
    pub completed: u64,
    /// Leases returned (failed replays, skips) or expired.
    pub abandoned: u64,
    /// `completed / (completed + abandoned)`; `None` before any replay ended.
    pub recovered_ratio: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    pub computed_at: Timestamp,
    /// Records analysed.
    pub records: u64,
    /// The store's counters (whole store, even if `records` is a subset).
    pub stats: StoreStats,
    pub by_reason: Vec<Bucket>,
    pub by_class: Vec<Bucket>,
    pub by_sitekey: Vec<Bucket>,
    pub by_page_host: Vec<Bucket>,
    /// By hour of `dead_lettered_at` (`2026-11-21T10`, UTC).
    pub by_hour: Vec<Bucket>,
    /// By the provider of the last attempt.
    pub by_provider: Vec<Bucket>,
    pub by_kind: Vec<Bucket>,
    /// By `label=value`.
    pub by_label: Vec<Bucket>,
    /// Failures in the records' histories, by the provider they happened at (history
    /// entries written before clients had several providers count under `(none)`).
    pub failures_by_provider: Vec<Bucket>,
    /// Seconds since the oldest record was dead-lettered; `None` for an empty DLQ.
    pub oldest_age_seconds: Option<u64>,
    /// Share of the records that failed again after at least one replay; `None` without records.
    pub repeat_failure_rate: Option<f64>,
    pub replay: Throughput,
}

/// Counts `keys` into buckets, most common first, ties by key. Takes a `dyn` iterator so
/// the nine breakdowns share one copy of the counting map and the sort (in the `.wasm`
/// each generic copy costs a few KB).
fn breakdown(keys: &mut dyn Iterator<Item = String>) -> Vec<Bucket> {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for key in keys {
        *counts.entry(key).or_default() += 1;
    }
    let mut buckets: Vec<Bucket> = counts.into_iter().map(|(key, count)| Bucket { key, count }).collect();
    // Keys are unique, so ordering by (count descending, key) is total and an unstable sort
    // gives the same output as a stable one (smaller code).
    crate::support::sort::sort_unstable_by(&mut buckets, |a, b| b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key)));
    buckets
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

impl Analysis {
    pub fn compute(records: &[DeadLetterRecord], stats: &StoreStats, now: Timestamp) -> Analysis {
        let oldest = records.iter().map(|r| r.dead_lettered_at).chain(stats.oldest_dead_lettered_at).min();
        let replayed = records.iter().filter(|r| r.replays > 0).count() as u64;
        Analysis {
            computed_at: now,
            records: records.len() as u64,
            stats: stats.clone(),
            by_reason: breakdown(&mut records.iter().map(|r| r.reason.clone())),
            by_class: breakdown(&mut records.iter().map(|r| r.class.as_str().to_string())),
            by_sitekey: breakdown(&mut records.iter().map(|r| r.task.sitekey().unwrap_or(NONE_KEY).to_string())),
            by_page_host: breakdown(&mut records.iter().map(|r| r.page_host().unwrap_or_else(|| NONE_KEY.to_string()))),
            by_hour: breakdown(&mut records.iter().map(|r| r.dead_lettered_at.hour_bucket())),
            by_provider: breakdown(&mut records.iter().map(|r| r.provider.clone())),
            by_kind: breakdown(&mut records.iter().map(|r| r.task.kind().as_str().to_string())),
            by_label: breakdown(&mut records.iter().flat_map(|r| r.labels.iter().map(|(k, v)| format!("{k}={v}")))),
            failures_by_provider: breakdown(
                &mut records
                    .iter()
                    .flat_map(|r| r.history.iter().map(|e| e.provider.clone().unwrap_or_else(|| NONE_KEY.to_string()))),
            ),
            oldest_age_seconds: oldest.map(|t| now.since(t).as_secs()),
            repeat_failure_rate: ratio(replayed, records.len() as u64),
            replay: Throughput {
                completed: stats.completed,
                abandoned: stats.abandoned,
                recovered_ratio: ratio(stats.completed, stats.completed.saturating_add(stats.abandoned)),
            },
        }
    }
}

fn percent(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{:.1}%", r * 100.0))
}

/// A plain-text summary for the CLI.
pub fn render_table(a: &Analysis) -> String {
    let mut out = String::new();
    let s = &a.stats;
    let oldest = a.oldest_age_seconds.map_or_else(|| "-".to_string(), human_age);
    // Writing to a String cannot fail.
    let _ = writeln!(out, "DLQ analysis at {}", a.computed_at);
    let _ = writeln!(
        out,
        "records: {} (store: {} total, {} ready, {} leased, {} parked; {} in flight; {} dropped by capacity)",
        a.records, s.total, s.ready, s.leased, s.parked, s.in_flight, s.dropped
    );
    let _ = writeln!(out, "oldest record: {oldest}");
    let _ = writeln!(out, "repeat-failure rate: {}", percent(a.repeat_failure_rate));
    let _ = writeln!(
        out,
        "replay: {} completed, {} abandoned, recovered {}",
        a.replay.completed,
        a.replay.abandoned,
        percent(a.replay.recovered_ratio)
    );
    for (title, rows) in [
        ("reason", &a.by_reason),
        ("class", &a.by_class),
        ("sitekey", &a.by_sitekey),
        ("page host", &a.by_page_host),
        ("hour (UTC)", &a.by_hour),
        ("provider", &a.by_provider),
        ("kind", &a.by_kind),
        ("label", &a.by_label),
        ("failures at provider", &a.failures_by_provider),
    ] {
        let _ = writeln!(out);
        let shown = &rows[..rows.len().min(TABLE_ROWS)];
        let width = shown.iter().map(|b| b.key.chars().count()).chain([title.len()]).max().unwrap_or(0);
        let _ = writeln!(out, "{title:<width$}  count");
        if rows.is_empty() {
            let _ = writeln!(out, "{:<width$}  0", "-");
        }
        for b in shown {
            let _ = writeln!(out, "{:<width$}  {:>5}", b.key, b.count);
        }
        if rows.len() > shown.len() {
            let _ = writeln!(out, "… {} more (--json lists every row)", rows.len() - shown.len());
        }
    }
    out
}

/// Rows of each breakdown the table shows (the JSON analysis has them all).
const TABLE_ROWS: usize = 25;

fn human_age(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class::ErrorClass;
    use crate::dlq::testkit::{at, sample_record, sample_task};

    fn records() -> Vec<DeadLetterRecord> {
        let a = sample_record("a", 0);
        let mut b = sample_record("b", 30);
        b.reason = "Timeout".into();
        b.replays = 1;
        let mut c = sample_record("c", 70);
        c.reason = "Timeout".into();
        c.class = ErrorClass::Transient;
        c.task = sample_task("6Le-OTHER", "https://shop.example.org/x");
        c.provider = "2captcha".into();
        let mut d = sample_record("d", 75);
        d.reason = "ERROR_PAGEURL".into();
        d.class = ErrorClass::FixInput;
        d.replays = 2;
        vec![a, b, c, d]
    }

    fn b(key: &str, count: u64) -> Bucket {
        Bucket { key: key.into(), count }
    }

    #[test]
    fn counts_sorted_most_common_first_then_by_key() {
        let stats = StoreStats { completed: 3, abandoned: 1, ..StoreStats::default() };
        let a = Analysis::compute(&records(), &stats, at(2 * 3600));
        assert_eq!(a.records, 4);
        assert_eq!(a.by_reason, vec![b("Timeout", 2), b("ERROR_CAPTCHA_UNSOLVABLE", 1), b("ERROR_PAGEURL", 1)]);
        assert_eq!(a.by_class, vec![b("task_terminal", 2), b("fix_input", 1), b("transient", 1)]);
        assert_eq!(a.by_sitekey, vec![b("6Le-SITEKEY", 3), b("6Le-OTHER", 1)]);
        assert_eq!(a.by_page_host, vec![b("example.com", 3), b("shop.example.org", 1)]);
        assert_eq!(a.by_hour, vec![b("2026-11-21T10", 2), b("2026-11-21T11", 2)]);
        assert_eq!(a.by_provider, vec![b("captchaai", 3), b("2captcha", 1)]);
        assert_eq!(a.by_kind, vec![b("recaptcha_v2", 4)]);
        assert_eq!(a.by_label, vec![b("job=scrape-42", 4)]);
        assert_eq!(a.failures_by_provider, vec![b("(none)", 4), b("captchaai", 4)], "two history entries each");
        assert_eq!(a.oldest_age_seconds, Some(7200));
        assert_eq!(a.repeat_failure_rate, Some(0.5));
        assert_eq!(a.replay.recovered_ratio, Some(0.75));
        assert_eq!((a.replay.completed, a.replay.abandoned), (3, 1));
    }

    #[test]
    fn empty_dlq_has_no_ratios() {
        let a = Analysis::compute(&[], &StoreStats::default(), at(0));
        assert_eq!((a.oldest_age_seconds, a.repeat_failure_rate, a.replay.recovered_ratio), (None, None, None));
        assert!(a.by_reason.is_empty());
        let table = render_table(&a);
        assert!(table.contains("repeat-failure rate: -"), "{table}");
        // The store's oldest record counts even when no record was passed in.
        let stats = StoreStats { total: 1, oldest_dead_lettered_at: Some(at(0)), ..StoreStats::default() };
        assert_eq!(Analysis::compute(&[], &stats, at(90)).oldest_age_seconds, Some(90));
    }

    #[test]
    fn output_is_deterministic_and_serializable() {
        let stats = StoreStats { total: 4, ready: 4, ..StoreStats::default() };
        let mut reversed = records();
        reversed.reverse();
        let one = Analysis::compute(&records(), &stats, at(4000));
        let two = Analysis::compute(&reversed, &stats, at(4000));
        assert_eq!(serde_json::to_string(&one).unwrap(), serde_json::to_string(&two).unwrap());
        let json = serde_json::to_value(&one).unwrap();
        assert_eq!(json["by_reason"][0], serde_json::json!({"key": "Timeout", "count": 2}));
        assert_eq!(json["oldest_age_seconds"], 4000);
        let table = render_table(&one);
        let row = |key: &str| table.lines().find(|l| l.split_whitespace().next() == Some(key)).map(str::to_string);
        assert_eq!(
            row("Timeout").as_deref().map(|l| l.split_whitespace().collect::<Vec<_>>()),
            Some(vec!["Timeout", "2"])
        );
        assert!(table.contains("oldest record: 1h 6m"), "{table}");
        assert!(table.contains("repeat-failure rate: 50.0%"), "{table}");
        assert!(table.contains("2026-11-21T11"), "{table}");
    }

    #[test]
    fn ages_read_well() {
        assert_eq!(human_age(59), "59s");
        assert_eq!(human_age(61), "1m 1s");
        assert_eq!(human_age(3 * 3600 + 120), "3h 2m");
        assert_eq!(human_age(2 * 86_400 + 3600), "2d 1h");
    }
}
