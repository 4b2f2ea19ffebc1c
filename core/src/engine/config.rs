//! Engine policy: attempts, backoff, polling schedule, rate limit, circuit
//! breaker. Every default comes from the providers' documentation (DESIGN §3,
//! §4) and every value can be changed; durations are whole milliseconds so the
//! same JSON configures the engine from Rust, Python, Node and the browser.

use core::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::error::ConfigError;
use crate::json_read::{deserialize_from_json, FieldError, Fields, FromJson};
use crate::task::TaskKind;

/// Everything the engine needs to decide, besides the provider and the key.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    pub retry: RetryConfig,
    pub polling: PollingConfig,
    pub rate: RateConfig,
    pub circuit: CircuitConfig,
    /// Seed of the jitter and id generator; drivers pass OS randomness, tests a constant.
    pub seed: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryConfig {
    /// Provider submissions per task before it is dead-lettered (the seeds' `max_retries + 1`).
    pub max_attempts: u32,
    /// Consecutive transient failures (5xx, bad body, network) of one request before the task is dead-lettered.
    pub max_request_retries: u32,
    /// Consecutive "slow down" answers (`ERROR_NO_SLOT_AVAILABLE`…) before the task is dead-lettered.
    pub max_retry_after_retries: u32,
    pub backoff: Backoff,
    /// The least wait before retrying a transient failure, so a failing service is never hammered.
    pub transient_min_delay_ms: u64,
    /// Whole-task deadline, from acceptance to answer.
    pub task_deadline_ms: u64,
    /// Timeout of one HTTP exchange, enforced by the driver.
    pub request_timeout_ms: u64,
    /// Journal entries older than this when found on restart are dead-lettered as `Interrupted`
    /// instead of resumed (a reCAPTCHA token lives about two minutes).
    pub recover_max_age_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_attempts: 4,
            max_request_retries: 5,
            max_retry_after_retries: 10,
            backoff: Backoff::default(),
            transient_min_delay_ms: 250,
            task_deadline_ms: 10 * 60 * 1000,
            request_timeout_ms: 30 * 1000,
            recover_max_age_ms: 10 * 60 * 1000,
        }
    }
}

/// How long to wait before retry number `n` (0-based).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Backoff {
    /// `random(0, min(cap, base·2ⁿ))`: the AWS finding, fewest collisions.
    FullJitter {
        base_ms: u64,
        cap_ms: u64,
    },
    /// `min(cap, random(base, previous·3))`.
    Decorrelated {
        base_ms: u64,
        cap_ms: u64,
    },
    Fixed {
        delay_ms: u64,
    },
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::FullJitter { base_ms: 1000, cap_ms: 60_000 }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PollingConfig {
    /// First poll after submission, per kind (providers: 15–20 s for reCAPTCHA v2, GeeTest,
    /// FunCaptcha; 10–15 s for v3; 5 s for images).
    pub first_poll_ms: FirstPoll,
    pub interval_ms: u64,
    /// Polls per submission before that attempt times out (2captcha bans clients that poll more).
    pub max_polls: u32,
    /// Poll many tasks with one request where the provider supports it.
    pub batch: bool,
    /// A job due within this window of a poll request rides along with it, so polls line up in rounds.
    pub coalesce_ms: u64,
}

impl Default for PollingConfig {
    fn default() -> Self {
        PollingConfig {
            first_poll_ms: FirstPoll::default(),
            interval_ms: 5000,
            max_polls: 20,
            batch: true,
            coalesce_ms: 2500,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct FirstPoll {
    pub image: u64,
    pub recaptcha_v2: u64,
    pub recaptcha_v3: u64,
    pub turnstile: u64,
    pub geetest_v3: u64,
    pub geetest_v4: u64,
    pub funcaptcha: u64,
    pub hcaptcha: u64,
    pub raw: u64,
}

impl Default for FirstPoll {
    fn default() -> Self {
        FirstPoll {
            image: 5000,
            recaptcha_v2: 15_000,
            recaptcha_v3: 10_000,
            turnstile: 10_000,
            geetest_v3: 15_000,
            geetest_v4: 15_000,
            funcaptcha: 15_000,
            hcaptcha: 15_000,
            raw: 10_000,
        }
    }
}

impl FirstPoll {
    pub fn for_kind(&self, kind: TaskKind) -> Duration {
        Duration::from_millis(match kind {
            TaskKind::Image => self.image,
            TaskKind::RecaptchaV2 => self.recaptcha_v2,
            TaskKind::RecaptchaV3 => self.recaptcha_v3,
            TaskKind::Turnstile => self.turnstile,
            TaskKind::GeetestV3 => self.geetest_v3,
            TaskKind::GeetestV4 => self.geetest_v4,
            TaskKind::Funcaptcha => self.funcaptcha,
            TaskKind::Hcaptcha => self.hcaptcha,
            TaskKind::Raw => self.raw,
        })
    }

    /// Every kind the same (handy against a mock that answers at once).
    pub fn uniform(ms: u64) -> Self {
        FirstPoll {
            image: ms,
            recaptcha_v2: ms,
            recaptcha_v3: ms,
            turnstile: ms,
            geetest_v3: ms,
            geetest_v4: ms,
            funcaptcha: ms,
            hcaptcha: ms,
            raw: ms,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RateConfig {
    /// Submissions per second at most (2captcha: ≥ 100 ms apart, or `MAX_USER_TURN`).
    pub submits_per_second: f64,
    /// Tasks submitted and not yet finished, at most. Halved on `ERROR_NO_SLOT_AVAILABLE`,
    /// grown back by one per accepted submission. A task in flight costs nothing here but a
    /// share of a batched poll (one request per 100 ready tasks), so the default is high:
    /// what limits a solving service is its submit rate and its free workers, which answer
    /// `ERROR_NO_SLOT_AVAILABLE` when they run out.
    pub max_in_flight: u32,
}

impl Default for RateConfig {
    fn default() -> Self {
        RateConfig { submits_per_second: 10.0, max_in_flight: 1000 }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CircuitConfig {
    /// Request outcomes remembered for the failure ratio.
    pub window: u32,
    /// Outcomes needed in the window before the ratio can open the circuit.
    pub min_calls: u32,
    pub failure_ratio: f64,
    /// How long the circuit stays open before one probe is let through.
    pub break_ms: u64,
    /// Transport failures in a row (connection refused, DNS, TLS, timeouts; no HTTP answer
    /// at all) after which a provider that never answered counts as unreachable: the
    /// circuit opens and waiting tasks are dead-lettered as `Network` at once.
    pub unreachable_after_failures: u32,
    /// For a provider that did answer before: how long transport failures in a row (at
    /// least `unreachable_after_failures` of them) must last before it counts as unreachable.
    pub unreachable_after_ms: u64,
}

impl Default for CircuitConfig {
    fn default() -> Self {
        CircuitConfig {
            window: 20,
            min_calls: 10,
            failure_ratio: 0.5,
            break_ms: 30_000,
            unreachable_after_failures: 3,
            unreachable_after_ms: 30_000,
        }
    }
}

// Read by hand rather than derived (see `crate::json_read`). Every section
// and every field may be left out (the default is used) and unknown fields
// are refused, so that a misspelt setting is an error.

impl FromJson for EngineConfig {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let d = EngineConfig::default();
        let mut f = Fields::new(value)?;
        let config = EngineConfig {
            retry: f.or("retry", d.retry)?,
            polling: f.or("polling", d.polling)?,
            rate: f.or("rate", d.rate)?,
            circuit: f.or("circuit", d.circuit)?,
            seed: f.or("seed", d.seed)?,
        };
        f.finish()?;
        Ok(config)
    }
}

impl FromJson for RetryConfig {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let d = RetryConfig::default();
        let mut f = Fields::new(value)?;
        let retry = RetryConfig {
            max_attempts: f.or("max_attempts", d.max_attempts)?,
            max_request_retries: f.or("max_request_retries", d.max_request_retries)?,
            max_retry_after_retries: f.or("max_retry_after_retries", d.max_retry_after_retries)?,
            backoff: f.or("backoff", d.backoff)?,
            transient_min_delay_ms: f.or("transient_min_delay_ms", d.transient_min_delay_ms)?,
            task_deadline_ms: f.or("task_deadline_ms", d.task_deadline_ms)?,
            request_timeout_ms: f.or("request_timeout_ms", d.request_timeout_ms)?,
            recover_max_age_ms: f.or("recover_max_age_ms", d.recover_max_age_ms)?,
        };
        f.finish()?;
        Ok(retry)
    }
}

/// Tagged by `kind`; a variant's fields are all required, and others refused.
impl FromJson for Backoff {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let backoff = match f.tag("kind", &["full_jitter", "decorrelated", "fixed"])? {
            0 => Backoff::FullJitter { base_ms: f.req("base_ms")?, cap_ms: f.req("cap_ms")? },
            1 => Backoff::Decorrelated { base_ms: f.req("base_ms")?, cap_ms: f.req("cap_ms")? },
            _ => Backoff::Fixed { delay_ms: f.req("delay_ms")? },
        };
        f.finish()?;
        Ok(backoff)
    }
}

impl FromJson for PollingConfig {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let d = PollingConfig::default();
        let mut f = Fields::new(value)?;
        let polling = PollingConfig {
            first_poll_ms: f.or("first_poll_ms", d.first_poll_ms)?,
            interval_ms: f.or("interval_ms", d.interval_ms)?,
            max_polls: f.or("max_polls", d.max_polls)?,
            batch: f.or("batch", d.batch)?,
            coalesce_ms: f.or("coalesce_ms", d.coalesce_ms)?,
        };
        f.finish()?;
        Ok(polling)
    }
}

impl FromJson for FirstPoll {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let d = FirstPoll::default();
        let mut f = Fields::new(value)?;
        let first = FirstPoll {
            image: f.or("image", d.image)?,
            recaptcha_v2: f.or("recaptcha_v2", d.recaptcha_v2)?,
            recaptcha_v3: f.or("recaptcha_v3", d.recaptcha_v3)?,
            turnstile: f.or("turnstile", d.turnstile)?,
            geetest_v3: f.or("geetest_v3", d.geetest_v3)?,
            geetest_v4: f.or("geetest_v4", d.geetest_v4)?,
            funcaptcha: f.or("funcaptcha", d.funcaptcha)?,
            hcaptcha: f.or("hcaptcha", d.hcaptcha)?,
            raw: f.or("raw", d.raw)?,
        };
        f.finish()?;
        Ok(first)
    }
}

impl FromJson for RateConfig {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let d = RateConfig::default();
        let mut f = Fields::new(value)?;
        let rate = RateConfig {
            submits_per_second: f.or("submits_per_second", d.submits_per_second)?,
            max_in_flight: f.or("max_in_flight", d.max_in_flight)?,
        };
        f.finish()?;
        Ok(rate)
    }
}

impl FromJson for CircuitConfig {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let d = CircuitConfig::default();
        let mut f = Fields::new(value)?;
        let circuit = CircuitConfig {
            window: f.or("window", d.window)?,
            min_calls: f.or("min_calls", d.min_calls)?,
            failure_ratio: f.or("failure_ratio", d.failure_ratio)?,
            break_ms: f.or("break_ms", d.break_ms)?,
            unreachable_after_failures: f.or("unreachable_after_failures", d.unreachable_after_failures)?,
            unreachable_after_ms: f.or("unreachable_after_ms", d.unreachable_after_ms)?,
        };
        f.finish()?;
        Ok(circuit)
    }
}

deserialize_from_json!(EngineConfig, RetryConfig, Backoff, PollingConfig, FirstPoll, RateConfig, CircuitConfig);

impl EngineConfig {
    /// Parse a JSON configuration (possibly partial), naming the offending field on error.
    pub fn from_json(json: &str) -> Result<Self, ConfigError> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| ConfigError::new("config", format!("not valid JSON: {e}")))?;
        let cfg = <EngineConfig as FromJson>::from_json(value)
            .map_err(|e| ConfigError::new(e.field_under("config"), e.problem))?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive = |field: &str, v: u64| {
            if v == 0 {
                Err(ConfigError::new(field, "must be greater than zero"))
            } else {
                Ok(())
            }
        };
        if self.retry.max_attempts == 0 {
            return Err(ConfigError::new("retry.max_attempts", "must be at least 1"));
        }
        positive("retry.task_deadline_ms", self.retry.task_deadline_ms)?;
        positive("retry.request_timeout_ms", self.retry.request_timeout_ms)?;
        positive("polling.interval_ms", self.polling.interval_ms)?;
        if self.polling.max_polls == 0 {
            return Err(ConfigError::new("polling.max_polls", "must be at least 1"));
        }
        if !(self.rate.submits_per_second.is_finite() && self.rate.submits_per_second > 0.0) {
            return Err(ConfigError::new("rate.submits_per_second", "must be a positive number"));
        }
        if self.circuit.unreachable_after_failures == 0 {
            return Err(ConfigError::new("circuit.unreachable_after_failures", "must be at least 1"));
        }
        if self.rate.max_in_flight == 0 {
            return Err(ConfigError::new("rate.max_in_flight", "must be at least 1"));
        }
        if !(self.circuit.failure_ratio > 0.0 && self.circuit.failure_ratio <= 1.0) {
            return Err(ConfigError::new("circuit.failure_ratio", "must be in (0, 1]"));
        }
        if self.circuit.window == 0 || self.circuit.min_calls > self.circuit.window {
            return Err(ConfigError::new(
                "circuit.min_calls",
                "must be at most circuit.window, which must be positive",
            ));
        }
        match self.retry.backoff {
            Backoff::FullJitter { base_ms, cap_ms } | Backoff::Decorrelated { base_ms, cap_ms } if cap_ms < base_ms => {
                Err(ConfigError::new("retry.backoff.cap_ms", "must be at least base_ms"))
            }
            _ => Ok(()),
        }
    }
}
