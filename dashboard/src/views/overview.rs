//! The overview: counts by state (live), the client's circuit, store health
//! and balance, what sites accepted of the answers solved on pages, failures
//! over time, and the top groups of every dimension.

use std::collections::BTreeMap;

use captcha_dlq_client::metrics::PageVerdictCount;
use captcha_dlq_client::{DriverStatus, MetricsSnapshot, StoreHealth};
use captcha_dlq_core::dlq::StoreStats;
use maud::{html, Markup};

use super::{age, ago, count, page, when, Chrome, Nav};
use crate::overview::{Dimension, Overview, Snapshot};

/// Groups shown per dimension on the overview (the groups page has them all).
const TOP: usize = 8;
/// Bars in the failures chart.
const BARS: u64 = 48;

pub(crate) struct OverviewPage<'a> {
    pub(crate) stats: &'a StoreStats,
    pub(crate) overview: &'a Snapshot,
    pub(crate) status: Option<&'a DriverStatus>,
    pub(crate) metrics: &'a MetricsSnapshot,
    pub(crate) health: &'a StoreHealth,
    pub(crate) has_key: bool,
}

pub(crate) fn render(chrome: &Chrome, p: &OverviewPage<'_>) -> Markup {
    let s = p.stats;
    let oldest = s.oldest_dead_lettered_at.map(|t| age(chrome.now.since(t)));
    let body = html! {
        h1 { "Overview" }
        section.cards {
            (card("Records", "total", s.total, &chrome.url("/records")))
            (card("Ready", "ready", s.ready, &chrome.url_q("/records", "state=ready")))
            (card("Leased", "leased", s.leased, &chrome.url_q("/records", "state=leased")))
            (card("Parked", "parked", s.parked, &chrome.url_q("/records", "state=parked")))
            (card("In flight", "in_flight", s.in_flight, &chrome.url("/journal")))
            div.card {
                span.label { "Oldest record" }
                span.value data-stat="oldest_age" { (oldest.unwrap_or_else(|| "–".into())) }
            }
            div.card {
                span.label { "Replayed ever" }
                span.value data-stat="completed" { (count(s.completed)) }
            }
            div.card {
                span.label { "Dropped (capacity)" }
                span.value data-stat="dropped" { (count(s.dropped)) }
            }
        }
        section.client {
            h2 { "Client" }
            dl {
                dt { @if p.metrics.providers.len() == 1 { "Provider" } @else { "Providers" } }
                dd { (p.metrics.providers.join(", ")) }
                dt { "Circuit" }
                dd data-stat="circuit" {
                    @for (i, c) in p.metrics.circuits.iter().enumerate() {
                        @if i > 0 { " · " }
                        @if p.metrics.circuits.len() > 1 { (c.provider) ": " }
                        @if c.open { span.bad { "open: submissions stopped" } } @else { span.good { "closed" } }
                    }
                    @if let Some(f) = p.status.and_then(|s| s.account_failure.as_deref()) { " · account error: " (f) }
                }
                dt { "Tasks in flight (this client)" }
                dd data-stat="client_in_flight" {
                    (p.metrics.tasks_in_flight)
                    @if let Some(st) = p.status { " of " (st.in_flight_limit) }
                }
                dt { "Store" }
                dd data-stat="store" {
                    @if p.health.available { span.good { "answering" } } @else { span.bad { "not answering" } }
                    @if let Some(st) = p.status.filter(|st| st.store_writes > 0) { " · " (st.store_writes) " writes under way" }
                    @if p.health.failures > 0 { " · " (p.health.failures) " writes given up" }
                    @if let Some(e) = &p.health.last_error { " · last error: " (e) }
                }
                @if p.has_key {
                    dt { "Balance" }
                    dd #balance data-balance-url=(chrome.url("/api/balance")) { "…" }
                }
            }
        }
        @if !p.metrics.page_verdicts.is_empty() {
            (acceptance(&p.metrics.page_verdicts))
        }
        @match &p.overview.overview {
            Some(overview) => {
                section.chart {
                    h2 { "Failures over time" }
                    (timeline(chrome, overview))
                }
                (scan_note(chrome, p.overview, overview))
                section.breakdowns {
                    @for dimension in Dimension::ALL {
                        (breakdown(chrome, overview, dimension))
                    }
                }
            }
            None => (pending(p.overview, s.total)),
        }
    };
    page(chrome, "Overview", Nav::Overview, body)
}

/// Answers solved on pages (the page front ends' acceptance check) by provider, kind and host: how many the
/// site took, how many it refused, and the share it took.
fn acceptance(verdicts: &[PageVerdictCount]) -> Markup {
    let mut rows: BTreeMap<(&str, &str, &str), (u64, u64)> = BTreeMap::new();
    for v in verdicts {
        let row = rows.entry((v.provider.as_str(), v.task_type.as_str(), v.host.as_str())).or_default();
        if v.verdict == "accepted" {
            row.0 += v.count;
        } else {
            row.1 += v.count;
        }
    }
    html! {
        section.acceptance {
            h2 { "Acceptance on pages" }
            table.report.page-verdicts {
                thead { tr { th { "Provider" } th { "Kind" } th { "Site" } th { "Accepted" } th { "Rejected" } th { "Accepted share" } } }
                tbody {
                    @for ((provider, kind, host), (accepted, rejected)) in &rows {
                        tr data-acceptance=(format!("{provider} {kind} {host}")) {
                            td { (provider) }
                            td { (kind) }
                            td { (host) }
                            td { (count(*accepted)) }
                            td { (count(*rejected)) }
                            td { (format!("{:.0}%", *accepted as f64 * 100.0 / (*accepted + *rejected).max(1) as f64)) }
                        }
                    }
                }
            }
        }
    }
}

/// When and how the breakdowns were computed.
pub(crate) fn scan_note(chrome: &Chrome, snapshot: &Snapshot, overview: &Overview) -> Markup {
    html! {
        p.note {
            "Breakdowns of " (count(overview.records)) " records as of " (when(overview.computed_at))
            " (one scan of the DLQ, " (format!("{:.0}", overview.scan_ms)) " ms; shared for a few seconds)"
            @if snapshot.refreshing { "; a newer scan is running" }
            ". "
            @if let Some(e) = &snapshot.error { span.bad { "The last scan failed: " (e) " " } }
            a href=(chrome.url("/groups")) { "All groups" }
        }
    }
}

/// No breakdowns yet: the scan runs; the page reloads itself once it is done.
pub(crate) fn pending(snapshot: &Snapshot, records: u64) -> Markup {
    html! {
        @if let Some(e) = &snapshot.error {
            p.error { "The breakdowns could not be computed: " (e) }
        }
        @if snapshot.refreshing {
            p.note data-pending-overview="" {
                "The breakdowns are being computed (one scan of "
                @if records > 0 { (count(records)) " records" } @else { "the DLQ" }
                "); this page shows them when they are ready."
            }
        }
    }
}

fn card(label: &str, stat: &str, value: u64, href: &str) -> Markup {
    html! {
        a.card href=(href) {
            span.label { (label) }
            span.value data-stat=(stat) { (count(value)) }
        }
    }
}

fn breakdown(chrome: &Chrome, overview: &Overview, dimension: Dimension) -> Markup {
    let groups = overview.groups(dimension);
    let max = groups.first().map_or(1, |g| g.count.max(1));
    html! {
        div.breakdown {
            h3 { "By " (dimension.title().to_lowercase()) }
            @if groups.is_empty() { p.empty { "No records." } }
            table {
                @for g in groups.iter().take(TOP) {
                    tr {
                        td.key {
                            @match dimension.filter_param(&g.key) {
                                Some(param) => a href=(chrome.url_q("/records", &crate::query::encode(&[(param.to_string(), g.key.clone())]))) { (g.key) },
                                None => span { (g.key) },
                            }
                        }
                        td.num { (count(g.count)) }
                        td.bar { meter min="0" max=(max) value=(g.count) { (g.count) } }
                        td.age { (ago(chrome, g.last)) }
                    }
                }
            }
            @if groups.len() > TOP {
                p.more { a href=(chrome.url_q("/groups", &format!("by={}", dimension.name()))) { (groups.len() - TOP) " more" } }
            }
        }
    }
}

/// An SVG bar chart of records by hour (or day) of dead-lettering.
fn timeline(chrome: &Chrome, overview: &Overview) -> Markup {
    let (bucket, bars, earlier) = overview.timeline(BARS, chrome.now);
    if bars.is_empty() {
        return html! { p.empty { "No records." } };
    }
    let daily = bucket.as_secs() >= 86_400;
    let max = bars.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    let (width, height, gap) = (960u64, 160u64, 2u64);
    let n = bars.len() as u64;
    let bar_width = (width / n).max(3);
    let label_of = |t: captcha_dlq_core::Timestamp| {
        let w = when(t);
        if daily {
            w.get(..10).unwrap_or(&w).to_string()
        } else {
            w.get(..13).map(|h| format!("{h}:00")).unwrap_or(w)
        }
    };
    html! {
        svg.timeline viewBox=(format!("0 0 {width} {}", height + 20)) role="img" aria-label="records dead-lettered per bucket" {
            @for (i, (start, n)) in bars.iter().enumerate() {
                @let h = (n * height).div_ceil(max);
                @let x = i as u64 * bar_width;
                rect x=(x) y=(height - h) width=(bar_width.saturating_sub(gap).max(1)) height=(h) {
                    title { (label_of(*start)) ": " (n) }
                }
            }
            text x="0" y=(height + 16) { (label_of(bars[0].0)) }
            text x=(width) y=(height + 16) text-anchor="end" { (label_of(bars[bars.len() - 1].0)) }
        }
        p.note {
            "Records still in the DLQ, by the " (if daily { "day" } else { "hour" }) " they were dead-lettered (UTC); tallest bar "
            (count(max)) "."
            @if earlier > 0 { " " (count(earlier)) " older records are before the first bar." }
            " " a href=(chrome.url_q("/records", "")) { "Browse records" }
        }
    }
}
