//! The records list: the filter form, a page of records, paging, and the
//! actions on the selected records or on everything the filter matches.

use captcha_dlq_core::dlq::{DeadLetterRecord, RecordState};
use captcha_dlq_core::ErrorClass;
use maud::{html, Markup};

use super::{ago, count, page, purge_form, rate_field, Chrome, Nav};
use crate::overview::{Dimension, Overview};
use crate::query::RecordsQuery;

/// How a text search went.
pub(crate) struct SearchInfo {
    /// Records looked at for this page.
    pub(crate) scanned: u64,
    /// The scan stopped at its budget before the page was full: "continue" goes on.
    pub(crate) budget_hit: bool,
}

pub(crate) struct RecordsPage<'a> {
    pub(crate) query: &'a RecordsQuery,
    pub(crate) records: &'a [DeadLetterRecord],
    /// The query of the next page, if there is one.
    pub(crate) next: Option<String>,
    pub(crate) search: Option<SearchInfo>,
    /// A recent overview, for the form's suggestions.
    pub(crate) hints: Option<&'a Overview>,
}

pub(crate) fn render(chrome: &Chrome, p: &RecordsPage<'_>) -> Markup {
    let q = p.query;
    let selection = &q.selection;
    let value = |key: &str| selection.pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let selection_query = selection.query();
    let first = (q.page - 1) * q.size + 1;
    let body = html! {
        h1 { "Records" }
        form.filters method="get" action=(chrome.url("/records")) {
            label { "Reason " input type="text" name="reason" list="reasons" value=[value("reason")]; }
            label { "Class "
                select name="class" {
                    option value="" { "any" }
                    @for c in ErrorClass::ALL { option value=(c.as_str()) selected[value("class").as_deref() == Some(c.as_str())] { (c.as_str()) } }
                }
            }
            label { "State "
                select name="state" {
                    option value="" { "any" }
                    @for s in RecordState::ALL { option value=(s.as_str()) selected[value("state").as_deref() == Some(s.as_str())] { (s.as_str()) } }
                }
            }
            label { "Sitekey " input type="text" name="sitekey" list="sitekeys" value=[value("sitekey")]; }
            label { "Host " input type="text" name="host" list="hosts" value=[value("host")]; }
            label { "Label " input type="text" name="label" placeholder="key=value" value=[value("label")]; }
            label { "Older than " input type="text" name="older_than" placeholder="2h" size="5" value=[value("older_than")]; }
            label { "Newer than " input type="text" name="newer_than" placeholder="7d" size="5" value=[value("newer_than")]; }
            label.search { "Search " input type="search" name="q" placeholder="id, text, provider task id" value=[value("q")]; }
            button type="submit" { "Filter" }
            a href=(chrome.url("/records")) { "Clear" }
            @if let Some(o) = p.hints {
                (datalist("reasons", o, Dimension::Reason))
                (datalist("sitekeys", o, Dimension::Sitekey))
                (datalist("hosts", o, Dimension::Host))
            }
        }
        p.summary {
            span #match-count data-count-url=(chrome.url_q("/api/count", &selection_query)) { "…" }
            " records match " (selection.describe()) "."
            @if !p.records.is_empty() { " Showing " (count(first as u64)) "–" (count((first + p.records.len() - 1) as u64)) "." }
            @if let Some(s) = &p.search {
                " Text search looked at " (count(s.scanned)) " records"
                @if s.budget_hit { " and stopped at its budget; use Next to search further" }
                "."
            }
            " Export: " a href=(chrome.url_q("/export", &with_format(&selection_query, "json"))) download { "JSON" }
            " · " a href=(chrome.url_q("/export", &with_format(&selection_query, "jsonl"))) download { "JSONL" }
        }
        @if !chrome.read_only {
            section.actions {
                form #bulk method="post" action=(chrome.url("/actions/selected")) {
                    (chrome.csrf_field())
                    input type="hidden" name="back" value=(chrome.url_q("/records", &selection_query));
                    span { "Selected: " span #selected-count { "0" } }
                    @if chrome.solving {
                        button type="submit" name="action" value="replay" { "Replay selected" }
                        (rate_field())
                    }
                    button type="submit" name="action" value="park" { "Park selected" }
                    button type="submit" name="action" value="unpark" { "Unpark selected" }
                }
                @if chrome.solving {
                    form method="post" action=(chrome.url("/actions/replay")) {
                        (chrome.csrf_field())
                        input type="hidden" name="filter" value=(selection_query);
                        button type="submit" { "Replay all matching" }
                        (rate_field())
                    }
                }
                (purge_form(chrome, html! { input type="hidden" name="filter" value=(selection_query); }, None, "Purge all matching"))
                a.button.edit href=(chrome.url_q("/edit", &selection_query)) { "Edit all matching" }
            }
        }
        table.records {
            thead {
                tr {
                    @if !chrome.read_only { th { input #select-all type="checkbox" aria-label="select all on this page"; } }
                    th { "Dead-lettered" } th { "Reason" } th { "Class" } th { "Type" } th { "Host" }
                    th { "Sitekey" } th { "Labels" } th { "State" } th.num { "Attempts" } th.num { "Replays" }
                }
            }
            tbody {
                @for r in p.records {
                    tr {
                        @if !chrome.read_only {
                            td { input.select type="checkbox" name="id" value=(r.id) form="bulk" aria-label=(format!("select {}", r.id)); }
                        }
                        td { a.record-link href=(chrome.url(&format!("/records/{}", r.id))) { (ago(chrome, r.dead_lettered_at)) } }
                        td { (r.reason) }
                        td { (r.class.as_str()) }
                        td { (r.task.kind().as_str()) }
                        td { (r.page_host().unwrap_or_default()) }
                        td.mono { (r.task.sitekey().unwrap_or("")) }
                        td { @for (k, v) in &r.labels { span.tag { (k) "=" (v) } " " } }
                        td { span class=(format!("state {}", r.state.as_str())) { (r.state.as_str()) } }
                        td.num { (r.attempts) }
                        td.num { (r.replays) }
                    }
                }
            }
        }
        @if p.records.is_empty() { p.empty { "No records on this page." } }
        nav.paging {
            @if q.page > 1 { a href=(chrome.url_q("/records", &selection_query)) { "First" } }
            @if let Some(prev) = q.previous_page() { a href=(chrome.url_q("/records", &prev)) rel="prev" { "Previous" } }
            span { "Page " (q.page) }
            @if let Some(next) = &p.next { a href=(chrome.url_q("/records", next)) rel="next" { "Next" } }
        }
    };
    page(chrome, "Records", Nav::Records, body)
}

fn datalist(id: &str, overview: &Overview, dimension: Dimension) -> Markup {
    html! {
        datalist id=(id) {
            @for g in overview.groups(dimension).iter().filter(|g| dimension.filter_param(&g.key).is_some()).take(200) {
                option value=(g.key) {}
            }
        }
    }
}

fn with_format(query: &str, format: &str) -> String {
    if query.is_empty() {
        format!("format={format}")
    } else {
        format!("{query}&format={format}")
    }
}
