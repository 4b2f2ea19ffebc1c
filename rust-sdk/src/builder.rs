//! Building a native client: the options (read once by the core, as for every front end)
//! plus the native backends.

use std::sync::Arc;

use captcha_dlq_client::options::{ClientOptions, Durability, StoreCallOptions, StoreOnlyOptions};
use captcha_dlq_client::{AdoptedAnswer, AdoptedHook, Backends, Client, Error, EventSink, Result};
use captcha_dlq_core::dlq::replay::ReplayPolicy;
use captcha_dlq_core::dlq::DlqStore;
use captcha_dlq_core::support::json_read::Casing;
use captcha_dlq_core::{EngineConfig, Event};
use serde_json::{Map, Value};

use crate::liveness::ProcessLiveness;
use crate::open::{check_durability, open_store_with, DEFAULT_DLQ};
use crate::runtime::TokioRuntime;
use crate::transport::ReqwestTransport;

/// Starts a client on the current tokio runtime: opens `options.dlq` (or uses `store`, a
/// store object of the host), builds the HTTP client, spawns the driver.
pub async fn connect(
    options: ClientOptions,
    store: Option<Arc<dyn DlqStore>>,
    events: Option<EventSink>,
) -> Result<Client> {
    connect_with(options, store, events, None).await
}

/// [`connect`], with a hook for the answers the client adopts from dead fleet members (see
/// [`captcha_dlq_client::adopt`]).
pub async fn connect_with(
    options: ClientOptions,
    store: Option<Arc<dyn DlqStore>>,
    events: Option<EventSink>,
    on_adopted: Option<AdoptedHook>,
) -> Result<Client> {
    let runtime = TokioRuntime::current()
        .ok_or_else(|| Error::Io("a captcha-dlq client needs a tokio runtime to run on".into()))?;
    let store = open_dlq(options.dlq.as_deref(), &options.store, store).await?;
    let transport = ReqwestTransport::new(options.secrets(), options.proxy.as_deref())?;
    let backends = Backends {
        runtime: Arc::new(runtime),
        transport: Arc::new(transport),
        liveness: Arc::new(ProcessLiveness),
        store,
    };
    #[cfg(feature = "otlp")]
    let tracer = crate::traces::OtlpTracer::from_options(&options)?
        .map(|t| Box::new(t) as Box<dyn captcha_dlq_client::traces::TaskTracer>);
    // Without the `otlp` feature the option is refused rather than left to the client's JSON exporter (the
    // browser's): natively `protocol` left out means protobuf, and spans must not go through the solving
    // `proxy` the transport uses (issue 44, finding 7).
    #[cfg(not(feature = "otlp"))]
    let tracer = match options.traces {
        Some(_) => {
            return Err(captcha_dlq_core::ConfigError::new(
                "traces",
                "this build has no trace exporter (the captcha-dlq crate's `otlp` feature has one)",
            )
            .into())
        }
        None => None,
    };
    Client::start_traced(options, backends, events, on_adopted, tracer)
}

/// The DLQ of a client: the host's `store` object, else the store at `location` (the default
/// file when none is named), with the durability asked for.
async fn open_dlq(
    location: Option<&str>,
    options: &StoreCallOptions,
    store: Option<Arc<dyn DlqStore>>,
) -> Result<Arc<dyn DlqStore>> {
    let durability = options.durability;
    match store {
        Some(store) => {
            durability.check_store(false, "the custom store")?;
            Ok(store)
        }
        None => {
            let location = location.unwrap_or(DEFAULT_DLQ);
            check_durability(location, durability)?;
            open_store_patiently(location, durability, options.retry_for()).await
        }
    }
}

/// Opens the store, retrying a transient failure (a database another process holds locked,
/// a Redis that is restarting) with backoff for at most `retry_for`, as store writes are.
async fn open_store_patiently(
    location: &str,
    durability: Durability,
    retry_for: std::time::Duration,
) -> Result<Arc<dyn DlqStore>> {
    let started = std::time::Instant::now();
    let mut delay = std::time::Duration::from_millis(250);
    loop {
        match open_store_with(location, durability).await {
            Err(e) if e.is_transient() && started.elapsed() < retry_for => {
                tracing::warn!(target: "captcha_dlq", "DLQ store not answering ({e}); trying again for up to {} s", retry_for.as_secs());
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(std::time::Duration::from_secs(5));
            }
            other => return other.map_err(Error::Store),
        }
    }
}

/// A builder for Rust callers. Everything it sets goes through the same option reader
/// as the Python and JavaScript options, so the rules and defaults are the same.
#[derive(Clone, Default)]
pub struct ClientBuilder {
    options: Map<String, Value>,
    config: Option<EngineConfig>,
    replay_policy: Option<ReplayPolicy>,
    store: Option<Arc<dyn DlqStore>>,
    events: Option<EventSink>,
    on_adopted: Option<AdoptedHook>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = hide_keys(&Value::Object(self.options.clone()));
        f.debug_struct("ClientBuilder").field("options", &shown).finish_non_exhaustive()
    }
}

/// `value` with every API key (`api_key`, also inside `providers`) and the values of the trace
/// exporter's `headers` (a collector's token) shown as `***`.
fn hide_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let hidden = k == "api_key" || k == "apiKey";
                    let shown = match v {
                        _ if hidden => Value::String("***".into()),
                        Value::Object(headers) if k == "headers" => Value::Object(
                            headers.keys().map(|name| (name.clone(), Value::String("***".into()))).collect(),
                        ),
                        _ => hide_keys(v),
                    };
                    (k.clone(), shown)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(hide_keys).collect()),
        other => other.clone(),
    }
}

/// A builder for a native client (`captcha_dlq::builder().api_key(..).build().await`).
pub fn builder() -> ClientBuilder {
    ClientBuilder::default()
}

impl ClientBuilder {
    pub fn new() -> Self {
        ClientBuilder::default()
    }

    fn set(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.options.insert(name.to_string(), value.into());
        self
    }

    pub fn api_key(self, key: impl Into<String>) -> Self {
        self.set("api_key", key.into())
    }
    /// A preset name (`captchaai`, `2captcha`, `anti-captcha`…) or a v1 base URL.
    pub fn provider(self, provider: impl Into<String>) -> Self {
        self.set("provider", provider.into())
    }
    /// Send the provider's protocol to another host (a proxy of yours, a mock).
    pub fn base_url(self, url: impl Into<String>) -> Self {
        self.set("base_url", url.into())
    }
    /// `memory`, a SQLite file path, or a `redis://` URL.
    pub fn dlq(self, location: impl Into<String>) -> Self {
        self.set("dlq", location.into())
    }
    pub fn dlq_store(mut self, store: Arc<dyn DlqStore>) -> Self {
        self.store = Some(store);
        self
    }
    pub fn config(mut self, config: EngineConfig) -> Self {
        self.config = Some(config);
        self
    }
    pub fn replay_policy(mut self, policy: ReplayPolicy) -> Self {
        self.replay_policy = Some(policy);
        self
    }
    /// Allow `http://` to a non-loopback host (the key then travels in clear text).
    pub fn allow_insecure_http(self, allow: bool) -> Self {
        self.set("allow_insecure_http", allow)
    }
    /// An HTTP or SOCKS5 proxy for the client's own traffic (`socks5://host:port`).
    pub fn proxy(self, proxy: impl Into<String>) -> Self {
        self.set("proxy", proxy.into())
    }
    /// Any other option by its name (`store`, `concurrency`, `soft_id`…), as JSON.
    pub fn option(self, name: &str, value: Value) -> Self {
        self.set(name, value)
    }
    pub fn on_event(mut self, sink: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.events = Some(Arc::new(sink));
        self
    }

    /// Where the answers this client adopts from dead fleet members go (see
    /// [`captcha_dlq_client::adopt`]): `hook` gets each once, and its journal entry goes when
    /// it returns `Ok`; `Err` leaves the answer to `recover`. Without a hook, adopted answers
    /// are kept in the journal, released for `recover` (or the resumed `captcha-dlq batch`).
    pub fn on_adopted(
        self,
        hook: impl Fn(&AdoptedAnswer) -> std::result::Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        let hook = Arc::new(hook);
        self.on_adopted_async(Arc::new(move |answer: AdoptedAnswer| {
            let taken = hook(&answer);
            Box::pin(async move { taken })
        }))
    }

    /// [`on_adopted`](Self::on_adopted) with a hook that answers later (its future).
    pub fn on_adopted_async(mut self, hook: AdoptedHook) -> Self {
        self.on_adopted = Some(hook);
        self
    }

    /// The options, checked.
    pub fn options(&self) -> Result<ClientOptions> {
        let mut options = ClientOptions::from_value(Value::Object(self.options.clone()), Casing::Snake)?;
        self.check_typed()?;
        if let Some(config) = &self.config {
            options.set_engine(config);
        }
        if let Some(policy) = &self.replay_policy {
            options.replay_policy = policy.clone();
        }
        Ok(options)
    }

    /// Checks what was set as typed values (`config`, `replay_policy`) rather than as options.
    fn check_typed(&self) -> Result<()> {
        if let Some(config) = &self.config {
            config.validate()?;
        }
        if let Some(policy) = &self.replay_policy {
            policy.validate()?;
        }
        Ok(())
    }

    /// Opens only the DLQ, as [`build`](Self::build) would (the store object or the location
    /// given, else the default file; the durability; a transient failure retried), for a
    /// program that reads or edits the store without solving (the CLI's `dlq` commands). Every
    /// option is checked as `build` checks it, but no API key is needed.
    pub async fn open_store(&self) -> Result<Arc<dyn DlqStore>> {
        self.check_typed()?;
        let options = StoreOnlyOptions::from_value(Value::Object(self.options.clone()), Casing::Snake)?;
        open_dlq(options.dlq.as_deref(), &options.store, self.store.clone()).await
    }

    /// The options a store-only program reads (where the DLQ is, how it is called, its
    /// retention), checked as [`open_store`](Self::open_store) checks them: no key needed.
    pub fn store_only_options(&self) -> Result<StoreOnlyOptions> {
        Ok(StoreOnlyOptions::from_value(Value::Object(self.options.clone()), Casing::Snake)?)
    }

    /// Opens the store and starts the client on the current tokio runtime.
    pub async fn build(self) -> Result<Client> {
        let options = self.options()?;
        connect_with(options, self.store, self.events, self.on_adopted).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_key() {
        let b = builder()
            .api_key("SECRET-1")
            .option(
                "providers",
                serde_json::json!([{"provider": "capsolver", "api_key": "SECRET-2"}, {"provider": "2captcha", "apiKey": "SECRET-3"}]),
            )
            .option("traces", serde_json::json!({"otlp_endpoint": "http://x", "headers": {"x-token": "SECRET-4"}}));
        let shown = format!("{b:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("capsolver") && shown.contains("x-token"), "{shown}");
    }

    #[tokio::test]
    async fn open_store_needs_no_key_but_checks_every_option() {
        let store = builder().dlq("memory").open_store().await.unwrap();
        assert_eq!(store.stats(crate::runtime::now()).await.unwrap().total, 0);
        let typo = builder().dlq("memory").option("retry", serde_json::json!({"max_atempts": 2}));
        let Err(Error::Config(e)) = typo.open_store().await else { panic!("a misspelled option is refused") };
        assert_eq!(e.field, "retry.max_atempts");
        let durable = builder().dlq("memory").option("store", serde_json::json!({"durability": "power_loss"}));
        let Err(Error::Config(e)) = durable.open_store().await else { panic!("power_loss needs a SQLite DLQ") };
        assert_eq!(e.field, "store.durability");
    }
}
