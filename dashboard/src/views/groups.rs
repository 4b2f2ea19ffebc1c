//! Groups, ServicePulse-style: the records sharing a reason (or class,
//! sitekey, host, provider, task type), each with its count, first and last
//! seen, and actions on the whole group.

use maud::{html, Markup};

use super::{ago, count, page, purge_form, rate_field, Chrome, Nav};
use crate::overview::{Dimension, Snapshot};
use crate::query::encode;

/// Groups listed (the most common first); the rest are counted.
const SHOWN: usize = 500;

pub(crate) fn render(chrome: &Chrome, snapshot: &Snapshot, by: Dimension) -> Markup {
    let groups = snapshot.overview.as_ref().map_or(&[][..], |o| o.groups(by));
    let body = html! {
        h1 { "Groups by " (by.title().to_lowercase()) }
        nav.tabs {
            @for d in Dimension::ALL {
                a href=(chrome.url_q("/groups", &format!("by={}", d.name()))) aria-current=[(d == by).then_some("page")] { (d.title()) }
            }
        }
        @match &snapshot.overview {
            Some(overview) => (super::overview::scan_note(chrome, snapshot, overview)),
            None => (super::overview::pending(snapshot, 0)),
        }
        p.note {
            "Replays leave parked records alone (unpark them first)."
            @if matches!(by, Dimension::Provider | Dimension::TaskType) {
                " The store cannot select records by " (by.title().to_lowercase()) ", so these groups have no actions."
            }
        }
        table.groups {
            thead {
                tr {
                    th { (by.title()) } th.num { "Records" } th.num { "Parked" } th { "First seen" } th { "Last seen" }
                    th { "Actions" }
                }
            }
            tbody {
                @for g in groups.iter().take(SHOWN) {
                    @let selection = by.filter_param(&g.key).map(|param| encode(&[(param.to_string(), g.key.clone())]));
                    tr data-group=(g.key) {
                        td.key { (g.key) }
                        td.num.group-count { (count(g.count)) }
                        td.num { (count(g.parked)) }
                        td { (ago(chrome, g.first)) }
                        td { (ago(chrome, g.last)) }
                        td.actions {
                            @if let Some(selection) = &selection {
                                a href=(chrome.url_q("/records", selection)) { "Records" }
                                " · "
                                a href=(chrome.url_q("/export", &format!("{selection}&format=jsonl"))) download { "Export" }
                                @if !chrome.read_only {
                                    @if chrome.solving {
                                        form.inline method="post" action=(chrome.url("/actions/replay")) {
                                            (chrome.csrf_field())
                                            input type="hidden" name="filter" value=(selection);
                                            button.replay-group type="submit" { "Replay group" }
                                            (rate_field())
                                        }
                                    }
                                    (purge_form(chrome, html! { input type="hidden" name="filter" value=(selection); }, Some(g.count), "Purge group"))
                                    a.button.edit href=(chrome.url_q("/edit", selection)) { "Edit group" }
                                }
                            } @else {
                                span.muted { "—" }
                            }
                        }
                    }
                }
            }
        }
        @if groups.is_empty() { p.empty { "No records." } }
        @if groups.len() > SHOWN { p.note { (count((groups.len() - SHOWN) as u64)) " smaller groups are not listed." } }
    };
    page(chrome, "Groups", Nav::Groups, body)
}
