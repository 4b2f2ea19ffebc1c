//! The mock's memory: the script, the bounded task table, the fault RNG and the counters.
//!
//! Both protocols share it, so a task created by `in.php` can also be read by `getTaskResult`. It is only
//! touched under a short, non-async lock; no answer is computed while awaiting.

use std::collections::{HashMap, VecDeque};

use tokio::time::{Duration, Instant};

use crate::ban::{Bans, Verdict};
use crate::config::{Behavior, MockConfig, Outcome};
use crate::counters::Counters;
use crate::siteverify::Issued;
use crate::tokens::Kind;

/// The first task id handed out (the seeds' example id).
const FIRST_TASK_ID: u64 = 71_823_460;

/// A task as submitted, normalised across both protocols for matching.
#[derive(Debug, Clone)]
pub(crate) struct Submission {
    pub kind: Kind,
    pub page_url: Option<String>,
    pub site_key: Option<String>,
    /// Every submitted parameter value, for `any_contains`.
    pub values: Vec<String>,
    /// The API key it was submitted with, for the per-key counters.
    pub key: Option<String>,
}

/// One accepted task.
#[derive(Debug)]
struct Task {
    kind: Kind,
    submitted: Instant,
    behavior: Behavior,
    delivered: bool,
    key: Option<String>,
    /// What `siteverify` tells a site about the answer.
    site_key: Option<String>,
    page_url: Option<String>,
    values: Vec<String>,
}

/// What a poll sees of a task.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Status {
    NotReady,
    Ready { kind: Kind, token: Option<String> },
    Failed(String),
    Unknown,
}

/// A fault drawn for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    Http5xx(u16),
    Html502,
    TruncatedJson,
    ConnectionReset,
    Oversized,
}

impl Fault {
    pub fn name(self) -> &'static str {
        match self {
            Fault::Http5xx(_) => "http_5xx",
            Fault::Html502 => "html_502",
            Fault::TruncatedJson => "truncated_json",
            Fault::ConnectionReset => "connection_reset",
            Fault::Oversized => "oversized",
        }
    }
}

#[derive(Debug)]
pub(crate) struct State {
    pub config: MockConfig,
    pub counters: Counters,
    rng: fastrand::Rng,
    tasks: HashMap<u64, Task>,
    order: VecDeque<u64>,
    next_id: u64,
    /// Refused submits so far per rule (the last slot is the default behavior), for `fail_first_submits`.
    refusals: Vec<u32>,
    /// Submit windows and bans per key, for the ban rule.
    bans: Bans,
    /// Connections accepted and not yet closed; not a counter, so `reset` leaves it alone.
    pub open_connections: usize,
    /// Answers handed out, for `/siteverify`.
    pub issued: Issued,
}

impl State {
    pub fn new(config: MockConfig) -> State {
        let rng = fastrand::Rng::with_seed(config.faults.seed);
        let refusals = vec![0; config.rules.len() + 1];
        State {
            config,
            counters: Counters::default(),
            rng,
            tasks: HashMap::new(),
            order: VecDeque::new(),
            next_id: FIRST_TASK_ID,
            refusals,
            bans: Bans::default(),
            open_connections: 0,
            issued: Issued::default(),
        }
    }

    /// Replaces the script; tasks already submitted keep the behavior they were given. Bans and
    /// submit windows start afresh, since the new script's ban rule may differ.
    pub fn set_script(&mut self, config: MockConfig) {
        self.rng = fastrand::Rng::with_seed(config.faults.seed);
        self.refusals = vec![0; config.rules.len() + 1];
        self.bans.clear();
        self.config = config;
        self.evict();
    }

    /// Forgets every task, counter and ban and restarts the fault RNG; ids keep increasing so that an
    /// id from before the reset never names a new task.
    pub fn reset(&mut self) {
        self.counters = Counters::default();
        self.bans.clear();
        self.tasks.clear();
        self.order.clear();
        self.issued = Issued::default();
        self.rng = fastrand::Rng::with_seed(self.config.faults.seed);
        self.refusals = vec![0; self.config.rules.len() + 1];
    }

    /// Checks an API key: `Err(code)` for a missing, unknown or scripted-broken key.
    pub fn check_key(&self, key: Option<&str>) -> Result<(), String> {
        let key = match key {
            Some(key) if !key.is_empty() => key,
            _ => return Err("ERROR_KEY_DOES_NOT_EXIST".to_string()),
        };
        if let Some(code) = self.config.account_errors.get(key) {
            return Err(code.clone());
        }
        if self.config.bad_keys.iter().any(|bad| bad == key) {
            return Err("ERROR_KEY_DOES_NOT_EXIST".to_string());
        }
        if let Some(keys) = &self.config.keys {
            if !keys.iter().any(|k| k == key) {
                return Err("ERROR_KEY_DOES_NOT_EXIST".to_string());
            }
        }
        Ok(())
    }

    /// Applies the ban rule to a submission by `key` (already accepted by [`State::check_key`]):
    /// `Err` with the ban's answer code, v1's or the JSON dialects', when it is refused.
    pub fn check_ban(&mut self, key: &str, now: Instant, v1: bool) -> Result<(), String> {
        let Some(rule) = &self.config.ban else { return Ok(()) };
        match self.bans.check(rule, key, now, &mut self.counters) {
            Verdict::Allowed => Ok(()),
            Verdict::BanStarted | Verdict::Banned => {
                Err(if v1 { rule.v1_code.clone() } else { rule.json_code.clone() })
            }
        }
    }

    /// Draws the faults of one request to `path`: at most one failure, and whether to answer slowly.
    pub fn draw_faults(&mut self, path: &str) -> (Option<Fault>, Option<Duration>) {
        let f = &self.config.faults;
        if !f.endpoints.is_empty() && !f.endpoints.iter().any(|e| e == path) {
            return (None, None);
        }
        let (http_5xx, html_502, truncated, reset) = (f.http_5xx, f.html_502, f.truncated_json, f.connection_reset);
        let oversized = f.oversized;
        let (slow_ms, slow_rate) = (f.slow_ms, f.slow_rate);
        let slow = (slow_ms > 0 && self.rng.f64() < slow_rate).then(|| Duration::from_millis(slow_ms));
        let draw = self.rng.f64();
        let fault = if draw < http_5xx {
            Some(Fault::Http5xx([500, 502, 503, 504][self.rng.usize(..4)]))
        } else if draw < http_5xx + html_502 {
            Some(Fault::Html502)
        } else if draw < http_5xx + html_502 + truncated {
            Some(Fault::TruncatedJson)
        } else if draw < http_5xx + html_502 + truncated + reset {
            Some(Fault::ConnectionReset)
        } else if draw < http_5xx + html_502 + truncated + reset + oversized {
            Some(Fault::Oversized)
        } else {
            None
        };
        if let Some(fault) = fault {
            self.counters.fault(fault.name());
        }
        if slow.is_some() {
            self.counters.fault("slow");
        }
        (fault, slow)
    }

    /// Accepts or refuses a task: `Ok(id)` or `Err(code)`.
    pub fn submit(&mut self, submission: Submission, now: Instant) -> Result<u64, String> {
        let (slot, behavior) = self.behavior_for(&submission);
        if let Some(refused) = self.refusals.get_mut(slot) {
            if *refused < behavior.fail_first_submits {
                *refused += 1;
                return Err(behavior.fail_code);
            }
        }
        if behavior.outcome == Outcome::BadParameters {
            return Err(behavior.code.unwrap_or_else(|| "ERROR_BAD_PARAMETERS".to_string()));
        }
        if self.config.charge {
            // Compared in thousandths of a cent so that 0.1 / 0.001 is exactly 100 tasks.
            let units = |x: f64| (x * 1e5).round() as i64;
            if units(self.config.balance) < units(self.config.task_cost) {
                return Err("ERROR_ZERO_BALANCE".to_string());
            }
            self.config.balance = (units(self.config.balance) - units(self.config.task_cost)) as f64 / 1e5;
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        if let Some(key) = &submission.key {
            self.counters.key(key).tasks_created += 1;
        }
        let task = Task {
            kind: submission.kind,
            submitted: now,
            behavior,
            delivered: false,
            key: submission.key,
            site_key: submission.site_key,
            page_url: submission.page_url,
            values: submission.values,
        };
        self.tasks.insert(id, task);
        self.order.push_back(id);
        self.counters.tasks_created += 1;
        self.evict();
        Ok(id)
    }

    /// The state of task `id` at `now`; the first delivered answer counts the task as solved.
    pub fn status(&mut self, id: u64, now: Instant) -> Status {
        let created = self.counters.tasks_created;
        let Some(task) = self.tasks.get_mut(&id) else {
            return Status::Unknown;
        };
        let elapsed = now.saturating_duration_since(task.submitted);
        if elapsed < Duration::from_millis(task.behavior.solve_after_ms) || created < task.behavior.ready_after_created
        {
            return Status::NotReady;
        }
        match task.behavior.outcome {
            Outcome::Solve => {
                if !task.delivered {
                    task.delivered = true;
                    let response = crate::tokens::verifiable_response(task.kind, id, task.behavior.token.as_deref());
                    // The API key is a submitted value too; a site never sees it.
                    let values: Vec<String> =
                        task.values.iter().filter(|v| Some(*v) != task.key.as_ref()).cloned().collect();
                    self.issued.issue(response, task.kind, &task.site_key, &task.page_url, &values);
                    self.counters.tasks_solved += 1;
                    if let Some(key) = &task.key {
                        self.counters.key(key).tasks_solved += 1;
                    }
                }
                Status::Ready { kind: task.kind, token: task.behavior.token.clone() }
            }
            Outcome::NeverReady => Status::NotReady,
            Outcome::Unsolvable => Status::Failed("ERROR_CAPTCHA_UNSOLVABLE".to_string()),
            Outcome::PollError | Outcome::BadParameters => {
                Status::Failed(task.behavior.code.clone().unwrap_or_else(|| "ERROR_CAPTCHA_UNSOLVABLE".to_string()))
            }
        }
    }

    /// Whether task `id` is (still) known.
    pub fn knows(&self, id: u64) -> bool {
        self.tasks.contains_key(&id)
    }

    /// The first rule matching the submission, or the default; with its slot in `refusals`.
    fn behavior_for(&self, submission: &Submission) -> (usize, Behavior) {
        for (index, rule) in self.config.rules.iter().enumerate() {
            let m = &rule.matcher;
            let page_ok = m
                .page_url_contains
                .as_deref()
                .is_none_or(|needle| submission.page_url.as_deref().is_some_and(|url| url.contains(needle)));
            let key_ok =
                m.site_key.as_deref().is_none_or(|key| submission.site_key.as_deref().is_some_and(|k| k == key));
            let kind_ok = m.kind.as_deref().is_none_or(|kind| kind == submission.kind.name());
            let any_ok =
                m.any_contains.as_deref().is_none_or(|needle| submission.values.iter().any(|v| v.contains(needle)));
            let all_ok = m.all_contain.iter().all(|needle| submission.values.iter().any(|v| v.contains(needle)));
            if page_ok && key_ok && kind_ok && any_ok && all_ok {
                return (index, rule.behavior.clone());
            }
        }
        (self.config.rules.len(), self.config.default_behavior.clone())
    }

    fn evict(&mut self) {
        while self.tasks.len() > self.config.max_tasks {
            match self.order.pop_front() {
                Some(old) => {
                    if self.tasks.remove(&old).is_some() {
                        self.counters.tasks_evicted += 1;
                    }
                }
                None => break,
            }
        }
    }
}
