//! The span model, decided once for every exporter: which of the driver's reports open and end
//! which span, with which attributes and events. Exporters (the native crate's OpenTelemetry one,
//! [`super::otlp_json`] for the browser) only encode the [`FinishedSpan`]s a [`SpanBook`] hands out.
//!
//! One trace per task:
//! - a `captcha_dlq.task` span from the task's start to its end (solved, dead-lettered —
//!   cancelled is a dead letter of class `cancelled` —, not submitted, taken over by another
//!   client, or still running when the client closed), with the task's id (its ULID), type,
//!   labels (`captcha_dlq.label.<name>`), provider and outcome; a dead letter sets its status
//!   to an error with the reason, and `error.type` to the error class;
//! - a `captcha_dlq.attempt` child span per submission a provider accepted, until its answer
//!   or its failure, with a `poll` event per poll (the engine's `Event::Polled { jobs }`);
//! - events on the task span for each submission, retry, failover and the dead letter.
//!
//! Nothing here can hold the API key, a proxy password or a collector's token: spans are built
//! from the engine's events and the task's id, type and labels, never from a request, its URL or
//! its body.

use std::borrow::Cow;

use captcha_dlq_core::{ErrorClass, Event, JobId, Timestamp};

use super::{TaskLeft, TracedTask};

/// An attribute's value (the OTLP kinds spans here use).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttributeValue {
    String(String),
    Int(i64),
    Bool(bool),
}

/// One `key: value` of a span or of one of its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute {
    /// Static but for the labels' (`captcha_dlq.label.<name>`).
    pub key: Cow<'static, str>,
    pub value: AttributeValue,
}

fn string(key: &'static str, value: impl Into<String>) -> Attribute {
    Attribute { key: Cow::Borrowed(key), value: AttributeValue::String(value.into()) }
}

fn int(key: &'static str, value: impl TryInto<i64>) -> Attribute {
    Attribute { key: Cow::Borrowed(key), value: AttributeValue::Int(value.try_into().unwrap_or(i64::MAX)) }
}

/// Whether a span is the task's (internal) or one call to a provider (client).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    Internal,
    Client,
}

/// How a span ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpanStatus {
    Unset,
    Ok,
    Error(String),
}

/// Something that happened during a span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanEvent {
    pub name: &'static str,
    pub at: Timestamp,
    pub attributes: Vec<Attribute>,
}

/// A span that ended, ready to export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinishedSpan {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub name: &'static str,
    pub kind: SpanKind,
    pub start: Timestamp,
    pub end: Timestamp,
    pub attributes: Vec<Attribute>,
    pub events: Vec<SpanEvent>,
    pub status: SpanStatus,
}

/// A span still open.
struct OpenSpan {
    span_id: [u8; 8],
    start: Timestamp,
    attributes: Vec<Attribute>,
    events: Vec<SpanEvent>,
}

impl OpenSpan {
    fn event(&mut self, name: &'static str, at: Timestamp, attributes: Vec<Attribute>) {
        self.events.push(SpanEvent { name, at, attributes });
    }

    /// Sets `attribute`, replacing one of the same key.
    fn set(&mut self, attribute: Attribute) {
        match self.attributes.iter_mut().find(|a| a.key == attribute.key) {
            Some(existing) => *existing = attribute,
            None => self.attributes.push(attribute),
        }
    }
}

/// One live task's spans.
struct TaskSpans {
    trace_id: [u8; 16],
    task: OpenSpan,
    attempt: Option<OpenSpan>,
    provider: String,
}

/// Builds spans out of what the driver reports and keeps those that ended until they are taken.
pub struct SpanBook {
    ids: fastrand::Rng,
    /// The provider a task is at when the events do not name one (a client with one provider).
    first_provider: String,
    /// Open tasks by job id, sorted (ids grow, so a start appends): a sorted `Vec` rather than a map, whose
    /// code per entry type the `.wasm` would carry again (bench/wasm/size.sh).
    tasks: Vec<(JobId, TaskSpans)>,
    finished: Vec<FinishedSpan>,
}

impl std::fmt::Debug for SpanBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpanBook")
            .field("open_tasks", &self.tasks.len())
            .field("finished", &self.finished.len())
            .finish_non_exhaustive()
    }
}

impl SpanBook {
    /// `seed` makes the trace and span ids (the runtime's randomness: ids must not repeat across clients).
    pub fn new(first_provider: String, seed: u64) -> SpanBook {
        SpanBook { ids: fastrand::Rng::with_seed(seed), first_provider, tasks: Vec::new(), finished: Vec::new() }
    }

    /// Where `job` is in `tasks`, or where it would go.
    fn slot(&self, job: JobId) -> Result<usize, usize> {
        self.tasks.binary_search_by_key(&job.0, |(id, _)| id.0)
    }

    fn task_mut(&mut self, job: JobId) -> Option<&mut TaskSpans> {
        self.task_and_finished(job).map(|(spans, _)| spans)
    }

    /// The open task `job` and the spans that ended, to end its attempt in.
    fn task_and_finished(&mut self, job: JobId) -> Option<(&mut TaskSpans, &mut Vec<FinishedSpan>)> {
        let slot = self.slot(job).ok()?;
        Some((&mut self.tasks[slot].1, &mut self.finished))
    }

    /// The spans that ended since the last call, oldest first.
    pub fn take_finished(&mut self) -> Vec<FinishedSpan> {
        std::mem::take(&mut self.finished)
    }

    /// Whether spans ended since the last [`take_finished`](Self::take_finished).
    pub fn has_finished(&self) -> bool {
        !self.finished.is_empty()
    }

    fn span_id(&mut self) -> [u8; 8] {
        // An all-zero id is invalid in OTLP.
        self.ids.u64(1..).to_be_bytes()
    }

    fn open(&mut self, start: Timestamp, attributes: Vec<Attribute>) -> OpenSpan {
        OpenSpan { span_id: self.span_id(), start, attributes, events: Vec::new() }
    }

    pub fn task_started(&mut self, task: TracedTask<'_>, now: Timestamp) {
        let mut attributes = vec![
            string("captcha_dlq.task.id", task.id),
            string("captcha_dlq.task.type", task.kind.as_str()),
            string("captcha_dlq.task.origin", task.origin.as_str()),
        ];
        if task.replays > 0 {
            attributes.push(int("captcha_dlq.task.replays", task.replays));
        }
        for (name, value) in task.labels {
            let key = Cow::Owned(format!("captcha_dlq.label.{name}"));
            attributes.push(Attribute { key, value: AttributeValue::String(value) });
        }
        // A job id is not reused while the client runs; a second start ends the first's spans.
        if self.slot(task.job).is_ok() {
            self.end_task(task.job, "restarted", SpanStatus::Unset, Vec::new(), now);
        }
        let trace_id = (u128::from(self.ids.u64(1..)) << 64 | u128::from(self.ids.u64(..))).to_be_bytes();
        let task_span = self.open(now, attributes);
        let provider = self.first_provider.clone();
        let slot = self.slot(task.job).unwrap_or_else(|free| free);
        self.tasks.insert(slot, (task.job, TaskSpans { trace_id, task: task_span, attempt: None, provider }));
    }

    pub fn event(&mut self, event: &Event, now: Timestamp) {
        match event {
            Event::Submitted { job, attempt, provider_task_id, provider } => {
                let span_id = self.span_id();
                let Some((spans, finished)) = self.task_and_finished(*job) else { return };
                if let Some(provider) = provider {
                    spans.provider = provider.clone();
                }
                Self::end_attempt(finished, spans, "resubmitted", None, now);
                let attributes = vec![
                    int("captcha_dlq.attempt", *attempt),
                    string("captcha_dlq.provider", spans.provider.clone()),
                    string("captcha_dlq.provider_task_id", provider_task_id.clone()),
                ];
                spans.task.event("submitted", now, attributes.clone());
                spans.attempt = Some(OpenSpan { span_id, start: now, attributes, events: Vec::new() });
            }
            Event::Polled { jobs, .. } => {
                for job in jobs {
                    let Some(spans) = self.task_mut(*job) else { continue };
                    spans.attempt.as_mut().unwrap_or(&mut spans.task).event("poll", now, Vec::new());
                }
            }
            Event::Retrying { job, code, class, delay_ms, attempt } => {
                let Some((spans, finished)) = self.task_and_finished(*job) else { return };
                Self::end_attempt(finished, spans, code, Some(*class), now);
                let attributes = vec![
                    string("captcha_dlq.reason", code.clone()),
                    string("error.type", class.as_str()),
                    int("captcha_dlq.retry.delay_ms", *delay_ms),
                    int("captcha_dlq.attempt", *attempt),
                ];
                spans.task.event("retry", now, attributes);
            }
            Event::Rerouted { job, from, to, reason } => {
                let Some((spans, finished)) = self.task_and_finished(*job) else { return };
                Self::end_attempt(finished, spans, reason, None, now);
                spans.provider = to.clone();
                let attributes = vec![
                    string("captcha_dlq.failover.from", from.clone()),
                    string("captcha_dlq.failover.to", to.clone()),
                    string("captcha_dlq.reason", reason.clone()),
                ];
                spans.task.event("failover", now, attributes);
            }
            Event::Recovered { job, resumed_polling, .. } => {
                if let Some(spans) = self.task_mut(*job) {
                    let polling = Attribute {
                        key: Cow::Borrowed("captcha_dlq.recovered.polling"),
                        value: AttributeValue::Bool(*resumed_polling),
                    };
                    spans.task.event("recovered", now, vec![polling]);
                }
            }
            Event::Solved { job, attempts, .. } => {
                let attributes = vec![int("captcha_dlq.attempts", *attempts)];
                self.end_task(*job, "solved", SpanStatus::Ok, attributes, now);
            }
            Event::DeadLettered { job, reason, class, attempts, .. } => {
                if let Some(spans) = self.task_mut(*job) {
                    let attributes =
                        vec![string("captcha_dlq.reason", reason.clone()), string("error.type", class.as_str())];
                    spans.task.event("dead_letter", now, attributes);
                }
                let outcome = if *class == ErrorClass::Cancelled { "cancelled" } else { "dead_lettered" };
                let attributes = vec![
                    int("captcha_dlq.attempts", *attempts),
                    string("captcha_dlq.reason", reason.clone()),
                    string("error.type", class.as_str()),
                ];
                self.end_task(*job, outcome, SpanStatus::Error(reason.clone()), attributes, now);
            }
            _ => {}
        }
    }

    pub fn task_left(&mut self, job: JobId, why: TaskLeft, now: Timestamp) {
        let status = match why {
            TaskLeft::NotSubmitted => {
                SpanStatus::Error("its journal entry could not be written; nothing was paid".into())
            }
            TaskLeft::TakenOver => SpanStatus::Unset,
        };
        self.end_task(job, why.as_str(), status, Vec::new(), now);
    }

    /// The client closes: the tasks still running end their spans (their journal entries keep
    /// them for `recover` or the fleet).
    pub fn close(&mut self, now: Timestamp) {
        let open: Vec<JobId> = self.tasks.iter().map(|(job, _)| *job).collect();
        for job in open {
            self.end_task(job, "open_at_close", SpanStatus::Unset, Vec::new(), now);
        }
    }

    /// Ends a task's spans with `status`: its attempt (if one is open), then the task.
    fn end_task(
        &mut self,
        job: JobId,
        outcome: &'static str,
        status: SpanStatus,
        attributes: Vec<Attribute>,
        now: Timestamp,
    ) {
        let Ok(slot) = self.slot(job) else { return };
        let (_, TaskSpans { trace_id, mut task, attempt, provider }) = self.tasks.remove(slot);
        if let Some(attempt) = attempt {
            self.finished.push(finish(trace_id, task.span_id, attempt, status.clone(), now));
        }
        task.set(string("captcha_dlq.provider", provider));
        task.set(string("captcha_dlq.outcome", outcome));
        for attribute in attributes {
            task.set(attribute);
        }
        self.finished.push(FinishedSpan {
            trace_id,
            span_id: task.span_id,
            parent_span_id: None,
            name: "captcha_dlq.task",
            kind: SpanKind::Internal,
            start: task.start,
            end: now,
            attributes: task.attributes,
            events: task.events,
            status,
        });
    }

    /// Ends the open attempt of a task as failed with `code` (a retry, a failover, a resubmission).
    fn end_attempt(
        finished: &mut Vec<FinishedSpan>,
        spans: &mut TaskSpans,
        code: &str,
        class: Option<ErrorClass>,
        now: Timestamp,
    ) {
        if let Some(mut attempt) = spans.attempt.take() {
            if let Some(class) = class {
                attempt.set(string("error.type", class.as_str()));
            }
            finished.push(finish(
                spans.trace_id,
                spans.task.span_id,
                attempt,
                SpanStatus::Error(code.to_string()),
                now,
            ));
        }
    }
}

/// An attempt span of the task span `parent` in trace `trace_id`, ended at `now`.
fn finish(trace_id: [u8; 16], parent: [u8; 8], attempt: OpenSpan, status: SpanStatus, now: Timestamp) -> FinishedSpan {
    FinishedSpan {
        trace_id,
        span_id: attempt.span_id,
        parent_span_id: Some(parent),
        name: "captcha_dlq.attempt",
        kind: SpanKind::Client,
        start: attempt.start,
        end: now,
        attributes: attempt.attributes,
        events: attempt.events,
        status,
    }
}
