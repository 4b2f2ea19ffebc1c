//! What became of an answer on the page, as the page front ends (`captcha-dlq/page`, `captcha_dlq.page`, the
//! browser package's content-script module) report it: the one place that decides what each outcome means.
//!
//! - `accepted` / `rejected`: the site's verdict from the caller's acceptance check. Both count in the metrics by
//!   provider × kind × page host and in the engine's lane statistics (`accepted` routing); a rejection is also reported to the provider as a bad answer (where it refunds),
//!   and dead-lettered as `RejectedBySite` naming the provider.
//! - `gone`: the page or frame was gone (closed, navigated, widget removed) when the answer came. The answer was
//!   paid for: it is dead-lettered as `PageGone` with why, its provider task id, and the answer itself in the
//!   record's labels (`answer`, `answer_fields`), so nothing paid for is lost.
//!
//! And which task a widget the detector found becomes ([`Dlq::page_task`]): the detector's name for a kind mapped
//! to the kind's (`aws_waf` is `amazon_waf`), the browser's proxy (or the one the caller gave, or none), the
//! frame's cookies and the browser's user agent in the fields the kind takes (`captcha_dlq_core::task::context`).
//! And how an answer is applied ([`Dlq::page_answer`]): the kinds whose answer is a cookie (AWS WAF's
//! `aws-waf-token`, DataDome's `datadome`, Cloudflare's `cf_clearance`) have it written into the browser for the
//! frame's site, then the page reloaded; every other answer is injected into the widget by the detector, and
//! solved again when its life (the kind's `answer_life`) is near its end and the page has not used it
//! ([`renew_at`]).

use std::collections::BTreeMap;

use crate::options::spelled_as;
use captcha_dlq_core::dlq::record::SCHEMA;
use captcha_dlq_core::dlq::{DeadLetterRecord, HistoryEntry, Phase, RecordState};
use captcha_dlq_core::support::json_read::{read_cased, Casing, FieldError, Fields, FromJson};
use captcha_dlq_core::task::context::{read_proxy, TaskContext};
use captcha_dlq_core::task::page_context;
use captcha_dlq_core::{ConfigError, ErrorClass, InvalidTask, Solution, TaskKind, ValidTask};
use serde_json::{json, Value};

use crate::api_values;
use crate::dlq::Dlq;
use crate::driver::Command;
use crate::error::{Error, Result};

/// The reason of a record whose answer a site refused.
pub const REJECTED_BY_SITE: &str = "RejectedBySite";
/// The reason of a record whose answer came for a page that was gone.
pub const PAGE_GONE: &str = "PageGone";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Accepted,
    Rejected,
    Gone,
}

/// The arguments of [`Dlq::record_page_outcome`], as a host sends them.
struct PageOutcome {
    verdict: Verdict,
    task: Value,
    solution: Value,
    host: String,
    detail: String,
    labels: Value,
}

impl FromJson for PageOutcome {
    fn from_json(value: Value) -> std::result::Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let verdict: String = f.req("verdict")?;
        let verdict = match verdict.as_str() {
            "accepted" => Verdict::Accepted,
            "rejected" => Verdict::Rejected,
            "gone" => Verdict::Gone,
            other => {
                return Err(FieldError::new("verdict", format!("{other:?} is not one of accepted, rejected, gone")))
            }
        };
        let outcome = PageOutcome {
            verdict,
            task: f.req("task")?,
            solution: f.req("solution")?,
            host: f.or_default("host")?,
            detail: f.or_default("detail")?,
            labels: f.opt("labels")?.unwrap_or(Value::Null),
        };
        f.finish()?;
        Ok(outcome)
    }
}

/// The arguments of [`Dlq::page_task`], as a front end sends them.
struct PageTask {
    task: Value,
    /// The proxy the browser goes through, as the driver shows it (a URL, Playwright's `{ server, … }`).
    browser_proxy: Value,
    /// The caller's `proxy` option: absent (the browser's), `false` (none), or a proxy that replaces it.
    proxy: Option<Value>,
    user_agent: Option<String>,
    /// The frame's cookies: `[{ name, value }]` as the drivers list them, or `a=1; b=2`.
    cookies: Value,
}

impl FromJson for PageTask {
    fn from_json(value: Value) -> std::result::Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let a = PageTask {
            task: f.req("task")?,
            browser_proxy: f.opt("browser_proxy")?.unwrap_or(Value::Null),
            proxy: f.opt("proxy")?,
            user_agent: f.opt("user_agent")?,
            cookies: f.opt("cookies")?.unwrap_or(Value::Null),
        };
        f.finish()?;
        Ok(a)
    }
}

/// The task kind of a widget the detector names `kind` (the detector says what it saw; the kind is the core's).
pub fn task_kind_of(kind: &str) -> &str {
    match kind {
        "aws_waf" => "amazon_waf",
        other => other,
    }
}

/// `a=1; b=2` from the drivers' cookie lists (or a string as it is).
fn cookie_header(cookies: Value) -> std::result::Result<Option<String>, InvalidTask> {
    match cookies {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        Value::Array(list) => {
            let mut parts = Vec::new();
            for (i, c) in list.into_iter().enumerate() {
                let name = c.get("name").and_then(Value::as_str);
                let value = c.get("value").and_then(Value::as_str);
                match (name, value) {
                    (Some(n), Some(v)) if !n.is_empty() => parts.push(format!("{n}={v}")),
                    _ => return Err(InvalidTask::new(format!("cookies[{i}]"), "expected { name, value } (strings)")),
                }
            }
            Ok(if parts.is_empty() { None } else { Some(parts.join("; ")) })
        }
        _ => Err(InvalidTask::new("cookies", "expected a list of { name, value } or a string")),
    }
}

/// The arguments of [`Dlq::page_answer`].
struct PageAnswer {
    task: Value,
    solution: Value,
    url: String,
}

impl FromJson for PageAnswer {
    fn from_json(value: Value) -> std::result::Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let a = PageAnswer { task: f.req("task")?, solution: f.req("solution")?, url: f.req("url")? };
        f.finish()?;
        Ok(a)
    }
}

/// The cookie a kind's answer is, and whether the page must be loaded again to send it (it gates the page).
fn answer_cookie(kind: TaskKind) -> Option<(&'static str, bool)> {
    match kind {
        TaskKind::AmazonWaf => Some(("aws-waf-token", true)),
        TaskKind::Datadome => Some(("datadome", true)),
        TaskKind::CloudflareChallenge => Some(("cf_clearance", true)),
        _ => None,
    }
}

/// The least time before a token's end at which it is solved again: the answer must come (a solve takes seconds to
/// a minute) and be injected before the old one dies.
const RENEW_MARGIN_MS: u64 = 15_000;

/// When an injected token not used by the page yet is solved again (Unix ms): a tenth of its life, and at least
/// [`RENEW_MARGIN_MS`], before it ends, but never in its first half (a short life is not renewed at once). `None`
/// for an answer that does not expire (no `expires_at`): the kind's declared life (`answer_life`) made it.
pub fn renew_at(solved_at: Option<f64>, expires_at: Option<f64>) -> Option<u64> {
    let ms = |v: f64| (v.is_finite() && v >= 0.0).then_some(v as u64);
    let expires = ms(expires_at?)?;
    let solved = solved_at.and_then(ms).unwrap_or(expires).min(expires);
    let life = expires - solved;
    let margin = (life / 10).max(RENEW_MARGIN_MS).min(life / 2);
    Some(expires - margin)
}

/// A cookie's value from an answer that may be the whole `Set-Cookie` text (`datadome=v; Max-Age=…; Path=/`).
fn cookie_value(name: &str, answer: &str) -> String {
    let answer = answer.trim();
    let first = answer.split(';').next().unwrap_or_default().trim();
    match first.split_once('=') {
        Some((n, v)) if n.trim() == name => v.trim().to_string(),
        _ => answer.to_string(),
    }
}

impl Dlq {
    /// How `solution` is applied to the page at `url` (see the module doc). Answers
    /// `{ "cookies": [{ name, value, url }], "reload": bool, "renew_at": <Unix ms | null> }` (`renewAt` in
    /// camelCase): no cookies means the detector injects it, and `renew_at` is when that token is solved again
    /// if the page has not used it by then ([`renew_at`]; the front ends only schedule it).
    pub fn page_answer(&self, args: Value, casing: Casing) -> Result<Value> {
        let a: PageAnswer = read_cased(args, casing)
            .map_err(|e| Error::Config(ConfigError::new(format!("page_answer: {}", e.field), e.problem)))?;
        let task = api_values::task(a.task).map_err(|e| e.in_field("task"))?;
        let renew_key = if casing == Casing::Camel { "renewAt" } else { "renew_at" };
        let Some((name, reload)) = answer_cookie(task.kind()) else {
            // A token injected into a widget: when to solve it again if the page has not used it by then.
            let at = |key: &str| a.solution.get(spelled_as(casing, key)).and_then(Value::as_f64);
            let renew = renew_at(at("solved_at"), at("expires_at"));
            let mut answer = json!({ "cookies": [], "reload": false });
            answer[renew_key] = json!(renew);
            return Ok(answer);
        };
        let solution = full_solution(a.solution, casing)?;
        let text = typed_cookie(task.kind(), &solution)?;
        let value = cookie_value(name, &text);
        if value.is_empty() {
            return Err(Error::Config(ConfigError::new(
                "page_answer: solution",
                format!("the {} answer holds no {name} cookie", task.kind().as_str()),
            )));
        }
        // The cookie is the frame's site's: `url` scopes it to that host and path `/`.
        let Some(origin) = origin_of(&a.url) else {
            return Err(Error::Config(ConfigError::new("page_answer: url", "expected the frame's http(s) URL")));
        };
        // A cookie answer is used by the reload that follows it: nothing to renew.
        let mut answer =
            json!({ "cookies": [{ "name": name, "value": value, "url": format!("{origin}/") }], "reload": reload });
        answer[renew_key] = Value::Null;
        Ok(answer)
    }

    /// The task a widget found on a page becomes (see the module doc). Answers `{ "task": <checked task JSON>,
    /// "filled": [fields added from the browser] }`; a task the core refuses is an `INVALID_TASK` error naming
    /// the field.
    pub fn page_task(&self, args: Value, casing: Casing) -> Result<Value> {
        let a: PageTask = read_cased(args, casing)
            .map_err(|e| Error::Config(ConfigError::new(format!("page_task: {}", e.field), e.problem)))?;
        let mut task = a.task;
        // The detector puts the frame's user agent on every task; it goes back only where the kind takes it
        // (AWS WAF's task has no such field), and the front end's value, when given, is the one used.
        let detected_ua =
            task.as_object_mut().and_then(|o| o.remove("user_agent")).and_then(|v| v.as_str().map(str::to_string));
        if let Some(kind) = task.get("type").and_then(Value::as_str) {
            let mapped = task_kind_of(kind);
            if mapped != kind {
                task["type"] = Value::String(mapped.to_string());
            }
        }
        let proxy = match a.proxy {
            // The caller's proxy replaces the browser's; `false` means none.
            Some(given) => read_proxy(given, "proxy")?,
            None => read_proxy(a.browser_proxy, "browser_proxy")?,
        };
        let user_agent = a.user_agent.or(detected_ua);
        let context = TaskContext { proxy, user_agent, cookies: cookie_header(a.cookies)? };
        let (mut task, filled) = context.fill(task, true)?;
        // What the page added is named in the task: a service with no place for a field the answer
        // is not bound to may leave it out (`provider::page_context`, docs/decisions/0077).
        if let (Some(obj), false) = (task.as_object_mut(), filled.is_empty()) {
            obj.insert(page_context::KEY.into(), json!(filled));
        }
        // Checked here, so that a widget the core cannot take is said before anything is spent.
        api_values::task(task.clone())?;
        let shown = shown_task(&task);
        Ok(json!({ "task": task, "filled": filled, "shown": shown }))
    }

    /// Records what became of an answer on a page (see the module doc). Answers
    /// `{ "recorded": <record id or null>, "reported": <true | false | null>, "report_error"?: <text> }`
    /// (`reportError` in camelCase).
    pub async fn record_page_outcome(&self, args: Value, casing: Casing) -> Result<Value> {
        let a: PageOutcome = read_cased(args, casing)
            .map_err(|e| Error::Config(ConfigError::new(format!("record_page_outcome: {}", e.field), e.problem)))?;
        let task = api_values::task(a.task).map_err(|e| e.in_field("task"))?;
        let solution = full_solution(a.solution, casing)?;
        let mut labels = if a.labels.is_null() { BTreeMap::new() } else { api_values::labels(a.labels, "labels")? };
        let client = self.client();
        let provider = solution.provider.clone().unwrap_or_else(|| client.provider().name().to_string());
        match a.verdict {
            Verdict::Accepted => {
                client.metrics_handle().page_verdict(Some(&provider), task.kind(), &a.host, true);
                client.send(Command::PageVerdict { provider, kind: task.kind(), accepted: true })?;
                Ok(json!({ "recorded": null, "reported": null }))
            }
            Verdict::Rejected => {
                client.metrics_handle().page_verdict(Some(&provider), task.kind(), &a.host, false);
                let kind = task.kind();
                client.send(Command::PageVerdict { provider: provider.clone(), kind, accepted: false })?;
                let report = client.report_solution(&solution, false).await;
                let (reported, note) = match &report {
                    Ok(()) => (true, format!("reported to {provider} as a bad answer")),
                    Err(e) => (false, format!("could not report it to {provider}: {e}")),
                };
                let description = format!(
                    "the site at {} rejected the {} answer from {provider}{}; {note}",
                    display_host(&a.host),
                    task.kind().as_str(),
                    detail(&a.detail)
                );
                let id = self.push_outcome(task, &solution, &provider, REJECTED_BY_SITE, description, labels).await?;
                let mut answer = json!({ "recorded": id, "reported": reported });
                if let Err(e) = report {
                    let key = if casing == Casing::Camel { "reportError" } else { "report_error" };
                    answer[key] = json!(e.to_string());
                }
                Ok(answer)
            }
            Verdict::Gone => {
                labels.insert("answer".to_string(), solution.text.clone());
                if !solution.fields.is_empty() {
                    labels.insert("answer_fields".to_string(), Value::Object(solution.fields.clone()).to_string());
                }
                let description = format!(
                    "the page at {} was gone before the {} answer from {provider} could be used{}; the answer is in this record's labels",
                    display_host(&a.host),
                    task.kind().as_str(),
                    detail(&a.detail)
                );
                let id = self.push_outcome(task, &solution, &provider, PAGE_GONE, description, labels).await?;
                Ok(json!({ "recorded": id, "reported": null }))
            }
        }
    }

    async fn push_outcome(
        &self,
        task: ValidTask,
        solution: &Solution,
        provider: &str,
        reason: &str,
        description: String,
        labels: BTreeMap<String, String>,
    ) -> Result<String> {
        let client = self.client();
        let runtime = &client.backends().runtime;
        let now = runtime.now();
        let random = (u128::from(runtime.random_seed()) << 16) ^ u128::from(now.as_unix_millis());
        let id = ulid::Ulid::from_parts(now.as_unix_millis(), random).to_string();
        let record = DeadLetterRecord {
            schema: SCHEMA,
            id: id.clone(),
            task,
            provider: provider.to_string(),
            reason: reason.to_string(),
            description,
            class: ErrorClass::Application,
            attempts: 1,
            replays: 0,
            history: vec![HistoryEntry {
                at: now,
                phase: Phase::Application,
                error: reason.to_string(),
                provider_task_id: solution.provider_task_id.clone(),
                http_status: None,
                provider: Some(provider.to_string()),
            }],
            first_failed_at: now,
            dead_lettered_at: now,
            labels,
            state: RecordState::Ready,
            deliveries: 0,
            parked_reason: None,
            solution: None,
        };
        // The same store call `import` makes (one instantiation in the browser build, where size counts).
        client.store_call(self.store().push(record)).await?;
        Ok(id)
    }
}

/// The solution a host hands back, with its text and fields (the answer a `PageGone` record keeps).
fn full_solution(value: Value, casing: Casing) -> Result<Solution> {
    let fields = value.get("fields").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut solution = api_values::solution_ref(value, casing)?;
    solution.fields = fields;
    Ok(solution)
}

/// The cookie value of a cookie kind's answer, as the kind declares it (`answer.cookie`).
fn typed_cookie(kind: TaskKind, solution: &Solution) -> Result<String> {
    let decl = captcha_dlq_core::task::kinds::decl(kind);
    let typed = captcha_dlq_core::task::kinds::answer::typed(decl, solution)
        .map_err(|e| Error::Config(ConfigError::new("page_answer: solution", e)))?;
    Ok(typed.get("cookie").and_then(Value::as_str).map_or_else(|| solution.text.clone(), str::to_string))
}

/// A page task as results show it: the proxy as `type://host:port` (no credentials), the cookies as `***`.
fn shown_task(task: &Value) -> Value {
    let mut shown = task.clone();
    if let Some(obj) = shown.as_object_mut() {
        if let Some(proxy) = obj.get("proxy").filter(|p| p.is_object()) {
            let text = captcha_dlq_core::task::context::proxy_shown(proxy);
            obj.insert("proxy".into(), Value::String(text));
        }
        if obj.get("cookies").is_some_and(|c| !c.is_null()) {
            obj.insert("cookies".into(), Value::String("***".into()));
        }
    }
    shown
}

/// `scheme://host[:port]` of an http(s) URL.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then(|| format!("{scheme}://{host}"))
}

fn display_host(host: &str) -> &str {
    if host.is_empty() {
        "(unknown host)"
    } else {
        host
    }
}

fn detail(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" ({detail})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_task_is_shown_without_its_secrets() {
        let task = json!({
            "type": "recaptcha_v2", "sitekey": "k", "page_url": "https://a.example/",
            "proxy": { "type": "http", "host": "10.0.0.1", "port": 3128, "login": "u", "password": "hunter2" },
            "cookies": "sid=s3cret",
        });
        let shown = shown_task(&task);
        assert_eq!(shown["proxy"], "http://10.0.0.1:3128");
        assert_eq!(shown["cookies"], "***");
        assert_eq!(shown["sitekey"], "k");
        let text = shown.to_string();
        assert!(!text.contains("hunter2") && !text.contains("s3cret"), "{text}");
        // A task without them is shown as it is.
        let plain = json!({ "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/" });
        assert_eq!(shown_task(&plain), plain);
    }

    #[test]
    fn the_detectors_kinds_and_cookie_answers() {
        assert_eq!(task_kind_of("aws_waf"), "amazon_waf");
        assert_eq!(task_kind_of("turnstile"), "turnstile");
        assert_eq!(cookie_value("datadome", "datadome=v1; Max-Age=31536000; Path=/"), "v1");
        assert_eq!(cookie_value("aws-waf-token", "abc:def"), "abc:def");
        assert_eq!(origin_of("https://u:p@a.example:8443/x?y#z").as_deref(), Some("https://a.example:8443"));
        assert_eq!(origin_of("about:blank"), None);
    }

    #[test]
    fn an_injected_token_is_renewed_before_its_life_ends() {
        // reCAPTCHA's two minutes: solved again 15 s before the end.
        assert_eq!(renew_at(Some(1_000.0), Some(121_000.0)), Some(106_000));
        // Cloudflare's half hour: a tenth of it before the end.
        assert_eq!(renew_at(Some(0.0), Some(1_800_000.0)), Some(1_620_000));
        // A life shorter than twice the margin: renewed half way.
        assert_eq!(renew_at(Some(0.0), Some(20_000.0)), Some(10_000));
        // No expiry (a kind whose answer lives for ever): never; no solve time: at the end.
        assert_eq!(renew_at(Some(0.0), None), None);
        assert_eq!(renew_at(None, Some(5_000.0)), Some(5_000));
        assert_eq!(renew_at(Some(0.0), Some(f64::NAN)), None);
    }
}
