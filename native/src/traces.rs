//! OpenTelemetry spans per task, exported over OTLP/HTTP (the `traces` option, cargo feature
//! `otlp`).
//!
//! Built from what the driver reports (see `captcha_dlq_client::traces`), one trace per task:
//! - a `captcha_dlq.task` span from the task's start to its end (solved, dead-lettered —
//!   cancelled is a dead letter of class `cancelled` —, not submitted, taken over by another
//!   client, or still running when the client closed), with the task's id (its ULID), type,
//!   labels (`captcha_dlq.label.<name>`), provider and outcome; a dead letter sets its status
//!   to an error with the reason, and `error.type` to the error class;
//! - a `captcha_dlq.attempt` child span per submission a provider accepted, until its answer
//!   or its failure, with a `poll` event per poll;
//! - events on the task span for each submission, retry, failover and the dead letter.
//!
//! Nothing here can hold the API key: spans are built from the engine's events and the task's
//! id, type and labels, never from a request, its URL or its body.
//!
//! Export is off the solve path: the SDK's batch processor queues finished spans and posts them
//! from its own thread, through the reqwest client already in the tree on the client's tokio
//! runtime ([`TokioHttp`]); the client's `close` waits for the last export.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use bytes::Bytes;
use captcha_dlq_client::traces::{TaskLeft, TaskTracer, TracedTask};
use captcha_dlq_client::BoxFuture;
use captcha_dlq_core::options::ClientOptions;
use captcha_dlq_core::traces::{OtlpProtocol, TraceOptions};
use captcha_dlq_core::{ErrorClass, Event, JobId, Timestamp};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;

use captcha_dlq_client::{Error, Result};

/// How long one export may take; `close` waits at most about this long for the last one.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Finished spans waiting for export at most; beyond it (a collector down for long under heavy
/// load) the SDK drops spans rather than grow without bound.
const MAX_QUEUED_SPANS: usize = 65_536;

/// The exporter of one client: builds spans out of the driver's reports, exports them.
pub struct OtlpTracer {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// The provider a task is at when the events do not name one (a client with one provider).
    first_provider: String,
    tasks: HashMap<JobId, TaskSpans>,
}

impl std::fmt::Debug for OtlpTracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpTracer").field("open_tasks", &self.tasks.len()).finish_non_exhaustive()
    }
}

/// One live task's spans.
struct TaskSpans {
    /// Holds the task's span; its attempts are started as its children.
    task: Context,
    attempt: Option<opentelemetry_sdk::trace::Span>,
    provider: String,
}

impl TaskSpans {
    /// An event `name` of the task's span at `now`.
    fn task_event(&self, name: &'static str, now: Timestamp, attributes: Vec<KeyValue>) {
        self.task.span().add_event_with_timestamp(name, at(now), attributes);
    }
}

/// The SDK's clock from the driver's.
fn at(now: Timestamp) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(now.as_unix_millis())
}

/// A span `name` of `kind` started at `now` under `parent`.
fn start_span(
    tracer: &SdkTracer,
    name: &'static str,
    kind: SpanKind,
    attributes: Vec<KeyValue>,
    now: Timestamp,
    parent: &Context,
) -> opentelemetry_sdk::trace::Span {
    tracer
        .span_builder(name)
        .with_kind(kind)
        .with_start_time(at(now))
        .with_attributes(attributes)
        .start_with_context(tracer, parent)
}

impl OtlpTracer {
    /// The exporter `options.traces` asks for, if it asks for one. Must be called on the tokio
    /// runtime the client runs on (exports are posted there).
    pub fn from_options(options: &ClientOptions) -> Result<Option<OtlpTracer>> {
        let Some(traces) = &options.traces else { return Ok(None) };
        let first_provider = options.primary().name.clone();
        OtlpTracer::new(traces, first_provider).map(Some)
    }

    fn new(options: &TraceOptions, first_provider: String) -> Result<OtlpTracer> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| Error::Io("traces: the OTLP exporter needs the tokio runtime the client runs on".into()))?;
        // No redirect followed: the spans and the headers (a collector's token) go to the
        // checked endpoint or nowhere; a 3xx is a failed export, logged. No proxy either: reqwest
        // reads HTTP(S)_PROXY / ALL_PROXY from the environment unless told not to, and a proxy
        // variable set for some other program would route the collector's token through it
        // (issue 44, finding 7). The endpoint is the one place spans go.
        let client = reqwest::Client::builder()
            .timeout(EXPORT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| Error::Io(format!("traces: the OTLP exporter's HTTP client could not be built: {e}")))?;
        let http = TokioHttp { client, runtime, endpoint: options.otlp_endpoint.clone() };
        let protocol = match options.protocol.unwrap_or_default() {
            OtlpProtocol::HttpProtobuf => Protocol::HttpBinary,
            OtlpProtocol::HttpJson => Protocol::HttpJson,
        };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(http)
            .with_endpoint(options.otlp_endpoint.clone())
            .with_protocol(protocol)
            .with_timeout(EXPORT_TIMEOUT)
            .with_headers(options.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .build()
            .map_err(|e| captcha_dlq_core::ConfigError::new("traces", format!("the OTLP exporter: {e}")))?;
        let batches = BatchConfigBuilder::default().with_max_queue_size(MAX_QUEUED_SPANS).build();
        let processor = BatchSpanProcessor::builder(exporter).with_batch_config(batches).build();
        let resource = Resource::builder()
            .with_service_name(options.service_name.clone())
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let provider = SdkTracerProvider::builder().with_span_processor(processor).with_resource(resource).build();
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "captcha-dlq");
        Ok(OtlpTracer { provider, tracer, first_provider, tasks: HashMap::new() })
    }

    /// Ends a task's spans with `status`: its attempt (if one is open), then the task.
    fn end_task(
        &mut self,
        job: JobId,
        outcome: &'static str,
        status: Status,
        attributes: Vec<KeyValue>,
        now: Timestamp,
    ) {
        let Some(mut spans) = self.tasks.remove(&job) else { return };
        if let Some(mut attempt) = spans.attempt.take() {
            attempt.set_status(status.clone());
            attempt.end_with_timestamp(at(now));
        }
        let span = spans.task.span();
        span.set_attribute(KeyValue::new("captcha_dlq.provider", spans.provider));
        span.set_attribute(KeyValue::new("captcha_dlq.outcome", outcome));
        span.set_attributes(attributes);
        span.set_status(status);
        span.end_with_timestamp(at(now));
    }

    /// Ends the open attempt of `job` as failed with `code` (a retry, a failover).
    fn end_attempt(spans: &mut TaskSpans, code: &str, class: Option<ErrorClass>, now: Timestamp) {
        if let Some(mut attempt) = spans.attempt.take() {
            if let Some(class) = class {
                attempt.set_attribute(KeyValue::new("error.type", class.as_str()));
            }
            attempt.set_status(Status::error(code.to_string()));
            attempt.end_with_timestamp(at(now));
        }
    }
}

impl TaskTracer for OtlpTracer {
    fn task_started(&mut self, task: TracedTask<'_>, now: Timestamp) {
        let mut attributes = vec![
            KeyValue::new("captcha_dlq.task.id", task.id.to_string()),
            KeyValue::new("captcha_dlq.task.type", task.kind.as_str()),
            KeyValue::new("captcha_dlq.task.origin", task.origin.as_str()),
        ];
        if task.replays > 0 {
            attributes.push(KeyValue::new("captcha_dlq.task.replays", i64::from(task.replays)));
        }
        for (name, value) in task.labels {
            attributes.push(KeyValue::new(format!("captcha_dlq.label.{name}"), value));
        }
        let span = start_span(&self.tracer, "captcha_dlq.task", SpanKind::Internal, attributes, now, &Context::new());
        let spans =
            TaskSpans { task: Context::new().with_span(span), attempt: None, provider: self.first_provider.clone() };
        // A job id is not reused while the client runs; a second start ends the first's spans.
        if self.tasks.contains_key(&task.job) {
            self.end_task(task.job, "restarted", Status::Unset, Vec::new(), now);
        }
        self.tasks.insert(task.job, spans);
    }

    fn event(&mut self, event: &Event, now: Timestamp) {
        match event {
            Event::Submitted { job, attempt, provider_task_id, provider } => {
                let Some(spans) = self.tasks.get_mut(job) else { return };
                if let Some(provider) = provider {
                    spans.provider = provider.clone();
                }
                Self::end_attempt(spans, "resubmitted", None, now);
                let attributes = vec![
                    KeyValue::new("captcha_dlq.attempt", i64::from(*attempt)),
                    KeyValue::new("captcha_dlq.provider", spans.provider.clone()),
                    KeyValue::new("captcha_dlq.provider_task_id", provider_task_id.clone()),
                ];
                spans.task_event("submitted", now, attributes.clone());
                let attempt_span =
                    start_span(&self.tracer, "captcha_dlq.attempt", SpanKind::Client, attributes, now, &spans.task);
                spans.attempt = Some(attempt_span);
            }
            Event::Polled { jobs, .. } => {
                for job in jobs {
                    let Some(spans) = self.tasks.get_mut(job) else { continue };
                    match &mut spans.attempt {
                        Some(attempt) => attempt.add_event_with_timestamp("poll", at(now), Vec::new()),
                        None => spans.task_event("poll", now, Vec::new()),
                    }
                }
            }
            Event::Retrying { job, code, class, delay_ms, attempt } => {
                let Some(spans) = self.tasks.get_mut(job) else { return };
                Self::end_attempt(spans, code, Some(*class), now);
                let attributes = vec![
                    KeyValue::new("captcha_dlq.reason", code.clone()),
                    KeyValue::new("error.type", class.as_str()),
                    KeyValue::new("captcha_dlq.retry.delay_ms", i64::try_from(*delay_ms).unwrap_or(i64::MAX)),
                    KeyValue::new("captcha_dlq.attempt", i64::from(*attempt)),
                ];
                spans.task_event("retry", now, attributes);
            }
            Event::Rerouted { job, from, to, reason } => {
                let Some(spans) = self.tasks.get_mut(job) else { return };
                Self::end_attempt(spans, reason, None, now);
                spans.provider = to.clone();
                let attributes = vec![
                    KeyValue::new("captcha_dlq.failover.from", from.clone()),
                    KeyValue::new("captcha_dlq.failover.to", to.clone()),
                    KeyValue::new("captcha_dlq.reason", reason.clone()),
                ];
                spans.task_event("failover", now, attributes);
            }
            Event::Recovered { job, resumed_polling, .. } => {
                if let Some(spans) = self.tasks.get(job) {
                    let attributes = vec![KeyValue::new("captcha_dlq.recovered.polling", *resumed_polling)];
                    spans.task_event("recovered", now, attributes);
                }
            }
            Event::Solved { job, attempts, .. } => {
                let attributes = vec![KeyValue::new("captcha_dlq.attempts", i64::from(*attempts))];
                self.end_task(*job, "solved", Status::Ok, attributes, now);
            }
            Event::DeadLettered { job, reason, class, attempts, .. } => {
                if let Some(spans) = self.tasks.get(job) {
                    let attributes = vec![
                        KeyValue::new("captcha_dlq.reason", reason.clone()),
                        KeyValue::new("error.type", class.as_str()),
                    ];
                    spans.task_event("dead_letter", now, attributes);
                }
                let outcome = if *class == ErrorClass::Cancelled { "cancelled" } else { "dead_lettered" };
                let attributes = vec![
                    KeyValue::new("captcha_dlq.attempts", i64::from(*attempts)),
                    KeyValue::new("captcha_dlq.reason", reason.clone()),
                    KeyValue::new("error.type", class.as_str()),
                ];
                self.end_task(*job, outcome, Status::error(reason.clone()), attributes, now);
            }
            _ => {}
        }
    }

    fn task_left(&mut self, job: JobId, why: TaskLeft, now: Timestamp) {
        let status = match why {
            TaskLeft::NotSubmitted => Status::error("its journal entry could not be written; nothing was paid"),
            TaskLeft::TakenOver => Status::Unset,
        };
        self.end_task(job, why.as_str(), status, Vec::new(), now);
    }

    fn close(&mut self, now: Timestamp) -> BoxFuture<'static, ()> {
        let open: Vec<JobId> = self.tasks.keys().copied().collect();
        for job in open {
            // Still running: its journal entry keeps it for `recover` (or the fleet).
            self.end_task(job, "open_at_close", Status::Unset, Vec::new(), now);
        }
        let provider = self.provider.clone();
        Box::pin(async move {
            // Blocks until the batch processor has exported what it holds: on tokio's blocking
            // pool, so that the exports (posted on the runtime) can run meanwhile.
            let flushed = tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(EXPORT_TIMEOUT)).await;
            match flushed {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::warn!(target: "captcha_dlq", "traces: the last spans were not all exported: {e}")
                }
                Err(e) => tracing::warn!(target: "captcha_dlq", "traces: the last export did not finish: {e}"),
            }
        })
    }
}

/// A collector's answer is read up to this much (an OTLP answer is a few bytes; more is not
/// one, and reading on would only fill memory).
const MAX_COLLECTOR_ANSWER_BYTES: usize = 64 << 10;

async fn read_bounded(mut response: reqwest::Response) -> std::result::Result<Bytes, HttpError> {
    let too_large =
        || -> HttpError { format!("the OTLP collector's answer is over {MAX_COLLECTOR_ANSWER_BYTES} bytes").into() };
    if response.content_length().is_some_and(|n| n > MAX_COLLECTOR_ANSWER_BYTES as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_COLLECTOR_ANSWER_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

/// [`HttpClient`] for the exporter over the tree's reqwest, run on the client's tokio runtime
/// (the batch processor exports from a thread of its own, outside any runtime). A failed
/// export is logged: spans are never dropped without a word.
#[derive(Debug)]
struct TokioHttp {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
    /// For messages (a collector's URL; the headers are not shown).
    endpoint: String,
}

#[async_trait]
impl HttpClient for TokioHttp {
    async fn send_bytes(&self, request: Request<Bytes>) -> std::result::Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let exchange = async move {
            let request = reqwest::Request::try_from(request)?;
            let response = client.execute(request).await?;
            let mut answer = Response::builder().status(response.status());
            if let Some(headers) = answer.headers_mut() {
                *headers = response.headers().clone();
            }
            let body = read_bounded(response).await?;
            Ok::<_, HttpError>(answer.body(body)?)
        };
        let answer = match self.runtime.spawn(exchange).await {
            Ok(answer) => answer,
            Err(e) => Err(format!("the export was stopped: {e}").into()),
        };
        match &answer {
            Ok(response) if !response.status().is_success() => tracing::warn!(
                target: "captcha_dlq",
                "traces: the OTLP collector at {} answered {}",
                self.endpoint,
                response.status()
            ),
            Err(e) => tracing::warn!(target: "captcha_dlq", "traces: OTLP export to {} failed: {e}", self.endpoint),
            Ok(_) => {}
        }
        answer
    }
}
