//! The journal: tasks in flight in every client sharing the store, by owner,
//! whether each owner is alive, and recovery of what a dead owner left.

use captcha_dlq_core::JournalEntry;
use maud::{html, Markup};

use super::{ago, page, when, Chrome, Nav};
use crate::recoveries::Recovery;

/// The entries of one owner.
pub(crate) struct OwnerEntries {
    /// `None`: entries written before owners were stamped.
    pub(crate) owner: Option<String>,
    pub(crate) gone: bool,
    /// This dashboard's own client.
    pub(crate) mine: bool,
    pub(crate) entries: Vec<JournalEntry>,
}

pub(crate) fn render(chrome: &Chrome, owners: &[OwnerEntries], recoveries: &[Recovery]) -> Markup {
    let total: usize = owners.iter().map(|o| o.entries.len()).sum();
    let body = html! {
        h1 { "Journal" }
        p.note {
            (total) " tasks in flight. An entry stays here from before its task is sent until its answer is handed over; "
            "a client that died leaves its entries behind, and recovery finishes them (or moves them into the DLQ)."
        }
        @for o in owners {
            section.owner {
                h2 {
                    "Owner " span.mono { (o.owner.as_deref().unwrap_or("(none)")) }
                    " "
                    @if o.mine { span.pill { "this dashboard's client" } }
                    @else if o.gone { span.pill.bad { "gone" } }
                    @else { span.pill.good { "alive" } }
                }
                @if o.gone && !chrome.read_only && chrome.solving {
                    @if let Some(owner) = &o.owner {
                        div.actions {
                            form.inline method="post" action=(chrome.url("/actions/recover")) {
                                (chrome.csrf_field())
                                input type="hidden" name="owner" value=(owner);
                                input type="hidden" name="resume" value="true";
                                button type="submit" title="poll or resubmit them; answers are acknowledged (their caller is gone)" { "Recover (finish the tasks)" }
                            }
                            form.inline method="post" action=(chrome.url("/actions/recover")) {
                                (chrome.csrf_field())
                                input type="hidden" name="owner" value=(owner);
                                input type="hidden" name="resume" value="false";
                                button type="submit" title="dead-letter them as interrupted, to replay later" { "Move into the DLQ" }
                            }
                        }
                    }
                }
                table.journal {
                    thead { tr { th { "Id" } th { "Type" } th { "Provider task" } th.num { "Attempts" } th { "Accepted" } th { "Updated" } th { "Answer" } th { "Key" } } }
                    tbody {
                        @for e in &o.entries {
                            tr {
                                td.mono { (e.id) }
                                td { (e.task.kind().as_str()) }
                                td.mono { (e.provider_task_id.as_deref().unwrap_or("not sent")) }
                                td.num { (e.attempts) }
                                td { (ago(chrome, e.accepted_at)) }
                                td { (ago(chrome, e.updated_at)) }
                                td { @if e.solution.is_some() { "waiting to be handed over" } @else { "—" } }
                                td.mono { (e.key.as_deref().unwrap_or("")) }
                            }
                        }
                    }
                }
            }
        }
        @if owners.is_empty() { p.empty { "Nothing in flight." } }
        @if !recoveries.is_empty() {
            h2 { "Recoveries" }
            table.recoveries {
                thead { tr { th { "Owner" } th { "Mode" } th { "Started" } th.num { "Taken over" } th.num { "Left to live owners" } th.num { "Solved" } th.num { "Answers kept for whoever resumes" } th.num { "Dead-lettered" } th { "Status" } } }
                tbody {
                    @for r in recoveries {
                        tr {
                            td.mono { (r.owner) }
                            td { (if r.resume { "finish" } else { "into the DLQ" }) }
                            td { (when(r.started_at)) }
                            td.num { (r.progress.summary.found) }
                            td.num { (r.progress.summary.skipped_live) }
                            td.num { (r.progress.summary.solved) }
                            td.num data-field="kept" { (r.progress.kept) }
                            td.num { (r.progress.summary.dead_lettered) }
                            td {
                                @if let Some(e) = &r.error { span.bad { (e) } }
                                @else if r.finished_at.is_some() { "finished" }
                                @else { "running" }
                            }
                        }
                    }
                }
            }
        }
    };
    page(chrome, "Journal", Nav::Journal, body)
}
