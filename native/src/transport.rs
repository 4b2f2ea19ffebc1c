//! HTTP natively: reqwest over rustls with pooled connections, a per-request
//! timeout, and an optional proxy for the client's own traffic. Errors are
//! stripped of URLs (which carry the API key) before they leave.

use std::time::Duration;

use captcha_dlq_client::{BoxFuture, Error, Transport};
use captcha_dlq_core::{
    HttpRequest, HttpResponse, Method, Secret, TransportError, TransportErrorKind, MAX_RESPONSE_BYTES,
};

/// reqwest as the orchestration's [`Transport`].
#[derive(Clone, Debug)]
pub struct ReqwestTransport {
    client: reqwest::Client,
    /// The client's API keys (one per provider).
    keys: Vec<Secret>,
}

impl Transport for ReqwestTransport {
    fn send(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse, TransportError>> {
        let this = self.clone();
        Box::pin(async move { this.execute(request).await })
    }
}

impl ReqwestTransport {
    /// A pooled client; `keys` are what its error messages must never show.
    pub fn new(keys: Vec<Secret>, proxy: Option<&str>) -> Result<ReqwestTransport, Error> {
        let mut builder = reqwest::Client::builder()
            .user_agent(concat!("captcha-dlq/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(64);
        if let Some(p) = proxy {
            let proxy = reqwest::Proxy::all(p)
                .map_err(|e| Error::Config(captcha_dlq_core::ConfigError::new("proxy", e.without_url().to_string())))?;
            builder = builder.proxy(proxy);
        } else {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| Error::Io(format!("cannot build the HTTP client: {e}")))?;
        Ok(ReqwestTransport { client, keys })
    }

    pub async fn execute(&self, mut req: HttpRequest) -> Result<HttpResponse, TransportError> {
        let method = match req.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
        };
        let mut builder = self.client.request(method, &req.url).timeout(req.timeout);
        for (name, value) in &req.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = req.body.take() {
            builder = builder.body(body);
        }
        let mut response = builder.send().await.map_err(|e| self.convert(e))?;
        let status = response.status().as_u16();
        // Read chunk by chunk so that a body over the limit is dropped (and the connection with
        // it) as soon as it passes it, declared or not. The origin is worked out only then.
        let too_large = || TransportError::body_too_large(&req.origin());
        if response.content_length().is_some_and(|n| n > MAX_RESPONSE_BYTES as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.convert(e))? {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(HttpResponse::new(status, body))
    }

    fn convert(&self, e: reqwest::Error) -> TransportError {
        let kind = if e.is_timeout() {
            TransportErrorKind::Timeout
        } else if e.is_connect() {
            TransportErrorKind::Connect
        } else if e.is_body() || e.is_decode() || e.is_request() {
            TransportErrorKind::Reset
        } else {
            TransportErrorKind::Other
        };
        let e = e.without_url();
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        let redacted = self.keys.iter().fold(message, |text, key| key.redact(&text));
        TransportError::new(kind, redacted)
    }
}
