//! Engine policy: attempts, backoff, polling schedule, rate limit, circuit
//! breaker. The provider figures (submit rate, polling schedule per task kind,
//! per-task poll limit) come from the table in [`crate::provider::limits`]
//! (`docs/providers.md` gives the source of each); [`EngineConfig::for_provider`]
//! starts from it and [`EngineConfig::from_json_over`] reads a user's partial
//! JSON over it. Every value can be changed; durations are whole milliseconds
//! so the same JSON configures the engine from Rust, Python, Node and the browser.

use core::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::error::ConfigError;
use crate::provider::{limits, Provider};
use crate::support::json_read::{deserialize_from_json, FieldError, Fields, FromJson, ReadOver};
use crate::task::TaskKind;

use crate::support::time::Timestamp;
pub use crate::task::kind_ms::{FirstPoll, KindMs};

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

/// When to poll a submitted task and when to give the attempt up.
///
/// The schedule follows the service's own working time per kind
/// (`give_up_ms`) within its per-task request limit (`max_polls`): by default
/// (`interval_ms` 0) the interval stretches so that the polls left reach the
/// give-up point, never closer than `min_interval_ms`. A fixed `interval_ms`
/// polls at that interval instead (tests, mocks that answer at once).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PollingConfig {
    /// First poll after submission, per kind.
    pub first_poll_ms: FirstPoll,
    /// A fixed interval between polls for every kind; 0 (the default) stretches it per kind.
    pub interval_ms: u64,
    /// The least interval between two polls of one task when stretching (the service's floor).
    pub min_interval_ms: u64,
    /// Per kind: the attempt is given up this long after submission (the service's working time
    /// plus a grace, so its own last answer arrives first); the task is then submitted again.
    pub give_up_ms: KindMs,
    /// Polls per submission at most (the service's per-task request limit).
    pub max_polls: u32,
    /// Poll many tasks with one request where the provider supports it.
    pub batch: bool,
    /// A job due within this window of a poll request rides along with it, so polls line up in rounds;
    /// a round that is not full also waits up to this long for jobs due just after it (`engine::rounds`).
    pub coalesce_ms: u64,
}

impl Default for PollingConfig {
    /// The schedule of [`limits::DEFAULT`] (the 2captcha-compatible API, the strictest per-task limit).
    fn default() -> Self {
        PollingConfig::from_limits(limits::DEFAULT)
    }
}

impl PollingConfig {
    /// A service's documented schedule.
    pub fn from_limits(l: &limits::ServiceLimits) -> Self {
        PollingConfig {
            first_poll_ms: l.first_poll_ms,
            interval_ms: 0,
            min_interval_ms: l.min_poll_interval_ms,
            give_up_ms: l.give_up_ms,
            max_polls: l.max_polls,
            batch: true,
            coalesce_ms: 2500,
        }
    }

    /// When to poll again a task of `kind` submitted at `submitted_at` that has been polled
    /// `polls` times and was not ready at `now`; `None` gives the attempt up (the service's working
    /// time is over, or its per-task request limit is used up).
    pub fn next_poll(&self, kind: TaskKind, submitted_at: Timestamp, polls: u32, now: Timestamp) -> Option<Timestamp> {
        let give_up = submitted_at.add(self.give_up_ms.for_kind(kind));
        if polls >= self.max_polls || now >= give_up {
            return None;
        }
        let interval = if self.interval_ms > 0 {
            Duration::from_millis(self.interval_ms)
        } else {
            // Spread the polls left over the time left; the last one lands at the give-up point
            // (or one floor interval after it when the floor dominates).
            let polls_left = u64::from(self.max_polls - polls);
            let spread_ms = whole_ms(give_up.since(now)).div_ceil(polls_left);
            Duration::from_millis(spread_ms.max(self.min_interval_ms))
        };
        Some(now.add(interval))
    }

    /// The interval a task of `kind` is polled at when nothing goes wrong: the stretched interval
    /// from the first poll to the give-up point, or the fixed `interval_ms`.
    pub fn planned_interval(&self, kind: TaskKind) -> Duration {
        if self.interval_ms > 0 {
            return Duration::from_millis(self.interval_ms);
        }
        let span_ms = self.give_up_ms.ms(kind).saturating_sub(self.first_poll_ms.ms(kind));
        let spread_ms = span_ms.div_ceil(u64::from(self.max_polls.saturating_sub(1).max(1)));
        Duration::from_millis(spread_ms.max(self.min_interval_ms))
    }
}

fn whole_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RateConfig {
    /// Submissions per second at most (2captcha bans more than 60 in 3 s with `MAX_USER_TURN`).
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
        // Below every documented limit; providers without one get this too (see docs/providers.md).
        RateConfig { submits_per_second: 10.0, max_in_flight: 1000 }
    }
}

/// How long a zero balance holds tasks by default: an hour for a top-up.
pub const DEFAULT_ACCOUNT_HOLD_MS: u64 = 60 * 60 * 1000;

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
    /// Hold mode, on by default (an hour): after a zero balance (`ERROR_ZERO_BALANCE`), queued
    /// and new tasks wait this long at most for a top-up instead of being dead-lettered at once
    /// (`CircuitOpen`); the fleet's one balance probe (every `account_probe_ms`) resumes them
    /// when the balance is positive, and `captcha-dlq accounts resume` or the dashboard's Fleet
    /// page at once. 0 dead-letters at once, as before.
    pub account_hold_ms: u64,
    /// Hold for the other account errors too (a key the service refuses, an IP not allowed).
    /// Off by default: a wrong key in an interactive run should fail now, not in an hour.
    pub hold_account_errors: bool,
    /// While holding, the balance is checked this often (2captcha: wait 60 s after
    /// `ERROR_ZERO_BALANCE`).
    pub account_probe_ms: u64,
}

impl CircuitConfig {
    /// Whether account error `f` holds the tasks (hold mode) rather than stopping the lane.
    pub fn holds_for(&self, f: &crate::class::Failure) -> bool {
        self.account_hold_ms > 0 && (self.hold_account_errors || crate::classify::says_no_money(&f.code))
    }
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
            account_hold_ms: DEFAULT_ACCOUNT_HOLD_MS,
            hold_account_errors: false,
            account_probe_ms: 60_000,
        }
    }
}

// Read by hand rather than derived (see `crate::support::json_read`). Every section
// and every field may be left out (the base value is kept: the type's default
// for `from_json`, a provider's documented figures for `from_json_over`) and
// unknown fields are refused, so that a misspelt setting is an error.

/// `FromJson` for a section: its fields read over its default.
macro_rules! from_json_over_default {
    ($($t:ty),+) => {$(
        impl FromJson for $t {
            fn from_json(value: Value) -> Result<Self, FieldError> {
                <$t>::default().read_over(value)
            }
        }
    )+};
}
from_json_over_default!(EngineConfig, RetryConfig, PollingConfig, RateConfig, CircuitConfig);

impl ReadOver for EngineConfig {
    fn read_over(self, value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let config = EngineConfig {
            retry: f.over("retry", self.retry)?,
            polling: f.over("polling", self.polling)?,
            rate: f.over("rate", self.rate)?,
            circuit: f.over("circuit", self.circuit)?,
            seed: f.or("seed", self.seed)?,
        };
        f.finish()?;
        Ok(config)
    }
}

impl ReadOver for RetryConfig {
    fn read_over(self, value: Value) -> Result<Self, FieldError> {
        let b = self;
        let mut f = Fields::new(value)?;
        let retry = RetryConfig {
            max_attempts: f.or("max_attempts", b.max_attempts)?,
            max_request_retries: f.or("max_request_retries", b.max_request_retries)?,
            max_retry_after_retries: f.or("max_retry_after_retries", b.max_retry_after_retries)?,
            // A backoff names its kind and all of its fields: it replaces the base's whole.
            backoff: f.or("backoff", b.backoff)?,
            transient_min_delay_ms: f.or("transient_min_delay_ms", b.transient_min_delay_ms)?,
            task_deadline_ms: f.or("task_deadline_ms", b.task_deadline_ms)?,
            request_timeout_ms: f.or("request_timeout_ms", b.request_timeout_ms)?,
            recover_max_age_ms: f.or("recover_max_age_ms", b.recover_max_age_ms)?,
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

impl ReadOver for PollingConfig {
    fn read_over(self, value: Value) -> Result<Self, FieldError> {
        let b = self;
        let mut f = Fields::new(value)?;
        let polling = PollingConfig {
            first_poll_ms: f.over("first_poll_ms", b.first_poll_ms)?,
            interval_ms: f.or("interval_ms", b.interval_ms)?,
            min_interval_ms: f.or("min_interval_ms", b.min_interval_ms)?,
            give_up_ms: f.over("give_up_ms", b.give_up_ms)?,
            max_polls: f.or("max_polls", b.max_polls)?,
            batch: f.or("batch", b.batch)?,
            coalesce_ms: f.or("coalesce_ms", b.coalesce_ms)?,
        };
        f.finish()?;
        Ok(polling)
    }
}

impl ReadOver for RateConfig {
    fn read_over(self, value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let rate = RateConfig {
            submits_per_second: f.or("submits_per_second", self.submits_per_second)?,
            max_in_flight: f.or("max_in_flight", self.max_in_flight)?,
        };
        f.finish()?;
        Ok(rate)
    }
}

impl ReadOver for CircuitConfig {
    fn read_over(self, value: Value) -> Result<Self, FieldError> {
        let b = self;
        let mut f = Fields::new(value)?;
        let circuit = CircuitConfig {
            window: f.or("window", b.window)?,
            min_calls: f.or("min_calls", b.min_calls)?,
            failure_ratio: f.or("failure_ratio", b.failure_ratio)?,
            break_ms: f.or("break_ms", b.break_ms)?,
            unreachable_after_failures: f.or("unreachable_after_failures", b.unreachable_after_failures)?,
            unreachable_after_ms: f.or("unreachable_after_ms", b.unreachable_after_ms)?,
            account_hold_ms: f.or("account_hold_ms", b.account_hold_ms)?,
            hold_account_errors: f.or("hold_account_errors", b.hold_account_errors)?,
            account_probe_ms: f.or("account_probe_ms", b.account_probe_ms)?,
        };
        f.finish()?;
        Ok(circuit)
    }
}

deserialize_from_json!(EngineConfig, RetryConfig, Backoff, PollingConfig, RateConfig, CircuitConfig);

impl EngineConfig {
    /// The documented figures of `provider` (submit rate, polling schedule per kind, per-task
    /// poll limit; `docs/providers.md`), the generic defaults for everything else.
    pub fn for_provider(provider: &Provider) -> Self {
        EngineConfig::for_limits(limits::for_provider(provider))
    }

    /// The engine defaults with one service's documented figures.
    pub fn for_limits(l: &limits::ServiceLimits) -> Self {
        EngineConfig {
            polling: PollingConfig::from_limits(l),
            rate: RateConfig { submits_per_second: l.submits_per_second, ..RateConfig::default() },
            ..EngineConfig::default()
        }
    }

    /// Parse a JSON configuration (possibly partial) over [`EngineConfig::default`], naming the
    /// offending field on error.
    pub fn from_json(json: &str) -> Result<Self, ConfigError> {
        EngineConfig::from_json_over(EngineConfig::default(), json)
    }

    /// Parse a JSON configuration (possibly partial) over `base` (e.g.
    /// [`EngineConfig::for_provider`]): the fields given replace the base's, the rest keep it.
    pub fn from_json_over(base: EngineConfig, json: &str) -> Result<Self, ConfigError> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| ConfigError::new("config", format!("not valid JSON: {e}")))?;
        let cfg = base.read_over(value).map_err(|e| ConfigError::new(e.field_under("config"), e.problem))?;
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
        positive("polling.min_interval_ms", self.polling.min_interval_ms)?;
        for kind in TaskKind::ALL {
            let field = format!("polling.give_up_ms.{kind}");
            positive(&field, self.polling.give_up_ms.ms(kind))?;
            if self.polling.give_up_ms.ms(kind) < self.polling.first_poll_ms.ms(kind) {
                return Err(ConfigError::new(field, format!("must be at least polling.first_poll_ms.{kind}")));
            }
        }
        if self.polling.max_polls == 0 {
            return Err(ConfigError::new("polling.max_polls", "must be at least 1"));
        }
        if !(self.rate.submits_per_second.is_finite() && self.rate.submits_per_second > 0.0) {
            return Err(ConfigError::new("rate.submits_per_second", "must be a positive number"));
        }
        if self.circuit.account_hold_ms > 0 && self.circuit.account_probe_ms == 0 {
            return Err(ConfigError::new("circuit.account_probe_ms", "must be greater than zero while holding"));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_unix_millis(1_700_000_000_000 + ms)
    }

    #[test]
    fn polls_stretch_to_the_give_up_point_and_stop_there() {
        let p = PollingConfig::default();
        let (first, give_up) = (p.first_poll_ms.ms(TaskKind::RecaptchaV2), p.give_up_ms.ms(TaskKind::RecaptchaV2));
        let mut now = at(first);
        let mut polls = 1;
        while let Some(next) = p.next_poll(TaskKind::RecaptchaV2, at(0), polls, now) {
            assert!(next.since(now) >= Duration::from_millis(p.min_interval_ms), "closer than the floor");
            now = next;
            polls += 1;
        }
        assert_eq!(polls, p.max_polls, "the whole budget is used");
        assert!(now.since(at(0)) >= Duration::from_millis(give_up), "given up before the service stops");
        assert!(now.since(at(0)) < Duration::from_millis(give_up + p.min_interval_ms));
    }

    #[test]
    fn the_give_up_point_ends_an_attempt_even_with_polls_left() {
        let p = PollingConfig::default();
        let give_up = p.give_up_ms.ms(TaskKind::Image);
        assert_eq!(p.next_poll(TaskKind::Image, at(0), 3, at(give_up)), None);
        assert!(p.next_poll(TaskKind::Image, at(0), 3, at(give_up - 1)).is_some());
        assert_eq!(p.next_poll(TaskKind::Image, at(0), p.max_polls, at(1)), None, "budget used up");
    }

    #[test]
    fn a_fixed_interval_is_kept_and_the_floor_holds_late_in_an_attempt() {
        let fixed = PollingConfig { interval_ms: 50, ..PollingConfig::default() };
        assert_eq!(fixed.next_poll(TaskKind::RecaptchaV2, at(0), 1, at(60)), Some(at(110)));
        assert_eq!(fixed.planned_interval(TaskKind::Image), Duration::from_millis(50));
        let p = PollingConfig::default();
        // One second before the give-up point with polls left: the floor, not a burst.
        let late = at(p.give_up_ms.ms(TaskKind::Turnstile) - 1000);
        assert_eq!(p.next_poll(TaskKind::Turnstile, at(0), 2, late), Some(late.add(Duration::from_millis(5000))));
    }

    #[test]
    fn kind_tables_read_one_number_or_kinds_over_the_base() {
        let base = KindMs::uniform(7);
        assert_eq!(base.read_over(serde_json::json!(3)).unwrap(), KindMs::uniform(3));
        let some = base.read_over(serde_json::json!({"recaptcha_v2": 9})).unwrap();
        assert_eq!((some.ms(TaskKind::RecaptchaV2), some.ms(TaskKind::Image)), (9, 7));
        assert_eq!(base.read_over(serde_json::json!({"recaptcha": 9})).unwrap_err().field, "recaptcha");
        assert_eq!(
            base.read_over(serde_json::json!("fast")).unwrap_err().problem,
            "expected a whole number or an object of task kinds, got a string"
        );
        assert_eq!(base.read_over(serde_json::json!({"text": -1})).unwrap_err().field, "text");
    }
}
