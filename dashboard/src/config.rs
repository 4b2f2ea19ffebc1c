//! What a dashboard is allowed to do and who may reach it, and the rule that
//! makes it safe by default: it listens on loopback unless told otherwise, and
//! a non-loopback address needs a token (Hangfire's local-only default, whose
//! removal became a security advisory; Sidekiq's plain mount, which "has no
//! security").

use std::net::{IpAddr, SocketAddr};

use captcha_dlq_core::support::json_read::{read_cased, Casing, FieldError, Fields, FromJson};

use crate::error::DashboardError;
use crate::roles::{all_tokens, NamedToken, MIN_TOKEN_LEN};

/// The address `serve` listens on unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";
/// The environment variable the CLI reads the token from.
pub const TOKEN_ENV: &str = "CAPTCHA_DLQ_DASHBOARD_TOKEN";

/// How a dashboard behaves, wherever it is mounted.
#[derive(Clone)]
pub struct DashboardConfig {
    /// Hide every action and refuse every mutating request.
    pub read_only: bool,
    /// Required on every request when set: as `Authorization: Bearer …` (scrapers,
    /// scripts) or through the login page, which sets a session cookie.
    pub token: Option<String>,
    /// Named tokens, each a viewer's or an operator's (`crate::roles`); `token` is one more, an
    /// operator named `default`. The audit trail names whoever acts by their token's name.
    pub tokens: Vec<NamedToken>,
    /// Without a token, answer only requests addressed to a loopback name (`Host:
    /// 127.0.0.1`, `localhost`, `[::1]`) from a loopback peer, so a web page elsewhere
    /// cannot reach the dashboard through DNS rebinding. On by default; a host that puts
    /// the router behind its own authentication turns it off. The peer must be known: a
    /// host serving the router without `into_make_service_with_connect_info::<SocketAddr>()`
    /// gets a 500 naming the fix on every request.
    pub loopback_only: bool,
    /// How often pages refresh their counts and progress while "live" is on (ms).
    pub live_interval_ms: u64,
    /// Whether the client may talk to the provider. `false` for a client without a usable
    /// API key (the CLI given none): replays, recovery and the balance are hidden and
    /// refused; inspection, park, unpark, purge and export work.
    pub solving: bool,
    /// Whether browsers reach the dashboard over HTTPS: served with TLS ([`DashboardOptions::tls`],
    /// which sets it), or behind a proxy that terminates TLS (the CLI's `--behind-https-proxy`).
    /// The session cookie is then `Secure`, so a browser never sends it in cleartext.
    pub https: bool,
    /// A session not used for this long ends (ms; default [`DEFAULT_SESSION_IDLE_MS`], 30 min).
    pub session_idle_ms: u64,
    /// A session ends this long after its login however much it is used (ms; default
    /// [`DEFAULT_SESSION_MAX_MS`], 12 h), so a stolen cookie does not last.
    pub session_max_ms: u64,
}

/// A session idle this long ends: 30 minutes.
pub const DEFAULT_SESSION_IDLE_MS: u64 = 30 * 60 * 1000;
/// A session ends this long after its login: 12 hours.
pub const DEFAULT_SESSION_MAX_MS: u64 = 12 * 60 * 60 * 1000;
/// The shortest session limit taken (1 s): below it a session would end between two pages.
pub const MIN_SESSION_MS: u64 = 1000;

impl Default for DashboardConfig {
    fn default() -> Self {
        DashboardConfig {
            read_only: false,
            token: None,
            tokens: Vec::new(),
            loopback_only: true,
            live_interval_ms: 2000,
            solving: true,
            https: false,
            session_idle_ms: DEFAULT_SESSION_IDLE_MS,
            session_max_ms: DEFAULT_SESSION_MAX_MS,
        }
    }
}

impl core::fmt::Debug for DashboardConfig {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DashboardConfig")
            .field("read_only", &self.read_only)
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("tokens", &self.tokens)
            .field("loopback_only", &self.loopback_only)
            .field("live_interval_ms", &self.live_interval_ms)
            .field("solving", &self.solving)
            .field("https", &self.https)
            .field("session_idle_ms", &self.session_idle_ms)
            .field("session_max_ms", &self.session_max_ms)
            .finish()
    }
}

impl DashboardConfig {
    /// Checks the tokens (each long enough, no two alike, names unique: [`all_tokens`]) and the
    /// session limits (each at least [`MIN_SESSION_MS`], the idle one within the absolute one).
    pub fn validate(&self) -> Result<(), DashboardError> {
        all_tokens(self.token.as_deref(), &self.tokens)?;
        for (name, ms) in [("session_idle_ms", self.session_idle_ms), ("session_max_ms", self.session_max_ms)] {
            if ms < MIN_SESSION_MS {
                return Err(DashboardError::Config(format!("{name}: {ms} is below {MIN_SESSION_MS} (1 s)")));
            }
        }
        if self.session_idle_ms > self.session_max_ms {
            return Err(DashboardError::Config(format!(
                "session_idle_ms: {} is over session_max_ms ({}): a session ends at the absolute limit anyway",
                self.session_idle_ms, self.session_max_ms
            )));
        }
        Ok(())
    }

    /// Whether any token is required.
    pub fn has_tokens(&self) -> bool {
        self.token.is_some() || !self.tokens.is_empty()
    }
}

/// A dashboard served on its own address.
#[derive(Clone, Debug)]
pub struct DashboardOptions {
    pub listen: SocketAddr,
    pub config: DashboardConfig,
    /// Serve HTTPS with this certificate and key (rustls) instead of plain HTTP.
    pub tls: Option<TlsFiles>,
}

/// The PEM files of an HTTPS dashboard: the certificate chain (leaf first) and its private key
/// (PKCS#8, PKCS#1 or SEC1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: std::path::PathBuf,
    pub key: std::path::PathBuf,
}

impl Default for DashboardOptions {
    fn default() -> Self {
        DashboardOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            config: DashboardConfig::default(),
            tls: None,
        }
    }
}

impl DashboardOptions {
    /// Options for `listen` (`host:port`; a bare `:port` means loopback).
    pub fn listen_on(listen: &str) -> Result<DashboardOptions, DashboardError> {
        Ok(DashboardOptions { listen: parse_listen(listen)?, ..DashboardOptions::default() })
    }

    /// Refuses a non-loopback address without a token, and says why.
    pub fn validate(&self) -> Result<(), DashboardError> {
        self.config.validate()?;
        if !is_loopback(self.listen.ip()) && !self.config.has_tokens() {
            return Err(DashboardError::Config(format!(
                "refusing to listen on {} without a token: anyone who can reach that address could replay, \
                 park and purge the DLQ. Pass --token (or set {TOKEN_ENV}) with at least {MIN_TOKEN_LEN} \
                 characters, or listen on loopback (--listen {DEFAULT_LISTEN})",
                self.listen
            )));
        }
        Ok(())
    }
}

impl DashboardOptions {
    /// The options a binding's host gives (`listen`, `read_only`, `token`, `tokens`
    /// (`[{name, token, role}]`), `live_interval_ms`, in the host's casing), checked as [`validate`](Self::validate)
    /// does; unknown keys are errors naming them. Everything left out keeps its default.
    pub fn from_value(value: serde_json::Value, casing: Casing) -> Result<DashboardOptions, DashboardError> {
        let value = if value.is_null() { serde_json::Value::Object(serde_json::Map::new()) } else { value };
        let raw: RawOptions = read_cased(value, casing)
            .map_err(|e| DashboardError::Config(format!("{}: {}", e.field_under("dashboard"), e.problem)))?;
        let mut options = match raw.listen.as_deref() {
            Some(listen) => DashboardOptions::listen_on(listen)?,
            None => DashboardOptions::default(),
        };
        options.config.read_only = raw.read_only.unwrap_or(options.config.read_only);
        options.config.token = raw.token;
        options.config.tokens = raw.tokens.unwrap_or_default();
        if let Some(ms) = raw.live_interval_ms {
            if ms < 250 {
                return Err(DashboardError::Config(format!(
                    "dashboard.live_interval_ms: {ms} is below 250 (pages would poll the store nonstop)"
                )));
            }
            options.config.live_interval_ms = ms;
        }
        options.validate()?;
        Ok(options)
    }
}

struct RawOptions {
    listen: Option<String>,
    read_only: Option<bool>,
    token: Option<String>,
    tokens: Option<Vec<NamedToken>>,
    live_interval_ms: Option<u64>,
}

impl FromJson for RawOptions {
    fn from_json(value: serde_json::Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let raw = RawOptions {
            listen: f.opt("listen")?,
            read_only: f.opt("read_only")?,
            token: f.opt("token")?,
            tokens: f.opt("tokens")?,
            live_interval_ms: f.opt("live_interval_ms")?,
        };
        f.finish()?;
        Ok(raw)
    }
}

/// `host:port`, `[v6]:port`, or `:port` (loopback).
pub fn parse_listen(listen: &str) -> Result<SocketAddr, DashboardError> {
    let text = listen.trim();
    let full = if text.starts_with(':') { format!("127.0.0.1{text}") } else { text.to_string() };
    let full = full.replacen("localhost:", "127.0.0.1:", 1);
    full.parse().map_err(|_| {
        DashboardError::Config(format!("listen: {listen:?} is not an address like {DEFAULT_LISTEN} or [::1]:8787"))
    })
}

pub(crate) fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_options_are_read_in_the_hosts_casing_and_checked() {
        let o =
            DashboardOptions::from_value(serde_json::json!({"listen": ":0", "readOnly": true}), Casing::Camel).unwrap();
        assert!(o.config.read_only);
        assert!(o.listen.ip().is_loopback());
        let e = DashboardOptions::from_value(serde_json::json!({"listen": "0.0.0.0:0"}), Casing::Snake).unwrap_err();
        assert!(e.to_string().contains("without a token"), "{e}");
        let e = DashboardOptions::from_value(serde_json::json!({"read_onyl": true}), Casing::Snake).unwrap_err();
        assert!(e.to_string().contains("read_onyl"), "{e}");
        assert!(DashboardOptions::from_value(serde_json::Value::Null, Casing::Snake).is_ok());
        let o = DashboardOptions::from_value(
            serde_json::json!({"listen": "0.0.0.0:0", "tokens": [{"name": "vic", "token": "viewer-token-0123456789", "role": "viewer"}]}),
            Casing::Camel,
        )
        .unwrap();
        assert_eq!(o.config.tokens[0].role, crate::roles::Role::Viewer, "named tokens alone open a public address");
        let e = DashboardOptions::from_value(
            serde_json::json!({"tokens": [{"name": "vic", "token": "viewer-token-0123456789", "role": "admin"}]}),
            Casing::Snake,
        )
        .unwrap_err();
        assert!(e.to_string().contains("tokens[0].role") && e.to_string().contains("admin"), "{e}");
    }

    use super::*;

    #[test]
    fn a_public_address_needs_a_long_enough_token() {
        let mut options = DashboardOptions::listen_on("0.0.0.0:8787").unwrap();
        let refused = options.validate().unwrap_err().to_string();
        assert!(refused.contains("refusing to listen on 0.0.0.0:8787 without a token"), "{refused}");
        options.config.token = Some("short".into());
        assert!(options.validate().unwrap_err().to_string().contains("at least 16 characters"));
        options.config.token = Some("a-long-enough-secret-token".into());
        options.validate().unwrap();
    }

    #[test]
    fn loopback_needs_no_token_and_bare_ports_mean_loopback() {
        for listen in ["127.0.0.1:8787", ":9000", "localhost:1", "[::1]:8787"] {
            let options = DashboardOptions::listen_on(listen).unwrap();
            assert!(is_loopback(options.listen.ip()), "{listen}");
            options.validate().unwrap();
        }
        assert!(DashboardOptions::listen_on("nonsense").unwrap_err().to_string().contains("listen: \"nonsense\""));
    }

    #[test]
    fn debug_hides_the_token() {
        let config = DashboardConfig { token: Some("a-long-enough-secret-token".into()), ..DashboardConfig::default() };
        assert!(!format!("{config:?}").contains("secret"));
    }
}
