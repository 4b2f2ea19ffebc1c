//! Reads the JS `Client` options (camelCase or snake_case keys) into a
//! [`ClientBuilder`], naming the offending option on any mistake. The same
//! checks run synchronously in `new Client(...)`, so a bad option throws
//! there instead of on the first call.

use captcha_dlq::ClientBuilder;
use captcha_dlq_core::dlq::replay::ReplayPolicy;
use captcha_dlq_core::json_read::FromJson;
use captcha_dlq_core::{EngineConfig, Provider};
use serde_json::{Map, Value};

use crate::error;

pub use captcha_dlq_core::json_field::snake_keys;

/// Reads `value` as a `T`, naming the path of the bad field under `prefix` on error.
pub fn typed<T: FromJson>(prefix: &str, value: Value) -> napi::Result<T> {
    T::from_json(value).map_err(|e| error::config(&e.field_under(prefix), e.problem))
}

/// The options, checked; `dlq` is `None` when the host passes a store object instead.
#[derive(Clone)]
pub struct Options {
    pub api_key: String,
    pub provider: String,
    pub base_url: Option<String>,
    pub dlq: Option<String>,
    pub config: EngineConfig,
    pub replay: ReplayPolicy,
    pub allow_insecure_http: bool,
    pub proxy: Option<String>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options").field("api_key", &"***").field("provider", &self.provider).finish_non_exhaustive()
    }
}

fn string(obj: &Map<String, Value>, field: &str) -> napi::Result<Option<String>> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(error::config(field, "must be a string")),
    }
}

const KNOWN: &[&str] = &[
    "apiKey",
    "provider",
    "baseUrl",
    "dlq",
    "retry",
    "polling",
    "rate",
    "circuit",
    "seed",
    "replayPolicy",
    "allowInsecureHttp",
    "proxy",
];

impl Options {
    /// Parses and checks everything that can be checked without I/O.
    pub fn parse(json: &str) -> napi::Result<Options> {
        let value: Value =
            serde_json::from_str(json).map_err(|e| error::config("options", format!("not valid JSON: {e}")))?;
        let Value::Object(raw) = value else {
            return Err(error::config("options", "must be an object"));
        };
        // Both spellings are accepted; error messages use the JS (camelCase) name.
        let mut obj = Map::new();
        for (k, v) in raw {
            let camel = camel(&k);
            if !KNOWN.contains(&camel.as_str()) {
                return Err(error::config(&k, format!("unknown option; expected one of {}", KNOWN.join(", "))));
            }
            obj.insert(camel, v);
        }
        let api_key = string(&obj, "apiKey")?.map(|k| k.trim().to_string()).filter(|k| !k.is_empty());
        let api_key = api_key.ok_or_else(|| error::config("apiKey", "missing: pass your solving service's API key"))?;
        let provider = string(&obj, "provider")?.unwrap_or_else(|| "captchaai".into());
        let base_url = string(&obj, "baseUrl")?;
        let dlq = string(&obj, "dlq")?;
        let proxy = string(&obj, "proxy")?;
        let allow_insecure_http = match obj.get("allowInsecureHttp") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(error::config("allowInsecureHttp", "must be a boolean")),
        };
        let mut engine = Map::new();
        for part in ["retry", "polling", "rate", "circuit", "seed"] {
            if let Some(v) = obj.get(part).filter(|v| !v.is_null()) {
                engine.insert(part.to_string(), snake_keys(v.clone()));
            }
        }
        let config: EngineConfig = typed("", Value::Object(engine))?;
        config.validate().map_err(captcha_dlq::Error::Config).map_err(|e| error::from_native(&e, None))?;
        let replay: ReplayPolicy = match obj.get("replayPolicy").filter(|v| !v.is_null()) {
            Some(v) => typed("replayPolicy", snake_keys(v.clone()))?,
            None => ReplayPolicy::default(),
        };
        replay.validate().map_err(|e| error::config(&format!("replayPolicy.{}", e.field), e.problem))?;
        let options = Options { api_key, provider, base_url, dlq, config, replay, allow_insecure_http, proxy };
        options.check_provider()?;
        Ok(options)
    }

    /// The provider checks `ClientBuilder::build` makes, done early and without I/O.
    fn check_provider(&self) -> napi::Result<()> {
        let as_js = |e: captcha_dlq_core::ConfigError| error::from_native(&e.into(), Some(&self.api_key));
        let mut provider = Provider::from_spec(&self.provider).map_err(as_js)?;
        if let Some(url) = &self.base_url {
            provider = provider.with_base_url(url).map_err(as_js)?;
        }
        if provider.base_url().starts_with("http://") && !provider.is_loopback() && !self.allow_insecure_http {
            return Err(error::config(
                "baseUrl",
                format!(
                    "{} is plain http: the API key would travel unencrypted; use https, or set allowInsecureHttp",
                    provider.base_url()
                ),
            ));
        }
        Ok(())
    }

    pub fn builder(&self) -> ClientBuilder {
        let mut b = captcha_dlq::Client::builder()
            .api_key(self.api_key.clone())
            .provider(self.provider.clone())
            .config(self.config.clone())
            .replay_policy(self.replay.clone())
            .allow_insecure_http(self.allow_insecure_http);
        if let Some(url) = &self.base_url {
            b = b.base_url(url.clone());
        }
        if let Some(proxy) = &self.proxy {
            b = b.proxy(proxy.clone());
        }
        if let Some(dlq) = &self.dlq {
            b = b.dlq(dlq.clone());
        }
        b
    }
}

/// `allow_insecure_http` → `allowInsecureHttp`.
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
