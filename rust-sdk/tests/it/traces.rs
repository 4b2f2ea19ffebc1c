//! Traces end to end (feature `otlp`): a client solving against the mock solver over loopback
//! exports its spans to a local OTLP/HTTP receiver, which decodes them with the protocol's own
//! types (`opentelemetry-proto`) and checks them: one trace per task with its id, labels, type
//! and provider, an attempt span per submission under it, the retries and the dead letter as
//! events with an error status, and the API key nowhere in what was sent.

use crate::support;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::routing::post;
use captcha_dlq::core::{Task, ValidTask};
use captcha_dlq::{Client, Error};
use captcha_dlq_mock::{Behavior, Matcher, MockConfig, MockHandle, MockSolver, Outcome, Rule};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{json, Value};

/// The API key of these tests: distinctive, so that a scan of the raw bytes finds any copy.
const KEY: &str = "KEY-that-no-span-may-carry-7f3e9a";

/// What a receiver got: each request's headers and body.
type Received = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

/// An OTLP/HTTP receiver on loopback: keeps every request to `/v1/traces`.
async fn receiver() -> (SocketAddr, Received) {
    let received: Received = Arc::default();
    let store = received.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        post(move |headers: HeaderMap, body: Bytes| {
            let store = store.clone();
            async move {
                store.lock().unwrap().push((headers, body));
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, received)
}

async fn mock() -> MockHandle {
    let failing = Rule {
        matcher: Matcher { page_url_contains: Some("/fails".into()), ..Matcher::default() },
        behavior: Behavior { outcome: Outcome::Unsolvable, solve_after_ms: 20, ..Behavior::default() },
    };
    let script = MockConfig {
        default_behavior: Behavior { solve_after_ms: 20, ..Behavior::default() },
        rules: vec![failing],
        ..MockConfig::default()
    };
    MockSolver::start(script).await.expect("mock starts")
}

/// Polling and backoff scaled down so that a task fails for good in well under a second.
fn fast_config() -> captcha_dlq::EngineConfig {
    use captcha_dlq::core::engine::{Backoff, FirstPoll};
    let mut c = captcha_dlq::EngineConfig::default();
    c.polling.first_poll_ms = FirstPoll::uniform(30);
    c.polling.interval_ms = 30;
    c.polling.coalesce_ms = 10;
    c.retry.backoff = Backoff::FullJitter { base_ms: 10, cap_ms: 50 };
    c.retry.transient_min_delay_ms = 10;
    c
}

async fn client(mock: &MockHandle, traces: Value) -> Client {
    captcha_dlq::builder()
        .api_key(KEY)
        .base_url(mock.base_url())
        .dlq("memory")
        .config(fast_config())
        .option("traces", traces)
        .build()
        .await
        .expect("client builds")
}

/// A client over a memory DLQ whose traces go to `otlp_endpoint`, to be built.
fn traced(otlp_endpoint: &str) -> captcha_dlq::ClientBuilder {
    captcha_dlq::builder().api_key(KEY).dlq("memory").option("traces", json!({ "otlp_endpoint": otlp_endpoint }))
}

fn task(page: &str) -> ValidTask {
    Task::from_json_value(
        json!({"type": "recaptcha_v2", "sitekey": "6Le-SITEKEY", "page_url": format!("https://example.com{page}")}),
    )
    .unwrap()
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Solves one task that succeeds and one that fails to the DLQ; their record ids.
async fn solve_one_of_each(client: &Client) -> (String, String) {
    let solved = client.submit(task("/ok"), labels(&[("shop", "north"), ("batch", "b-17")]), None).await.unwrap();
    let solved_id = solved.id().to_string();
    let failing = client.submit(task("/fails"), labels(&[("shop", "south")]), None).await.unwrap();
    let failed_id = failing.id().to_string();
    solved.wait().await.expect("solved");
    match failing.wait().await {
        Err(Error::SolveFailed { record, stored: true }) => assert_eq!(record.id, failed_id),
        other => panic!("expected a dead letter, got {other:?}"),
    }
    (solved_id, failed_id)
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a AnyValue> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.as_ref()).and_then(|v| v.value.as_ref())
}

fn text<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    match attribute(attributes, key) {
        Some(AnyValue::StringValue(s)) => Some(s),
        _ => None,
    }
}

fn int(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match attribute(attributes, key) {
        Some(AnyValue::IntValue(i)) => Some(*i),
        _ => None,
    }
}

/// Every span of every protobuf export, with its resource's `service.name`.
fn decode(received: &Received) -> Vec<(String, Span)> {
    let mut spans = Vec::new();
    for (headers, body) in received.lock().unwrap().iter() {
        assert_eq!(headers.get("content-type").unwrap(), "application/x-protobuf");
        let request = ExportTraceServiceRequest::decode(body.as_ref()).expect("a valid OTLP protobuf export");
        for resource_spans in request.resource_spans {
            let resource = resource_spans.resource.unwrap_or_default();
            let service = text(&resource.attributes, "service.name").unwrap_or_default().to_string();
            for scope in resource_spans.scope_spans {
                spans.extend(scope.spans.into_iter().map(|s| (service.clone(), s)));
            }
        }
    }
    spans
}

/// Neither the key nor anything holding it (a provider URL with `key=`, a request body) in
/// any byte a receiver got, headers included.
fn assert_no_key(received: &Received) {
    for (headers, body) in received.lock().unwrap().iter() {
        let raw = body.as_ref();
        assert!(!raw.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "the API key is in an export");
        assert!(!raw.windows(4).any(|w| w == b"key="), "a URL with a key parameter is in an export");
        for (name, value) in headers {
            assert!(!value.as_bytes().windows(KEY.len()).any(|w| w == KEY.as_bytes()), "the key is in header {name}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_per_task_with_attempts_retries_and_the_dead_letter_and_never_the_key() {
    let (addr, received) = receiver().await;
    let mock = mock().await;
    let traces = json!({
        "otlp_endpoint": format!("http://{addr}"),
        "service_name": "shop-bot",
        "headers": {"x-collector-token": "collector-secret"},
    });
    let client = client(&mock, traces).await;
    let provider = client.options().primary().name.clone();
    let (solved_id, failed_id) = solve_one_of_each(&client).await;
    // Nothing waits on the solve path: the spans are exported by `close` at the latest.
    client.close().await;

    assert_no_key(&received);
    let first = received.lock().unwrap().first().map(|(h, _)| h.clone()).expect("spans arrived");
    assert_eq!(first.get("x-collector-token").unwrap(), "collector-secret", "the options' headers are sent");
    let spans = decode(&received);
    assert!(spans.iter().all(|(service, _)| service == "shop-bot"));
    let spans: Vec<Span> = spans.into_iter().map(|(_, s)| s).collect();
    let task_span = |id: &str| {
        let found: Vec<&Span> = spans
            .iter()
            .filter(|s| s.name == "captcha_dlq.task" && text(&s.attributes, "captcha_dlq.task.id") == Some(id))
            .collect();
        assert_eq!(found.len(), 1, "one task span for {id}");
        found[0]
    };
    let attempts_of = |parent: &Span| -> Vec<&Span> {
        let mut found: Vec<&Span> = spans
            .iter()
            .filter(|s| s.name == "captcha_dlq.attempt" && s.parent_span_id == parent.span_id)
            .inspect(|s| assert_eq!(s.trace_id, parent.trace_id, "an attempt is in its task's trace"))
            .collect();
        found.sort_by_key(|s| int(&s.attributes, "captcha_dlq.attempt"));
        found
    };
    let event_names = |span: &Span| -> Vec<String> { span.events.iter().map(|e| e.name.clone()).collect() };

    let solved = task_span(&solved_id);
    assert!(solved.parent_span_id.is_empty(), "a task span is its trace's root");
    assert_eq!(text(&solved.attributes, "captcha_dlq.label.shop"), Some("north"));
    assert_eq!(text(&solved.attributes, "captcha_dlq.label.batch"), Some("b-17"));
    assert_eq!(text(&solved.attributes, "captcha_dlq.task.type"), Some("recaptcha_v2"));
    assert_eq!(text(&solved.attributes, "captcha_dlq.provider"), Some(provider.as_str()));
    assert_eq!(text(&solved.attributes, "captcha_dlq.outcome"), Some("solved"));
    assert_eq!(solved.status.as_ref().unwrap().code, StatusCode::Ok as i32);
    assert_eq!(event_names(solved), ["submitted"]);
    let solved_attempts = attempts_of(solved);
    assert_eq!(solved_attempts.len(), 1);
    assert!(solved_attempts[0].events.iter().any(|e| e.name == "poll"), "the attempt records its polls");
    assert!(solved.start_time_unix_nano <= solved_attempts[0].start_time_unix_nano);
    assert!(solved_attempts[0].end_time_unix_nano <= solved.end_time_unix_nano);

    let failed = task_span(&failed_id);
    assert_ne!(failed.trace_id, solved.trace_id, "each task is its own trace");
    assert_eq!(text(&failed.attributes, "captcha_dlq.label.shop"), Some("south"));
    assert_eq!(text(&failed.attributes, "captcha_dlq.outcome"), Some("dead_lettered"));
    assert_eq!(text(&failed.attributes, "captcha_dlq.reason"), Some("ERROR_CAPTCHA_UNSOLVABLE"));
    assert!(text(&failed.attributes, "error.type").is_some_and(|class| !class.is_empty()));
    let status = failed.status.as_ref().unwrap();
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_eq!(status.message, "ERROR_CAPTCHA_UNSOLVABLE");
    let attempts = attempts_of(failed);
    let submitted = int(&failed.attributes, "captcha_dlq.attempts").expect("the attempts are counted");
    assert!(submitted > 1, "the unsolvable task was retried");
    assert_eq!(attempts.len() as i64, submitted, "an attempt span per submission");
    assert!(attempts.iter().all(|a| a.status.as_ref().unwrap().code == StatusCode::Error as i32));
    let names = event_names(failed);
    let count = |name: &str| names.iter().filter(|n| *n == name).count() as i64;
    assert_eq!((count("submitted"), count("retry"), count("dead_letter")), (submitted, submitted - 1, 1), "{names:?}");
    assert_eq!(names.last().map(String::as_str), Some("dead_letter"));
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_json_exports_the_same_spans() {
    let (addr, received) = receiver().await;
    let mock = mock().await;
    let traces = json!({"otlp_endpoint": format!("http://{addr}/v1/traces"), "protocol": "http/json"});
    let client = client(&mock, traces).await;
    let (solved_id, failed_id) = solve_one_of_each(&client).await;
    client.close().await;

    assert_no_key(&received);
    let mut task_ids = Vec::new();
    for (headers, body) in received.lock().unwrap().iter() {
        assert_eq!(headers.get("content-type").unwrap(), "application/json");
        let export: Value = serde_json::from_slice(body).expect("an OTLP JSON export");
        let service = &export["resourceSpans"][0]["resource"]["attributes"];
        assert!(service
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["key"] == "service.name" && a["value"]["stringValue"] == "captcha-dlq"));
        for resource in export["resourceSpans"].as_array().unwrap() {
            for scope in resource["scopeSpans"].as_array().unwrap() {
                for span in scope["spans"].as_array().unwrap().iter().filter(|s| s["name"] == "captcha_dlq.task") {
                    let attributes = span["attributes"].as_array().unwrap();
                    let id = attributes.iter().find(|a| a["key"] == "captcha_dlq.task.id").unwrap();
                    task_ids.push(id["value"]["stringValue"].as_str().unwrap().to_string());
                }
            }
        }
    }
    task_ids.sort();
    let mut expected = vec![solved_id, failed_id];
    expected.sort();
    assert_eq!(task_ids, expected);
    mock.shutdown().await;
}

/// Issue 44, finding 6: the exporter's client followed redirects, taking the spans and the
/// collector's headers wherever a 307 pointed. An export answered so fails (logged) and goes
/// nowhere else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_otlp_collector_answering_a_redirect_is_not_followed() {
    let mock = mock().await;
    let servers = support::Redirects::start().await;
    let endpoint = format!("{}/elsewhere", servers.redirector);
    let client = client(&mock, json!({"otlp_endpoint": endpoint, "headers": {"authorization": "Bearer t"}})).await;
    solve_one_of_each(&client).await;
    client.close().await; // sends the last spans
    assert!(servers.redirector_hits() >= 1, "the export was tried");
    assert_eq!(servers.target_hits(), 0, "and went nowhere else");
}

/// Issue 44, finding 7: the exporter's client read `HTTP_PROXY` and friends from the
/// environment, so a proxy variable meant for some other program routed the spans and the
/// collector's token through that proxy. With the variables pointing at a listener that counts
/// connections, the spans still reach the collector, and the "proxy" sees nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_7_otlp_export_ignores_proxy_variables() {
    // A "proxy" that counts the connections it is offered and closes them.
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let offered = Arc::new(Mutex::new(0usize));
    let count = offered.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = proxy.accept().await {
            *count.lock().unwrap() += 1;
            drop(socket);
        }
    });
    // nextest runs each test in its own process: these variables are this test's alone.
    for name in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        std::env::set_var(name, &proxy_url);
    }
    for name in ["NO_PROXY", "no_proxy"] {
        std::env::remove_var(name);
    }
    let (addr, received) = receiver().await;
    let mock = mock().await;
    let traces = json!({"otlp_endpoint": format!("http://{addr}/v1/traces"), "headers": {"authorization": "Bearer t"}});
    let client = client(&mock, traces).await;
    solve_one_of_each(&client).await;
    client.close().await; // sends the last spans
    assert!(!received.lock().unwrap().is_empty(), "the spans reached the collector directly");
    assert_eq!(*offered.lock().unwrap(), 0, "and nothing went through the proxy the environment names");
    mock.shutdown().await;
}

#[tokio::test]
async fn bad_trace_options_are_refused_naming_the_field() {
    let built = traced("grpc://127.0.0.1:4317").build().await;
    match built {
        Err(Error::Config(e)) => {
            assert_eq!(e.field, "traces.otlp_endpoint");
            assert!(e.problem.contains("not an http(s) URL"), "{e}");
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}

/// The spans an export carried, decoded from OTLP JSON with the protocol's own types.
fn decode_json(received: &Received) -> Vec<Span> {
    let mut spans = Vec::new();
    for (headers, body) in received.lock().unwrap().iter() {
        assert_eq!(headers.get("content-type").unwrap(), "application/json");
        let request: ExportTraceServiceRequest = serde_json::from_slice(body).expect("a valid OTLP JSON export");
        for resource_spans in request.resource_spans {
            spans.extend(resource_spans.scope_spans.into_iter().flat_map(|scope| scope.spans));
        }
    }
    spans
}

/// What two runs of the same tasks must share: each span's name, parent or not, status, attributes and event
/// names (consecutive polls as one: their number depends on timing), without the values that differ by run
/// (ids, the retry's jittered delay).
fn shape(spans: &[Span]) -> Vec<String> {
    const PER_RUN: [&str; 3] = ["captcha_dlq.task.id", "captcha_dlq.provider_task_id", "captcha_dlq.retry.delay_ms"];
    let attributes = |attributes: &[KeyValue]| -> Vec<String> {
        let mut shown: Vec<String> = attributes
            .iter()
            .map(|kv| match PER_RUN.contains(&kv.key.as_str()) {
                true => kv.key.clone(),
                false => format!("{}={:?}", kv.key, kv.value.as_ref().and_then(|v| v.value.as_ref())),
            })
            .collect();
        shown.sort();
        shown
    };
    let mut shapes: Vec<String> = spans
        .iter()
        .map(|span| {
            let mut events: Vec<String> =
                span.events.iter().map(|e| format!("{}{:?}", e.name, attributes(&e.attributes))).collect();
            events.dedup();
            let status = span.status.as_ref().map(|s| (s.code, s.message.clone()));
            format!(
                "{} child={} status={status:?} {:?} events={events:?}",
                span.name,
                !span.parent_span_id.is_empty(),
                attributes(&span.attributes)
            )
        })
        .collect();
    shapes.sort();
    shapes
}

/// A front end that brings no exporter (a `Client` started without a tracer: the browser's case) gets the client's
/// own, OTLP/HTTP JSON posted through the front end's transport. For the same tasks it exports the same spans as
/// the OpenTelemetry SDK's exporter (both encode the client's span model), as valid OTLP JSON; `http/protobuf`,
/// which it cannot encode, is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_front_end_without_an_exporter_gets_the_clients_otlp_json_one_with_the_same_spans() {
    let mock = mock().await;
    let (sdk_addr, sdk_received) = receiver().await;
    let sdk = client(&mock, json!({"otlp_endpoint": format!("http://{sdk_addr}"), "protocol": "http/json"})).await;
    solve_one_of_each(&sdk).await;
    sdk.close().await;

    let start = |traces: Value| {
        let options = captcha_dlq::builder()
            .api_key(KEY)
            .base_url(mock.base_url())
            .dlq("memory")
            .config(fast_config())
            .option("traces", traces)
            .options()
            .unwrap();
        async move {
            let backends = captcha_dlq::Backends {
                runtime: Arc::new(captcha_dlq::runtime::TokioRuntime::current().unwrap()),
                transport: Arc::new(captcha_dlq::transport::ReqwestTransport::new(options.secrets(), None).unwrap()),
                liveness: Arc::new(captcha_dlq::liveness::ProcessLiveness),
                store: captcha_dlq::open_store("memory").await.unwrap(),
            };
            Client::start(options, backends, None)
        }
    };
    let (addr, received) = receiver().await;
    let own = start(json!({"otlp_endpoint": format!("http://{addr}")})).await.expect("the client's exporter");
    solve_one_of_each(&own).await;
    own.close().await;

    assert_no_key(&received);
    let (theirs, ours) = (decode_json(&sdk_received), decode_json(&received));
    assert!(ours.iter().any(|s| s.name == "captcha_dlq.attempt") && ours.iter().any(|s| s.name == "captcha_dlq.task"));
    assert_eq!(shape(&ours), shape(&theirs));

    match start(json!({"otlp_endpoint": format!("http://{addr}"), "protocol": "http/protobuf"})).await {
        Err(Error::Config(e)) => {
            assert_eq!(e.field, "traces.protocol");
            assert!(e.problem.contains("OTLP/HTTP JSON only"), "{e}");
        }
        other => panic!("expected a config error, got {:?}", other.map(|_| ())),
    }
    mock.shutdown().await;
}
