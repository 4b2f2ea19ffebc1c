//! The guard every request passes: who may reach the dashboard (loopback
//! names and peers, or a token as a bearer header or a session cookie set by
//! the login page; each token names its holder and role, `crate::roles`), which
//! requests may change anything (CSRF token, same origin, not read-only, an
//! operator's token: a viewer's gets 403), and the headers every response carries (a CSP with
//! a fresh nonce, `nosniff`, `no-store`, no framing, no referrer).
//!
//! Secrets are compared in constant time (`subtle`), so response timing does
//! not tell an attacker how much of a guess was right.

use std::net::SocketAddr;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, OriginalUri, Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

use crate::config::is_loopback;
use crate::roles::{Identity, Role, Roles};
pub(crate) use crate::secrets::{random_text, same_secret};
use crate::state::Shared;

/// The session cookie's name.
pub(crate) const SESSION_COOKIE: &str = "captcha_dlq_session";
/// The form field and header carrying the CSRF token.
pub(crate) const CSRF_FIELD: &str = "csrf";
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
/// Largest form body read (a filter, a list of selected ids).
const MAX_FORM_BYTES: usize = 1 << 20;

/// What handlers need to know about the request they answer.
#[derive(Clone, Debug)]
pub(crate) struct RequestContext {
    /// The path the router is mounted under (`""` at the root, `/dlq` when nested there).
    pub(crate) base: String,
    /// This response's CSP nonce, for its `<script>` and `<link>` tags.
    pub(crate) nonce: String,
    /// Who asks: a token's holder, or `local` on a dashboard without tokens.
    pub(crate) identity: Identity,
}

/// Runs around every request; see the module documentation.
pub(crate) async fn guard(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let nonce = match random_text(16) {
        Ok(n) => n,
        Err(e) => return plain(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let base = mount_base(&request);
    let mut response = match admit(&state, request, &base, &nonce).await {
        Ok(request) => next.run(request).await,
        Err(Refusal::Status(status, message)) => plain(status, &message),
        Err(Refusal::Login) => Redirect::to(&format!("{base}/login")).into_response(),
        Err(Refusal::Unauthenticated) => {
            let mut r = plain(
                StatusCode::UNAUTHORIZED,
                "a token is required: log in at /login or send Authorization: Bearer <token>",
            );
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            r
        }
    };
    secure_headers(response.headers_mut(), &nonce, started);
    response
}

/// Why a request is not let through.
enum Refusal {
    Status(StatusCode, String),
    /// A browser without a session: to the login page.
    Login,
    /// Anything else without a token.
    Unauthenticated,
}

fn forbidden(message: String) -> Refusal {
    Refusal::Status(StatusCode::FORBIDDEN, message)
}

async fn admit(state: &Shared, mut request: Request, base: &str, nonce: &str) -> Result<Request, Refusal> {
    let config = &state.config;
    let path = request.uri().path().to_string();
    if !state.roles.required() && config.loopback_only {
        check_loopback(&request)?;
    }
    let public = path == "/login" || path.starts_with("/assets/");
    // Logging out changes nothing in the DLQ: anyone with a session may (CSRF still applies).
    let logout = path == "/logout";
    let identity = match (state.roles.required(), identify(request.headers(), &state.roles)) {
        (false, _) => Identity::local(),
        (true, Some(who)) => who,
        (true, None) if public => Identity { name: String::new(), role: Role::Viewer },
        (true, None) => return Err(unauthenticated(&request)),
    };
    let mutating = !matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if mutating && path != "/login" && !logout {
        if config.read_only {
            return Err(forbidden("this dashboard is read-only: actions are refused".into()));
        }
        if !identity.may_act() {
            return Err(forbidden(format!(
                "{} is a viewer: viewers see everything and change nothing (an operator's token is needed)",
                identity.name
            )));
        }
    }
    if mutating {
        check_same_origin(request.headers())?;
        request = check_csrf(request, &state.secrets.csrf).await?;
    }
    request.extensions_mut().insert(RequestContext { base: base.to_string(), nonce: nonce.to_string(), identity });
    Ok(request)
}

/// The prefix a host nested the router under: the original path minus the path seen here.
fn mount_base(request: &Request) -> String {
    let inner = request.uri().path();
    match request.extensions().get::<OriginalUri>() {
        Some(OriginalUri(original)) => {
            let full = original.path();
            let base = full.strip_suffix(inner).unwrap_or("");
            base.trim_end_matches('/').to_string()
        }
        None => String::new(),
    }
}

/// Why a dashboard without a token refuses every request when the server does not record
/// peer addresses, and what the host must change.
const UNKNOWN_PEER: &str = "the peer's address is unknown, so this dashboard without a token cannot tell a \
     loopback request from a remote one and refuses every request: serve the router with \
     `into_make_service_with_connect_info::<SocketAddr>()`, or configure a token";

fn check_loopback(request: &Request) -> Result<(), Refusal> {
    let refused = |why: &str| {
        forbidden(format!(
            "{why}: without a token this dashboard answers only loopback requests (127.0.0.1, localhost, [::1])"
        ))
    };
    // Without the peer's address the rule would rest on the `Host` header alone, which
    // any client sets as it likes: refuse rather than trust it.
    let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() else {
        return Err(Refusal::Status(StatusCode::INTERNAL_SERVER_ERROR, UNKNOWN_PEER.into()));
    };
    if !is_loopback(peer.ip()) {
        return Err(refused(&format!("request from {}", peer.ip())));
    }
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !is_loopback_host(host) {
        return Err(refused(&format!("request addressed to {host:?}")));
    }
    Ok(())
}

/// Whether a `Host` header names this machine's loopback (any port).
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    let name = name.to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost") || name.parse::<std::net::IpAddr>().is_ok_and(is_loopback)
}

/// The holder of the bearer token, else of the session cookie.
fn identify(headers: &HeaderMap, roles: &Roles) -> Option<Identity> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|given| roles.holder(given.trim()));
    bearer.or_else(|| cookie(headers, SESSION_COOKIE).and_then(|given| roles.session(&given)))
}

pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

fn unauthenticated(request: &Request) -> Refusal {
    let wants_html = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    if request.method() == Method::GET && wants_html {
        Refusal::Login
    } else {
        Refusal::Unauthenticated
    }
}

/// A browser says where a request comes from; refuse other sites outright.
fn check_same_origin(headers: &HeaderMap) -> Result<(), Refusal> {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        if site == "cross-site" || site == "same-site" {
            return Err(forbidden(format!("cross-site request refused (Sec-Fetch-Site: {site})")));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
        let origin_host = origin.split_once("://").map_or("", |(_, rest)| rest);
        if origin != "null" && !origin_host.eq_ignore_ascii_case(host) {
            return Err(forbidden(format!("request from origin {origin} refused: this dashboard is {host}")));
        }
    }
    Ok(())
}

/// The CSRF token from the header, or from the form body (which is read and put back).
async fn check_csrf(request: Request, expected: &str) -> Result<Request, Refusal> {
    let refused = || forbidden("missing or wrong CSRF token: reload the page and try again".into());
    if let Some(given) = request.headers().get(CSRF_HEADER).and_then(|v| v.to_str().ok()) {
        return if same_secret(given, expected) { Ok(request) } else { Err(refused()) };
    }
    let (parts, body) = request.into_parts();
    let bytes: Bytes = axum::body::to_bytes(body, MAX_FORM_BYTES)
        .await
        .map_err(|_| Refusal::Status(StatusCode::PAYLOAD_TOO_LARGE, "request body too large (1 MiB at most)".into()))?;
    let given = form_urlencoded::parse(&bytes).find(|(k, _)| k == CSRF_FIELD).map(|(_, v)| v.into_owned());
    match given {
        Some(given) if same_secret(&given, expected) => Ok(Request::from_parts(parts, Body::from(bytes))),
        _ => Err(refused()),
    }
}

fn secure_headers(headers: &mut HeaderMap, nonce: &str, started: Instant) {
    let csp = format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'self' 'nonce-{nonce}'; img-src 'self' data:; \
         connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    let timing = format!("app;dur={:.1}", started.elapsed().as_secs_f64() * 1000.0);
    if let Ok(v) = HeaderValue::from_str(&timing) {
        headers.insert("server-timing", v);
    }
}

pub(crate) fn plain(status: StatusCode, message: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{message}\n")).into_response()
}

/// The `Set-Cookie` value of the session `id`, scoped to the dashboard's path, lasting at most
/// `max_age`; `Secure` when browsers reach the dashboard over HTTPS (its own TLS, or a proxy
/// declared to terminate it), so the cookie never travels in cleartext.
pub(crate) fn session_cookie(id: &str, base: &str, max_age: std::time::Duration, https: bool) -> String {
    let path = if base.is_empty() { "/" } else { base };
    let secure = if https { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={id}; Path={path}; Max-Age={}; HttpOnly; SameSite=Strict{secure}", max_age.as_secs())
}

/// The `Set-Cookie` value that makes a browser forget its session cookie (logout).
pub(crate) fn cleared_cookie(base: &str, https: bool) -> String {
    let path = if base.is_empty() { "/" } else { base };
    let secure = if https { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}=; Path={path}; Max-Age=0; HttpOnly; SameSite=Strict{secure}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_recognised_and_rebinding_names_are_not() {
        for host in ["127.0.0.1:8787", "localhost:1", "LOCALHOST", "[::1]:8787", "app.localhost:9", "127.1.2.3"] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in ["evil.example:8787", "10.0.0.1:8787", "", "127.0.0.1.evil.example", "[::2]:1"] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
        assert_ne!(crate::secrets::Secrets::new().unwrap().csrf, crate::secrets::Secrets::new().unwrap().csrf);
    }

    #[test]
    fn cookies_are_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_static("a=1; captcha_dlq_session=xyz; b=2"));
        assert_eq!(cookie(&headers, SESSION_COOKIE).as_deref(), Some("xyz"));
        let roles = Roles::new(
            vec![crate::roles::NamedToken {
                name: "vic".into(),
                token: "the-token-is-long-enough".into(),
                role: Role::Viewer,
            }],
            crate::roles::tests::limits(),
        );
        assert_eq!(identify(&headers, &roles), None, "a session nobody opened");
        let id = roles.open_session(Identity { name: "vic".into(), role: Role::Viewer }).unwrap();
        headers.insert(header::COOKIE, HeaderValue::from_str(&format!("a=1; captcha_dlq_session={id}")).unwrap());
        assert_eq!(identify(&headers, &roles).map(|i| i.name), Some("vic".into()));
        let mut bearer = HeaderMap::new();
        bearer.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer the-token-is-long-enough"));
        assert_eq!(identify(&bearer, &roles).map(|i| i.role), Some(Role::Viewer));
    }
}
