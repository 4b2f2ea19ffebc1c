//! The audit trail page: who did what, when, to which records, how many, and how it ended.

use captcha_dlq_core::dlq::audit::{AuditEntry, AuditStage};
use maud::{html, Markup};

use super::{count, page, when, Chrome, Nav};

pub(crate) fn page_of(chrome: &Chrome, entries: &[AuditEntry], limit: usize) -> Markup {
    let older = (entries.len() == limit).then(|| entries.last().map(|e| e.id)).flatten().filter(|id| *id > 1);
    let body = html! {
        h1 { "Audit trail" }
        p.note { "Every replay, park, unpark, purge and import, by whoever applied it (a dashboard token's name, "
            code { "cli:user@host" } " or the CLI's " code { "--as" } ", an API caller's name), newest first: each action's intent, written before it runs, then its result. Kept in the store." }
        @if entries.is_empty() { p.empty { "No operator action recorded yet." } }
        @else {
            table #audit {
                thead { tr { th { "#" } th { "When" } th { "Who" } th { "Action" } th { "Records" } th { "Selection" } th { "Detail" } } }
                tbody {
                    @for e in entries {
                        tr data-action=(e.action.as_str()) data-operator=(e.operator) data-stage=(e.stage.as_str()) class=[e.error.as_ref().map(|_| "failed")] {
                            td { (e.id) }
                            td { (when(e.at)) }
                            td.operator { (e.operator) }
                            td.action {
                                (e.action.as_str())
                                @match (e.stage, e.intent) {
                                    (AuditStage::Intent, _) => { span.stage { " (intent)" } }
                                    (AuditStage::Result, Some(intent)) => { span.stage { " (result of #" (intent) ")" } }
                                    (AuditStage::Result, None) => {}
                                }
                            }
                            td.count { (count(e.count)) }
                            td { code { @if e.filter.is_null() { "—" } @else { (e.filter.to_string()) } } }
                            td {
                                (e.detail)
                                @if let Some(error) = &e.error { span.error { " failed: " (error) } }
                            }
                        }
                    }
                }
            }
        }
        @if let Some(id) = older { p { a href=(chrome.url_q("/audit", &format!("before={id}"))) { "Older entries" } } }
    };
    page(chrome, "Audit", Nav::Audit, body)
}
