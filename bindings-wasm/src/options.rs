//! The `new Client({...})` options: read from a JS object, camelCase or
//! snake_case keys, unknown keys refused, every problem naming its field.

use captcha_dlq_core::dlq::replay::ReplayPolicy;
use captcha_dlq_core::json_read::FromJson;
use captcha_dlq_core::quoted::Quoted;
use captcha_dlq_core::{ConfigError, EngineConfig, Secret};
use serde_json::{Map, Value};
use wasm_bindgen::{JsCast, JsValue};

use crate::convert::{absent, get, to_json};

const KNOWN: [&str; 12] = [
    "apiKey",
    "provider",
    "baseUrl",
    "dlq",
    "retry",
    "polling",
    "rate",
    "circuit",
    "replay",
    "seed",
    "allowInsecureHttp",
    "onEvent",
];

/// The parsed options. `dlq` (the store) and `onEvent` are the JS client's; only their shape is checked here.
#[derive(Debug)]
pub(crate) struct Options {
    /// A `Secret`, so that `Debug` never shows it.
    pub api_key: Secret,
    pub provider: String,
    pub base_url: Option<String>,
    pub config: EngineConfig,
    pub replay: ReplayPolicy,
    pub allow_insecure_http: bool,
}

pub(crate) use captcha_dlq_core::json_field::{snake, snake_keys};

fn optional_string(options: &JsValue, name: &str) -> Result<Option<String>, ConfigError> {
    let value = get(options, name);
    if absent(&value) {
        return Ok(None);
    }
    value.as_string().map(Some).ok_or_else(|| ConfigError::new(name, "expected a string"))
}

/// Reads `value` (snake-cased) as `T`, naming the offending field under `prefix`.
pub(crate) fn decode<T: FromJson>(prefix: &str, value: Value) -> Result<T, ConfigError> {
    T::from_json(snake_keys(value)).map_err(|e| ConfigError::new(e.field_under(prefix), e.problem))
}

pub(crate) fn parse(options: &JsValue) -> Result<Options, ConfigError> {
    if !options.is_object() {
        return Err(ConfigError::new("options", "expected an object such as { apiKey, provider, dlq }"));
    }
    for key in js_sys::Object::keys(options.unchecked_ref::<js_sys::Object>()).iter().filter_map(|k| k.as_string()) {
        if !KNOWN.contains(&key.as_str()) {
            return Err(ConfigError::new(key, format!("unknown option; known: {}", KNOWN.join(", "))));
        }
    }
    let api_key = optional_string(options, "apiKey")?
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .map(Secret::new)
        .ok_or_else(|| ConfigError::new("apiKey", "missing: pass the solving service's API key"))?;
    let mut engine = Map::new();
    for section in ["retry", "polling", "rate", "circuit", "seed"] {
        let value = get(options, section);
        if !value.is_undefined() && !value.is_null() {
            let json = to_json(&value).map_err(|e| ConfigError::new(section, e))?;
            engine.insert(section.to_string(), json);
        }
    }
    let config: EngineConfig = decode("", Value::Object(engine))?;
    config.validate()?;
    let replay_value = get(options, "replay");
    let replay: ReplayPolicy = if absent(&replay_value) {
        ReplayPolicy::default()
    } else {
        decode("replay", to_json(&replay_value).map_err(|e| ConfigError::new("replay", e))?)?
    };
    replay.validate()?;
    let on_event = get(options, "onEvent");
    if !absent(&on_event) && !on_event.is_function() {
        return Err(ConfigError::new("onEvent", "expected a function"));
    }
    check_dlq(&get(options, "dlq"))?;
    let insecure = get(options, "allowInsecureHttp");
    Ok(Options {
        api_key,
        provider: optional_string(options, "provider")?.unwrap_or_else(|| "captchaai".to_string()),
        base_url: optional_string(options, "baseUrl")?,
        config,
        replay,
        allow_insecure_http: insecure.as_bool().unwrap_or(false),
    })
}

/// The `dlq` option's shape: `'memory'`, `'indexeddb:NAME'`, or an object (its methods are checked when
/// the JS client opens it).
fn check_dlq(dlq: &JsValue) -> Result<(), ConfigError> {
    if absent(dlq) || dlq.is_object() {
        return Ok(());
    }
    match dlq.as_string() {
        Some(spec) if spec == "memory" => Ok(()),
        Some(spec) if spec == "indexeddb:" => {
            Err(ConfigError::new("dlq", "indexeddb: needs a database name, e.g. 'indexeddb:captcha-dlq'"))
        }
        Some(spec) if spec.starts_with("indexeddb:") => Ok(()),
        Some(spec) => Err(ConfigError::new(
            "dlq",
            format!("{}: expected 'memory', 'indexeddb:NAME' or a store object", Quoted(&spec)),
        )),
        None => Err(ConfigError::new("dlq", "expected 'memory', 'indexeddb:NAME' or a store object")),
    }
}
