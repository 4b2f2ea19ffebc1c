//! OpenTelemetry spans per task, exported over OTLP/HTTP (the `traces` option, cargo feature
//! `otlp`).
//!
//! The spans are the client's span model's (`captcha_dlq_client::traces::spans::SpanBook`: one
//! trace per task, a `captcha_dlq.task` span with a `captcha_dlq.attempt` child per submission,
//! their attributes and events), the same the browser exports; this module only hands each span
//! that ended to the OpenTelemetry SDK's batch processor as the SDK's `SpanData`, for its OTLP
//! exporter (protobuf or JSON).
//!
//! Nothing here can hold the API key: spans are built from the engine's events and the task's
//! id, type and labels, never from a request, its URL or its body.
//!
//! Export is off the solve path: the SDK's batch processor queues finished spans and posts them
//! from its own thread, through the reqwest client already in the tree on the client's tokio
//! runtime ([`TokioHttp`]); the client's `close` waits for the last export.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use bytes::Bytes;
use captcha_dlq_client::options::traces::{OtlpProtocol, TraceOptions};
use captcha_dlq_client::options::ClientOptions;
use captcha_dlq_client::traces::spans::{Attribute, AttributeValue, FinishedSpan, SpanBook, SpanKind, SpanStatus};
use captcha_dlq_client::traces::{TaskLeft, TaskTracer, TracedTask};
use captcha_dlq_client::BoxFuture;
use captcha_dlq_core::{Event, JobId, Timestamp};
use opentelemetry::trace::{SpanContext, SpanId, Status, TraceFlags, TraceId, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SpanData, SpanEvents, SpanLinks, SpanProcessor,
};
use opentelemetry_sdk::Resource;

use captcha_dlq_client::{Error, Result};

/// How long one export may take; `close` waits at most about this long for the last one.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Finished spans waiting for export at most; beyond it (a collector down for long under heavy
/// load) the SDK drops spans rather than grow without bound.
const MAX_QUEUED_SPANS: usize = 65_536;

/// The exporter of one client: the span model's spans, handed to the SDK's batch processor.
pub struct OtlpTracer {
    processor: Arc<BatchSpanProcessor>,
    scope: InstrumentationScope,
    book: SpanBook,
}

impl std::fmt::Debug for OtlpTracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpTracer").field("book", &self.book).finish_non_exhaustive()
    }
}

/// The SDK's clock from the driver's.
fn at(now: Timestamp) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(now.as_unix_millis())
}

fn key_value(attribute: Attribute) -> KeyValue {
    match attribute.value {
        AttributeValue::String(s) => KeyValue::new(attribute.key, s),
        AttributeValue::Int(n) => KeyValue::new(attribute.key, n),
        AttributeValue::Bool(b) => KeyValue::new(attribute.key, b),
    }
}

/// A span of the model as the SDK's.
fn span_data(span: FinishedSpan, scope: &InstrumentationScope) -> SpanData {
    let mut events = SpanEvents::default();
    events.events = span
        .events
        .into_iter()
        .map(|e| {
            let attributes = e.attributes.into_iter().map(key_value).collect();
            opentelemetry::trace::Event::new(e.name, at(e.at), attributes, 0)
        })
        .collect();
    SpanData {
        span_context: SpanContext::new(
            TraceId::from_bytes(span.trace_id),
            SpanId::from_bytes(span.span_id),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        ),
        parent_span_id: span.parent_span_id.map_or(SpanId::INVALID, SpanId::from_bytes),
        parent_span_is_remote: false,
        span_kind: match span.kind {
            SpanKind::Internal => opentelemetry::trace::SpanKind::Internal,
            SpanKind::Client => opentelemetry::trace::SpanKind::Client,
        },
        name: Cow::Borrowed(span.name),
        start_time: at(span.start),
        end_time: at(span.end),
        attributes: span.attributes.into_iter().map(key_value).collect(),
        dropped_attributes_count: 0,
        events,
        links: SpanLinks::default(),
        status: match span.status {
            SpanStatus::Unset => Status::Unset,
            SpanStatus::Ok => Status::Ok,
            SpanStatus::Error(message) => Status::error(message),
        },
        instrumentation_scope: scope.clone(),
    }
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
        let mut processor = BatchSpanProcessor::builder(exporter).with_batch_config(batches).build();
        let resource = Resource::builder()
            .with_service_name(options.service_name.clone())
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        processor.set_resource(&resource);
        let scope = InstrumentationScope::builder("captcha-dlq").build();
        // Seeded as the runtime's randomness is (`crate::runtime`): ids must not repeat across clients.
        let book = SpanBook::new(first_provider, fastrand::u64(..));
        Ok(OtlpTracer { processor: Arc::new(processor), scope, book })
    }

    /// Hands the spans that ended to the batch processor.
    fn export_finished(&mut self) {
        for span in self.book.take_finished() {
            self.processor.on_end(span_data(span, &self.scope));
        }
    }
}

impl TaskTracer for OtlpTracer {
    fn task_started(&mut self, task: TracedTask<'_>, now: Timestamp) {
        self.book.task_started(task, now);
        self.export_finished();
    }

    fn event(&mut self, event: &Event, now: Timestamp) {
        self.book.event(event, now);
        self.export_finished();
    }

    fn task_left(&mut self, job: JobId, why: TaskLeft, now: Timestamp) {
        self.book.task_left(job, why, now);
        self.export_finished();
    }

    fn flush(&mut self) -> Option<BoxFuture<'static, ()>> {
        let processor = self.processor.clone();
        Some(Box::pin(async move {
            // As `close`: the processor's flush blocks until its export ended.
            match tokio::task::spawn_blocking(move || processor.force_flush()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(target: "captcha_dlq", "traces: the spans were not all exported: {e}"),
                Err(e) => tracing::warn!(target: "captcha_dlq", "traces: the export did not finish: {e}"),
            }
        }))
    }

    fn close(&mut self, now: Timestamp) -> BoxFuture<'static, ()> {
        // Still running: their journal entries keep them for `recover` (or the fleet).
        self.book.close(now);
        self.export_finished();
        let processor = self.processor.clone();
        Box::pin(async move {
            // Blocks until the batch processor has exported what it holds: on tokio's blocking
            // pool, so that the exports (posted on the runtime) can run meanwhile.
            let flushed = tokio::task::spawn_blocking(move || processor.shutdown_with_timeout(EXPORT_TIMEOUT)).await;
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
