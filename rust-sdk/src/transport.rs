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
    /// For the providers: follows redirects on the same host only.
    client: reqwest::Client,
    /// For webhooks: follows none.
    no_redirects: reqwest::Client,
    /// The client's API keys (one per provider).
    keys: Vec<Secret>,
}

impl Transport for ReqwestTransport {
    fn send(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse, TransportError>> {
        let this = self.clone();
        Box::pin(async move { this.execute(request).await })
    }

    fn send_without_redirects(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse, TransportError>> {
        let this = self.clone();
        Box::pin(async move { this.exchange(&this.no_redirects, request).await })
    }
}

/// Redirects followed for a provider's request at most (reqwest's default is 10).
const MAX_REDIRECTS: usize = 5;

/// A provider's redirect is followed only to the same scheme (or up to https), host and port:
/// elsewhere the key in its URL or body would go to whoever the answer names. Not followed,
/// the 3xx is the answer, a failure like any unexpected status.
fn same_host_only() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else { return attempt.stop() };
        let next = attempt.url();
        let scheme_ok = next.scheme() == first.scheme() || next.scheme() == "https";
        let same = next.host_str() == first.host_str() && next.port_or_known_default() == first.port_or_known_default();
        if scheme_ok && same && attempt.previous().len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

impl ReqwestTransport {
    /// A pooled client; `keys` are what its error messages must never show.
    pub fn new(keys: Vec<Secret>, proxy: Option<&str>) -> Result<ReqwestTransport, Error> {
        let client = Self::client(proxy, same_host_only())?;
        let no_redirects = Self::client(proxy, reqwest::redirect::Policy::none())?;
        Ok(ReqwestTransport { client, no_redirects, keys })
    }

    fn client(proxy: Option<&str>, redirects: reqwest::redirect::Policy) -> Result<reqwest::Client, Error> {
        let mut builder = reqwest::Client::builder()
            .redirect(redirects)
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
        builder.build().map_err(|e| Error::Io(format!("cannot build the HTTP client: {e}")))
    }

    /// One exchange with a provider (same-host redirects followed).
    pub async fn execute(&self, req: HttpRequest) -> Result<HttpResponse, TransportError> {
        self.exchange(&self.client, req).await
    }

    /// One exchange through `client`, its answer's body read up to [`MAX_RESPONSE_BYTES`].
    async fn exchange(&self, client: &reqwest::Client, mut req: HttpRequest) -> Result<HttpResponse, TransportError> {
        let method = match req.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
        };
        let mut builder = client.request(method, &req.url).timeout(req.timeout);
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
