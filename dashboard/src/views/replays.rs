//! Replay requests: the last ten with their progress (live), a cancel button
//! while they run, and the report once they end.

use std::sync::Arc;

use maud::{html, Markup};

use super::{count, page, when, Chrome, Nav};
use crate::replays::{Progress, ReplayJob, Status};

pub(crate) fn list(chrome: &Chrome, jobs: &[Arc<ReplayJob>]) -> Markup {
    let body = html! {
        h1 { "Replay requests" }
        p.note { "The last " (crate::replays::KEPT) " requests made from this dashboard, newest first. Start one from "
            a href=(chrome.url("/records")) { "Records" } ", " a href=(chrome.url("/groups")) { "Groups" } " or a record." }
        @if jobs.is_empty() { p.empty { "No replay requested yet." } }
        @for job in jobs { (card(chrome, job, false)) }
    };
    page(chrome, "Replays", Nav::Replays, body)
}

pub(crate) fn detail(chrome: &Chrome, job: &ReplayJob) -> Markup {
    let body = html! {
        h1 { "Replay request " (job.id) }
        (card(chrome, job, true))
        p { a href=(chrome.url("/replays")) { "All replay requests" } }
    };
    page(chrome, &format!("Replay {}", job.id), Nav::Replays, body)
}

fn card(chrome: &Chrome, job: &ReplayJob, open: bool) -> Markup {
    let p = job.progress();
    let rate = job.per_second.map_or_else(|| "as fast as allowed".to_string(), |r| format!("{r} records/s"));
    html! {
        section.replay data-replay-url=(chrome.url(&format!("/api/replays/{}", job.id))) data-status=(p.status.label()) {
            h2 {
                @if open { "Replay of " (job.what) } @else { a href=(chrome.url(&format!("/replays/{}", job.id))) { "#" (job.id) ": " (job.what) } }
            }
            p {
                "Started " (when(job.started_at)) " at " (rate) ". Status: "
                strong data-field="status" { (p.status.label()) }
                @if let Status::Failed(why) = &p.status { " — " (why) }
                @if let Some(t) = p.finished_at { " · ended " (when(t)) }
            }
            (progress_bar(&p))
            table.report {
                tr { th { "Chosen" } th { "Done" } th { "Received" } th { "Retried" } th { "Recovered" } th { "Failed again (abandoned)" } th { "Parked" } th { "Skipped" } th { "Errors" } }
                tr {
                    td data-field="target" { (p.target.map_or_else(|| "…".to_string(), count)) }
                    td data-field="done" { (count(p.done)) }
                    td data-field="received" { (count(p.report.received)) }
                    td data-field="retried" { (count(p.report.retried)) }
                    td data-field="recovered" { (count(p.report.recovered)) }
                    td data-field="failed_again" { (count(p.report.failed_again)) }
                    td data-field="parked" { (count(p.report.parked)) }
                    td data-field="skipped" { (count(p.report.skipped)) }
                    td data-field="errors" { (count(p.error_count)) }
                }
            }
            @if !p.errors.is_empty() { ul.errors { @for e in &p.errors { li { (e) } } } }
            @if p.status.is_active() && !chrome.read_only {
                form.inline method="post" action=(chrome.url(&format!("/actions/replays/{}/cancel", job.id))) {
                    (chrome.csrf_field())
                    button.cancel type="submit" { "Cancel" }
                }
                span.note { " Cancelling stops starting records; those already started finish and are counted." }
            }
        }
    }
}

fn progress_bar(p: &Progress) -> Markup {
    let target = p.target.unwrap_or(0).max(1);
    html! { progress data-field="progress" max=(target) value=(p.done.min(target)) { (p.done) " / " (target) } }
}
