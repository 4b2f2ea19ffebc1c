//! HTTP on a tokio listener with hyper: routing, fault injection and the `/mock/*` control endpoints.
//!
//! hyper is used directly (not a framework) because a connection reset must really abort the TCP connection:
//! each connection keeps a duplicate of its socket so that a reset fault can set `SO_LINGER` to zero and
//! make hyper drop the connection, which the kernel then answers with RST instead of a response.

use std::error::Error;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{header, Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::{Duration, Instant};

use crate::config::MockConfig;
use crate::reply::{Reply, NGINX_502};
use crate::state::{Fault, State};
use crate::v1::Params;
use crate::{json_api, v1};

/// Largest request body read (base64 images stay far below it).
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// The body of an `oversized` answer: more than a client should read of one.
const OVERSIZED_BYTES: usize = 5 << 20;

pub(crate) type Shared = Arc<Mutex<State>>;

/// The state lock; a panic elsewhere while holding it must not take the mock down with it.
pub(crate) fn lock(shared: &Mutex<State>) -> MutexGuard<'_, State> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Returned by the service to make hyper drop a connection without answering.
#[derive(Debug)]
struct Aborted;

impl fmt::Display for Aborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("connection reset injected by the mock")
    }
}

impl Error for Aborted {}

/// Accepts connections until the task running it is aborted (which aborts every connection with it).
pub(crate) async fn accept_loop(listener: TcpListener, shared: Shared) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Counted here, not in the task: a connection accepted is open before its task first runs.
                    let open = OpenConnection::new(shared.clone());
                    connections.spawn(serve_connection(stream, open, shared.clone()));
                }
                // Out of file descriptors and the like: wait instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Counts a connection as open from its acceptance until its task ends (also when the task is aborted).
struct OpenConnection(Shared);

impl OpenConnection {
    fn new(shared: Shared) -> OpenConnection {
        lock(&shared).open_connections += 1;
        OpenConnection(shared)
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        lock(&self.0).open_connections -= 1;
    }
}

async fn serve_connection(stream: TcpStream, _open: OpenConnection, shared: Shared) {
    let _ = stream.set_nodelay(true);
    let Ok(std_stream) = stream.into_std() else { return };
    let Ok(socket) = std_stream.try_clone() else { return };
    let Ok(stream) = TcpStream::from_std(std_stream) else { return };
    let socket = Arc::new(socket);
    let service = service_fn(move |request| handle(shared.clone(), socket.clone(), request));
    let _ = http1::Builder::new().timer(TokioTimer::new()).serve_connection(TokioIo::new(stream), service).await;
}

/// Endpoint names used in the request counters (a fixed set, so garbage paths cannot grow the map).
fn endpoint(path: &str) -> &'static str {
    match path {
        "/in.php" => "/in.php",
        "/res.php" => "/res.php",
        "/createTask" => "/createTask",
        "/getTaskResult" => "/getTaskResult",
        "/getBalance" => "/getBalance",
        _ => "other",
    }
}

async fn handle(
    shared: Shared,
    socket: Arc<std::net::TcpStream>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Aborted> {
    let (parts, body) = request.into_parts();
    let cors = lock(&shared).config.cors;
    let body = match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(respond(Reply::text("request body too large or unreadable").with_status(413), cors)),
    };
    if parts.method == Method::OPTIONS && cors {
        return Ok(preflight(&parts));
    }
    let path = parts.uri.path().to_string();
    if let Some(reply) = control(&shared, &parts, &path, &body) {
        return Ok(respond(reply, cors));
    }
    let name = endpoint(&path);
    let (fault, slow) = {
        let mut state = lock(&shared);
        state.counters.request(name);
        if name == "other" {
            return Ok(respond(Reply::text("not found").with_status(404), cors));
        }
        state.draw_faults(&path)
    };
    if let Some(delay) = slow {
        tokio::time::sleep(delay).await;
    }
    match fault {
        Some(Fault::ConnectionReset) => {
            // Zero linger turns the close into an RST; if it cannot be set, the close is still answerless.
            let _ = socket2::SockRef::from(socket.as_ref()).set_linger(Some(Duration::ZERO));
            return Err(Aborted);
        }
        Some(Fault::Http5xx(status)) => {
            let reason = StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("Server Error");
            return Ok(respond(Reply::text(reason).with_status(status), cors));
        }
        Some(Fault::Html502) => {
            let page = Reply { status: 502, content_type: "text/html", body: NGINX_502.to_string() };
            return Ok(respond(page, cors));
        }
        Some(Fault::Oversized) => {
            return Ok(respond(Reply::text("x".repeat(OVERSIZED_BYTES)), cors));
        }
        Some(Fault::TruncatedJson) | None => {}
    }
    let reply = protocol(&shared, &parts, &path, &body);
    let reply = if fault == Some(Fault::TruncatedJson) { reply.truncated() } else { reply };
    Ok(respond(reply, cors))
}

/// Answers a solving-protocol request.
fn protocol(shared: &Shared, parts: &Parts, path: &str, body: &[u8]) -> Reply {
    let now = Instant::now();
    let is_v1 = path == "/in.php" || path == "/res.php";
    if is_v1 && parts.method != Method::GET && parts.method != Method::POST {
        return Reply::text("method not allowed").with_status(405);
    }
    if !is_v1 && parts.method != Method::POST {
        let error = json!({ "errorId": 1, "errorCode": "ERROR_BAD_PARAMETERS", "errorDescription": "use POST" });
        return Reply::json(&error).with_status(405);
    }
    let mut state = lock(shared);
    match path {
        "/in.php" => v1::submit(&mut state, &v1_params(parts, body), now),
        "/res.php" => v1::result(&mut state, &v1_params(parts, body), now),
        "/createTask" => json_api::create_task(&mut state, body, now),
        "/getTaskResult" => json_api::get_task_result(&mut state, body, now),
        _ => json_api::get_balance(&mut state, body),
    }
}

/// Query parameters merged with a form body (the form wins, as PHP's `$_REQUEST` does by default).
fn v1_params(parts: &Parts, body: &[u8]) -> Params {
    let mut params = Params::new();
    if let Some(query) = parts.uri.query() {
        params.extend(url::form_urlencoded::parse(query.as_bytes()).into_owned());
    }
    let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    if content_type.is_empty() || content_type.starts_with("application/x-www-form-urlencoded") {
        params.extend(url::form_urlencoded::parse(body).into_owned());
    }
    params
}

/// `/mock/*`: counters, script replacement, reset; `/siteverify` for fixture sites. `None` for every other path.
fn control(shared: &Shared, parts: &Parts, path: &str, body: &[u8]) -> Option<Reply> {
    let reply = match (&parts.method, path) {
        (&Method::GET, "/mock/counters") => {
            let counters = lock(shared).counters.clone();
            Reply::json(&serde_json::to_value(counters).unwrap_or_default())
        }
        (&Method::GET, "/mock/config") => {
            let config = lock(shared).config.clone();
            Reply::json(&serde_json::to_value(config).unwrap_or_default())
        }
        (&Method::POST, "/mock/script") => {
            match std::str::from_utf8(body).map_err(|e| e.to_string()).and_then(MockConfig::from_json) {
                Ok(config) => {
                    lock(shared).set_script(config);
                    Reply::json(&json!({ "ok": true }))
                }
                Err(message) => Reply::json(&json!({ "ok": false, "error": message })).with_status(400),
            }
        }
        (&Method::GET | &Method::POST, "/siteverify") => {
            let mut params = v1_params(parts, body);
            // Some backends post JSON (`{"secret", "response", "sitekey"}`) rather than a form.
            if let Ok(serde_json::Value::Object(fields)) = serde_json::from_slice::<serde_json::Value>(body) {
                for (name, value) in fields {
                    if let serde_json::Value::String(text) = value {
                        params.insert(name, text);
                    }
                }
            }
            let response = params.get("response").map(String::as_str);
            let site_key = params.get("sitekey").map(String::as_str);
            Reply::json(&lock(shared).issued.verify(response, site_key))
        }
        (&Method::POST, "/mock/reset") => {
            lock(shared).reset();
            Reply::json(&json!({ "ok": true }))
        }
        (_, "/mock/counters" | "/mock/config" | "/mock/script" | "/mock/reset") => {
            Reply::text("method not allowed").with_status(405)
        }
        _ => return None,
    };
    Some(reply)
}

fn respond(reply: Reply, cors: bool) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(reply.body)));
    *response.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    if cors {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    }
    response
}

/// The CORS preflight answer browsers need before a JSON `POST`.
fn preflight(parts: &Parts) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    let allow_headers = parts
        .headers
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned()
        .unwrap_or_else(|| HeaderValue::from_static("content-type"));
    let pairs: [(HeaderName, HeaderValue); 4] = [
        (header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*")),
        (header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, OPTIONS")),
        (header::ACCESS_CONTROL_ALLOW_HEADERS, allow_headers),
        (header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600")),
    ];
    headers.extend(pairs);
    response
}
