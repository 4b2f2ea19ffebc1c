//! The HTTP exchange the engine asks a driver to perform, and what comes back.
//!
//! Requests carry the API key (providers want it in the URL or body), so their
//! `Debug` replaces every occurrence of it; drivers must never log a request
//! any other way.

use core::fmt;
use core::time::Duration;
use std::sync::Arc;

/// The solving service's API key. Its `Debug` and `Display` never show it.
///
/// Shared, not copied: every request carries it (so that its `Debug` can hide it), and a clone
/// costs a reference count rather than an allocation.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    pub fn new(key: impl Into<String>) -> Self {
        Secret(Arc::from(key.into()))
    }

    /// The key itself, for building a request. Nothing else should call this.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key (raw or percent-encoded) replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            return text.to_string();
        }
        let encoded: String =
            percent_encoding::utf8_percent_encode(&self.0, percent_encoding::NON_ALPHANUMERIC).collect();
        text.replace(&*self.0, "***").replace(&encoded, "***")
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// One request for the driver to send. `timeout` bounds the whole exchange.
#[derive(Clone, PartialEq)]
pub struct HttpRequest {
    pub method: Method,
    /// Absolute URL, query string included.
    pub url: String,
    /// Header name/value pairs, e.g. `content-type`.
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub timeout: Duration,
    /// Kept only so that `Debug` can hide the key wherever the codec put it.
    pub(crate) secret: Option<Secret>,
}

impl HttpRequest {
    pub fn new(method: Method, url: impl Into<String>, secret: &Secret) -> Self {
        HttpRequest {
            method,
            url: url.into(),
            headers: Vec::new(),
            body: None,
            timeout: Duration::from_secs(30),
            secret: Some(secret.clone()),
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn with_body(mut self, body: Vec<u8>) -> Self {
        self.body = Some(body);
        self
    }

    /// The URL with the key hidden, for logs and error messages.
    pub fn redacted_url(&self) -> String {
        match &self.secret {
            Some(s) => s.redact(&self.url),
            None => self.url.clone(),
        }
    }

    /// The body as text with the key hidden (lossy for binary bodies).
    pub fn redacted_body(&self) -> Option<String> {
        let body = String::from_utf8_lossy(self.body.as_deref()?).into_owned();
        Some(match &self.secret {
            Some(s) => s.redact(&body),
            None => body,
        })
    }

    /// `scheme://host:port` of the URL, for messages: the path, the query and any userinfo
    /// may hold the key.
    pub fn origin(&self) -> String {
        let url = self.url.as_str();
        let start = url.find("://").map_or(0, |i| i + 3);
        let end = url[start..].find(['/', '?', '#', '\\']).map_or(url.len(), |i| start + i);
        let authority = &url[start..end];
        let host = authority.rfind('@').map_or(authority, |at| &authority[at + 1..]);
        format!("{}{host}", &url[..start])
    }

    /// The path of the URL (`/in.php`, `/createTask`), for events and metrics.
    pub fn endpoint(&self) -> &str {
        let after_scheme = self.url.split_once("://").map_or(self.url.as_str(), |(_, rest)| rest);
        let path = after_scheme.find('/').map_or("/", |i| &after_scheme[i..]);
        path.split(['?', '#']).next().unwrap_or(path)
    }
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.redacted_url())
            .field("headers", &self.headers)
            .field("body", &self.redacted_body())
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// What the driver got back. Any status and any body are acceptable input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Self {
        HttpResponse { status, body: body.into() }
    }

    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }
}

/// Why no response arrived. The message must not contain the key: native
/// drivers strip URLs from their HTTP library's errors before building one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct TransportError {
    pub kind: TransportErrorKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportErrorKind {
    Connect,
    Timeout,
    /// The connection broke after the request was (maybe) sent.
    Reset,
    Other,
}

/// The most of a response body a transport reads. A solving service's answers are small (a
/// batch poll of 100 tokens is ~300 KB); a longer body is not its protocol (a proxy's page, a
/// stream that never ends), and reading on would only fill memory until the request timed out.
pub const MAX_RESPONSE_BYTES: usize = 4 << 20;

impl TransportError {
    pub fn new(kind: TransportErrorKind, message: impl Into<String>) -> Self {
        TransportError { kind, message: message.into() }
    }

    /// A response body longer than [`MAX_RESPONSE_BYTES`], not read further. A `Reset`: the
    /// request reached the service, whose answer is lost.
    pub fn body_too_large(origin: &str) -> Self {
        TransportError::new(
            TransportErrorKind::Reset,
            format!(
                "the answer from {origin} is longer than {} MiB, which no solving service sends; it was not read further",
                MAX_RESPONSE_BYTES >> 20
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_leaves_out_what_may_hold_the_key() {
        let key = Secret::new("0123456789abcdef0123456789abcdef");
        for (url, origin) in [
            ("https://api.example.com/in.php?key=0123456789abcdef0123456789abcdef", "https://api.example.com"),
            ("http://user:0123456789abcdef@127.0.0.1:8080/res.php", "http://127.0.0.1:8080"),
            ("https://h.example\\@evil.example/x", "https://h.example"),
            ("https://api.example.com", "https://api.example.com"),
        ] {
            assert_eq!(HttpRequest::new(Method::Get, url, &key).origin(), origin, "{url}");
        }
    }

    #[test]
    fn debug_never_shows_the_key() {
        let key = Secret::new("0123456789abcdef0123456789abcdef");
        let req =
            HttpRequest::new(Method::Get, "https://x.test/res.php?key=0123456789abcdef0123456789abcdef&id=1", &key)
                .with_body(b"key=0123456789abcdef0123456789abcdef&json=1".to_vec());
        let shown = format!("{req:?} {key:?}");
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
        assert!(shown.contains("key=***"), "{shown}");
        assert_eq!(req.endpoint(), "/res.php");
    }
}
