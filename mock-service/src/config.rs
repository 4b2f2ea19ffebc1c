//! The mock's script: which keys it accepts, what each task does, which faults it injects.
//!
//! Everything here is plain serde data so that the CLI, Python, Node and browser tests can pass the same JSON
//! (`--config`, `POST /mock/script`). Unknown fields are rejected so that a typo in a test script is an error,
//! not a silently ignored setting.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Longest injected delay; anything longer would look like a hung mock rather than a slow service.
pub const MAX_SLOW_MS: u64 = 600_000;

/// Longest ban window and ban: an hour is far beyond any documented one, and it keeps every
/// deadline the mock computes from them representable.
pub const MAX_BAN_MS: u64 = 3_600_000;

/// Most submissions a ban window may allow; the mock remembers that many instants per key.
pub const MAX_BAN_SUBMITS: u32 = 100_000;

/// The whole script of a mock solver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MockConfig {
    /// Port to bind on 127.0.0.1; 0 picks a free port.
    pub port: u16,
    /// If set, only these API keys are accepted; otherwise any non-empty key not in `bad_keys` is.
    pub keys: Option<Vec<String>>,
    /// Keys answered with `ERROR_KEY_DOES_NOT_EXIST`.
    pub bad_keys: Vec<String>,
    /// Keys answered with a fixed account error on every call, e.g. `{"broke": "ERROR_ZERO_BALANCE"}`.
    pub account_errors: BTreeMap<String, String>,
    /// Balance reported by `getbalance` / `/getBalance`.
    pub balance: f64,
    /// The price of one task: the `cost` a createTask `getTaskResult` reports, and what
    /// `charge` takes off the balance.
    pub task_cost: f64,
    /// Charge `task_cost` from `balance` for each accepted task, and refuse submissions with
    /// `ERROR_ZERO_BALANCE` once the balance cannot pay for one more (a balance that runs out
    /// after `balance / task_cost` tasks).
    pub charge: bool,
    /// What a task does when no rule matches it.
    #[serde(rename = "default")]
    pub default_behavior: Behavior,
    /// Per-task behaviors; the first rule whose `match` fits the submitted task wins.
    pub rules: Vec<Rule>,
    /// Faults injected per request.
    pub faults: Faults,
    /// Tasks kept in memory; the oldest are evicted beyond this (polling one then gives "no such task").
    pub max_tasks: usize,
    /// Most ids accepted by one `res.php?action=get&ids=` batch poll.
    pub max_batch_ids: usize,
    /// The code hCaptcha submissions are refused with (most providers no longer solve it).
    pub hcaptcha_code: String,
    /// Add `Access-Control-Allow-Origin: *` and answer CORS preflights (browser tests need it).
    pub cors: bool,
    /// Answer `ImageToTextTask` and `ReCaptchaV2Classification` in the `createTask` response itself when it is ready at once
    /// (`status: "ready"` with the solution and the `taskId`), as CapSolver does for recognition tasks
    /// (https://docs.capsolver.com/guide/api-createtask).
    pub sync_image: bool,
    /// Opt-in submit-rate ban per API key (off when absent): see [`BanRule`].
    pub ban: Option<BanRule>,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            port: 0,
            keys: None,
            bad_keys: Vec::new(),
            account_errors: BTreeMap::new(),
            balance: 10.0,
            task_cost: 0.001,
            charge: false,
            default_behavior: Behavior::default(),
            rules: Vec::new(),
            faults: Faults::default(),
            max_tasks: 10_000,
            max_batch_ids: 100,
            hcaptcha_code: "ERROR_METHOD_CALL".to_string(),
            cors: true,
            sync_image: false,
            ban: None,
        }
    }
}

impl MockConfig {
    /// Parses a script from JSON, naming the offending field on error (its path, e.g.
    /// `faults.slow_ms: invalid type…`, since serde's own message names only the expected type).
    pub fn from_json(text: &str) -> Result<MockConfig, String> {
        let mut reader = serde_json::Deserializer::from_str(text);
        let config: MockConfig = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // `.` is the top level, `?` a syntax error before any field: nothing to name.
            if path == "." || path == "?" {
                format!("invalid mock config: {inner}")
            } else {
                format!("invalid mock config: {path}: {inner}")
            }
        })?;
        reader.end().map_err(|e| format!("invalid mock config: {e}"))?;
        config.validate()?;
        Ok(config)
    }

    /// Checks values serde cannot: rates within 0..=1 and non-zero bounds.
    pub fn validate(&self) -> Result<(), String> {
        let f = &self.faults;
        for (name, rate) in [
            ("faults.http_5xx", f.http_5xx),
            ("faults.html_502", f.html_502),
            ("faults.truncated_json", f.truncated_json),
            ("faults.connection_reset", f.connection_reset),
            ("faults.oversized", f.oversized),
            ("faults.slow_rate", f.slow_rate),
        ] {
            if !(0.0..=1.0).contains(&rate) {
                return Err(format!("invalid mock config: {name} must be within 0..=1, got {rate}"));
            }
        }
        let total = f.http_5xx + f.html_502 + f.truncated_json + f.connection_reset + f.oversized;
        if total > 1.0 + 1e-9 {
            return Err(format!("invalid mock config: the faults rates add up to {total}, more than 1"));
        }
        if f.slow_ms > MAX_SLOW_MS {
            return Err(format!(
                "invalid mock config: faults.slow_ms must be at most {MAX_SLOW_MS}, got {}",
                f.slow_ms
            ));
        }
        if self.max_tasks == 0 {
            return Err("invalid mock config: max_tasks must be at least 1".to_string());
        }
        if self.max_batch_ids == 0 {
            return Err("invalid mock config: max_batch_ids must be at least 1".to_string());
        }
        if !self.balance.is_finite() {
            return Err("invalid mock config: balance must be a finite number".to_string());
        }
        if !(self.task_cost.is_finite() && self.task_cost >= 0.0) {
            return Err("invalid mock config: task_cost must be a finite number of at least 0".to_string());
        }
        if let Some(ban) = &self.ban {
            ban.validate()?;
        }
        Ok(())
    }
}

/// 2captcha's submit-rate ban, per API key: more than `max_submits` submissions (`in.php` and
/// `createTask`) within `window_ms` get the key refused for `ban_ms`. 2captcha documents more than
/// 60 `in.php` requests within 3 seconds as a 10-second `MAX_USER_TURN` ban
/// (<https://2captcha.com/api-docs/limits>; see the `ban` module for the wording and the rules).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BanRule {
    /// Submissions allowed within one window; the next one is refused and starts the ban.
    pub max_submits: u32,
    /// The sliding window, in milliseconds.
    pub window_ms: u64,
    /// How long the key stays refused, from the submission that started the ban.
    pub ban_ms: u64,
    /// What `in.php` answers while the key is banned (2captcha's `MAX_USER_TURN`).
    pub v1_code: String,
    /// What `createTask` answers while the key is banned. `ERROR_TOO_MUCH_REQUESTS` is the
    /// createTask dialects' documented "too many requests" code (CapMonster Cloud,
    /// <https://docs.capmonster.cloud/docs/api/api-errors>); the error lists of anti-captcha
    /// (<https://anti-captcha.com/apidoc/errors>) and 2captcha API v2
    /// (<https://2captcha.com/api-docs/error-codes>) name none for it. CapSolver's is
    /// `ERROR_RATE_LIMIT` (<https://docs.capsolver.com/guide/api-error>).
    pub json_code: String,
}

impl Default for BanRule {
    /// 2captcha's documented figures.
    fn default() -> Self {
        BanRule {
            max_submits: 60,
            window_ms: 3000,
            ban_ms: 10_000,
            v1_code: "MAX_USER_TURN".to_string(),
            json_code: "ERROR_TOO_MUCH_REQUESTS".to_string(),
        }
    }
}

impl BanRule {
    fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_BAN_SUBMITS).contains(&self.max_submits) {
            return Err(format!(
                "invalid mock config: ban.max_submits must be within 1..={MAX_BAN_SUBMITS}, got {}",
                self.max_submits
            ));
        }
        for (name, ms) in [("ban.window_ms", self.window_ms), ("ban.ban_ms", self.ban_ms)] {
            if !(1..=MAX_BAN_MS).contains(&ms) {
                return Err(format!("invalid mock config: {name} must be within 1..={MAX_BAN_MS}, got {ms}"));
            }
        }
        for (name, code) in [("ban.v1_code", &self.v1_code), ("ban.json_code", &self.json_code)] {
            if code.trim().is_empty() {
                return Err(format!("invalid mock config: {name} must not be empty"));
            }
        }
        Ok(())
    }
}

/// A scripted behavior for the tasks a matcher selects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Which submitted tasks this rule applies to.
    #[serde(rename = "match")]
    pub matcher: Matcher,
    /// What those tasks do.
    pub behavior: Behavior,
}

/// Selects tasks by what was submitted; every field given must match (an empty matcher matches all).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Matcher {
    /// Substring of the page URL (`pageurl` in v1, `websiteURL` in createTask).
    pub page_url_contains: Option<String>,
    /// Exact site key (`googlekey`/`sitekey`/`publickey`/`gt`/`captcha_id`, or `websiteKey`...).
    pub site_key: Option<String>,
    /// Task kind: `image`, `recaptcha_v2`, `recaptcha_v3`, `turnstile`, `geetest`, `geetest_v4`, `funcaptcha`, `hcaptcha`.
    pub kind: Option<String>,
    /// Substring of any submitted parameter value.
    pub any_contains: Option<String>,
    /// Substrings each found in some submitted parameter value (a task that carried all of them: a proxy,
    /// a user agent, a cookie).
    pub all_contain: Vec<String>,
}

/// What a task does once submitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Behavior {
    /// The final state of the task.
    pub outcome: Outcome,
    /// Milliseconds from submit until the outcome is visible to polls (before that: not ready).
    pub solve_after_ms: u64,
    /// Not ready either until the mock has created this many tasks in all: a batch is held with
    /// the provider until the whole of it has been submitted, however slowly the client submits.
    pub ready_after_created: u64,
    /// A fixed answer; otherwise a realistic one is derived from the task id.
    pub token: Option<String>,
    /// The error code for `bad_parameters` (default `ERROR_BAD_PARAMETERS`) or `poll_error`
    /// (default `ERROR_CAPTCHA_UNSOLVABLE`).
    pub code: Option<String>,
    /// The first K submits of matching tasks are refused with `fail_code`.
    pub fail_first_submits: u32,
    /// The refusal code for `fail_first_submits`.
    pub fail_code: String,
}

impl Default for Behavior {
    fn default() -> Self {
        Behavior {
            outcome: Outcome::Solve,
            solve_after_ms: 0,
            ready_after_created: 0,
            token: None,
            code: None,
            fail_first_submits: 0,
            fail_code: "ERROR_NO_SLOT_AVAILABLE".to_string(),
        }
    }
}

/// The final state of a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Solved after `solve_after_ms`.
    #[default]
    Solve,
    /// `ERROR_CAPTCHA_UNSOLVABLE` at poll after `solve_after_ms`.
    Unsolvable,
    /// Never leaves "not ready".
    NeverReady,
    /// Refused at submit with `code` (default `ERROR_BAD_PARAMETERS`).
    BadParameters,
    /// Any error code at poll after `solve_after_ms` (e.g. `ERROR_TOKEN_EXPIRED`, `ERROR_BAD_DUPLICATES`).
    PollError,
}

/// Faults injected per protocol request (never on `/mock/*`), drawn from an RNG seeded with `seed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// Seed of the fault RNG; the same seed and request sequence give the same faults.
    pub seed: u64,
    /// Rate of plain `500 Internal Server Error` answers.
    pub http_5xx: f64,
    /// Rate of nginx-style HTML `502 Bad Gateway` pages.
    pub html_502: f64,
    /// Rate of answers whose JSON body is cut short (the request still takes effect).
    pub truncated_json: f64,
    /// Rate of TCP resets without any answer.
    pub connection_reset: f64,
    /// Rate of `200` answers whose body is 5 MiB of filler, longer than any service's answer
    /// (the request takes no effect).
    pub oversized: f64,
    /// Delay added to answers, in milliseconds.
    pub slow_ms: u64,
    /// Rate of answers delayed by `slow_ms`.
    pub slow_rate: f64,
    /// Paths the faults apply to (e.g. `["/res.php"]`); empty means every protocol path.
    pub endpoints: Vec<String>,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            seed: 0x5eed,
            http_5xx: 0.0,
            html_502: 0.0,
            truncated_json: 0.0,
            connection_reset: 0.0,
            oversized: 0.0,
            slow_ms: 0,
            slow_rate: 1.0,
            endpoints: Vec::new(),
        }
    }
}
