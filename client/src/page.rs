//! What became of an answer on the page, as the page front ends (`captcha-dlq/page`, `captcha_dlq.page`, the
//! browser package's content-script module) report it: the one place that decides what each outcome means.
//!
//! - `accepted` / `rejected`: the site's verdict from the caller's acceptance check. Both count in the metrics by
//!   provider × kind × page host and in the engine's lane statistics (`accepted` routing); a rejection is also reported to the provider as a bad answer (where it refunds),
//!   and dead-lettered as `RejectedBySite` naming the provider.
//! - `gone`: the page or frame was gone (closed, navigated, widget removed) when the answer came. The answer was
//!   paid for: it is dead-lettered as `PageGone` with why, its provider task id, and the answer itself in the
//!   record's labels (`answer`, `answer_fields`), so nothing paid for is lost.

use std::collections::BTreeMap;

use captcha_dlq_core::dlq::record::SCHEMA;
use captcha_dlq_core::dlq::{DeadLetterRecord, HistoryEntry, Phase, RecordState};
use captcha_dlq_core::support::json_read::{read_cased, Casing, FieldError, Fields, FromJson};
use captcha_dlq_core::{ConfigError, ErrorClass, Solution, ValidTask};
use serde_json::{json, Value};

use crate::api_values;
use crate::dlq::Dlq;
use crate::driver::Command;
use crate::error::{Error, Result};

/// The reason of a record whose answer a site refused.
pub const REJECTED_BY_SITE: &str = "RejectedBySite";
/// The reason of a record whose answer came for a page that was gone.
pub const PAGE_GONE: &str = "PageGone";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Accepted,
    Rejected,
    Gone,
}

/// The arguments of [`Dlq::record_page_outcome`], as a host sends them.
struct PageOutcome {
    verdict: Verdict,
    task: Value,
    solution: Value,
    host: String,
    detail: String,
    labels: Value,
}

impl FromJson for PageOutcome {
    fn from_json(value: Value) -> std::result::Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let verdict: String = f.req("verdict")?;
        let verdict = match verdict.as_str() {
            "accepted" => Verdict::Accepted,
            "rejected" => Verdict::Rejected,
            "gone" => Verdict::Gone,
            other => {
                return Err(FieldError::new("verdict", format!("{other:?} is not one of accepted, rejected, gone")))
            }
        };
        let outcome = PageOutcome {
            verdict,
            task: f.req("task")?,
            solution: f.req("solution")?,
            host: f.or_default("host")?,
            detail: f.or_default("detail")?,
            labels: f.opt("labels")?.unwrap_or(Value::Null),
        };
        f.finish()?;
        Ok(outcome)
    }
}

impl Dlq {
    /// Records what became of an answer on a page (see the module doc). Answers
    /// `{ "recorded": <record id or null>, "reported": <true | false | null>, "report_error"?: <text> }`
    /// (`reportError` in camelCase).
    pub async fn record_page_outcome(&self, args: Value, casing: Casing) -> Result<Value> {
        let a: PageOutcome = read_cased(args, casing)
            .map_err(|e| Error::Config(ConfigError::new(format!("record_page_outcome: {}", e.field), e.problem)))?;
        let task = api_values::task(a.task).map_err(|e| e.in_field("task"))?;
        let solution = full_solution(a.solution, casing)?;
        let mut labels = if a.labels.is_null() { BTreeMap::new() } else { api_values::labels(a.labels, "labels")? };
        let client = self.client();
        let provider = solution.provider.clone().unwrap_or_else(|| client.provider().name().to_string());
        match a.verdict {
            Verdict::Accepted => {
                client.metrics_handle().page_verdict(Some(&provider), task.kind(), &a.host, true);
                client.send(Command::PageVerdict { provider, kind: task.kind(), accepted: true })?;
                Ok(json!({ "recorded": null, "reported": null }))
            }
            Verdict::Rejected => {
                client.metrics_handle().page_verdict(Some(&provider), task.kind(), &a.host, false);
                let kind = task.kind();
                client.send(Command::PageVerdict { provider: provider.clone(), kind, accepted: false })?;
                let report = client.report_solution(&solution, false).await;
                let (reported, note) = match &report {
                    Ok(()) => (true, format!("reported to {provider} as a bad answer")),
                    Err(e) => (false, format!("could not report it to {provider}: {e}")),
                };
                let description = format!(
                    "the site at {} rejected the {} answer from {provider}{}; {note}",
                    display_host(&a.host),
                    task.kind().as_str(),
                    detail(&a.detail)
                );
                let id = self.push_outcome(task, &solution, &provider, REJECTED_BY_SITE, description, labels).await?;
                let mut answer = json!({ "recorded": id, "reported": reported });
                if let Err(e) = report {
                    let key = if casing == Casing::Camel { "reportError" } else { "report_error" };
                    answer[key] = json!(e.to_string());
                }
                Ok(answer)
            }
            Verdict::Gone => {
                labels.insert("answer".to_string(), solution.text.clone());
                if !solution.fields.is_empty() {
                    labels.insert("answer_fields".to_string(), Value::Object(solution.fields.clone()).to_string());
                }
                let description = format!(
                    "the page at {} was gone before the {} answer from {provider} could be used{}; the answer is in this record's labels",
                    display_host(&a.host),
                    task.kind().as_str(),
                    detail(&a.detail)
                );
                let id = self.push_outcome(task, &solution, &provider, PAGE_GONE, description, labels).await?;
                Ok(json!({ "recorded": id, "reported": null }))
            }
        }
    }

    async fn push_outcome(
        &self,
        task: ValidTask,
        solution: &Solution,
        provider: &str,
        reason: &str,
        description: String,
        labels: BTreeMap<String, String>,
    ) -> Result<String> {
        let client = self.client();
        let runtime = &client.backends().runtime;
        let now = runtime.now();
        let random = (u128::from(runtime.random_seed()) << 16) ^ u128::from(now.as_unix_millis());
        let id = ulid::Ulid::from_parts(now.as_unix_millis(), random).to_string();
        let record = DeadLetterRecord {
            schema: SCHEMA,
            id: id.clone(),
            task,
            provider: provider.to_string(),
            reason: reason.to_string(),
            description,
            class: ErrorClass::Application,
            attempts: 1,
            replays: 0,
            history: vec![HistoryEntry {
                at: now,
                phase: Phase::Application,
                error: reason.to_string(),
                provider_task_id: solution.provider_task_id.clone(),
                http_status: None,
                provider: Some(provider.to_string()),
            }],
            first_failed_at: now,
            dead_lettered_at: now,
            labels,
            state: RecordState::Ready,
            deliveries: 0,
            parked_reason: None,
            solution: None,
        };
        // The same store call `import` makes (one instantiation in the browser build, where size counts).
        client.store_call(self.store().push(record)).await?;
        Ok(id)
    }
}

/// The solution a host hands back, with its text and fields (the answer a `PageGone` record keeps).
fn full_solution(value: Value, casing: Casing) -> Result<Solution> {
    let fields = value.get("fields").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut solution = api_values::solution_ref(value, casing)?;
    solution.fields = fields;
    Ok(solution)
}

fn display_host(host: &str) -> &str {
    if host.is_empty() {
        "(unknown host)"
    } else {
        host
    }
}

fn detail(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" ({detail})")
    }
}
