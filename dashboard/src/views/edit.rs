//! The edit pages: the form (task fields as a JSON merge patch, labels as a JSON object), the
//! preview with each record's diff and the buttons that apply it, and the result.

use captcha_dlq_client::EditReport;
use maud::{html, Markup};
use serde_json::Value;

use super::{count, page, Chrome, Nav};
use crate::edit_request::EditRequest;

/// Records whose diff a page shows; the counts cover the rest.
const SHOWN_DIFFS: usize = 200;

pub(crate) fn form(chrome: &Chrome, request: &EditRequest, matching: u64, error: Option<&str>) -> Markup {
    let what = request.selection.describe();
    let body = html! {
        h1 { "Edit records" }
        p { "Selected: " strong { (what) } " — " (count(matching)) " record(s) now." }
        @if let Some(error) = error { p.message.error role="alert" { (error) } }
        form.edit method="post" action=(chrome.url("/actions/edit")) {
            (chrome.csrf_field())
            input type="hidden" name="filter" value=(request.selection.query());
            label for="edit-task" { "Task fields (a JSON merge patch: a value sets a field, null removes it; names as in the task shown on a record)" }
            textarea #edit-task name="task" rows="6" cols="70" placeholder=r#"{"sitekey": "6Le-…"}"# { (request.task_text) }
            label for="edit-labels" { "Labels (a JSON object: a string sets a label, null removes it)" }
            textarea #edit-labels name="labels" rows="3" cols="70" placeholder=r#"{"fixed": "sitekey"}"# { (request.labels_text) }
            p { button type="submit" name="step" value="preview" { "Preview changes" } }
        }
        p.muted { "Nothing is written until you apply the preview. Records under a replay's lease are left as they are." }
    };
    page(chrome, "Edit records", Nav::Records, body)
}

pub(crate) fn preview(chrome: &Chrome, request: &EditRequest, report: &EditReport) -> Markup {
    let body = html! {
        h1 { "Preview of the edit" }
        (summary(report))
        (diffs(report))
        @if report.changed > 0 {
            form.edit-apply method="post" action=(chrome.url("/actions/edit")) {
                (chrome.csrf_field())
                input type="hidden" name="filter" value=(request.selection.query());
                input type="hidden" name="task" value=(request.task_text);
                input type="hidden" name="labels" value=(request.labels_text);
                button type="submit" name="step" value="apply" { "Apply" }
                @if chrome.solving {
                    " "
                    button type="submit" name="step" value="apply_replay" { "Apply and replay" }
                }
            }
        } @else {
            p.empty { "This edit changes no record." }
        }
        p { a href=(chrome.url_q("/edit", &request.selection.query())) { "Change the edit" } }
    };
    page(chrome, "Preview of the edit", Nav::Records, body)
}

pub(crate) fn applied(chrome: &Chrome, request: &EditRequest, report: &EditReport) -> Markup {
    let back = match request.selection.filter.ids.as_slice() {
        [one] => chrome.url(&format!("/records/{one}")),
        _ => chrome.url_q("/records", &request.selection.query()),
    };
    let body = html! {
        h1 { "Edit applied" }
        (summary(report))
        (diffs(report))
        p { a href=(back) { "Back to the records" } }
    };
    page(chrome, "Edit applied", Nav::Records, body)
}

fn summary(report: &EditReport) -> Markup {
    let verb = if report.preview { "would change" } else { "changed" };
    html! {
        p.edit-summary {
            (count(report.matched)) " matched · " strong { (count(report.changed)) " " (verb) }
            " · " (count(report.unchanged)) " unchanged · " (report.refused.len()) " refused"
        }
        @if !report.refused.is_empty() {
            h2 { "Not edited" }
            ul.refused { @for r in &report.refused { li { span.mono { (r.id) } ": " (r.error) } } }
        }
    }
}

fn diffs(report: &EditReport) -> Markup {
    let shown = |v: &Option<Value>| v.as_ref().map_or_else(|| "(none)".to_string(), Value::to_string);
    html! {
        @if !report.diffs.is_empty() {
            table.diff {
                thead { tr { th { "Record" } th { "Field" } th { "Before" } th { "After" } } }
                tbody {
                    @for d in report.diffs.iter().take(SHOWN_DIFFS) {
                        @for c in &d.changes {
                            tr {
                                td.mono { (d.id) }
                                td.mono { (c.path) }
                                td.before { (shown(&c.before)) }
                                td.after { (shown(&c.after)) }
                            }
                        }
                    }
                }
            }
            @if report.diffs.len() > SHOWN_DIFFS { p.muted { "… and " (report.diffs.len() - SHOWN_DIFFS) " more records." } }
        }
    }
}
