//! One record: the task (its secrets redacted by the core's one rule,
//! `captcha_dlq_core::dlq::redact`: proxy credentials in every form, cookies, key-like
//! fields; images shortened; the API key is never in a record), labels, the history as a
//! timeline, deliveries and replays, and the actions on it. Free texts (the description,
//! history errors, a park reason) go through the same rule.

use captcha_dlq_core::dlq::redact::{redact_text, redact_value};
use captcha_dlq_core::dlq::{DeadLetterRecord, Phase, RecordState};
use maud::{html, Markup};
use serde_json::Value;

use super::{ago, page, purge_form, when, Chrome, Nav};

/// Characters of a long string (an image's base64) shown.
const SHOWN_CHARS: usize = 120;

pub(crate) fn render(chrome: &Chrome, r: &DeadLetterRecord) -> Markup {
    let ids = html! { input type="hidden" name="id" value=(r.id); };
    let body = html! {
        h1 { "Record " span.mono { (r.id) } }
        dl.facts {
            dt { "State" } dd { span class=(format!("state {}", r.state.as_str())) { (r.state.as_str()) }
                @if let Some(why) = &r.parked_reason { " — " (redact_text(why)) } }
            dt { "Reason" } dd { (r.reason) " (" (r.class.as_str()) ")" }
            dt { "Description" } dd { (redact_text(&r.description)) }
            dt { "Provider" } dd { (r.provider) }
            dt { "Task type" } dd { (r.task.kind().as_str()) }
            dt { "First failed" } dd { (when(r.first_failed_at)) " (" (ago(chrome, r.first_failed_at)) ")" }
            dt { "Dead-lettered" } dd { (when(r.dead_lettered_at)) " (" (ago(chrome, r.dead_lettered_at)) ")" }
            dt { "Attempts" } dd { (r.attempts) }
            dt { "Replays" } dd { (r.replays) }
            dt { "Deliveries" } dd { (r.deliveries) " (leases handed out)" }
        }
        @if !chrome.read_only {
            section.actions {
                @if chrome.solving {
                    form.inline method="post" action=(chrome.url("/actions/replay")) {
                        (chrome.csrf_field()) (ids)
                        button type="submit" disabled[r.state == RecordState::Parked] { "Replay" }
                    }
                }
                @if r.state == RecordState::Parked {
                    form.inline method="post" action=(chrome.url("/actions/unpark")) {
                        (chrome.csrf_field()) (ids)
                        input type="hidden" name="back" value=(chrome.url(&format!("/records/{}", r.id)));
                        button type="submit" { "Unpark" }
                    }
                } @else {
                    form.inline method="post" action=(chrome.url("/actions/park")) {
                        (chrome.csrf_field()) (ids)
                        input type="hidden" name="back" value=(chrome.url(&format!("/records/{}", r.id)));
                        input type="text" name="reason" placeholder="why (optional)";
                        button type="submit" { "Park" }
                    }
                }
                (purge_form(chrome, ids.clone(), Some(1), "Purge"))
                @if r.state != RecordState::Leased {
                    a.button.edit href=(chrome.url_q("/edit", &format!("id={}", r.id))) { "Edit" }
                }
            }
        }
        h2 { "Labels" }
        @if r.labels.is_empty() { p.empty { "None." } }
        table.labels { @for (k, v) in &r.labels { tr { th { (k) } td { (label_value(k, v)) } } } }
        h2 { "History" }
        ol.timeline {
            @for h in &r.history {
                li class=[(h.phase == Phase::Edit).then_some("edit")] {
                    time datetime=(h.at.to_rfc3339()) { (when(h.at)) }
                    span.phase { (h.phase.as_str()) }
                    span.error { (redact_text(&h.error)) }
                    @if let Some(pid) = &h.provider_task_id { span.pid { "provider task " span.mono { (pid) } } }
                    @if let Some(status) = h.http_status { span.http { "HTTP " (status) } }
                }
            }
        }
        @if r.history.is_empty() { p.empty { "No history entries." } }
        h2 { "Task" }
        pre.task { (task_json(r)) }
        p { a href=(chrome.url_q("/export", &format!("id={}&format=json", r.id))) download { "Export this record (JSON)" } }
    };
    page(chrome, &format!("Record {}", r.id), Nav::Records, body)
}

/// A label's value as shown: by the same rule as a task's members.
fn label_value(name: &str, value: &str) -> String {
    let mut v = serde_json::json!({ name: value });
    redact_value(&mut v);
    v[name].as_str().unwrap_or_default().to_string()
}

/// The task as pretty JSON, its secrets redacted and long strings shortened.
fn task_json(r: &DeadLetterRecord) -> String {
    let mut value = serde_json::to_value(&r.task).unwrap_or(Value::Null);
    redact_value(&mut value);
    tidy(&mut value);
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

fn tidy(value: &mut Value) {
    match value {
        Value::Object(map) => map.values_mut().for_each(tidy),
        Value::Array(items) => items.iter_mut().for_each(tidy),
        Value::String(s) if s.chars().count() > SHOWN_CHARS => {
            let shown: String = s.chars().take(SHOWN_CHARS).collect();
            *s = format!("{shown}… ({} characters)", s.chars().count());
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn passwords_are_masked_and_long_strings_shortened() {
        let mut v = json!({"proxy": {"password": "hunter2", "host": "h"}, "body": "x".repeat(500)});
        redact_value(&mut v);
        tidy(&mut v);
        assert_eq!(v["proxy"]["password"], "[redacted]");
        assert_eq!(v["proxy"]["host"], "h");
        assert!(v["body"].as_str().unwrap().ends_with("… (500 characters)"));
    }
}
