//! HTTP in the browser: gloo-net over the global `fetch` (a page, a dedicated
//! worker and an MV3 service worker all have one), each request with its own
//! timeout on an `AbortController`. A request dropped before it ends (the
//! client closed) is aborted too.
//!
//! A failed `fetch` tells a page nothing about why: a CORS refusal, a refused
//! connection and a DNS failure all reject with the same `TypeError`. The
//! error says so and names what usually fixes it, with the URL's origin only
//! (the API key travels in v1 URLs) and the key redacted besides. Such a
//! request may have reached the service (a CORS refusal hides the answer, not
//! the request), so it is not a connect failure: the engine counts a
//! submission that failed this way as an attempt, and opens the circuit when
//! the service never answers.

use std::cell::Cell;
use std::rc::Rc;

use captcha_dlq_client::core::{
    HttpRequest, HttpResponse, Method, Secret, TransportError, TransportErrorKind, MAX_RESPONSE_BYTES,
};
use captcha_dlq_client::{BoxFuture, Transport};
use gloo_net::http::RequestBuilder;
use gloo_timers::callback::Timeout;
use web_sys::AbortController;

/// `fetch` as the orchestration's [`Transport`].
#[derive(Clone, Debug)]
pub struct FetchTransport {
    /// The client's API keys (one per provider).
    keys: Rc<[Secret]>,
}

impl FetchTransport {
    /// `keys` are what error messages must never show.
    pub fn new(keys: Vec<Secret>) -> FetchTransport {
        FetchTransport { keys: keys.into() }
    }
}

impl Transport for FetchTransport {
    fn send(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse, TransportError>> {
        let keys = self.keys.clone();
        Box::pin(async move {
            let origin = request.origin();
            exchange(request, &origin).await.map_err(|e| {
                let message = keys.iter().fold(e.message, |text, key| key.redact(&text));
                TransportError::new(e.kind, message)
            })
        })
    }
}

/// Aborts its request when dropped before the exchange ended.
struct AbortOnDrop(Option<AbortController>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = self.0.take() {
            controller.abort();
        }
    }
}

async fn exchange(request: HttpRequest, origin: &str) -> Result<HttpResponse, TransportError> {
    let controller = AbortController::new()
        .map_err(|_| TransportError::new(TransportErrorKind::Other, "this browser has no AbortController"))?;
    let timeout_ms = u32::try_from(request.timeout.as_millis()).unwrap_or(u32::MAX).min(i32::MAX as u32);
    let timed_out = Rc::new(Cell::new(false));
    let timer = {
        let (controller, timed_out) = (controller.clone(), timed_out.clone());
        Timeout::new(timeout_ms, move || {
            timed_out.set(true);
            controller.abort();
        })
    };
    let mut guard = AbortOnDrop(Some(controller.clone()));
    let failed = |stage: Stage, e: gloo_net::Error| {
        if timed_out.get() {
            let what = if stage == Stage::Body { "complete answer" } else { "answer" };
            return TransportError::new(
                TransportErrorKind::Timeout,
                format!("no {what} within {timeout_ms} ms from {origin}"),
            );
        }
        let detail = e.to_string();
        match stage {
            Stage::Fetch => TransportError::new(
                TransportErrorKind::Other,
                format!(
                    "the browser blocked the request to {origin} or could not reach it ({detail}); \
                     a custom base URL must answer with CORS headers (Access-Control-Allow-Origin) \
                     for a page, worker or extension to read it"
                ),
            ),
            Stage::Body => {
                TransportError::new(TransportErrorKind::Reset, format!("the answer from {origin} broke off: {detail}"))
            }
        }
    };

    let signal = controller.signal();
    let mut builder = RequestBuilder::new(&request.url)
        .method(match request.method {
            Method::Get => gloo_net::http::Method::GET,
            Method::Post => gloo_net::http::Method::POST,
        })
        .abort_signal(Some(&signal));
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let built = match &request.body {
        Some(body) => builder.body(js_sys::Uint8Array::from(body.as_slice())),
        None => builder.build(),
    };
    let built = built.map_err(|e| TransportError::new(TransportErrorKind::Other, format!("bad request: {e}")))?;
    let response = built.send().await.map_err(|e| failed(Stage::Fetch, e))?;
    let status = response.status();
    // A declared length over the limit is not read at all (the guard aborts the request); an
    // undeclared one is read, then refused: `fetch` gives a body whole or as a stream of chunks,
    // and a stream is not worth its code for answers this small.
    let declared = response.headers().get("content-length").and_then(|n| n.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_RESPONSE_BYTES as u64) {
        return Err(TransportError::body_too_large(origin));
    }
    let body = response.binary().await.map_err(|e| failed(Stage::Body, e))?;
    if body.len() > MAX_RESPONSE_BYTES {
        return Err(TransportError::body_too_large(origin));
    }
    guard.0 = None;
    drop(timer);
    Ok(HttpResponse::new(status, body))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Fetch,
    Body,
}
