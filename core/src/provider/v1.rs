//! The 2captcha-compatible v1 codec (`in.php` / `res.php`): CaptchaAI,
//! 2captcha, rucaptcha and any compatible base URL.
//!
//! Parameter names follow the official 2captcha clients (`googlekey`,
//! `pageurl`, `data-s`, `userAgent`, `min_score`, `data[key]`). Answers come
//! as `json=1` objects or as plain text (`OK|id`, bare codes, `|`-separated
//! batch answers); both are read.

use serde_json::Value;

use super::{status_failure, unparseable, PollOutcome, Provider, SubmitOptions, SubmitOutcome, TaskPoll};
use crate::class::{reason, ErrorClass, Failure};
use crate::classify;
use crate::error::InvalidTask;
use crate::http::{HttpRequest, HttpResponse, Method, Secret};
use crate::solution::Solution;
#[cfg(feature = "declared-kinds")]
use crate::task::kinds::{self, FieldType, V1Decl};
#[cfg(feature = "declared-kinds")]
use crate::task::Declared;
#[cfg(feature = "declared-kinds")]
use crate::task::Proxy;
use crate::task::{Raw, Task};

const FORM: &str = "application/x-www-form-urlencoded";

/// Form parameters, encoded in order as they are added (no copy of the values).
struct Params(form_urlencoded::Serializer<'static, String>);

impl Params {
    fn new() -> Self {
        Params(form_urlencoded::Serializer::new(String::with_capacity(256)))
    }
    fn put(&mut self, k: &str, v: &str) {
        self.0.append_pair(k, v);
    }
    fn opt(&mut self, k: &str, v: &Option<String>) {
        if let Some(v) = v {
            self.put(k, v);
        }
    }
    fn flag(&mut self, k: &str, on: bool) {
        if on {
            self.put(k, "1");
        }
    }
    #[cfg(feature = "declared-kinds")]
    fn proxy(&mut self, p: &Option<Proxy>) {
        if let Some(p) = p {
            self.put("proxy", &p.address());
            self.put("proxytype", &p.kind.to_ascii_uppercase());
        }
    }
    fn encode(mut self) -> String {
        self.0.finish()
    }
}

/// The `method` of a raw task, which the v1 API cannot do without.
fn raw_method<'t>(p: &Provider, t: &'t Raw) -> Result<&'t str, InvalidTask> {
    t.method.as_deref().ok_or_else(|| {
        InvalidTask::new(
            "method",
            format!("{} speaks the 2captcha-compatible API: a raw task needs `method` and `params`", p.name()),
        )
    })
}

/// Whether a (valid) task can be sent over v1: what [`submit_request`] can refuse, without
/// building the request.
pub(super) fn check(p: &Provider, task: &Task) -> Result<(), InvalidTask> {
    match task {
        Task::Raw(t) => raw_method(p, t).map(drop),
        #[cfg(feature = "declared-kinds")]
        Task::Declared(t) => check_declared(p, t).map(drop),
    }
}

#[cfg(feature = "declared-kinds")]
/// The declared v1 form of `t`, or the refusal [`declared_params`] would give: a provider that
/// does not solve its kind, or a field (or the proxy) its form has no parameter for.
fn check_declared(p: &Provider, t: &Declared) -> Result<&'static V1Decl, InvalidTask> {
    let Some(Some(form)) = kinds::v1_form(t.kind(), p.name()) else {
        return Err(super::not_solved(p.name(), t.kind()));
    };
    let has = |field: &str| form.params.iter().any(|(f, _)| *f == field);
    if let Some(field) = t.values().keys().find(|field| !has(field)) {
        return Err(super::no_equivalent(p.name(), field));
    }
    if t.proxy().is_some() && !has("proxy") {
        return Err(super::no_equivalent(p.name(), "proxy"));
    }
    Ok(form)
}

#[cfg(feature = "declared-kinds")]
/// The parameters of a declared kind: the method, its fixed values, then each given field
/// under its parameter name (a flag as `1`, cookies as `name:value;...`, a map under `name[*]` as
/// one `name[key]` per entry).
fn declared_params(p: &Provider, q: &mut Params, t: &Declared) -> Result<(), InvalidTask> {
    let form = check_declared(p, t)?;
    q.put("method", form.method);
    for (k, v) in form.fixed {
        q.put(k, v);
    }
    for (field, value) in t.values() {
        let param = form.params.iter().find(|(f, _)| f == field).map_or("", |(_, param)| param);
        if param.is_empty() {
            // A hint this service does without (`[field, ""]` in the kind's `[v1] params`).
            continue;
        }
        if let (Some(name), Value::Object(map)) = (param.strip_suffix("[*]"), value) {
            // Each entry of a map as its own parameter: FunCaptcha's `data[blob]=...`.
            for (k, v) in map {
                q.put(&format!("{name}[{k}]"), v.as_str().unwrap_or_default());
            }
        } else if kinds::decl(t.kind()).field(field).is_some_and(|d| d.ty == FieldType::Cookies) {
            q.put(param, &v1_cookies(value.as_str().unwrap_or_default()));
        } else if let Some(text) = kinds::param_text(value) {
            q.put(param, &text);
        }
    }
    q.proxy(&t.proxy().cloned());
    Ok(())
}

#[cfg(feature = "declared-kinds")]
/// Cookies as the v1 API writes them: `name:value;name2:value2` (2captcha's `cookies`
/// parameter, https://2captcha.com/2captcha-api#solving_recaptchav2_new). The task's cookies
/// were checked to be `name=value` pairs when it was read.
pub(super) fn v1_cookies(cookies: &str) -> String {
    kinds::rewrite_cookies(cookies, ':', ";")
}

pub(super) fn submit_request(
    p: &Provider,
    key: &Secret,
    task: &Task,
    opts: &SubmitOptions,
) -> Result<HttpRequest, InvalidTask> {
    let mut q = Params::new();
    q.put("key", key.expose());
    match task {
        Task::Raw(t) => {
            q.put("method", raw_method(p, t)?);
            for (k, v) in &t.params {
                q.put(k, v);
            }
        }
        #[cfg(feature = "declared-kinds")]
        Task::Declared(t) => declared_params(p, &mut q, t)?,
    }
    q.opt("soft_id", &opts.soft_id);
    q.opt("pingback", &opts.pingback);
    q.flag("header_acao", opts.header_acao);
    q.put("json", "1");
    Ok(HttpRequest::new(Method::Post, p.url("/in.php"), key)
        .with_header("content-type", FORM)
        .with_body(q.encode().into_bytes()))
}

fn res_get(p: &Provider, key: &Secret, pairs: &[(&str, &str)]) -> HttpRequest {
    // The query is encoded straight after the path (a batch poll's runs to ~1 KB): sized
    // once, copied never.
    let mut url = p.url("/res.php");
    url.push('?');
    let query_len = pairs.iter().fold(key.expose().len() + 4, |n, (k, v)| n + k.len() + 3 * v.len() + 2);
    url.reserve(query_len);
    let start = url.len();
    let mut q = form_urlencoded::Serializer::for_suffix(url, start);
    q.append_pair("key", key.expose());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    HttpRequest::new(Method::Get, q.finish(), key)
}

pub(super) fn poll_request(p: &Provider, key: &Secret, ids: &[&str]) -> HttpRequest {
    match ids {
        [one] => res_get(p, key, &[("action", "get"), ("id", one), ("json", "1")]),
        many => res_get(p, key, &[("action", "get"), ("ids", &many.join(","))]),
    }
}

pub(super) fn balance_request(p: &Provider, key: &Secret) -> HttpRequest {
    res_get(p, key, &[("action", "getbalance"), ("json", "1")])
}

pub(super) fn report_request(p: &Provider, key: &Secret, id: &str, good: bool) -> HttpRequest {
    let action = if good { "reportgood" } else { "reportbad" };
    res_get(p, key, &[("action", action), ("id", id), ("json", "1")])
}

/// A v1 answer, whichever of its two spellings it came in.
enum Answer {
    /// `status 1` / `OK|...`: the value (a string, or GeeTest's object) and other top-level fields.
    Ok(Value, serde_json::Map<String, Value>),
    /// `status 0` / a bare code.
    Code(String),
    Garbage,
}

fn status_of(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// `{"status":S,"request":"R"}` written the way the services write it (compact, `S` 0 or 1,
/// `R` without escapes or control characters): its status and request, read without a
/// JSON parser. Anything else is left to the parser, which reads it to the same answer.
fn compact_answer(t: &str) -> Option<(i64, &str)> {
    let rest = t.strip_prefix("{\"status\":")?;
    let (status, rest) = rest.split_once(",\"request\":\"")?;
    let request = rest.strip_suffix("\"}")?;
    let status = match status {
        "0" => 0,
        "1" => 1,
        _ => return None,
    };
    let plain = request.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
    plain.then_some((status, request))
}

fn read(resp: &HttpResponse) -> Answer {
    let text = resp.text();
    let t = text.trim();
    if let Some((status, request)) = compact_answer(t) {
        return match (status, request.trim()) {
            (_, "") => Answer::Garbage,
            (1, _) => Answer::Ok(Value::String(request.to_string()), serde_json::Map::new()),
            (_, code) => Answer::Code(code.to_string()),
        };
    }
    if t.starts_with('{') {
        let Ok(Value::Object(mut obj)) = serde_json::from_str::<Value>(t) else { return Answer::Garbage };
        let status = obj.remove("status").as_ref().and_then(status_of);
        let request = obj.remove("request");
        return match (status, request) {
            (Some(1), Some(Value::String(s))) if s.trim().is_empty() => Answer::Garbage,
            (Some(1), Some(v @ (Value::String(_) | Value::Object(_)))) => Answer::Ok(v, obj),
            // A list of points (coordinates, canvas, Temu with `json=1`): `[{"x":"12","y":"34"}, ...]`.
            (Some(1), Some(Value::Array(items))) if !items.is_empty() => Answer::Ok(Value::Array(items), obj),
            (Some(1), Some(Value::Number(n))) => Answer::Ok(Value::String(n.to_string()), obj),
            (Some(_), Some(Value::String(code))) if !code.trim().is_empty() => Answer::Code(code.trim().to_string()),
            _ => Answer::Garbage,
        };
    }
    if let Some(rest) = t.strip_prefix("OK|").filter(|r| !r.trim().is_empty()) {
        return Answer::Ok(Value::String(rest.to_string()), serde_json::Map::new());
    }
    if !t.is_empty() && !t.contains(['\n', '<']) && classify::looks_like_error(t) {
        return Answer::Code(t.to_string());
    }
    Answer::Garbage
}

pub(super) fn parse_submit(p: &Provider, resp: &HttpResponse) -> SubmitOutcome {
    if let Some(f) = status_failure(resp.status) {
        return SubmitOutcome::Failed(f);
    }
    match read(resp) {
        Answer::Ok(Value::String(id), _) if valid_id(&id) => SubmitOutcome::Accepted { provider_task_id: id },
        Answer::Code(code) if classify::class_of(&code).0 != ErrorClass::NotReady => {
            SubmitOutcome::Failed(p.classify(&code))
        }
        _ => SubmitOutcome::Failed(unparseable(resp, "submit")),
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && !id.contains(['|', ',', ' ', '\n'])
}

/// Whether a code concerns the whole client (slow down, account, garbage)
/// rather than the one task.
fn client_level(f: &Failure) -> bool {
    matches!(f.class, ErrorClass::Transient | ErrorClass::RetryAfter | ErrorClass::AccountTerminal)
}

/// A list of points, `[{"x": "12", "y": "34"}, ...]` (the values strings or numbers), written
/// as the plain answer writes it: `coordinates:x=12,y=34;...`. `None` when an item is not a point.
fn points_text(items: &[Value]) -> Option<String> {
    let coordinate = |v: Option<&Value>| match v? {
        Value::String(s) if crate::support::float_text::parse_float(s.trim()).is_some() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let mut text = String::from("coordinates:");
    for (i, item) in items.iter().enumerate() {
        let (x, y) = (coordinate(item.get("x"))?, coordinate(item.get("y"))?);
        if i > 0 {
            text.push(';');
        }
        text.push_str(&format!("x={x},y={y}"));
    }
    Some(text)
}

fn solution(value: Value, fields: serde_json::Map<String, Value>, id: &str) -> Solution {
    let (text, fields) = match value {
        Value::Object(obj) => (Value::Object(obj.clone()).to_string(), obj),
        Value::String(s) => (s, fields),
        // The points of a `json=1` answer read as their plain-text form reads (`OK|coordinates:...`).
        Value::Array(items) => (points_text(&items).unwrap_or_else(|| Value::Array(items).to_string()), fields),
        other => (other.to_string(), fields),
    };
    // The v1 API does not report a task's cost (`action=get`); the configured price applies.
    Solution { fields, provider_task_id: Some(id.to_string()), ..Solution::text(text) }
}

pub(super) fn parse_poll(p: &Provider, resp: &HttpResponse, ids: &[&str]) -> PollOutcome {
    if let Some(f) = status_failure(resp.status) {
        return PollOutcome::Failed(f);
    }
    match ids {
        [] => PollOutcome::Failed(Failure::new(reason::UNPARSEABLE, ErrorClass::Transient, "a poll for no task")),
        [id] => match read(resp) {
            Answer::Ok(v, fields) => PollOutcome::PerTask(vec![TaskPoll::Ready(solution(v, fields, id))]),
            Answer::Code(code) if classify::class_of(&code).0 == ErrorClass::NotReady => {
                PollOutcome::PerTask(vec![TaskPoll::NotReady])
            }
            Answer::Code(code) => {
                let f = p.classify(&code);
                if client_level(&f) {
                    PollOutcome::Failed(f)
                } else {
                    PollOutcome::PerTask(vec![TaskPoll::Failed(f)])
                }
            }
            Answer::Garbage => PollOutcome::Failed(unparseable(resp, "poll")),
        },
        many => parse_batch(p, resp, many),
    }
}

fn parse_batch(p: &Provider, resp: &HttpResponse, ids: &[&str]) -> PollOutcome {
    let raw = resp.text();
    let mut text = raw.trim().to_string();
    // Some compatible services wrap even batch answers in JSON.
    if text.starts_with('{') {
        match read(resp) {
            Answer::Ok(Value::String(s), _) => text = s,
            Answer::Code(code) => text = code,
            _ => return PollOutcome::Failed(unparseable(resp, "batch poll")),
        }
    }
    if text.is_empty() || text.starts_with('<') {
        return PollOutcome::Failed(unparseable(resp, "batch poll"));
    }
    let parts: Vec<&str> = text.split('|').map(str::trim).collect();
    if parts.len() != ids.len() {
        // One code for the whole batch: a ban or an account error applies to everything.
        if let [single] = parts.as_slice() {
            if classify::looks_like_error(single) {
                let f = p.classify(single);
                if matches!(f.class, ErrorClass::RetryAfter | ErrorClass::AccountTerminal) {
                    return PollOutcome::Failed(f);
                }
            }
        }
        return PollOutcome::Failed(Failure::new(
            reason::UNPARSEABLE,
            ErrorClass::Transient,
            format!("the batch poll answered {} values for {} tasks; poll them one by one", parts.len(), ids.len()),
        ));
    }
    let polls = parts
        .iter()
        .zip(ids)
        .map(|(part, id)| {
            if part.is_empty() {
                TaskPoll::Failed(Failure::new(reason::UNPARSEABLE, ErrorClass::Transient, "an empty answer in a batch"))
            } else if classify::looks_like_error(part) {
                // Most parts of a batch are `CAPCHA_NOT_READY`: known without building a failure.
                if classify::class_of(part).0 == ErrorClass::NotReady {
                    TaskPoll::NotReady
                } else {
                    TaskPoll::Failed(p.classify(part))
                }
            } else {
                TaskPoll::Ready(Solution { provider_task_id: Some((*id).to_string()), ..Solution::text(*part) })
            }
        })
        .collect();
    PollOutcome::PerTask(polls)
}

pub(super) fn parse_balance(p: &Provider, resp: &HttpResponse) -> Result<f64, Failure> {
    if let Some(f) = status_failure(resp.status) {
        return Err(f);
    }
    let text = resp.text();
    let value = match read(resp) {
        Answer::Ok(Value::String(s), _) => s,
        Answer::Code(code) => return Err(p.classify(&code)),
        Answer::Ok(..) => return Err(unparseable(resp, "balance")),
        // Plain-text balance answers are a bare number.
        Answer::Garbage => text.trim().to_string(),
    };
    crate::support::float_text::parse_float(&value).ok_or_else(|| unparseable(resp, "balance"))
}

pub(super) fn parse_report(p: &Provider, resp: &HttpResponse) -> Result<(), Failure> {
    if let Some(f) = status_failure(resp.status) {
        return Err(f);
    }
    match read(resp) {
        Answer::Ok(..) => Ok(()),
        Answer::Code(code) if code == "OK_REPORT_RECORDED" => Ok(()),
        Answer::Code(code) => Err(p.classify(&code)),
        Answer::Garbage if resp.text().trim() == "OK_REPORT_RECORDED" => Ok(()),
        Answer::Garbage => Err(unparseable(resp, "report")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compact reading gives what the JSON parser gives for the same answer spelled so
    /// that only the parser reads it.
    #[test]
    fn compact_answers_read_as_the_parser_reads_them() {
        let p = Provider::preset("2captcha").unwrap();
        let cases = [
            ("1", "71823457"),
            ("1", "03AGdBq2-token"),
            ("1", "  padded id "),
            ("1", ""),
            ("1", "   "),
            ("1", "a|b"),
            ("1", "price \u{7f} ü"),
            ("0", "CAPCHA_NOT_READY"),
            ("0", "ERROR_CAPTCHA_UNSOLVABLE"),
            ("0", " ERROR_ZERO_BALANCE "),
            ("0", ""),
            ("2", "ERROR_WRONG_USER_KEY"),
        ];
        for (status, request) in cases {
            let compact = HttpResponse::new(200, format!("{{\"status\":{status},\"request\":\"{request}\"}}"));
            let spaced = HttpResponse::new(200, format!("{{ \"status\": {status}, \"request\": \"{request}\" }}"));
            assert!(compact_answer(compact.text().trim()).is_some() || status == "2", "{status} {request:?}");
            assert!(compact_answer(spaced.text().trim()).is_none());
            // Descriptions of unreadable answers give the body's length, which the spellings change.
            let submit = |r: &HttpResponse| match parse_submit(&p, r) {
                SubmitOutcome::Failed(f) => format!("failed {} {:?}", f.code, f.class),
                other => format!("{other:?}"),
            };
            let poll = |r: &HttpResponse| match parse_poll(&p, r, &["9"]) {
                PollOutcome::Failed(f) => format!("failed {} {:?}", f.code, f.class),
                other => format!("{other:?}"),
            };
            assert_eq!(submit(&compact), submit(&spaced), "{status} {request:?}");
            assert_eq!(poll(&compact), poll(&spaced), "{status} {request:?}");
        }
        // Escapes and quotes are the parser's to read.
        for text in [r#"{"status":1,"request":"a\"b"}"#, r#"{"status":1,"request":"a\u0041"}"#] {
            assert!(compact_answer(text).is_none());
        }
    }
}
