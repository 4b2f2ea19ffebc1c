//! Providers: a wire codec plus a table of facts about one solving service.
//!
//! Two protocol families (docs/decisions/0064-error-classes.md): the 2captcha-compatible v1 API
//! ([`v1`]) and the createTask JSON API ([`create_task`], with per-service
//! task tables in [`dialect`]). Every `parse_*` is total: any status and any
//! body map to an outcome, never a panic.

pub mod create_task;
pub mod dialect;
#[cfg(feature = "declared-kinds")]
mod hooks;
#[cfg(feature = "declared-kinds")]
mod image_limits;
pub mod limits;
pub mod page_context;
pub mod v1;

// The protocols and presets are plain data the task kinds read too (`crate::protocol`).
pub use crate::protocol::{self, Dialect, Protocol, PRESETS};

use core::time::Duration;

use crate::class::{reason, ErrorClass, Failure};
use crate::classify;
use crate::error::{ConfigError, InvalidTask};
use crate::http::{HttpRequest, HttpResponse, Secret};
use crate::solution::Solution;
use crate::support::quoted::Quoted;
use crate::task::{Task, TaskKind, ValidTask};

/// Options sent with every submission.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubmitOptions {
    pub soft_id: Option<String>,
    pub pingback: Option<String>,
    /// Ask v1 providers for `Access-Control-Allow-Origin: *` (browser drivers).
    pub header_acao: bool,
}

/// v1 batch polls (`action=get&ids=`) carry at most this many ids.
///
/// No provider documentation of `action=get&ids=` or of a limit on it could be found (the 2captcha,
/// rucaptcha and CaptchaAI API pages describe `id=` only; the form appears in the old antigate
/// v1 documentation as quoted by third-party clients: `res.php?key=...&action=get&ids=ID_1,ID_2,...`).
/// 100 is this project's cap, and the engine keeps its fallback: three garbled batch answers in a
/// row switch it to one id per request (`engine::GARBLED_BATCHES_BEFORE_FALLBACK`).
pub const V1_MAX_BATCH: usize = 100;

/// A solving service: where it is, how to talk to it, and its quirks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provider {
    name: String,
    base_url: String,
    protocol: Protocol,
}

/// The provider's answer to a submission.
#[derive(Clone, Debug, PartialEq)]
pub enum SubmitOutcome {
    Accepted {
        provider_task_id: String,
    },
    /// Solved in the submission's own answer (CapSolver's recognition tasks): nothing to poll.
    Solved(Solution),
    Failed(Failure),
}

/// The provider's answer to a poll for `ids` (one entry per id, in order),
/// or a failure of the whole exchange.
#[derive(Clone, Debug, PartialEq)]
pub enum PollOutcome {
    PerTask(Vec<TaskPoll>),
    Failed(Failure),
}

#[derive(Clone, Debug, PartialEq)]
pub enum TaskPoll {
    NotReady,
    Ready(Solution),
    Failed(Failure),
}

impl Provider {
    /// A known service by name (`captchaai`, `2captcha`, `anti-captcha`, ...).
    pub fn preset(name: &str) -> Result<Self, ConfigError> {
        let (n, url, protocol) = PRESETS.iter().find(|p| p.0 == name).ok_or_else(|| {
            let known: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
            ConfigError::new(
                "provider",
                format!("unknown provider {}; known presets: {}", Quoted(name), known.join(", ")),
            )
        })?;
        Ok(Provider { name: (*n).to_string(), base_url: (*url).to_string(), protocol: *protocol })
    }

    /// Any 2captcha-compatible service (or a mock) at `base_url`.
    pub fn custom_v1(base_url: &str) -> Result<Self, ConfigError> {
        Ok(Provider { name: "custom".into(), base_url: check_base_url(base_url)?, protocol: Protocol::V1 })
    }

    /// Any createTask service (or a mock) at `base_url`, speaking `dialect`.
    pub fn custom_create_task(base_url: &str, dialect: Dialect) -> Result<Self, ConfigError> {
        Ok(Provider {
            name: "custom".into(),
            base_url: check_base_url(base_url)?,
            protocol: Protocol::CreateTask(dialect),
        })
    }

    /// A preset name, or an http(s) base URL of a 2captcha-compatible service.
    pub fn from_spec(spec: &str) -> Result<Self, ConfigError> {
        let spec = spec.trim();
        if spec.starts_with("http://") || spec.starts_with("https://") {
            Provider::custom_v1(spec)
        } else {
            Provider::preset(spec)
        }
    }

    /// The same service at another address (a proxy, a mock, a mirror).
    pub fn with_base_url(mut self, base_url: &str) -> Result<Self, ConfigError> {
        self.base_url = check_base_url(base_url)?;
        Ok(self)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Whether the base URL points at this machine (tests, local mocks).
    pub fn is_loopback(&self) -> bool {
        crate::support::weburl::parse(&self.base_url).is_ok_and(|u| u.host.is_loopback())
    }

    /// Whether one poll may ask for several tasks (v1 `ids=`).
    pub fn supports_batch_poll(&self) -> bool {
        matches!(self.protocol, Protocol::V1)
    }

    pub fn max_batch(&self) -> usize {
        match self.protocol {
            Protocol::V1 => V1_MAX_BATCH,
            Protocol::CreateTask(_) => 1,
        }
    }

    /// CaptchaAI bills by threads: its `ERROR_ZERO_BALANCE` means "no free
    /// thread right now", not "no money".
    fn zero_balance_means_busy(&self) -> bool {
        self.name == "captchaai" || self.base_url.contains("captchaai.com")
    }

    /// The class, minimum wait and description of a provider code for this provider.
    pub fn classify(&self, code: &str) -> Failure {
        if code == "ERROR_ZERO_BALANCE" && self.zero_balance_means_busy() {
            return Failure::new(code, ErrorClass::RetryAfter, "no free thread on the CaptchaAI plan right now")
                .with_retry_after(Duration::from_secs(5))
                .congested();
        }
        let (class, wait) = classify::class_of(code);
        let mut f = Failure::new(code, class, classify::describe(code));
        f.retry_after = wait;
        f.congestion = classify::CONGESTION.contains(&code);
        f.billed = self.bills(code);
        f
    }

    /// Whether the service charges for a failure: anti-captcha bills `ERROR_CAPTCHA_UNSOLVABLE`
    /// ("5 different workers could not solve the captcha", charged: the errors list,
    /// https://anti-captcha.com/apidoc/errors/ERROR_CAPTCHA_UNSOLVABLE, as the outside audit
    /// of issue 33 quotes it) and `ERROR_TOKEN_EXPIRED`, which CapMonster bills too (the
    /// workers ran before the site's token expired: https://anti-captcha.com/apidoc/errors,
    /// https://docs.capmonster.cloud/docs/api/api-errors, as the outside audit of issue 43
    /// quotes them). 2captcha does not ("We will not charge you for that request",
    /// https://2captcha.com/2captcha-api#error_handling), nor CaptchaAI, which bills by threads;
    /// CapSolver documents no charge for failed tasks. `tests/vectors/classes.json` states
    /// `billed` for each of these (service, code) pairs.
    fn bills(&self, code: &str) -> bool {
        match self.protocol {
            Protocol::CreateTask(Dialect::AntiCaptcha) => {
                matches!(code, "ERROR_CAPTCHA_UNSOLVABLE" | "ERROR_TOKEN_EXPIRED")
            }
            Protocol::CreateTask(Dialect::CapMonster) => code == "ERROR_TOKEN_EXPIRED",
            _ => false,
        }
    }

    /// The submission of `task`, or why this service cannot take it (valid, but beyond what
    /// the service takes). The task was checked when it became a [`ValidTask`].
    pub fn submit_request(
        &self,
        key: &Secret,
        task: &ValidTask,
        opts: &SubmitOptions,
    ) -> Result<HttpRequest, InvalidTask> {
        // What the page added and this service has no place for may be left out (`page_context`).
        page_context::leaving_out(task, |task| self.request_of(key, task, opts)).map(|(request, _)| request)
    }

    fn request_of(&self, key: &Secret, task: &Task, opts: &SubmitOptions) -> Result<HttpRequest, InvalidTask> {
        self.check_listed(task)?;
        #[cfg(feature = "declared-kinds")]
        image_limits::check(self, task)?;
        match self.protocol {
            Protocol::V1 => v1::submit_request(self, key, task, opts),
            Protocol::CreateTask(d) => create_task::submit_request(self, d, key, task, opts),
        }
    }

    /// Whether this service can take a task already checked: the error
    /// [`Provider::submit_request`] would give, without building the request.
    pub(crate) fn check_submit(&self, task: &ValidTask) -> Result<(), InvalidTask> {
        page_context::leaving_out(task, |task| self.check_task(task)).map(drop)
    }

    /// The fields the page added to `task` that this service leaves out (it has no place for them
    /// and the answer is not bound to them: `page_context`); empty for a user's task.
    pub fn left_out(&self, task: &ValidTask) -> Vec<&'static str> {
        if task.page_context().is_empty() {
            return Vec::new();
        }
        page_context::leaving_out(task, |task| self.check_task(task)).map(|(_, left_out)| left_out).unwrap_or_default()
    }

    fn check_task(&self, task: &Task) -> Result<(), InvalidTask> {
        self.check_listed(task)?;
        #[cfg(feature = "declared-kinds")]
        image_limits::check(self, task)?;
        match self.protocol {
            Protocol::V1 => v1::check(self, task),
            // A declared kind is checked against its tables; a coded one runs the code that
            // writes its object, in a mode that writes nothing (its refusals are in that code).
            Protocol::CreateTask(d) => dialect::check(d, task),
        }
    }

    /// A kind goes only to the presets its kind file lists (`[coded] services`, or its tables):
    /// one a service dropped (`[dropped]`) is refused here naming the source, before anything is
    /// sent, so that the kind file alone decides where it goes. A custom endpoint is the user's
    /// own choice of service and is not checked here (its dialect's tables still are).
    fn check_listed(&self, task: &Task) -> Result<(), InvalidTask> {
        let kind = task.kind();
        let decl = crate::task::kinds::decl(kind);
        if self.name == "custom" {
            return Ok(());
        }
        #[cfg(feature = "declared-kinds")]
        if decl.dropped_by(&self.name).is_some() {
            return Err(not_solved(&self.name, kind));
        }
        match decl.coded_services() {
            Some(services) if !services.contains(&self.name.as_str()) => Err(not_solved(&self.name, kind)),
            _ => Ok(()),
        }
    }

    pub fn parse_submit(&self, resp: &HttpResponse) -> SubmitOutcome {
        match self.protocol {
            Protocol::V1 => v1::parse_submit(self, resp),
            Protocol::CreateTask(_) => create_task::parse_submit(self, resp),
        }
    }

    /// A poll for `ids`: several only when [`Provider::supports_batch_poll`]
    /// (createTask services get the first id; the engine never sends more).
    pub fn poll_request(&self, key: &Secret, ids: &[&str]) -> HttpRequest {
        match self.protocol {
            Protocol::V1 => v1::poll_request(self, key, ids),
            Protocol::CreateTask(d) => create_task::poll_request(self, d, key, ids.first().copied().unwrap_or("")),
        }
    }

    pub fn parse_poll(&self, resp: &HttpResponse, ids: &[&str]) -> PollOutcome {
        match self.protocol {
            Protocol::V1 => v1::parse_poll(self, resp, ids),
            Protocol::CreateTask(_) if ids.len() != 1 => PollOutcome::Failed(Failure::new(
                reason::UNPARSEABLE,
                ErrorClass::Transient,
                format!("a createTask poll answers one task, {} were asked for", ids.len()),
            )),
            Protocol::CreateTask(_) => create_task::parse_poll(self, resp, ids.first().copied().unwrap_or("")),
        }
    }

    pub fn balance_request(&self, key: &Secret) -> HttpRequest {
        match self.protocol {
            Protocol::V1 => v1::balance_request(self, key),
            Protocol::CreateTask(_) => create_task::balance_request(self, key),
        }
    }

    pub fn parse_balance(&self, resp: &HttpResponse) -> Result<f64, Failure> {
        match self.protocol {
            Protocol::V1 => v1::parse_balance(self, resp),
            Protocol::CreateTask(_) => create_task::parse_balance(self, resp),
        }
    }

    /// Tells the service whether an answer to a task of `kind` worked (refunds bad ones). `None`
    /// when the service has no such report for that kind (CapMonster takes no good reports;
    /// anti-captcha and CapMonster report images, hCaptcha and tokens at separate endpoints).
    pub fn report_request_for(
        &self,
        key: &Secret,
        provider_task_id: &str,
        kind: TaskKind,
        good: bool,
    ) -> Option<HttpRequest> {
        match self.protocol {
            Protocol::V1 => Some(v1::report_request(self, key, provider_task_id, good)),
            Protocol::CreateTask(d) => create_task::report_request(self, d, key, provider_task_id, kind, good),
        }
    }

    /// [`Provider::report_request_for`] a reCAPTCHA answer, for callers that do not know the
    /// task's kind (the report endpoint of most answers reported in practice). Prefer the former:
    /// an image reported here goes to anti-captcha's and CapMonster's token endpoints.
    pub fn report_request(&self, key: &Secret, provider_task_id: &str, good: bool) -> Option<HttpRequest> {
        self.report_request_for(key, provider_task_id, TaskKind::RecaptchaV2, good)
    }

    pub fn parse_report(&self, resp: &HttpResponse) -> Result<(), Failure> {
        match self.protocol {
            Protocol::V1 => v1::parse_report(self, resp),
            Protocol::CreateTask(_) => create_task::parse_report(self, resp),
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        let mut url = String::with_capacity(self.base_url.len() + path.len());
        url.push_str(&self.base_url);
        url.push_str(path);
        url
    }
}

fn check_base_url(base_url: &str) -> Result<String, ConfigError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let url = crate::support::weburl::parse(trimmed)
        .map_err(|e| ConfigError::new("base_url", format!("{}: {e}", Quoted(trimmed))))?;
    if url.query.is_some() || url.fragment.is_some() || url.userinfo.is_some() {
        return Err(ConfigError::new(
            "base_url",
            format!("{}: no query, fragment or credentials allowed", Quoted(trimmed)),
        ));
    }
    // Written back as `scheme://` (lowercase, two forward slashes) so that the
    // drivers' `starts_with("http://")` test for plain HTTP also sees
    // `HTTP://host` and `http:\\host`, which reqwest reads as `http://host`.
    Ok(format!("{}://{}", url.scheme, url.after_slashes))
}

/// A failure for an HTTP status that says nothing about the task, if any:
/// 5xx is the service's trouble (transient), 429 asks us to slow down.
pub(crate) fn status_failure(status: u16) -> Option<Failure> {
    match status {
        429 => Some(
            Failure::new("HTTP 429", ErrorClass::RetryAfter, "the service answered HTTP 429 (too many requests)")
                .with_retry_after(Duration::from_secs(5)),
        ),
        500..=599 => Some(Failure::new(
            format!("HTTP {status}"),
            ErrorClass::Transient,
            format!("the service answered HTTP {status} (server error)"),
        )),
        _ => None,
    }
}

/// A transient failure for a body we could not read. The description says
/// what the body looked like but never quotes it (it could echo anything).
pub(crate) fn unparseable(resp: &HttpResponse, what: &str) -> Failure {
    let text = resp.text();
    let t = text.trim_start();
    let shape = if t.is_empty() {
        "an empty body".to_string()
    } else if t.starts_with('<') {
        format!("an HTML/XML page of {} bytes", resp.body.len())
    } else if t.starts_with('{') || t.starts_with('[') {
        format!("truncated or unexpected JSON of {} bytes", resp.body.len())
    } else {
        format!("an unexpected answer of {} bytes", resp.body.len())
    };
    let status = if (200..300).contains(&resp.status) { String::new() } else { format!(" (HTTP {})", resp.status) };
    Failure::new(
        reason::UNPARSEABLE,
        ErrorClass::Transient,
        format!("could not read the {what} response: {shape}{status}; treated as a temporary fault"),
    )
}

/// The refusal of a task whose kind `service` does not solve, naming the services that do and,
/// where the kind file says the service dropped the kind, what shows it (outside the browser
/// build, which carries no sources).
pub(crate) fn not_solved(service: &str, kind: TaskKind) -> InvalidTask {
    #[cfg(feature = "declared-kinds")]
    if let Some(d) = crate::task::kinds::decl(kind).dropped_by(service) {
        let solving = crate::task::kinds::services_of(kind).join(", ");
        return InvalidTask::new(
            "type",
            format!("{service} no longer solves {kind} tasks ({}: {}; solved by: {solving})", d.note, d.doc),
        );
    }
    does_not_solve(service, kind)
}

/// The refusal of a kind a service (or a dialect, at a custom endpoint) has no form for, naming
/// the services that solve it.
pub(crate) fn does_not_solve(service: &str, kind: TaskKind) -> InvalidTask {
    let solving = crate::task::kinds::services_of(kind).join(", ");
    InvalidTask::new("type", format!("{service} does not solve {kind} tasks (solved by: {solving})"))
}

#[cfg(feature = "declared-kinds")]
/// The refusal of a field `service` has no place for: sending the task without it would
/// produce answers the site rejects.
pub(crate) fn no_equivalent(service: &str, field: &str) -> InvalidTask {
    InvalidTask::new(field, format!("{service} has no equivalent of this field; use a raw task"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For every task of a declared kind in the shared vectors and every preset, the check that
    /// routing asks of each lane refuses exactly what building the request refuses.
    #[test]
    fn check_submit_agrees_with_the_request_for_every_kind() {
        let doc: serde_json::Value = serde_json::from_str(include_str!("../../../tests/vectors/tasks.json")).unwrap();
        let key = Secret::new("KEY");
        let mut checked = 0;
        for case in doc["cases"].as_array().unwrap() {
            let Ok(task) = Task::from_json_value(case["task"].clone()) else { continue };
            for (name, _, _) in PRESETS {
                let p = Provider::preset(name).unwrap();
                let check = p.check_submit(&task).map_err(|e| e.field);
                let built = p.submit_request(&key, &task, &SubmitOptions::default()).map(drop).map_err(|e| e.field);
                assert_eq!(check, built, "{} on {name}", case["name"]);
                checked += 1;
            }
        }
        assert!(checked > 300, "{checked}");
    }

    /// Every (kind, service) a kind file lists under `[dropped]`: the service is not among the
    /// kind's services, and a task of the kind for that preset is refused on `type` before anything
    /// is built, the refusal naming the source; a custom endpoint in the same protocol still takes
    /// it (the user's own choice of service).
    #[test]
    fn a_service_a_kind_file_drops_is_refused_naming_the_source() {
        let doc: serde_json::Value = serde_json::from_str(include_str!("../../../tests/vectors/tasks.json")).unwrap();
        let key = Secret::new("KEY");
        let (mut checked, mut sent_to_custom) = (0, 0);
        for decl in crate::task::kinds::DECLS {
            for dropped in decl.dropped {
                assert!(!crate::task::kinds::services_of(decl.kind).contains(&dropped.service), "{}", decl.kind);
                let case = doc["cases"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["task"]["type"] == decl.kind.as_str() && c["expected"].get("request").is_some())
                    .unwrap_or_else(|| panic!("tasks.json: no request case of {}", decl.kind));
                let task = Task::from_json_value(case["task"].clone()).unwrap();
                let p = Provider::preset(dropped.service).unwrap();
                let refused = p.submit_request(&key, &task, &SubmitOptions::default()).unwrap_err();
                assert_eq!(refused.field, "type", "{} on {}", decl.kind, dropped.service);
                assert!(
                    refused.problem.contains(dropped.doc) && refused.problem.contains("no longer solves"),
                    "{} on {}: {}",
                    decl.kind,
                    dropped.service,
                    refused.problem
                );
                assert_eq!(p.check_submit(&task).unwrap_err().field, "type");
                let custom = match p.protocol() {
                    Protocol::V1 => Provider::custom_v1("https://solver.example").unwrap(),
                    Protocol::CreateTask(d) => Provider::custom_create_task("https://solver.example", d).unwrap(),
                };
                // A dialect's own code may still refuse the kind (CapSolver's hCaptcha), but not
                // because of the kind file's `[dropped]`.
                match custom.submit_request(&key, &task, &SubmitOptions::default()) {
                    Ok(_) => sent_to_custom += 1,
                    Err(e) => assert!(!e.problem.contains("no longer solves"), "custom {}: {}", decl.kind, e.problem),
                }
                checked += 1;
            }
        }
        assert!(
            checked >= 5 && sent_to_custom > 0,
            "{checked} dropped pairs, {sent_to_custom} sent to a custom endpoint"
        );
    }

    #[test]
    fn presets_and_specs() {
        let p = Provider::preset("anti-captcha").unwrap();
        assert_eq!(p.protocol(), Protocol::CreateTask(Dialect::AntiCaptcha));
        assert!(!p.supports_batch_poll());
        assert_eq!(p.max_batch(), 1);
        let c = Provider::from_spec("captchaai").unwrap();
        assert_eq!(c.base_url(), "https://ocr.captchaai.com");
        assert!(c.supports_batch_poll());
        assert_eq!(c.max_batch(), 100);
        let e = Provider::preset("nope").unwrap_err();
        assert!(e.problem.contains("\"nope\"") && e.problem.contains("capmonster"), "{e}");
        let m = Provider::from_spec("http://127.0.0.1:8080/").unwrap();
        assert_eq!(m.protocol(), Protocol::V1);
        assert_eq!(m.base_url(), "http://127.0.0.1:8080");
        assert!(m.is_loopback());
        assert!(Provider::from_spec("http://localhost:1").unwrap().is_loopback());
        assert!(Provider::from_spec("http://[::1]:1").unwrap().is_loopback());
        assert!(!c.is_loopback());
        assert_eq!(Provider::preset("2captcha").unwrap().with_base_url("ftp://x").unwrap_err().field, "base_url");
        assert!(Provider::custom_v1("not a url").is_err());
        assert!(Provider::custom_v1("https://user:pw@x.test").is_err());
    }

    /// The base URL is written back with a canonical `scheme://` prefix, and a
    /// host hidden behind a backslash is not mistaken for loopback.
    #[test]
    fn base_url_prefix_is_canonical() {
        for (spec, stored, loopback) in [
            ("HTTP://Evil.example:8080/", "http://Evil.example:8080", false),
            ("http:\\\\evil.example", "http://evil.example", false),
            ("Https:/\\127.0.0.1", "https://127.0.0.1", true),
            ("http://evil.example\\@127.0.0.1", "http://evil.example\\@127.0.0.1", false),
        ] {
            let p = Provider::custom_v1(spec).unwrap();
            assert_eq!((p.base_url(), p.is_loopback()), (stored, loopback), "{spec}");
        }
    }

    /// Every parser is total: random mixes of answer fragments, any status,
    /// any id count, never panic and always answer one entry per id.
    #[test]
    fn parsers_are_total() {
        const FRAGMENTS: &[&str] = &[
            "{",
            "}",
            "[",
            "]",
            "\"status\":",
            "\"request\":",
            "\"errorId\":",
            "\"errorCode\":",
            "\"status\"",
            "\"solution\":",
            "\"taskId\":",
            "\"balance\":",
            "1",
            "0",
            "-1",
            "1e999",
            "null",
            "true",
            "\"ready\"",
            "\"processing\"",
            "OK|",
            "|",
            ",",
            ":",
            "CAPCHA_NOT_READY",
            "ERROR_ZERO_BALANCE",
            "ERROR: 1005",
            "<html>",
            "\u{0}",
            "é",
            "\"",
            "{\"gRecaptchaResponse\":\"t\"}",
            "ERROR_",
            " ",
        ];
        let providers: Vec<Provider> = PRESETS.iter().map(|p| Provider::preset(p.0).unwrap()).collect();
        let mut rng = fastrand::Rng::with_seed(0x5eed);
        for _ in 0..4000 {
            let body: String = (0..rng.usize(0..12)).map(|_| FRAGMENTS[rng.usize(0..FRAGMENTS.len())]).collect();
            let status = [200, 200, 200, 400, 403, 429, 500, 502, 0, 999][rng.usize(0..10)];
            let resp = HttpResponse::new(status, body.into_bytes());
            let ids: Vec<&str> = ["1", "2", "3"][..rng.usize(0..4)].to_vec();
            for p in &providers {
                let _ = p.parse_submit(&resp);
                let _ = p.parse_balance(&resp);
                let _ = p.parse_report(&resp);
                if let PollOutcome::PerTask(polls) = p.parse_poll(&resp, &ids) {
                    assert_eq!(polls.len(), ids.len(), "{p:?} {resp:?}");
                }
            }
        }
    }

    #[test]
    fn requests_never_show_the_key_in_debug() {
        let key = Secret::new("k3y-0123456789abcdef");
        let task =
            Task::from_json_str(r#"{"type":"recaptcha_v2","sitekey":"s","page_url":"https://a.test/"}"#).unwrap();
        for (name, _, _) in PRESETS {
            let p = Provider::preset(name).unwrap();
            let mut reqs = vec![
                p.submit_request(&key, &task, &SubmitOptions::default()).unwrap(),
                p.poll_request(&key, &["1"]),
                p.balance_request(&key),
            ];
            reqs.extend(p.report_request(&key, "1", false));
            for r in reqs {
                let shown = format!("{r:?}");
                assert!(!shown.contains("k3y-0123456789abcdef"), "{name}: {shown}");
            }
        }
    }

    #[test]
    fn captchaai_zero_balance_is_busy_elsewhere_account() {
        let a = Provider::preset("captchaai").unwrap().classify("ERROR_ZERO_BALANCE");
        assert_eq!((a.class, a.retry_after), (ErrorClass::RetryAfter, Some(Duration::from_secs(5))));
        let b = Provider::preset("2captcha").unwrap().classify("ERROR_ZERO_BALANCE");
        assert_eq!((b.class, b.retry_after), (ErrorClass::AccountTerminal, None));
    }
}
