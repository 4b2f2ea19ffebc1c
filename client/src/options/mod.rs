//! The client options, read once for every front end.
//!
//! Rust, Python, Node and the browser construct a client from the same set of
//! options, spelled in the host's casing (`api_key` / `apiKey`). This module
//! reads them, applies every default and every rule (the key is trimmed and
//! required, plain `http://` is refused unless loopback or explicitly allowed,
//! unknown keys are errors naming the key as written), so that no binding
//! decides any of it. What a binding handles itself is what only it can hold:
//! a store object written in the host language and an event callback.
//!
//! One provider is the simple form (`provider`, `api_key`, `base_url`, `price`); several
//! are `providers: [{provider, api_key, base_url?, name?, price?, polling?, rate?,
//! circuit?}, …]` with `routing` (`ordered` | `fastest` | `cheapest`),
//! `failover_on_unsolvable`, `routing_explore` and `budget` (see
//! [`captcha_dlq_core::engine::routing`]). Each provider's engine settings start from its documented
//! defaults; the top-level `polling`, `rate` and `circuit` apply to every provider and an
//! entry's own sections to that one; `retry` and `seed` are the client's.

#[cfg(feature = "alerts")]
pub mod alerts;
#[cfg(any(feature = "alerts", feature = "traces"))]
pub mod endpoint;
#[cfg(feature = "traces")]
pub mod traces;

use core::time::Duration;

use serde_json::{Map, Value};

use captcha_dlq_core::dlq::replay::ReplayPolicy;
#[cfg(feature = "retention")]
use captcha_dlq_core::dlq::retention::RetentionOptions;
use captcha_dlq_core::engine::{EngineConfig, LaneSpec, Policy, RoutingConfig, MAX_LANES};
use captcha_dlq_core::error::ConfigError;
use captcha_dlq_core::http::Secret;
use captcha_dlq_core::provider::{Provider, SubmitOptions};
use captcha_dlq_core::spend::Prices;
use captcha_dlq_core::support::json_read::{
    read_cased, unit_variant, with_casing, Casing, FieldError, Fields, FromJson, ReadOver,
};
use captcha_dlq_core::support::quoted::Quoted;

/// The provider used when none is named.
pub const DEFAULT_PROVIDER: &str = "captchaai";
/// Tasks a `solve_many` / `solve_stream` keeps in flight when the call does not say.
pub const DEFAULT_CONCURRENCY: usize = 100;
/// Records one `replay` takes out of the DLQ when the call does not say.
pub const DEFAULT_REPLAY_LIMIT: usize = 100;

/// What a committed DLQ write survives (`store.durability`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// The process being killed (SQLite `synchronous = NORMAL`): an operating system crash
    /// or a power loss may roll back the last commits; the store stays consistent.
    #[default]
    Process,
    /// Also a power loss or an operating system crash: every commit is synced to disk before
    /// the client goes on (SQLite `synchronous = FULL`; writes that arrive together share one
    /// sync). Only stores that sync their own commits take it.
    PowerLoss,
}

impl Durability {
    pub const ALL: [Durability; 2] = [Durability::Process, Durability::PowerLoss];

    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Process => "process",
            Durability::PowerLoss => "power_loss",
        }
    }

    /// Whether the client can give this durability to a store: it syncs the commits of a
    /// SQLite file (`sqlite`); any other store keeps its own. The error names `store` (a quoted
    /// location such as `"memory"`, or `the custom store`).
    pub fn check_store(self, sqlite: bool, store: &str) -> Result<(), ConfigError> {
        if self == Durability::Process || sqlite {
            return Ok(());
        }
        Err(ConfigError::new(
            "store.durability",
            format!(
                "{} is applied to a SQLite DLQ only, and {store} is not one (a Redis server's durability is \
                 its `appendfsync` setting; a custom store's, its own writes)",
                Quoted(self.as_str())
            ),
        ))
    }
}

impl FromJson for Durability {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        unit_variant(value, &Durability::ALL, Durability::as_str)
    }
}

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
    /// What a committed write survives; the front end that opens the DLQ applies it.
    pub durability: Durability,
}

impl Default for StoreCallOptions {
    fn default() -> Self {
        StoreCallOptions { timeout_ms: 5_000, retry_for_ms: 60_000, concurrency: 16, durability: Durability::Process }
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

/// Whether the client shares its accounts' limits with the other clients on its store
/// (`fleet`; see [`captcha_dlq_core::fleet`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FleetOptions {
    /// On by default: a store that keeps a fleet ledger (SQLite, Redis) holds each account's
    /// submit schedule, pauses, window and account errors for every client on it. Off, the
    /// client keeps its own limits, as if it were alone.
    pub enabled: bool,
    /// On by default: while the client runs in a fleet (`enabled` and a store with a ledger), it
    /// takes over the journal entries of fleet members whose heartbeat stopped and finishes
    /// them, so a fleet heals without anyone running `recover`. Off, it leaves them to `recover`.
    pub adopt: bool,

    /// Whose `budget` it is: the fleet's (the default, with the fleet on) or this client's.
    pub budget: BudgetScope,
}

/// Whose spending a `budget` caps (`fleet.budget`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetScope {
    /// Every client on the store and account shares one budget and one spend.
    #[default]
    Fleet,
    /// This client's own spending only, whatever the others spend.
    Process,
}

impl BudgetScope {
    pub const ALL: [BudgetScope; 2] = [BudgetScope::Fleet, BudgetScope::Process];

    pub fn as_str(self) -> &'static str {
        match self {
            BudgetScope::Fleet => "fleet",
            BudgetScope::Process => "process",
        }
    }
}

impl FromJson for BudgetScope {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        unit_variant(value, &BudgetScope::ALL, BudgetScope::as_str)
    }
}

impl Default for FleetOptions {
    fn default() -> Self {
        FleetOptions { enabled: true, adopt: true, budget: BudgetScope::Fleet }
    }
}

impl FromJson for FleetOptions {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let o = FleetOptions {
            enabled: f.or("enabled", true)?,
            adopt: f.or("adopt", true)?,
            budget: f.or_default("budget")?,
        };
        f.finish()?;
        Ok(o)
    }
}

/// One provider of a client, checked.
#[derive(Clone, Debug)]
pub struct ProviderOptions {
    /// How records, solutions and events name it: the entry's `name`, else the preset's
    /// name (`custom` for a base URL). Unique in a client.
    pub name: String,
    pub provider: Provider,
    pub api_key: Secret,
    /// Its documented defaults under the user's settings; `retry` and `seed` are the client's.
    pub engine: EngineConfig,
    /// Its price per solved task (`price`), for providers that do not report costs.
    pub prices: Prices,
    /// Its software id (`soft_id`), sent to this provider only.
    pub soft_id: Option<String>,
}

impl ProviderOptions {
    fn lane_spec(&self) -> LaneSpec {
        LaneSpec {
            name: self.name.clone(),
            provider: self.provider.clone(),
            key: self.api_key.clone(),
            config: self.engine.clone(),
            prices: self.prices,
            soft_id: self.soft_id.clone(),
            fleet: None,
        }
    }
}

/// Everything a client is built from, checked. Its `Debug` shows no secret (see the impl).
#[derive(Clone)]
pub struct ClientOptions {
    /// The providers in routing order; never empty (one in the simple form).
    providers: Vec<ProviderOptions>,
    pub routing: RoutingConfig,
    /// Where the DLQ and journal live, as the front end names stores (`memory`, a SQLite
    /// path, a `redis://` URL, `indexeddb:NAME`); `None`: the front end's default.
    pub dlq: Option<String>,
    pub replay_policy: ReplayPolicy,
    /// An HTTP or SOCKS5 proxy for the client's own traffic (native only).
    pub proxy: Option<String>,
    pub store: StoreCallOptions,
    pub fleet: FleetOptions,
    /// Default concurrency of `solve_many` / `solve_stream`.
    pub concurrency: usize,
    pub submit: SubmitOptions,
    /// `task_defaults`: a proxy and a user agent for every task whose kind takes them (`task::context`).
    pub task_defaults: Option<captcha_dlq_core::task::context::TaskDefaults>,
    /// Webhook alerts (`alerts`; feature `alerts`, which the browser build leaves out: it refuses the option).
    #[cfg(feature = "alerts")]
    pub alerts: Option<self::alerts::AlertOptions>,
    /// Retention limits of the DLQ (`dlq_retention`; feature `retention`), applied by the client
    /// every `interval_ms` and by `captcha-dlq dlq retain`.
    #[cfg(feature = "retention")]
    pub dlq_retention: Option<RetentionOptions>,
    /// Where spans are exported (`traces`), if anywhere; feature `traces`, not in the browser build.
    #[cfg(feature = "traces")]
    pub traces: Option<self::traces::TraceOptions>,
}

/// Written out rather than derived, so that printing the options (a log line, a panic
/// message) shows no secret: the keys are [`Secret`]s, the DLQ location and the proxy lose
/// their user and password, the webhooks' and traces' own `Debug` hide their URLs' paths,
/// secrets and header values.
impl core::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use captcha_dlq_core::support::weburl::hide_userinfo;
        let mut d = f.debug_struct("ClientOptions");
        d.field("providers", &self.providers)
            .field("routing", &self.routing)
            .field("dlq", &self.dlq.as_deref().map(hide_userinfo))
            .field("replay_policy", &self.replay_policy)
            .field("proxy", &self.proxy.as_deref().map(hide_userinfo))
            .field("store", &self.store)
            .field("fleet", &self.fleet)
            .field("concurrency", &self.concurrency)
            .field("submit", &self.submit)
            .field("task_defaults", &self.task_defaults);
        #[cfg(feature = "alerts")]
        d.field("alerts", &self.alerts);
        #[cfg(feature = "retention")]
        d.field("dlq_retention", &self.dlq_retention);
        #[cfg(feature = "traces")]
        d.field("traces", &self.traces);
        d.finish()
    }
}

/// What is wrong with a DLQ location whatever the front end: an empty one names no store, and
/// no store's name holds a NUL (file systems, URLs and IndexedDB names refuse it).
pub fn dlq_location_problem(location: &str) -> Option<&'static str> {
    if location.trim().is_empty() {
        Some("is empty: name a store (`memory`, a SQLite file path, a `redis://` URL; `indexeddb:NAME` in the browser)")
    } else if location.contains('\0') {
        Some("contains a NUL character")
    } else {
        None
    }
}

/// The options as given, before the providers are resolved.
struct Raw {
    /// The one-provider form's options (refused beside `providers`).
    one: ProviderFields,
    providers: Option<Vec<RawProvider>>,
    routing: Option<Policy>,
    failover_on_unsolvable: Option<bool>,
    routing_explore: Option<f64>,
    budget: Option<f64>,
    dlq: Option<String>,
    /// `retry`, `polling`, `rate`, `circuit`, `seed` as given: read over each provider's
    /// documented defaults once the provider is known.
    engine: Map<String, Value>,
    replay_policy: ReplayPolicy,
    allow_insecure_http: bool,
    proxy: Option<String>,
    store: StoreCallOptions,
    fleet: FleetOptions,
    concurrency: usize,
    pingback: Option<String>,
    task_defaults: Option<captcha_dlq_core::task::context::TaskDefaults>,
    /// `alerts` and `dlq_retention` as given: read by [`native_only`].
    alerts: Option<Value>,
    dlq_retention: Option<Value>,
    #[cfg(feature = "traces")]
    traces: Option<self::traces::TraceOptions>,
}

impl FromJson for Raw {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let engine = engine_sections(&mut f, &["retry", "polling", "rate", "circuit", "seed"])?;
        let raw = Raw {
            one: ProviderFields::read(&mut f)?,
            providers: f.opt("providers")?,
            routing: f.opt("routing")?,
            failover_on_unsolvable: f.opt("failover_on_unsolvable")?,
            routing_explore: f.opt("routing_explore")?,
            budget: f.opt("budget")?,
            dlq: f.opt("dlq")?,
            engine,
            replay_policy: f.or_default("replay_policy")?,
            allow_insecure_http: f.or("allow_insecure_http", false)?,
            proxy: f.opt("proxy")?,
            store: f.or_default("store")?,
            fleet: f.or_default("fleet")?,
            concurrency: f.or("concurrency", DEFAULT_CONCURRENCY)?,
            pingback: f.opt("pingback")?,
            task_defaults: f.opt("task_defaults")?,
            alerts: f.opt("alerts")?,
            dlq_retention: f.opt("dlq_retention")?,
            #[cfg(feature = "traces")]
            traces: f.opt("traces")?,
        };
        // A build without `traces` (the browser's) has no exporter: refused in words rather than as an unknown key.
        #[cfg(not(feature = "traces"))]
        if f.opt::<Value>("traces")?.is_some() {
            return Err(FieldError::new(
                captcha_dlq_core::support::json_read::spelled("traces"),
                "this build exports no traces (cargo feature `traces` is off: the browser build exports no traces)",
            ));
        }
        f.finish()?;
        Ok(raw)
    }
}

/// The engine's `sections` present in `f`, as given (read into `EngineConfig` later, over the
/// client's or the defaults).
fn engine_sections(f: &mut Fields, sections: &[&'static str]) -> Result<Map<String, Value>, FieldError> {
    let mut engine = Map::new();
    for &section in sections {
        if let Some(v) = f.opt::<Value>(section)? {
            engine.insert(section.to_string(), v);
        }
    }
    Ok(engine)
}

/// The options that say which provider and how to reach it: read alike at the top (the
/// one-provider form) and in each entry of `providers`.
struct ProviderFields {
    provider: Option<String>,
    api_key: Option<String>,
    base_url: Option<String>,
    price: Option<Value>,
    /// Its software id for the service's developer programme: sent to it alone.
    soft_id: Option<String>,
}

impl ProviderFields {
    fn read(f: &mut Fields) -> Result<Self, FieldError> {
        Ok(ProviderFields {
            provider: f.opt("provider")?,
            api_key: f.opt("api_key")?,
            base_url: f.opt("base_url")?,
            price: f.opt("price")?,
            soft_id: f.opt("soft_id")?,
        })
    }

    /// The first of these options given (snake_case), if any.
    fn first_given(&self) -> Option<&'static str> {
        [
            (self.provider.is_some(), "provider"),
            (self.api_key.is_some(), "api_key"),
            (self.base_url.is_some(), "base_url"),
            (self.price.is_some(), "price"),
            (self.soft_id.is_some(), "soft_id"),
        ]
        .into_iter()
        .find_map(|(given, field)| given.then_some(field))
    }
}

/// One entry of `providers`, as given (its `provider` is required).
struct RawProvider {
    name: Option<String>,
    fields: ProviderFields,
    /// `polling`, `rate`, `circuit` for this provider only.
    engine: Map<String, Value>,
}

impl FromJson for RawProvider {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let engine = engine_sections(&mut f, &["polling", "rate", "circuit"])?;
        let name = f.opt("name")?;
        let fields = ProviderFields::read(&mut f)?;
        if fields.provider.is_none() {
            return Err(FieldError::new(captcha_dlq_core::support::json_read::spelled("provider"), "missing field"));
        }
        f.finish()?;
        Ok(RawProvider { name, fields, engine })
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
            durability: f.or("durability", d.durability)?,
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
        let routing = RoutingConfig {
            policy: raw.routing.unwrap_or_default(),
            failover_on_unsolvable: raw.failover_on_unsolvable.unwrap_or(true),
            explore: raw.routing_explore.unwrap_or(RoutingConfig::default().explore),
            budget: raw.budget,
        };
        routing.validate().map_err(|e| ConfigError::new(name(&e.field), e.problem))?;
        let providers = read_providers(raw.one, raw.providers, &raw.engine, raw.allow_insecure_http, casing)?;
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
        if let Some(problem) = raw.dlq.as_deref().and_then(dlq_location_problem) {
            return Err(ConfigError::new(name("dlq"), problem));
        }
        #[cfg(feature = "alerts")]
        let alerts = feature_section::<self::alerts::AlertOptions>(raw.alerts, "alerts", casing)?;
        #[cfg(feature = "alerts")]
        if let Some(alerts) = &alerts {
            with_casing(casing, || alerts.check_transport(raw.allow_insecure_http))
                .map_err(|e| ConfigError::new(format!("{}.{}", name("alerts"), e.field), e.problem))?;
        }
        #[cfg(feature = "traces")]
        if let Some(traces) = &raw.traces {
            self::endpoint::secure_endpoint(&traces.otlp_endpoint, raw.allow_insecure_http).map_err(|problem| {
                ConfigError::new(format!("{}.{}", name("traces"), name("otlp_endpoint")), problem)
            })?;
        }
        #[cfg(feature = "retention")]
        let dlq_retention = feature_section::<RetentionOptions>(raw.dlq_retention, "dlq_retention", casing)?;
        // A section this build leaves out is refused in words rather than as an unknown key.
        #[cfg(not(feature = "alerts"))]
        refuse_left_out(raw.alerts.is_some(), "alerts", "alerts", casing)?;
        #[cfg(not(feature = "retention"))]
        refuse_left_out(raw.dlq_retention.is_some(), "dlq_retention", "retention", casing)?;
        Ok(ClientOptions {
            providers,
            routing,
            dlq: raw.dlq,
            replay_policy: raw.replay_policy,
            proxy: raw.proxy,
            store: raw.store,
            fleet: raw.fleet,
            concurrency: raw.concurrency,
            // `soft_id` is each provider's own (`ProviderOptions::soft_id`).
            submit: SubmitOptions { soft_id: None, pingback: raw.pingback, header_acao: false },
            task_defaults: raw.task_defaults,
            #[cfg(feature = "alerts")]
            alerts,
            #[cfg(feature = "retention")]
            dlq_retention,
            #[cfg(feature = "traces")]
            traces: raw.traces,
        })
    }
}

/// A stand-in for an API key a store-only reading does not need (see [`StoreOnlyOptions::from_value`]).
/// It is never sent: nothing built from that reading talks to a provider.
const NO_KEY_NEEDED: &str = "no-key-needed-to-open-the-store";

/// The options of a front end that opens only the DLQ (the CLI's `dlq` commands): where the
/// store is and how it is called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreOnlyOptions {
    pub dlq: Option<String>,
    pub store: StoreCallOptions,
    /// `dlq_retention`, for `captcha-dlq dlq retain`.
    #[cfg(feature = "retention")]
    pub dlq_retention: Option<RetentionOptions>,
}

impl StoreOnlyOptions {
    /// Reads and checks every option exactly as [`ClientOptions::from_value`] does, so a
    /// mistake anywhere is reported by a command that only opens the store too, except that
    /// an API key may be left out: such a command sends nothing to a provider. A key that is
    /// given (even an empty one) is checked as usual.
    pub fn from_value(mut value: Value, casing: Casing) -> Result<StoreOnlyOptions, ConfigError> {
        if let Value::Object(options) = &mut value {
            let key = spelled_as(casing, "api_key");
            match options.get_mut(&spelled_as(casing, "providers")) {
                Some(Value::Array(entries)) => {
                    for entry in entries.iter_mut().filter_map(Value::as_object_mut) {
                        entry.entry(key.clone()).or_insert_with(|| Value::from(NO_KEY_NEEDED));
                    }
                }
                Some(_) => {}
                None => {
                    options.entry(key).or_insert_with(|| Value::from(NO_KEY_NEEDED));
                }
            }
        }
        let options = ClientOptions::from_value(value, casing)?;
        Ok(StoreOnlyOptions {
            dlq: options.dlq,
            store: options.store,
            #[cfg(feature = "retention")]
            dlq_retention: options.dlq_retention,
        })
    }
}

impl ClientOptions {
    /// The providers, in routing order (never empty).
    pub fn providers(&self) -> &[ProviderOptions] {
        &self.providers
    }

    /// The first provider (the only one in the simple form).
    pub fn primary(&self) -> &ProviderOptions {
        // `from_value` refuses an empty list and nothing else builds one.
        &self.providers[0]
    }

    pub fn provider(&self) -> &Provider {
        &self.primary().provider
    }

    pub fn api_key(&self) -> &Secret {
        &self.primary().api_key
    }

    /// The first provider's engine settings; their `retry` and `seed` are the client's.
    pub fn engine(&self) -> &EngineConfig {
        &self.primary().engine
    }

    /// Replaces every provider's engine settings with `config` (a Rust caller's whole
    /// configuration instead of the documented defaults).
    pub fn set_engine(&mut self, config: &EngineConfig) {
        for p in &mut self.providers {
            p.engine = config.clone();
        }
    }

    /// A provider by the name records and solutions give it.
    pub fn provider_named(&self, name: &str) -> Option<&ProviderOptions> {
        self.providers.iter().find(|p| p.name == name)
    }

    /// Every API key of the client (what logs and errors must never show).
    pub fn secrets(&self) -> Vec<Secret> {
        self.providers.iter().map(|p| p.api_key.clone()).collect()
    }

    /// The providers as the engine takes them.
    pub fn lane_specs(&self) -> Vec<LaneSpec> {
        self.providers.iter().map(ProviderOptions::lane_spec).collect()
    }
}

/// The refusal of a section (`alerts`, `dlq_retention`) this build was made without.
#[cfg(not(all(feature = "alerts", feature = "retention")))]
fn refuse_left_out(given: bool, field: &str, feature: &str, casing: Casing) -> Result<(), ConfigError> {
    match given {
        true => Err(ConfigError::new(
            spelled_as(casing, field),
            format!("is not available in this build (cargo feature `{feature}` is off, as in the browser build: native clients only)"),
        )),
        false => Ok(()),
    }
}

/// A section of its own feature (`alerts`, `dlq_retention`) read in `casing`, errors named under it.
#[cfg(any(feature = "alerts", feature = "retention"))]
fn feature_section<T: FromJson>(value: Option<Value>, field: &str, casing: Casing) -> Result<Option<T>, ConfigError> {
    let prefix = spelled_as(casing, field);
    value.map(|v| read_call_options(v, casing, &prefix)).transpose()
}

/// Names a provider cannot have: they are the values of the `routing` label.
fn check_name(name: &str) -> Result<(), &'static str> {
    if name.trim().is_empty() {
        Err("must not be empty")
    } else if name.chars().count() > 64 || name.chars().any(char::is_control) {
        Err("must be at most 64 characters, without control characters")
    } else if Policy::parse(name).is_some() {
        Err("must not be a routing policy's name (ordered, fastest, cheapest, accepted)")
    } else {
        Ok(())
    }
}

/// The providers: the one-provider form (`provider` defaulting to 2captcha), or each entry of
/// `providers`, checked and named apart; the one-provider options are refused beside a list.
fn read_providers(
    one: ProviderFields,
    entries: Option<Vec<RawProvider>>,
    shared: &Map<String, Value>,
    allow_insecure_http: bool,
    casing: Casing,
) -> Result<Vec<ProviderOptions>, ConfigError> {
    let Some(entries) = entries else {
        let provider = Some(one.provider.unwrap_or_else(|| DEFAULT_PROVIDER.to_string()));
        // The one provider's `soft_id` is its own: a service's developer id means nothing to another.
        let raw = RawProvider { name: None, fields: ProviderFields { provider, ..one }, engine: Map::new() };
        return Ok(vec![provider_options(raw, "", shared, allow_insecure_http, casing)?]);
    };
    let list = spelled_as(casing, "providers");
    if let Some(field) = one.first_given() {
        return Err(ConfigError::new(
            spelled_as(casing, field),
            format!("give it in each entry of `{list}`, not beside them"),
        ));
    }
    if entries.is_empty() || entries.len() > MAX_LANES {
        return Err(ConfigError::new(list, format!("expected 1 to {MAX_LANES} providers, got {}", entries.len())));
    }
    let mut providers: Vec<ProviderOptions> = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let prefix = format!("{list}[{i}].");
        let named = entry.name.is_some();
        let p = provider_options(entry, &prefix, shared, allow_insecure_http, casing)?;
        if let Some(first) = providers.iter().position(|o| o.name == p.name) {
            let hint = if named { "" } else { "; give one a `name`" };
            return Err(ConfigError::new(
                format!("{prefix}name"),
                format!("{} is already the name of {list}[{first}]{hint}", Quoted(&p.name)),
            ));
        }
        providers.push(p);
    }
    Ok(providers)
}

/// One provider checked: its key, its address (https unless loopback or allowed), its
/// engine settings (documented defaults, then the client's `shared` sections, then its own),
/// its prices and its name. Errors name the option under `prefix` (`providers[1].`).
fn provider_options(
    raw: RawProvider,
    prefix: &str,
    shared: &Map<String, Value>,
    allow_insecure_http: bool,
    casing: Casing,
) -> Result<ProviderOptions, ConfigError> {
    let name = |field: &str| format!("{prefix}{}", spelled_as(casing, field));
    let api_key = api_key(raw.fields.api_key.as_deref()).map_err(|e| ConfigError::new(name("api_key"), e.problem))?;
    let mut provider = provider(raw.fields.provider.as_deref().unwrap_or(DEFAULT_PROVIDER))
        .map_err(|e| ConfigError::new(name("provider"), e.problem))?;
    if let Some(url) = &raw.fields.base_url {
        provider = provider.with_base_url(url).map_err(|e| ConfigError::new(name("base_url"), e.problem))?;
    }
    require_secure_transport(&provider, allow_insecure_http).map_err(|e| {
        ConfigError::new(name(if raw.fields.base_url.is_some() { "base_url" } else { "provider" }), e.problem)
    })?;
    // The provider's documented limits and schedule are the defaults; what is given
    // replaces them field by field.
    let own: Vec<String> = raw.engine.keys().cloned().collect();
    let engine = with_casing(casing, || {
        let documented = EngineConfig::for_provider(&provider);
        let common = documented.read_over(Value::Object(shared.clone())).map_err(|e| (String::new(), e))?;
        common.read_over(Value::Object(raw.engine)).map_err(|e| (prefix.to_string(), e))
    })
    .map_err(|(at, e)| ConfigError::new(format!("{at}{}", e.field), e.problem))?;
    engine.validate().map_err(|e| {
        // A value out of range names the entry when the entry set that section.
        let section = e.field.split('.').next().unwrap_or_default();
        let at = if own.iter().any(|s| s == &spelled_as(casing, section)) { prefix } else { "" };
        ConfigError::new(format!("{at}{}", respell_path(&e.field, casing)), e.problem)
    })?;
    let prices = match raw.fields.price {
        None => Prices::default(),
        Some(v) => with_casing(casing, || Prices::from_json(v))
            .map_err(|e| ConfigError::new(e.field_under(&name("price")), e.problem))?,
    };
    let lane_name = raw.name.unwrap_or_else(|| provider.name().to_string());
    check_name(&lane_name).map_err(|problem| ConfigError::new(name("name"), problem))?;
    Ok(ProviderOptions { name: lane_name, provider, api_key, engine, prices, soft_id: raw.fields.soft_id })
}

/// `field` (snake_case) as a host in `casing` spells it.
pub fn spelled_as(casing: Casing, field: &str) -> String {
    match casing {
        Casing::Snake => field.to_string(),
        Casing::Camel => captcha_dlq_core::support::json_field::camel(field),
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
        assert_eq!(o.api_key().expose(), "KEY");
        assert_eq!(o.provider().name(), DEFAULT_PROVIDER);
        assert_eq!((o.providers().len(), o.primary().name.as_str()), (1, DEFAULT_PROVIDER));
        assert_eq!(o.routing, RoutingConfig::default());
        assert!(o.primary().prices.is_empty());
        let priced = camel(json!({"apiKey": "K", "provider": "2captcha", "price": {"turnstile": 0.00145}})).unwrap();
        assert_eq!(priced.primary().prices.get(captcha_dlq_core::task::TaskKind::Turnstile), Some(0.00145));
        assert_eq!(priced.primary().name, "2captcha");
        assert_eq!((o.concurrency, o.store.timeout_ms), (DEFAULT_CONCURRENCY, 5_000));
        assert_eq!(camel(json!({"apiKey": "  "})).unwrap_err().field, "apiKey");
        assert!(camel(json!({})).unwrap_err().problem.contains("missing"));
    }

    /// Issue 44, finding 4: `ClientOptions`' derived `Debug` printed the Redis URL's password
    /// and the proxy's credentials. None of the secrets shows; where things are still does.
    #[test]
    fn client_options_debug_redacts_secrets() {
        let options = ClientOptions::from_value(
            json!({
                "providers": [
                    {"provider": "2captcha", "api_key": "the-api-key-0123456789"},
                    {"provider": "capsolver", "api_key": "second-key-0123456789"}
                ],
                "dlq": "rediss://dlq-user:redis-pass@redis.example:6380/2?namespace=ns",
                "proxy": "http://proxy-login:proxy-pass@proxy.example:3128",
                "alerts": {"webhooks": [{"url": "https://hooks.example/hook-path-token", "secret": "webhook-secret"}]},
                "traces": {"otlp_endpoint": "https://otlp.example/v1/traces",
                           "headers": {"authorization": "Bearer otlp-header-secret"}}
            }),
            Casing::Snake,
        );
        let shown = format!("{:?}", options.unwrap());
        for secret in [
            "the-api-key",
            "second-key",
            "dlq-user",
            "redis-pass",
            "proxy-login",
            "proxy-pass",
            "hook-path-token",
            "webhook-secret",
            "otlp-header-secret",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        for place in ["redis.example:6380/2", "proxy.example:3128", "hooks.example", "otlp.example", "capsolver"] {
            assert!(shown.contains(place), "{place} not in {shown}");
        }
    }

    /// Issue 44, finding 6: `http:\\host` passed the https rule as a string test; webhook and
    /// OTLP URLs are read as reqwest reads them, and plain http is for this machine only.
    #[test]
    fn webhook_and_otlp_urls_need_https_off_loopback_as_reqwest_reads_them() {
        let with = |extra: Value| {
            let mut options = json!({"api_key": "K"});
            options.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            ClientOptions::from_value(options, Casing::Snake)
        };
        let hook = |url: &str| json!({"alerts": {"webhooks": [{"url": url}]}});
        let otlp = |url: &str| json!({"traces": {"otlp_endpoint": url}});
        for url in [r"http:\\hooks.example\x", "HTTP://hooks.example/x", "http://hooks.example./x", "http://[::2]/x"] {
            let e = with(hook(url)).unwrap_err();
            assert_eq!(e.field, "alerts.webhooks[0].url", "{url}");
            assert!(e.problem.contains("plain http"), "{url}: {}", e.problem);
        }
        for url in [r"http:\\collector.example:4318", "HTTP://collector.example:4318"] {
            let e = with(otlp(url)).unwrap_err();
            assert_eq!((e.field.as_str(), e.problem.contains("plain http")), ("traces.otlp_endpoint", true), "{url}");
        }
        for (url, ok) in
            [("https://hooks.example/x", true), ("http://127.0.0.1:9/x", true), ("http://localhost/x", true)]
        {
            assert_eq!(with(hook(url)).is_ok(), ok, "{url}");
            assert_eq!(with(otlp(url)).is_ok(), ok, "{url}");
        }
        let mut allowed = hook("http://hooks.example/x");
        allowed["allow_insecure_http"] = json!(true);
        assert!(with(allowed).is_ok(), "allowed explicitly");
    }

    #[test]
    fn hide_userinfo_hides_the_user_and_password_of_any_url() {
        use captcha_dlq_core::support::weburl::hide_userinfo;
        assert_eq!(hide_userinfo("redis://:pw@h:6379/0"), "redis://***@h:6379/0");
        assert_eq!(hide_userinfo("socks5://u:p@ss@h:1080"), "socks5://***@h:1080", "the last @ ends them");
        assert_eq!(hide_userinfo("http://u:p/w@h/x?y=a@b"), "http://***@h/x?y=a@b", "an unencoded slash");
        assert_eq!(hide_userinfo("u:p@proxy:3128"), "***@proxy:3128", "a proxy without a scheme");
        for kept in ["memory", "/var/lib/dlq@2/dlq.sqlite", "redis://h:6379/0?namespace=a"] {
            assert_eq!(hide_userinfo(kept), kept);
        }
        assert_eq!(hide_userinfo("https://h/a@b"), "https://***@b", "too much hidden rather than half a password");
    }

    #[test]
    fn the_fleet_is_shared_unless_turned_off() {
        assert!(camel(json!({"apiKey": "K"})).unwrap().fleet.enabled);
        assert!(!camel(json!({"apiKey": "K", "fleet": {"enabled": false}})).unwrap().fleet.enabled);
        assert_eq!(camel(json!({"apiKey": "K", "fleet": {"enable": false}})).unwrap_err().field, "fleet.enable");
        assert_eq!(camel(json!({"apiKey": "K", "fleet": {"enabled": "no"}})).unwrap_err().field, "fleet.enabled");
        assert_eq!(camel(json!({"apiKey": "K"})).unwrap().fleet.budget, BudgetScope::Fleet);
        let own = camel(json!({"apiKey": "K", "fleet": {"budget": "process"}})).unwrap();
        assert_eq!(own.fleet.budget, BudgetScope::Process);
        assert_eq!(camel(json!({"apiKey": "K", "fleet": {"budget": "mine"}})).unwrap_err().field, "fleet.budget");
    }

    #[test]
    fn adoption_is_on_unless_turned_off_and_read_strictly() {
        assert!(camel(json!({"apiKey": "K"})).unwrap().fleet.adopt);
        let off = camel(json!({"apiKey": "K", "fleet": {"adopt": false}})).unwrap();
        assert!(!off.fleet.adopt && off.fleet.enabled);
        let e = camel(json!({"apiKey": "K", "fleet": {"adopt": "off"}})).unwrap_err();
        assert_eq!(e.field, "fleet.adopt");
        assert!(e.problem.contains("true or false"), "{}", e.problem);
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
    fn store_durability_is_read_checked_and_applied_to_sqlite_only() {
        assert_eq!(camel(json!({"apiKey": "K"})).unwrap().store.durability, Durability::Process);
        let full = camel(json!({"apiKey": "K", "store": {"durability": "power_loss"}})).unwrap();
        assert_eq!(full.store.durability, Durability::PowerLoss);
        let e = camel(json!({"apiKey": "K", "store": {"durability": "disk"}})).unwrap_err();
        assert_eq!(e.field, "store.durability");
        assert!(e.problem.contains("process") && e.problem.contains("power_loss"), "{}", e.problem);
        assert!(Durability::PowerLoss.check_store(true, "\"dlq.sqlite\"").is_ok());
        assert!(Durability::Process.check_store(false, "\"memory\"").is_ok());
        let e = Durability::PowerLoss.check_store(false, "the Redis store").unwrap_err();
        assert_eq!(e.field, "store.durability");
        assert!(e.problem.contains("the Redis store is not one"), "{}", e.problem);
    }

    #[test]
    fn a_store_only_reading_checks_every_option_but_needs_no_key() {
        let read = |v: Value| StoreOnlyOptions::from_value(v, Casing::Snake);
        let o = read(json!({"dlq": "d.sqlite", "store": {"durability": "power_loss"}})).unwrap();
        assert_eq!((o.dlq.as_deref(), o.store.durability), (Some("d.sqlite"), Durability::PowerLoss));
        assert_eq!(read(json!({})).unwrap().store, StoreCallOptions::default());
        let several = json!({"providers": [{"provider": "2captcha"}, {"provider": "capsolver", "api_key": "K"}]});
        assert!(read(several).is_ok(), "no key in an entry either");
        for (bad, field) in [
            (json!({"store": {"durabilty": "process"}}), "store.durabilty"),
            (json!({"retry": {"max_atempts": 3}}), "retry.max_atempts"),
            (json!({"retyr": {}}), "retyr"),
            (json!({"api_key": " "}), "api_key"),
            (json!({"provider": "no-such-solver"}), "provider"),
            (json!({"dlq": ""}), "dlq"),
        ] {
            assert_eq!(read(bad.clone()).unwrap_err().field, field, "{bad}");
        }
        let camel = StoreOnlyOptions::from_value(json!({"store": {"timeoutMs": 0}}), Casing::Camel);
        assert_eq!(camel.unwrap_err().field, "store.timeoutMs");
    }

    #[test]
    fn a_dlq_location_that_names_no_store_is_refused_at_once() {
        for (given, named) in [("", "is empty"), ("  \t", "is empty"), ("dlq\0.sqlite", "NUL")] {
            let e = camel(json!({"apiKey": "K", "dlq": given})).unwrap_err();
            assert_eq!(e.field, "dlq");
            assert!(e.problem.contains(named), "{given:?}: {}", e.problem);
        }
        for fine in ["memory", "dlq.sqlite", "redis://127.0.0.1:6379", "indexeddb:captcha"] {
            assert_eq!(camel(json!({"apiKey": "K", "dlq": fine})).unwrap().dlq.as_deref(), Some(fine));
        }
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
        assert_eq!(capmonster.engine(), &documented);
        let tuned = camel(json!({"apiKey": "K", "provider": "capmonster", "rate": {"maxInFlight": 300}})).unwrap();
        assert_eq!(tuned.engine().rate.max_in_flight, 300);
        assert_eq!(
            tuned.engine().rate.submits_per_second,
            documented.rate.submits_per_second,
            "the rest stays documented"
        );
        assert_eq!(tuned.engine().polling, documented.polling);
    }

    #[test]
    fn alerts_and_retention_are_read_in_the_hosts_casing() {
        let o =
            camel(json!({"apiKey": "K", "alerts": {"webhooks": [{"url": "https://hooks.example/a"}], "gatherMs": 10},
                             "dlqRetention": {"maxCount": 5}}))
            .unwrap();
        assert_eq!(o.alerts.as_ref().map(|a| a.gather_ms), Some(10));
        assert_eq!(o.dlq_retention.as_ref().and_then(|r| r.max_count), Some(5));
        assert!(camel(json!({"apiKey": "K"})).unwrap().alerts.is_none());
        for (bad, field) in [
            (
                json!({"apiKey": "K", "alerts": {"webhooks": [{"url": "https://x", "sekret": "s"}]}}),
                "alerts.webhooks[0].sekret",
            ),
            (
                json!({"apiKey": "K", "alerts": {"webhooks": [{"url": "http://hooks.example"}]}}),
                "alerts.webhooks[0].url",
            ),
            (
                json!({"apiKey": "K", "alerts": {"webhooks": [{"url": "https://x"}], "gatherMs": "soon"}}),
                "alerts.gatherMs",
            ),
            (json!({"apiKey": "K", "dlqRetention": {"maxAgeMs": 0}}), "dlqRetention.maxAgeMs"),
            (json!({"apiKey": "K", "dlqRetention": {}}), "dlqRetention"),
        ] {
            assert_eq!(camel(bad.clone()).unwrap_err().field, field, "{bad}");
        }
        let insecure = json!({"apiKey": "K", "allowInsecureHttp": true, "alerts": {"webhooks": [{"url": "http://hooks.example"}]}});
        assert!(camel(insecure).is_ok());
        let store_only =
            StoreOnlyOptions::from_value(json!({"dlq_retention": {"max_age_ms": 60000}}), Casing::Snake).unwrap();
        assert_eq!(store_only.dlq_retention.and_then(|r| r.max_age_ms), Some(60_000));
    }

    #[test]
    fn a_bare_host_as_provider_gets_a_hint() {
        let e = camel(json!({"apiKey": "K", "provider": "127.0.0.1:8080"})).unwrap_err();
        assert!(e.problem.contains("did you mean http://127.0.0.1:8080"), "{}", e.problem);
        let e = camel(json!({"apiKey": "K", "provider": "2captch"})).unwrap_err();
        assert!(!e.problem.contains("did you mean http"), "{}", e.problem);
    }

    #[test]
    fn several_providers_each_with_their_documented_defaults_and_settings() {
        let o = camel(json!({
            "providers": [
                {"provider": "capsolver", "apiKey": "A", "price": 0.0008, "rate": {"maxInFlight": 50}},
                {"provider": "2captcha", "apiKey": " B ", "baseUrl": "http://127.0.0.1:9", "price": {"recaptchaV2": 0.00299}},
            ],
            "routing": "cheapest",
            "failoverOnUnsolvable": false,
            "routingExplore": 0.1,
            "budget": 5,
            "retry": {"maxAttempts": 6},
            "circuit": {"breakMs": 1000},
        }))
        .unwrap();
        let names: Vec<&str> = o.providers().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["capsolver", "2captcha"]);
        assert_eq!(o.providers()[1].api_key.expose(), "B");
        assert_eq!(o.providers()[1].provider.base_url(), "http://127.0.0.1:9");
        let capsolver = EngineConfig::for_provider(&Provider::preset("capsolver").unwrap());
        let twocaptcha = EngineConfig::for_provider(&Provider::preset("2captcha").unwrap());
        assert_eq!(o.providers()[0].engine.polling, capsolver.polling, "each provider's own schedule");
        assert_eq!(o.providers()[1].engine.polling, twocaptcha.polling);
        assert_eq!(o.providers()[0].engine.rate.max_in_flight, 50, "an entry's own section");
        assert_eq!(o.providers()[1].engine.rate.max_in_flight, twocaptcha.rate.max_in_flight);
        assert!(o.providers().iter().all(|p| p.engine.retry.max_attempts == 6 && p.engine.circuit.break_ms == 1000));
        assert_eq!(o.providers()[0].prices.get(captcha_dlq_core::task::TaskKind::Image), Some(0.0008));
        assert_eq!(o.providers()[1].prices.get(captcha_dlq_core::task::TaskKind::Image), None);
        assert_eq!(o.providers()[1].prices.get(captcha_dlq_core::task::TaskKind::RecaptchaV2), Some(0.00299));
        assert_eq!(
            o.routing,
            RoutingConfig { policy: Policy::Cheapest, failover_on_unsolvable: false, explore: 0.1, budget: Some(5.0) }
        );
        assert_eq!(o.lane_specs().len(), 2);
        assert_eq!(o.secrets().len(), 2);
    }

    #[test]
    fn provider_lists_are_checked_naming_the_entry() {
        let two = |a: Value, b: Value| camel(json!({"providers": [a, b]}));
        let e = two(json!({"provider": "capsolver", "apiKey": "A"}), json!({"provider": "capsolver", "apiKey": "B"}))
            .unwrap_err();
        assert_eq!(e.field, "providers[1].name");
        assert!(e.problem.contains("already the name of providers[0]") && e.problem.contains("give one a `name`"));
        assert!(two(
            json!({"provider": "capsolver", "apiKey": "A"}),
            json!({"provider": "capsolver", "apiKey": "B", "name": "capsolver-2"})
        )
        .is_ok());
        let e = two(json!({"provider": "capsolver", "apiKey": "A"}), json!({"provider": "2captcha"})).unwrap_err();
        assert_eq!(e.field, "providers[1].apiKey");
        let e = two(
            json!({"provider": "capsolver", "apiKey": "A"}),
            json!({"provider": "2captcha", "apiKey": "B", "retry": {}}),
        )
        .unwrap_err();
        assert_eq!(e.field, "providers[1].retry", "retry is the client's");
        let e = two(
            json!({"provider": "capsolver", "apiKey": "A", "rate": {"maxInFlight": 0}}),
            json!({"provider": "2captcha", "apiKey": "B"}),
        )
        .unwrap_err();
        assert_eq!(e.field, "providers[0].rate.maxInFlight");
        let e = two(
            json!({"provider": "capsolver", "apiKey": "A", "name": "fastest"}),
            json!({"provider": "2captcha", "apiKey": "B"}),
        )
        .unwrap_err();
        assert_eq!(e.field, "providers[0].name");
        let e = two(
            json!({"provider": "capsolver", "apiKey": "A", "price": -1}),
            json!({"provider": "2captcha", "apiKey": "B"}),
        )
        .unwrap_err();
        assert_eq!(e.field, "providers[0].price");
        let e = two(
            json!({"provider": "http://solver.example.com", "apiKey": "A"}),
            json!({"provider": "2captcha", "apiKey": "B"}),
        )
        .unwrap_err();
        assert_eq!(e.field, "providers[0].provider");
        let e = camel(json!({"apiKey": "A", "providers": [{"provider": "capsolver", "apiKey": "A"}]})).unwrap_err();
        assert_eq!(e.field, "apiKey");
        assert!(e.problem.contains("each entry of `providers`"), "{}", e.problem);
        assert_eq!(camel(json!({"providers": []})).unwrap_err().field, "providers");
        let e = ClientOptions::from_value(
            json!({"providers": [{"provider": "capsolver", "api_key": "A", "apiKey": "B"}]}),
            Casing::Snake,
        )
        .unwrap_err();
        assert_eq!(e.field, "providers[0].apiKey", "unknown keys are refused as written");
        assert_eq!(camel(json!({"apiKey": "K", "routing": "quickest"})).unwrap_err().field, "routing");
        assert_eq!(camel(json!({"apiKey": "K", "budget": 0})).unwrap_err().field, "budget");
        assert_eq!(camel(json!({"apiKey": "K", "routingExplore": 0.9})).unwrap_err().field, "routingExplore");
    }

    /// A developer id belongs to one service (issue 43): each entry of `providers` sends its own
    /// `soft_id` and no other's (CapSolver `appId`, anti-captcha/CapMonster `softId`, 2captcha v1
    /// `soft_id`); a top-level one is the single provider's, and beside `providers` an error.
    #[test]
    fn soft_id_goes_to_its_own_provider_only() {
        use captcha_dlq_core::engine::{Action, Engine};
        use captcha_dlq_core::support::time::Timestamp;
        use captcha_dlq_core::task::Task;
        let e = camel(json!({"softId": "7", "providers": [{"provider": "capsolver", "apiKey": "A"}]})).unwrap_err();
        assert_eq!(e.field, "softId");
        assert!(e.problem.contains("each entry of `providers`"), "{}", e.problem);
        let one = camel(json!({"apiKey": "K", "provider": "capsolver", "softId": "7"})).unwrap();
        assert_eq!(one.primary().soft_id.as_deref(), Some("7"));
        assert_eq!(one.submit.soft_id, None, "no client-wide soft_id");
        let e = camel(json!({"providers": [{"provider": "capsolver", "apiKey": "A", "softid": "7"}]})).unwrap_err();
        assert_eq!(e.field, "providers[0].softid", "unknown keys stay errors");

        let o = camel(json!({"providers": [
            {"provider": "capsolver", "apiKey": "A", "softId": "CAP-APP"},
            {"provider": "2captcha", "apiKey": "B", "softId": "2C"},
            {"provider": "anti-captcha", "apiKey": "C"},
            {"provider": "capmonster", "apiKey": "D", "softId": "42"},
        ], "pingback": "https://a.test/cb"}))
        .unwrap();
        let mut engine =
            Engine::with_lanes(o.lane_specs(), o.routing.clone()).unwrap().with_submit_options(o.submit.clone());
        let now = Timestamp::from_unix_millis(1_700_000_000_000);
        let task = || {
            Task::from_json_value(json!({"type": "recaptcha_v2", "sitekey": "6Le-K", "page_url": "https://a.test/"}))
        };
        for name in ["capsolver", "2captcha", "anti-captcha", "capmonster"] {
            let labels = [("routing".to_string(), name.to_string())].into_iter().collect();
            engine.submit(task().unwrap(), labels, None, now).unwrap();
        }
        let mut sent = Vec::new();
        while let Some(action) = engine.poll_action(now) {
            match action {
                Action::Journal { gates: Some(job), .. } => {
                    engine.journaled(job, now);
                }
                Action::Send { request, .. } => {
                    sent.push((request.url.clone(), captcha_dlq_core::vectors::canonical_request(&request)))
                }
                _ => {}
            }
        }
        assert_eq!(sent.len(), 4, "{sent:?}");
        let to = |host: &str| &sent.iter().find(|(url, _)| url.contains(host)).expect(host).1;
        let capsolver = &to("capsolver.com")["json"];
        assert_eq!((&capsolver["appId"], capsolver.get("softId")), (&json!("CAP-APP"), None));
        let twocaptcha = &to("2captcha.com")["params"];
        assert_eq!(twocaptcha["soft_id"], "2C");
        assert_eq!(twocaptcha["pingback"], "https://a.test/cb", "the pingback is the client's");
        let anticaptcha = &to("anti-captcha.com")["json"];
        assert_eq!((anticaptcha.get("softId"), anticaptcha.get("appId")), (None, None));
        let capmonster = &to("capmonster.cloud")["json"];
        assert_eq!((&capmonster["softId"], capmonster.get("appId")), (&json!(42), None));
    }
}
