//! The createTask JSON codec (`/createTask`, `/getTaskResult`, `/getBalance`,
//! reports): the envelope shared by anti-captcha, CapSolver, 2captcha API v2
//! and CapMonster. The `task` objects themselves are in [`super::dialect`].
//!
//! `errorId` 0 is success; otherwise `errorCode` is classified with the same
//! table as v1 codes. `status` is `idle`/`processing` (not ready) or `ready`.

use serde_json::{json, Map, Value};

use super::{
    dialect, status_failure, unparseable, Dialect, PollOutcome, Provider, SubmitOptions, SubmitOutcome, TaskPoll,
};
use crate::class::{ErrorClass, Failure};
use crate::error::InvalidTask;
use crate::http::{HttpRequest, HttpResponse, Method, Secret};
use crate::solution::Solution;
use crate::task::{Task, TaskKind};

/// Solution fields that hold the answer, in order of preference.
const ANSWER_KEYS: [&str; 4] = ["gRecaptchaResponse", "token", "text", "answer"];

/// Longest provider `errorDescription` quoted in a failure.
const MAX_QUOTE: usize = 200;

fn post(p: &Provider, key: &Secret, path: &str, body: &Value) -> HttpRequest {
    HttpRequest::new(Method::Post, p.url(path), key)
        .with_header("content-type", "application/json")
        .with_body(body.to_string().into_bytes())
}

/// Numeric ids go back as numbers (anti-captcha wants an integer), others as
/// strings; CapSolver's ids are always strings.
fn task_id_value(d: Dialect, id: &str) -> Value {
    match id.parse::<u64>() {
        Ok(n) if d != Dialect::CapSolver && (!id.starts_with('0') || id == "0") => Value::from(n),
        _ => Value::from(id),
    }
}

fn soft_id_value(id: &str) -> Value {
    id.parse::<u64>().map_or_else(|_| Value::from(id), Value::from)
}

pub(super) fn submit_request(
    p: &Provider,
    d: Dialect,
    key: &Secret,
    task: &Task,
    opts: &SubmitOptions,
) -> Result<HttpRequest, InvalidTask> {
    let task_obj = dialect::task_object(d, task)?;
    let mut body = Map::new();
    body.insert("clientKey".into(), key.expose().into());
    body.insert("task".into(), Value::Object(task_obj));
    if let Some(id) = &opts.soft_id {
        // Revenue-share ids: CapSolver calls it appId. CapMonster's createTask page lists no
        // softId, but its official client sends one with every task (`"softId":
        // options.default_soft_id`, an int, ZennoLab/capmonstercloud-client-python
        // capmonstercloud_client/CapMonsterCloudClient.py `_createTask`).
        match d {
            Dialect::CapSolver => {
                body.insert("appId".into(), id.clone().into());
            }
            Dialect::AntiCaptcha | Dialect::TwoCaptchaV2 | Dialect::CapMonster => {
                body.insert("softId".into(), soft_id_value(id));
            }
        }
    }
    if let Some(url) = &opts.pingback {
        body.insert("callbackUrl".into(), url.clone().into());
    }
    // header_acao is a v1 switch; createTask services always answer CORS.
    Ok(post(p, key, "/createTask", &Value::Object(body)))
}

pub(super) fn poll_request(p: &Provider, d: Dialect, key: &Secret, id: &str) -> HttpRequest {
    post(p, key, "/getTaskResult", &json!({ "clientKey": key.expose(), "taskId": task_id_value(d, id) }))
}

pub(super) fn balance_request(p: &Provider, key: &Secret) -> HttpRequest {
    post(p, key, "/getBalance", &json!({ "clientKey": key.expose() }))
}

/// The report endpoint of a `kind` answer, if the dialect has one.
///
/// - anti-captcha reports per kind: `reportIncorrectImageCaptcha`, `reportIncorrectRecaptcha` and
///   `reportCorrectRecaptcha` (v2 and v3, within 60 s of the task's completion, else
///   `ERROR_NO_SUCH_CAPCHA_ID`), `reportIncorrectHcaptcha`
///   (https://anti-captcha.com/apidoc/methods/reportIncorrectRecaptcha and its siblings;
///   anticaptchaofficial/antinetworking.py). Nothing else is reported there.
/// - CapMonster: `reportIncorrectImageCaptcha` for images, `reportIncorrectTokenCaptcha` for
///   reCAPTCHA, GeeTest and Turnstile; no good reports
///   (https://docs.capmonster.cloud/docs/api/bad-tokens).
/// - 2captcha API v2 `reportCorrect`/`reportIncorrect` and CapSolver `feedbackTask` take any task.
fn report_path(d: Dialect, kind: TaskKind, good: bool) -> Option<&'static str> {
    use TaskKind::*;
    match (d, kind, good) {
        (Dialect::AntiCaptcha, Image, false) => Some("/reportIncorrectImageCaptcha"),
        (Dialect::AntiCaptcha, RecaptchaV2 | RecaptchaV3, true) => Some("/reportCorrectRecaptcha"),
        (Dialect::AntiCaptcha, RecaptchaV2 | RecaptchaV3, false) => Some("/reportIncorrectRecaptcha"),
        (Dialect::AntiCaptcha, Hcaptcha, false) => Some("/reportIncorrectHcaptcha"),
        (Dialect::AntiCaptcha, _, _) => None,
        (Dialect::CapMonster, _, true) => None,
        (Dialect::CapMonster, Image, false) => Some("/reportIncorrectImageCaptcha"),
        (Dialect::CapMonster, RecaptchaV2 | RecaptchaV3 | GeetestV3 | GeetestV4 | Turnstile, false) => {
            Some("/reportIncorrectTokenCaptcha")
        }
        (Dialect::CapMonster, _, false) => None,
        (Dialect::TwoCaptchaV2, _, true) => Some("/reportCorrect"),
        (Dialect::TwoCaptchaV2, _, false) => Some("/reportIncorrect"),
        (Dialect::CapSolver, _, _) => Some("/feedbackTask"),
    }
}

pub(super) fn report_request(
    p: &Provider,
    d: Dialect,
    key: &Secret,
    id: &str,
    kind: TaskKind,
    good: bool,
) -> Option<HttpRequest> {
    let path = report_path(d, kind, good)?;
    let task_id = task_id_value(d, id);
    let body = if d == Dialect::CapSolver {
        json!({ "clientKey": key.expose(), "taskId": task_id, "result": { "invalid": !good } })
    } else {
        json!({ "clientKey": key.expose(), "taskId": task_id })
    };
    Some(post(p, key, path, &body))
}

fn error_id(v: Option<&Value>) -> Option<i64> {
    match v {
        None | Some(Value::Null) => Some(0),
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        Some(_) => None,
    }
}

/// The provider's own error text, bounded, without control characters, and
/// with every long token (anything shaped like an API key) hidden: parsers do
/// not hold the key, so they cannot redact it by value.
fn quote(text: &str) -> String {
    let mut out = String::new();
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        out.push_str(if token.chars().count() >= 20 { "***" } else { token.as_str() });
        token.clear();
    };
    for c in text.chars().filter(|c| !c.is_control()).take(MAX_QUOTE) {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            token.push(c);
        } else {
            flush(&mut token, &mut out);
            out.push(c);
        }
    }
    flush(&mut token, &mut out);
    if text.chars().count() > MAX_QUOTE {
        out.push('…');
    }
    out
}

/// The JSON object of a successful answer, or the failure it carries.
fn read(p: &Provider, resp: &HttpResponse, what: &str) -> Result<Map<String, Value>, Failure> {
    if let Some(f) = status_failure(resp.status) {
        return Err(f);
    }
    // Through `&str`, as every other JSON the core parses, so that the browser build carries one
    // instantiation of serde_json's parser (a body that parses as JSON is valid UTF-8 anyway).
    let parsed = core::str::from_utf8(&resp.body).ok().and_then(|text| serde_json::from_str::<Value>(text).ok());
    let Some(Value::Object(obj)) = parsed else {
        return Err(unparseable(resp, what));
    };
    let code = obj.get("errorCode").and_then(Value::as_str).map(str::trim).filter(|c| !c.is_empty());
    match (error_id(obj.get("errorId")), code) {
        (Some(0), None) if (200..300).contains(&resp.status) => Ok(obj),
        (Some(0), Some(_)) if (200..300).contains(&resp.status) => Ok(obj),
        (Some(_), Some(code)) => {
            let mut f = p.classify(code);
            if let Some(said) = obj.get("errorDescription").and_then(Value::as_str).filter(|s| !s.trim().is_empty()) {
                f.description = format!("{} (the service says: {})", f.description, quote(said));
            }
            Err(f)
        }
        _ => Err(unparseable(resp, what)),
    }
}

fn task_id_of(obj: &Map<String, Value>) -> Option<String> {
    let id = match obj.get("taskId") {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.trim().to_string(),
        _ => return None,
    };
    Some(id).filter(|id| !id.is_empty() && id.len() <= 128)
}

/// The answer in a ready `solution` object (the first answer field, else the whole object as
/// text), with the task's `cost` from the envelope around it.
fn solution_of(obj: &Map<String, Value>, sol: &Map<String, Value>, id: Option<String>) -> Solution {
    let text = ANSWER_KEYS
        .iter()
        .find_map(|k| sol.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        .map_or_else(|| Value::Object(sol.clone()).to_string(), str::to_string);
    Solution { fields: sol.clone(), provider_task_id: id, cost: cost_of(obj), ..Solution::text(text) }
}

/// The task's cost as a ready answer states it: anti-captcha documents `cost` as a double and
/// sends it as a decimal string (`"cost":"0.000700"`,
/// https://anti-captcha.com/apidoc/methods/getTaskResult); 2captcha API v2 documents a string
/// (`"cost": "0.00299"`, https://2captcha.com/api-docs/get-task-result). CapSolver and
/// CapMonster document no cost (their configured price applies). Anything that is not a
/// finite amount of at least 0 is no cost: a garbled price never fails an answer.
fn cost_of(obj: &Map<String, Value>) -> Option<f64> {
    let cost = match obj.get("cost")? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => crate::support::float_text::parse_float(s),
        _ => None,
    };
    cost.filter(|c| c.is_finite() && *c >= 0.0)
}

pub(super) fn parse_submit(p: &Provider, resp: &HttpResponse) -> SubmitOutcome {
    let obj = match read(p, resp, "createTask") {
        Ok(obj) => obj,
        Err(f) => return SubmitOutcome::Failed(f),
    };
    let id = task_id_of(&obj);
    // CapSolver answers recognition tasks in createTask itself: `status: "ready"` with the
    // `solution` (https://docs.capsolver.com/guide/api-createtask, "synchronous task response";
    // its official client returns it without polling, capsolver/capsolver-python
    // src/capsolver/capsolver.py `solve`). Polling it would answer nothing; submitting it again
    // pays twice.
    if obj.get("status").and_then(Value::as_str) == Some("ready") {
        return match obj.get("solution") {
            Some(Value::Object(sol)) if !sol.is_empty() => SubmitOutcome::Solved(solution_of(&obj, sol, id)),
            _ => SubmitOutcome::Failed(unparseable(resp, "createTask")),
        };
    }
    match id {
        Some(provider_task_id) => SubmitOutcome::Accepted { provider_task_id },
        None => SubmitOutcome::Failed(unparseable(resp, "createTask")),
    }
}

pub(super) fn parse_poll(p: &Provider, resp: &HttpResponse, id: &str) -> PollOutcome {
    let obj = match read(p, resp, "getTaskResult") {
        Ok(obj) => obj,
        // A task-level error (unsolvable, bad parameters) is the task's; the rest concern the client.
        Err(f) if matches!(f.class, ErrorClass::TaskTerminal | ErrorClass::FixInput) => {
            return PollOutcome::PerTask(vec![TaskPoll::Failed(f)])
        }
        Err(f) => return PollOutcome::Failed(f),
    };
    match obj.get("status").and_then(Value::as_str) {
        Some("idle" | "processing") => PollOutcome::PerTask(vec![TaskPoll::NotReady]),
        Some("ready") => match obj.get("solution") {
            Some(Value::Object(sol)) if !sol.is_empty() => {
                PollOutcome::PerTask(vec![TaskPoll::Ready(solution_of(&obj, sol, Some(id.to_string())))])
            }
            _ => PollOutcome::Failed(unparseable(resp, "getTaskResult")),
        },
        Some("failed") => PollOutcome::PerTask(vec![TaskPoll::Failed(Failure::new(
            "ERROR_CAPTCHA_UNSOLVABLE",
            ErrorClass::TaskTerminal,
            "the service reported the task as failed without an error code",
        ))]),
        _ => PollOutcome::Failed(unparseable(resp, "getTaskResult")),
    }
}

pub(super) fn parse_balance(p: &Provider, resp: &HttpResponse) -> Result<f64, Failure> {
    let obj = read(p, resp, "getBalance")?;
    let balance = match obj.get("balance") {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => crate::support::float_text::parse_float(s),
        _ => None,
    };
    balance.filter(|b| b.is_finite()).ok_or_else(|| unparseable(resp, "getBalance"))
}

pub(super) fn parse_report(p: &Provider, resp: &HttpResponse) -> Result<(), Failure> {
    read(p, resp, "report").map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_provider_text_hides_key_shaped_tokens() {
        let q = quote("key 0123456789abcdef0123456789abcdef is wrong\n");
        assert_eq!(q, "key *** is wrong");
        assert_eq!(quote(&"x ".repeat(300)).chars().count(), MAX_QUOTE + 1);
    }

    #[test]
    fn error_description_is_quoted() {
        let p = Provider::preset("anti-captcha").unwrap();
        let resp = HttpResponse::new(
            200,
            r#"{"errorId":1,"errorCode":"ERROR_ZERO_BALANCE","errorDescription":"Account has zero balance"}"#,
        );
        match parse_submit(&p, &resp) {
            SubmitOutcome::Failed(f) => {
                assert_eq!(f.class, ErrorClass::AccountTerminal);
                assert!(f.description.contains("Account has zero balance"), "{}", f.description);
            }
            other => panic!("{other:?}"),
        }
    }
}
