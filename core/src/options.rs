//! The client options, read once for every front end.
//!
//! Rust, Python, Node and the browser construct a client from the same set of
//! options, spelled in the host's casing (`api_key` / `apiKey`). This module
//! reads them, applies every default and every rule (the key is trimmed and
//! required, plain `http://` is refused unless loopback or explicitly allowed,
//! unknown keys are errors naming the key as written), so that no binding
//! decides any of it. What a binding handles itself is what only it can hold:
//! a store object written in the host language and an event callback.

use core::time::Duration;

use serde_json::Value;

use crate::dlq::replay::ReplayPolicy;
use crate::engine::EngineConfig;
use crate::error::ConfigError;
use crate::http::Secret;
use crate::json_read::{read_cased, with_casing, Casing, FieldError, Fields, FromJson, ReadOver};
use crate::provider::{Provider, SubmitOptions};
use crate::quoted::Quoted;

/// The provider used when none is named.
pub const DEFAULT_PROVIDER: &str = "captchaai";
/// Tasks a `solve_many` / `solve_stream` keeps in flight when the call does not say.
pub const DEFAULT_CONCURRENCY: usize = 100;
/// Records one `replay` takes out of the DLQ when the call does not say.
pub const DEFAULT_REPLAY_LIMIT: usize = 100;

/// How the client calls its DLQ store (journal writes, dead letters, acknowledgements).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StoreCallOptions {
    /// One call that takes longer failed: the client says so and tries again. A hung
    /// store (a paused Redis, a held SQLite lock) is reported within this time.
    pub timeout_ms: u64,
    /// How long a failing write is retried (with backoff) before the client gives up on
    /// it and reports a store failure: the task is then not submitted, or its record is
    /// handed back in the error instead of being stored.
    pub retry_for_ms: u64,
    /// Store calls under way at once (SQLite and Redis commit concurrent writes together).
    pub concurrency: usize,
}

impl Default for StoreCallOptions {
    fn default() -> Self {
        StoreCallOptions { timeout_ms: 5_000, retry_for_ms: 60_000, concurrency: 16 }
    }
}

impl StoreCallOptions {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    pub fn retry_for(&self) -> Duration {
        Duration::from_millis(self.retry_for_ms)
    }
}

/// Everything a client is built from, checked.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    pub api_key: Secret,
    pub provider: Provider,
    /// Where the DLQ and journal live, as the front end names stores (`memory`, a SQLite
    /// path, a `redis://` URL, `indexeddb:NAME`); `None`: the front end's default.
    pub dlq: Option<String>,
    pub engine: EngineConfig,
    pub replay_policy: ReplayPolicy,
    /// An HTTP or SOCKS5 proxy for the client's own traffic (native only).
    pub proxy: Option<String>,
    pub store: StoreCallOptions,
    /// Default concurrency of `solve_many` / `solve_stream`.
    pub concurrency: usize,
    pub submit: SubmitOptions,
}

/// The options as given, before the provider is resolved.
struct Raw {
    api_key: Option<String>,
    provider: String,
    base_url: Option<String>,
    dlq: Option<String>,
    /// `retry`, `polling`, `rate`, `circuit`, `seed` as given: read over the provider's
    /// documented defaults once the provider is known.
    engine: serde_json::Map<String, Value>,
    replay_policy: ReplayPolicy,
    allow_insecure_http: bool,
    proxy: Option<String>,
    store: StoreCallOptions,
    concurrency: usize,
    soft_id: Option<String>,
    pingback: Option<String>,
}

impl FromJson for Raw {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let mut engine = serde_json::Map::new();
        for section in ["retry", "polling", "rate", "circuit", "seed"] {
            if let Some(v) = f.opt::<Value>(section)? {
                engine.insert(section.to_string(), v);
            }
        }
        let raw = Raw {
            api_key: f.opt("api_key")?,
            provider: f.or("provider", DEFAULT_PROVIDER.to_string())?,
            base_url: f.opt("base_url")?,
            dlq: f.opt("dlq")?,
            engine,
            replay_policy: f.or_default("replay_policy")?,
            allow_insecure_http: f.or("allow_insecure_http", false)?,
            proxy: f.opt("proxy")?,
            store: f.or_default("store")?,
            concurrency: f.or("concurrency", DEFAULT_CONCURRENCY)?,
            soft_id: f.opt("soft_id")?,
            pingback: f.opt("pingback")?,
        };
        f.finish()?;
        Ok(raw)
    }
}

impl FromJson for StoreCallOptions {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let d = StoreCallOptions::default();
        let mut f = Fields::new(value)?;
        let o = StoreCallOptions {
            timeout_ms: f.or("timeout_ms", d.timeout_ms)?,
            retry_for_ms: f.or("retry_for_ms", d.retry_for_ms)?,
            concurrency: f.or("concurrency", d.concurrency)?,
        };
        f.finish()?;
        Ok(o)
    }
}

impl ClientOptions {
    /// Reads `value` (an object of options in `casing`), naming the offending option.
    pub fn from_value(value: Value, casing: Casing) -> Result<ClientOptions, ConfigError> {
        if !value.is_object() {
            return Err(ConfigError::new("options", "expected an object of options"));
        }
        let raw: Raw = read_cased(value, casing).map_err(|e| ConfigError::new(e.field, e.problem))?;
        let name = |field: &str| spelled_as(casing, field);
        let api_key = api_key(raw.api_key.as_deref()).map_err(|e| ConfigError::new(name("api_key"), e.problem))?;
        let mut provider = provider(&raw.provider).map_err(|e| ConfigError::new(name("provider"), e.problem))?;
        if let Some(url) = &raw.base_url {
            provider = provider.with_base_url(url).map_err(|e| ConfigError::new(name("base_url"), e.problem))?;
        }
        require_secure_transport(&provider, raw.allow_insecure_http).map_err(|e| {
            ConfigError::new(name(if raw.base_url.is_some() { "base_url" } else { "provider" }), e.problem)
        })?;
        // The provider's documented limits and schedule are the defaults; what is given
        // replaces them field by field.
        let engine = with_casing(casing, || EngineConfig::for_provider(&provider).read_over(Value::Object(raw.engine)))
            .map_err(|e| ConfigError::new(e.field, e.problem))?;
        engine.validate().map_err(|e| ConfigError::new(respell_path(&e.field, casing), e.problem))?;
        raw.replay_policy.validate().map_err(|e| {
            ConfigError::new(format!("{}.{}", name("replay_policy"), spelled_as(casing, &e.field)), e.problem)
        })?;
        if raw.store.timeout_ms == 0 || raw.store.concurrency == 0 {
            let field = if raw.store.timeout_ms == 0 { "timeout_ms" } else { "concurrency" };
            return Err(ConfigError::new(
                format!("{}.{}", name("store"), spelled_as(casing, field)),
                "must be at least 1",
            ));
        }
        if raw.concurrency == 0 {
            return Err(ConfigError::new(name("concurrency"), "must be at least 1"));
        }
        Ok(ClientOptions {
            api_key,
            provider,
            dlq: raw.dlq,
            engine,
            replay_policy: raw.replay_policy,
            proxy: raw.proxy,
            store: raw.store,
            concurrency: raw.concurrency,
            submit: SubmitOptions { soft_id: raw.soft_id, pingback: raw.pingback, header_acao: false },
        })
    }
}

/// `field` (snake_case) as a host in `casing` spells it.
pub fn spelled_as(casing: Casing, field: &str) -> String {
    match casing {
        Casing::Snake => field.to_string(),
        Casing::Camel => crate::json_field::camel(field),
    }
}

/// A dotted snake_case path (`retry.max_attempts`) respelled segment by segment.
fn respell_path(path: &str, casing: Casing) -> String {
    path.split('.').map(|p| spelled_as(casing, p)).collect::<Vec<_>>().join(".")
}

/// The API key as the provider needs it: surrounding white space (a pasted newline) is
/// dropped, and an empty key is refused here rather than by the provider on every task.
pub fn api_key(raw: Option<&str>) -> Result<Secret, ConfigError> {
    match raw.map(str::trim) {
        Some(key) if !key.is_empty() => Ok(Secret::new(key)),
        Some(_) => Err(ConfigError::new("api_key", "is empty: pass your solving service's API key")),
        None => Err(ConfigError::new("api_key", "missing: pass your solving service's API key")),
    }
}

/// A preset name or a base URL; a bare host (`127.0.0.1:8080`, `solver.local`) gets a hint.
pub fn provider(spec: &str) -> Result<Provider, ConfigError> {
    Provider::from_spec(spec).map_err(|e| {
        let spec = spec.trim();
        let host_like = spec.contains('.') || spec.contains(':') || spec == "localhost";
        if host_like && !spec.contains("://") {
            ConfigError::new(
                e.field,
                format!("{}; did you mean http://{spec} (or https://{spec})? A base URL needs its scheme", e.problem),
            )
        } else {
            e
        }
    })
}

/// The key travels in every request: plain `http://` is refused unless the service is on
/// this machine or the caller explicitly allows it.
pub fn require_secure_transport(provider: &Provider, allow_insecure_http: bool) -> Result<(), ConfigError> {
    if provider.base_url().starts_with("http://") && !provider.is_loopback() && !allow_insecure_http {
        return Err(ConfigError::new(
            "base_url",
            format!(
                "{} is plain http: the API key would travel unencrypted; use https, or allow insecure http explicitly",
                Quoted(provider.base_url())
            ),
        ));
    }
    Ok(())
}

/// Reads a caller's option object for one call (`solve_many`, `replay`, a filter…) in
/// `casing`, naming bad fields under `prefix` as the host spells them.
pub fn read_call_options<T: FromJson>(value: Value, casing: Casing, prefix: &str) -> Result<T, ConfigError> {
    read_cased(value, casing).map_err(|e| ConfigError::new(e.field_under(prefix), e.problem))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn camel(v: Value) -> Result<ClientOptions, ConfigError> {
        ClientOptions::from_value(v, Casing::Camel)
    }

    #[test]
    fn defaults_and_the_key_rules() {
        let o = ClientOptions::from_value(json!({"api_key": "  KEY\n"}), Casing::Snake).unwrap();
        assert_eq!(o.api_key.expose(), "KEY");
        assert_eq!(o.provider.name(), DEFAULT_PROVIDER);
        assert_eq!((o.concurrency, o.store.timeout_ms), (DEFAULT_CONCURRENCY, 5_000));
        assert_eq!(camel(json!({"apiKey": "  "})).unwrap_err().field, "apiKey");
        assert!(camel(json!({})).unwrap_err().problem.contains("missing"));
    }

    #[test]
    fn unknown_keys_are_named_as_written() {
        let e = camel(json!({"apiKey": "K", "replay_policy": {}})).unwrap_err();
        assert_eq!(e.field, "replay_policy");
        assert!(e.problem.contains("`replayPolicy`"), "{}", e.problem);
        let e = camel(json!({"apiKey": "K", "retry": {"maxAtempts": 3}})).unwrap_err();
        assert_eq!(e.field, "retry.maxAtempts");
        let e = camel(json!({"apiKey": "K", "retry": {"maxAttempts": 0}})).unwrap_err();
        assert_eq!(e.field, "retry.maxAttempts");
        let e = ClientOptions::from_value(json!({"api_key": "K", "retry": {"max_attempts": 0}}), Casing::Snake)
            .unwrap_err();
        assert_eq!(e.field, "retry.max_attempts");
    }

    #[test]
    fn plain_http_is_refused_unless_loopback_or_allowed() {
        let e = camel(json!({"apiKey": "K", "provider": "http://solver.example.com"})).unwrap_err();
        assert_eq!(e.field, "provider");
        assert!(e.problem.contains("unencrypted"));
        let e = camel(json!({"apiKey": "K", "baseUrl": "http://solver.example.com"})).unwrap_err();
        assert_eq!(e.field, "baseUrl");
        assert!(camel(json!({"apiKey": "K", "baseUrl": "http://127.0.0.1:9"})).is_ok());
        assert!(
            camel(json!({"apiKey": "K", "baseUrl": "http://solver.example.com", "allowInsecureHttp": true})).is_ok()
        );
    }

    #[test]
    fn engine_settings_read_over_the_providers_documented_defaults() {
        let capmonster = camel(json!({"apiKey": "K", "provider": "capmonster"})).unwrap();
        let documented = EngineConfig::for_provider(&Provider::preset("capmonster").unwrap());
        assert_eq!(capmonster.engine, documented);
        let tuned = camel(json!({"apiKey": "K", "provider": "capmonster", "rate": {"maxInFlight": 300}})).unwrap();
        assert_eq!(tuned.engine.rate.max_in_flight, 300);
        assert_eq!(
            tuned.engine.rate.submits_per_second, documented.rate.submits_per_second,
            "the rest stays documented"
        );
        assert_eq!(tuned.engine.polling, documented.polling);
    }

    #[test]
    fn a_bare_host_as_provider_gets_a_hint() {
        let e = camel(json!({"apiKey": "K", "provider": "127.0.0.1:8080"})).unwrap_err();
        assert!(e.problem.contains("did you mean http://127.0.0.1:8080"), "{}", e.problem);
        let e = camel(json!({"apiKey": "K", "provider": "2captch"})).unwrap_err();
        assert!(!e.problem.contains("did you mean http"), "{}", e.problem);
    }
}
