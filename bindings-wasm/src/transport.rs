//! HTTP for the driver: the global `fetch` (through gloo-net) with a
//! per-request timeout enforced by an `AbortController`. Errors never carry
//! the URL (it holds the API key) and are redacted once more to be sure.

use std::time::Duration;

use captcha_dlq_core::class::reason;
use captcha_dlq_core::{
    ErrorClass, Failure, HttpRequest, HttpResponse, Method, Secret, TransportError, TransportErrorKind,
};
use futures::future::{select, Either};
use gloo_net::http::RequestBuilder;

use crate::clock::sleep;

#[derive(Clone, Debug)]
pub(crate) struct Transport {
    key: Secret,
}

impl Transport {
    pub(crate) fn new(key: Secret) -> Transport {
        Transport { key }
    }

    pub(crate) fn key(&self) -> &Secret {
        &self.key
    }

    /// A request outside the engine (balance, report), sent once: a transport failure is a transient
    /// `Network` failure, as in the native client.
    pub(crate) async fn direct(&self, mut req: HttpRequest, timeout: Duration) -> Result<HttpResponse, Failure> {
        req.timeout = timeout;
        self.execute(req).await.map_err(|e| Failure::new(reason::NETWORK, ErrorClass::Transient, e.message))
    }

    pub(crate) async fn execute(&self, req: HttpRequest) -> Result<HttpResponse, TransportError> {
        let controller = web_sys::AbortController::new()
            .map_err(|_| TransportError::new(TransportErrorKind::Other, "AbortController is not available"))?;
        let timeout = req.timeout;
        let exchange = Box::pin(self.exchange(req, controller.signal()));
        match select(exchange, Box::pin(sleep(timeout))).await {
            Either::Left((result, _)) => result,
            Either::Right(((), _)) => {
                controller.abort();
                Err(TransportError::new(
                    TransportErrorKind::Timeout,
                    format!("no complete answer within {} ms", timeout.as_millis()),
                ))
            }
        }
    }

    async fn exchange(&self, req: HttpRequest, signal: web_sys::AbortSignal) -> Result<HttpResponse, TransportError> {
        let method = match req.method {
            Method::Get => gloo_net::http::Method::GET,
            Method::Post => gloo_net::http::Method::POST,
        };
        let mut builder = RequestBuilder::new(&req.url).method(method).abort_signal(Some(&signal));
        for (name, value) in &req.headers {
            builder = builder.header(name, value);
        }
        let request = match req.body {
            Some(body) => builder.body(js_sys::Uint8Array::from(body.as_slice())),
            None => builder.build(),
        }
        .map_err(|e| self.convert(e, TransportErrorKind::Other))?;
        let response = request.send().await.map_err(|e| self.convert(e, TransportErrorKind::Connect))?;
        let status = response.status();
        let body = response.binary().await.map_err(|e| self.convert(e, TransportErrorKind::Reset))?;
        Ok(HttpResponse::new(status, body))
    }

    /// `fetch` reports every network failure as a bare `TypeError`; keep its message only.
    fn convert(&self, e: gloo_net::Error, kind: TransportErrorKind) -> TransportError {
        let message = match e {
            gloo_net::Error::JsError(js) => format!("{}: {}", js.name, js.message),
            other => other.to_string(),
        };
        TransportError::new(kind, self.key.redact(&message))
    }
}
