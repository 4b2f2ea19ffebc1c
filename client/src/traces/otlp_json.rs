//! The client's own trace exporter: the [`SpanBook`]'s spans encoded as OTLP/HTTP JSON (serde)
//! and posted through the front end's [`Transport`] (the browser's `fetch`), for front ends that
//! bring no exporter of their own (the native crate brings the OpenTelemetry SDK's).
//!
//! Export is off the solve path and batched: the first span that ends schedules a post
//! [`BATCH_DELAY`] later, which takes every span ended by then (at most [`MAX_BATCH_SPANS`] a post;
//! more wait for the next). `flush` and `close` post what is queued at once and wait for every
//! post under way. A failed export (a collector down, refused, answering non-2xx) is not tried again: it is logged with the
//! collector's origin, never its headers.

use core::time::Duration;
use std::sync::{Arc, Mutex};

use crate::options::traces::{OtlpProtocol, TraceOptions};
use captcha_dlq_core::{Event, HttpRequest, JobId, Method, Secret, Timestamp};
use futures::channel::oneshot;
use serde::Serialize;

use super::spans::{Attribute, AttributeValue, FinishedSpan, SpanBook, SpanKind, SpanStatus};
use super::{TaskLeft, TaskTracer, TracedTask};
use crate::runtime::{BoxFuture, Runtime, Transport};

/// How long spans that ended wait for others to share their post.
pub const BATCH_DELAY: Duration = Duration::from_millis(500);
/// Spans one post carries at most.
pub const MAX_BATCH_SPANS: usize = 512;
/// How long one export may take.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Spans ended and not yet posted, shared by the tracer and its posts.
#[derive(Default)]
struct Queue {
    spans: Vec<FinishedSpan>,
    /// A delayed post is scheduled.
    scheduled: bool,
    /// A post is under way: it drains the queue before it ends, then answers `waiting`.
    posting: bool,
    /// Those waiting for the post under way (`flush`, `close`).
    waiting: Vec<oneshot::Sender<()>>,
}

/// Where and how batches are posted.
struct Shipper {
    transport: Arc<dyn Transport>,
    runtime: Arc<dyn Runtime>,
    endpoint: String,
    headers: Vec<(String, String)>,
    service_name: String,
    queue: Mutex<Queue>,
}

/// A [`TaskTracer`] exporting OTLP/HTTP JSON through the client's transport.
pub struct OtlpJsonTracer {
    book: SpanBook,
    shipper: Arc<Shipper>,
}

impl std::fmt::Debug for OtlpJsonTracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpJsonTracer").field("book", &self.book).field("endpoint", &self.shipper.endpoint).finish()
    }
}

impl OtlpJsonTracer {
    /// The exporter `traces` asks for, posting through `backends.transport`; `first_provider`
    /// is the provider a task is at until an event names another.
    pub fn from_options(
        traces: &TraceOptions,
        first_provider: String,
        backends: &crate::runtime::Backends,
    ) -> crate::Result<Box<dyn TaskTracer>> {
        if traces.protocol == Some(OtlpProtocol::HttpProtobuf) {
            return Err(captcha_dlq_core::ConfigError::new(
                "traces.protocol",
                "this front end exports OTLP/HTTP JSON only: give `http/json` or leave `protocol` out",
            )
            .into());
        }
        let tracer = OtlpJsonTracer::new(traces, first_provider, backends.transport.clone(), backends.runtime.clone());
        Ok(Box::new(tracer))
    }

    pub fn new(
        options: &TraceOptions,
        first_provider: String,
        transport: Arc<dyn Transport>,
        runtime: Arc<dyn Runtime>,
    ) -> OtlpJsonTracer {
        let book = SpanBook::new(first_provider, runtime.random_seed());
        // Shared with the posts it spawns; without feature `send` (the browser: one thread) it holds `?Send`
        // backends, which is what the lint is about.
        #[allow(clippy::arc_with_non_send_sync)]
        let shipper = Arc::new(Shipper {
            transport,
            runtime,
            endpoint: options.otlp_endpoint.clone(),
            headers: options.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            service_name: options.service_name.clone(),
            queue: Mutex::default(),
        });
        OtlpJsonTracer { book, shipper }
    }

    /// Moves what ended into the queue and schedules a post if none is.
    fn ship_later(&mut self) {
        if !self.book.has_finished() {
            return;
        }
        let schedule = {
            let Ok(mut queue) = self.shipper.queue.lock() else { return };
            queue.spans.append(&mut self.book.take_finished());
            !std::mem::replace(&mut queue.scheduled, true)
        };
        if schedule {
            let shipper = self.shipper.clone();
            self.shipper.runtime.spawn(Box::pin(async move {
                shipper.runtime.sleep(BATCH_DELAY).await;
                if let Ok(mut queue) = shipper.queue.lock() {
                    queue.scheduled = false;
                }
                shipper.post_queued().await;
            }));
        }
    }

    /// Posts everything queued now and waits for it and for any post under way.
    fn ship_now(&mut self) -> BoxFuture<'static, ()> {
        if let Ok(mut queue) = self.shipper.queue.lock() {
            queue.spans.append(&mut self.book.take_finished());
        }
        let shipper = self.shipper.clone();
        Box::pin(async move { shipper.post_queued().await })
    }
}

impl Shipper {
    /// Posts the queue's spans, a batch at a time, until it is empty; with a post already under way
    /// (which posts what was queued meanwhile too), waits for it instead. One post at a time: the
    /// collector gets spans in the order they ended.
    async fn post_queued(&self) {
        let under_way = {
            let Ok(mut queue) = self.queue.lock() else { return };
            if queue.posting {
                let (done, posted) = oneshot::channel();
                queue.waiting.push(done);
                Some(posted)
            } else {
                queue.posting = true;
                None
            }
        };
        if let Some(posted) = under_way {
            let _ = posted.await;
            return;
        }
        loop {
            let batch = {
                let Ok(mut queue) = self.queue.lock() else { return };
                if queue.spans.is_empty() {
                    queue.posting = false;
                    for done in queue.waiting.drain(..) {
                        let _ = done.send(());
                    }
                    return;
                }
                // The oldest `MAX_BATCH_SPANS` go now, the rest wait for the next turn of the loop.
                let now = queue.spans.len().min(MAX_BATCH_SPANS);
                let rest = queue.spans.split_off(now);
                std::mem::replace(&mut queue.spans, rest)
            };
            self.post(&batch).await;
        }
    }

    async fn post(&self, batch: &[FinishedSpan]) {
        let body = match serde_json::to_vec(&encode(&self.service_name, batch)) {
            Ok(body) => body,
            Err(e) => {
                tracing::warn!(target: "captcha_dlq", "traces: {} spans could not be encoded: {e}", batch.len());
                return;
            }
        };
        // The collector's headers may hold its token: the request's `Debug` hides this value.
        let hidden = Secret::new(self.headers.first().map(|(_, v)| v.as_str()).unwrap_or_default());
        let mut request = HttpRequest::new(Method::Post, self.endpoint.clone(), &hidden)
            .with_header("content-type", "application/json")
            .with_body(body);
        for (name, value) in &self.headers {
            request = request.with_header(name, value);
        }
        request.timeout = EXPORT_TIMEOUT;
        let origin = request.origin();
        match self.transport.send_without_redirects(request).await {
            Ok(answer) if (200..300).contains(&answer.status) => {}
            Ok(answer) => tracing::warn!(
                target: "captcha_dlq",
                "traces: the OTLP collector at {origin} answered HTTP {} to {} spans",
                answer.status,
                batch.len()
            ),
            Err(e) => {
                tracing::warn!(target: "captcha_dlq", "traces: {} spans not exported to {origin}: {e}", batch.len())
            }
        }
    }
}

impl TaskTracer for OtlpJsonTracer {
    fn task_started(&mut self, task: TracedTask<'_>, now: Timestamp) {
        self.book.task_started(task, now);
        self.ship_later();
    }

    fn event(&mut self, event: &Event, now: Timestamp) {
        self.book.event(event, now);
        self.ship_later();
    }

    fn task_left(&mut self, job: JobId, why: TaskLeft, now: Timestamp) {
        self.book.task_left(job, why, now);
        self.ship_later();
    }

    fn flush(&mut self) -> Option<BoxFuture<'static, ()>> {
        Some(self.ship_now())
    }

    fn close(&mut self, now: Timestamp) -> BoxFuture<'static, ()> {
        self.book.close(now);
        self.ship_now()
    }
}

// The OTLP JSON encoding (opentelemetry-proto's `ExportTraceServiceRequest` in proto3 JSON: lowerCamelCase
// names, ids in hex, 64-bit integers as strings), serialized straight from the spans (borrowed, nothing copied).

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExportRequest<'a> {
    resource_spans: [ResourceSpans<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans<'a> {
    resource: Resource<'a>,
    scope_spans: [ScopeSpans<'a>; 1],
}

#[derive(Serialize)]
struct Resource<'a> {
    attributes: [KeyValue<'a>; 2],
}

#[derive(Serialize)]
struct ScopeSpans<'a> {
    scope: Scope,
    spans: Vec<Span<'a>>,
}

#[derive(Serialize)]
struct Scope {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Span<'a> {
    trace_id: String,
    span_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_span_id: Option<String>,
    name: &'static str,
    kind: u8,
    start_time_unix_nano: String,
    end_time_unix_nano: String,
    attributes: Vec<KeyValue<'a>>,
    events: Vec<SpanEvent<'a>>,
    status: Status<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SpanEvent<'a> {
    time_unix_nano: String,
    name: &'static str,
    attributes: Vec<KeyValue<'a>>,
}

#[derive(Serialize)]
struct Status<'a> {
    code: u8,
    #[serde(skip_serializing_if = "str::is_empty")]
    message: &'a str,
}

#[derive(Serialize)]
struct KeyValue<'a> {
    key: &'a str,
    value: AnyValue<'a>,
}

#[derive(Serialize)]
enum AnyValue<'a> {
    #[serde(rename = "stringValue")]
    String(&'a str),
    /// proto3 JSON writes 64-bit integers as strings.
    #[serde(rename = "intValue")]
    Int(String),
    #[serde(rename = "boolValue")]
    Bool(bool),
}

fn key_values(attributes: &[Attribute]) -> Vec<KeyValue<'_>> {
    attributes
        .iter()
        .map(|attribute| KeyValue {
            key: &attribute.key,
            value: match &attribute.value {
                AttributeValue::String(s) => AnyValue::String(s),
                AttributeValue::Int(n) => AnyValue::Int(n.to_string()),
                AttributeValue::Bool(b) => AnyValue::Bool(*b),
            },
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    text
}

fn nanos(at: Timestamp) -> String {
    format!("{}000000", at.as_unix_millis())
}

/// The export request of `spans` from the service `service_name`.
fn encode<'a>(service_name: &'a str, spans: &'a [FinishedSpan]) -> ExportRequest<'a> {
    let version = env!("CARGO_PKG_VERSION");
    let resource = Resource {
        attributes: [
            KeyValue { key: "service.name", value: AnyValue::String(service_name) },
            KeyValue { key: "service.version", value: AnyValue::String(version) },
        ],
    };
    let spans = spans
        .iter()
        .map(|span| {
            let (code, message) = match &span.status {
                SpanStatus::Unset => (0, ""),
                SpanStatus::Ok => (1, ""),
                SpanStatus::Error(message) => (2, message.as_str()),
            };
            Span {
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent_span_id: span.parent_span_id.as_ref().map(|id| hex(id)),
                name: span.name,
                kind: match span.kind {
                    SpanKind::Internal => 1,
                    SpanKind::Client => 3,
                },
                start_time_unix_nano: nanos(span.start),
                end_time_unix_nano: nanos(span.end),
                attributes: key_values(&span.attributes),
                events: span
                    .events
                    .iter()
                    .map(|e| SpanEvent {
                        time_unix_nano: nanos(e.at),
                        name: e.name,
                        attributes: key_values(&e.attributes),
                    })
                    .collect(),
                status: Status { code, message },
            }
        })
        .collect();
    let scope = Scope { name: "captcha-dlq", version };
    ExportRequest { resource_spans: [ResourceSpans { resource, scope_spans: [ScopeSpans { scope, spans }] }] }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{json, Value};

    use super::*;
    use crate::traces::TaskOrigin;
    use captcha_dlq_core::{ErrorClass, TaskKind};

    /// One task submitted, polled twice and solved, as the driver reports it.
    fn solved_task() -> Vec<FinishedSpan> {
        let mut book = SpanBook::new("captchaai".into(), 7);
        let job = JobId(1);
        let labels = BTreeMap::from([("case".to_string(), "ok".to_string())]);
        let task = TracedTask {
            job,
            id: "01J0000000000000000000000A",
            kind: TaskKind::RecaptchaV2,
            labels,
            origin: TaskOrigin::Submitted,
            replays: 0,
        };
        let at = Timestamp::from_unix_millis;
        book.task_started(task, at(1_000));
        book.event(&Event::Submitted { job, attempt: 1, provider_task_id: "42".into(), provider: None }, at(1_010));
        for ms in [1_030, 1_050] {
            book.event(&Event::Polled { tasks: 1, jobs: vec![job] }, at(ms));
        }
        book.event(&Event::Solved { job, attempts: 1, elapsed_ms: 50 }, at(1_060));
        book.take_finished()
    }

    #[test]
    fn a_solved_task_is_a_task_span_with_its_attempt_under_it_in_otlp_json() {
        let spans = solved_task();
        let encoded = serde_json::to_value(encode("shop", &spans)).unwrap();
        let resource = &encoded["resourceSpans"][0];
        assert_eq!(
            resource["resource"]["attributes"][0],
            json!({"key": "service.name", "value": {"stringValue": "shop"}})
        );
        let spans = resource["scopeSpans"][0]["spans"].as_array().unwrap();
        let (attempt, task) = (&spans[0], &spans[1]);
        let attrs = |span: &Value| -> BTreeMap<String, Value> {
            span["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| (a["key"].as_str().unwrap().to_string(), a["value"].clone()))
                .collect()
        };
        assert_eq!(
            (task["name"].as_str(), attempt["name"].as_str()),
            (Some("captcha_dlq.task"), Some("captcha_dlq.attempt"))
        );
        assert_eq!(
            attrs(task),
            BTreeMap::from([
                ("captcha_dlq.task.id".to_string(), json!({"stringValue": "01J0000000000000000000000A"})),
                ("captcha_dlq.task.type".to_string(), json!({"stringValue": TaskKind::RecaptchaV2.as_str()})),
                ("captcha_dlq.task.origin".to_string(), json!({"stringValue": "submitted"})),
                ("captcha_dlq.label.case".to_string(), json!({"stringValue": "ok"})),
                ("captcha_dlq.provider".to_string(), json!({"stringValue": "captchaai"})),
                ("captcha_dlq.outcome".to_string(), json!({"stringValue": "solved"})),
                ("captcha_dlq.attempts".to_string(), json!({"intValue": "1"})),
            ])
        );
        assert_eq!(attrs(attempt)["captcha_dlq.provider_task_id"], json!({"stringValue": "42"}));
        assert_eq!(attempt["parentSpanId"], task["spanId"]);
        assert_eq!(attempt["traceId"], task["traceId"]);
        assert!(task.get("parentSpanId").is_none(), "the task span is the trace's root");
        assert_eq!(task["traceId"].as_str().unwrap().len(), 32);
        assert_eq!(task["spanId"].as_str().unwrap().len(), 16);
        assert_eq!((task["kind"].clone(), attempt["kind"].clone()), (json!(1), json!(3)), "internal, client");
        assert_eq!(
            (task["startTimeUnixNano"].as_str(), task["endTimeUnixNano"].as_str()),
            (Some("1000000000"), Some("1060000000"))
        );
        assert_eq!(task["status"], json!({"code": 1}));
        let polls: Vec<&str> =
            attempt["events"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(polls, ["poll", "poll"]);
        assert_eq!(task["events"][0]["name"], "submitted");
    }

    #[test]
    fn a_dead_letter_ends_its_spans_as_errors_with_the_reason() {
        let mut book = SpanBook::new("p".into(), 1);
        let job = JobId(3);
        let task = TracedTask {
            job,
            id: "x",
            kind: TaskKind::RecaptchaV2,
            labels: BTreeMap::new(),
            origin: TaskOrigin::Replayed,
            replays: 2,
        };
        let at = Timestamp::from_unix_millis;
        book.task_started(task, at(0));
        book.event(
            &Event::Submitted { job, attempt: 1, provider_task_id: "9".into(), provider: Some("q".into()) },
            at(1),
        );
        let reason = "ERROR_CAPTCHA_UNSOLVABLE".to_string();
        let dead = Event::DeadLettered {
            job,
            id: "x".into(),
            reason: reason.clone(),
            class: ErrorClass::TaskTerminal,
            attempts: 1,
        };
        book.event(&dead, at(2));
        let spans = book.take_finished();
        assert_eq!(
            spans.iter().map(|s| (s.name, s.status.clone())).collect::<Vec<_>>(),
            [
                ("captcha_dlq.attempt", SpanStatus::Error(reason.clone())),
                ("captcha_dlq.task", SpanStatus::Error(reason.clone())),
            ]
        );
        let task = &spans[1];
        let value = |key: &str| task.attributes.iter().find(|a| a.key == key).map(|a| a.value.clone());
        assert_eq!(value("captcha_dlq.outcome"), Some(AttributeValue::String("dead_lettered".into())));
        assert_eq!(
            value("captcha_dlq.provider"),
            Some(AttributeValue::String("q".into())),
            "the provider the events named"
        );
        assert_eq!(value("captcha_dlq.task.replays"), Some(AttributeValue::Int(2)));
        assert_eq!(task.events.last().map(|e| e.name), Some("dead_letter"));
    }
}
