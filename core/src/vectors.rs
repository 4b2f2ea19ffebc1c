//! Runs the language-neutral wire cases of `tests/vectors/*.json`.
//!
//! Every binding (Rust, Python, Node, wasm) loads the same files and feeds each
//! case to its build of [`evaluate`], comparing the result with the case's
//! `expected`; so all four agree byte for byte on what goes on the wire and
//! what an answer means. A case is one of:
//!
//! - a task case (`provider`, `task`, optional `options`): the submit request,
//!   `{"request": ...}` in [`canonical_request`] form, or `{"error": {"field"}}`;
//! - a request case (`provider`, `call`: `poll` | `balance` | `report`, with
//!   `ids` / `id` + `good` and an optional task `kind`): `{"request": ...}` or
//!   `{"request": null}`;
//! - a response case (`provider`, `phase`: `submit` | `poll` | `batch_poll` |
//!   `balance` | `report`, `status`, `body` or `body_repeat`, `ids`): the outcome
//!   (`accepted`, `solved`, `tasks`, `failed`, ...); a solved or ready answer carries
//!   `cost` (a number) when the provider stated one;
//! - a class case (`provider`, `code`): `{"class", "retry_after_ms"}`, with `"billed": true`
//!   when the service charges for that failure.
//!
//! Every case also names its `source` (the provider page or official client
//! file it states, or `reviewed` for behaviour of this project checked by
//! hand); [`check_source`] says what a source must hold. Runners ignore it.
//!
//! The API key is always the literal `KEY`.

use serde_json::{json, Map, Value};

use crate::class::Failure;
use crate::http::{HttpRequest, HttpResponse, Secret};
use crate::provider::{PollOutcome, Provider, SubmitOptions, SubmitOutcome, TaskPoll};
use crate::task::{Task, TaskKind};

/// The key used by every case; it appears as `KEY` in expected requests.
pub const KEY: &str = "KEY";

/// Largest body a `body_repeat` may build, so a bad file cannot exhaust memory.
const MAX_BODY: usize = 64 << 20;

/// The output of one case, in the shape of its `expected`.
pub fn evaluate(case: &Value) -> Result<Value, String> {
    let obj = case.as_object().ok_or("a case must be a JSON object")?;
    let spec = obj.get("provider").and_then(Value::as_str).ok_or("a case needs a string `provider`")?;
    let provider = Provider::from_spec(spec).map_err(|e| e.to_string())?;
    if let Some(task) = obj.get("task") {
        return Ok(task_case(&provider, task, obj.get("options")));
    }
    if let Some(call) = obj.get("call") {
        return request_case(&provider, call, obj);
    }
    if let Some(phase) = obj.get("phase") {
        return response_case(&provider, phase, obj);
    }
    if let Some(code) = obj.get("code") {
        let code = code.as_str().ok_or("`code` must be a string")?;
        let f = provider.classify(code);
        let mut class = json!({ "class": f.class.as_str(), "retry_after_ms": retry_ms(&f) });
        if f.billed {
            class["billed"] = json!(true);
        }
        return Ok(class);
    }
    Err("a case needs one of `task`, `call`, `phase` or `code`".into())
}

fn task_case(provider: &Provider, task: &Value, options: Option<&Value>) -> Value {
    let opts = SubmitOptions {
        soft_id: options.and_then(|o| o.get("soft_id")).and_then(Value::as_str).map(str::to_string),
        pingback: options.and_then(|o| o.get("pingback")).and_then(Value::as_str).map(str::to_string),
        header_acao: options.and_then(|o| o.get("header_acao")).and_then(Value::as_bool).unwrap_or(false),
    };
    let result =
        Task::from_json_value(task.clone()).and_then(|t| provider.submit_request(&Secret::new(KEY), &t, &opts));
    match result {
        Ok(req) => json!({ "request": canonical_request(&req) }),
        Err(e) => json!({ "error": { "field": e.field } }),
    }
}

fn request_case(provider: &Provider, call: &Value, obj: &Map<String, Value>) -> Result<Value, String> {
    let key = Secret::new(KEY);
    let req = match call.as_str() {
        Some("poll") => {
            let ids = ids(obj)?;
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            Some(provider.poll_request(&key, &refs))
        }
        Some("balance") => Some(provider.balance_request(&key)),
        Some("report") => {
            let id = obj.get("id").and_then(Value::as_str).ok_or("a report case needs a string `id`")?;
            let good = obj.get("good").and_then(Value::as_bool).ok_or("a report case needs a boolean `good`")?;
            match obj.get("kind") {
                None => provider.report_request(&key, id, good),
                Some(kind) => {
                    let kind = kind.as_str().and_then(TaskKind::parse).ok_or("`kind` must name a task kind")?;
                    provider.report_request_for(&key, id, kind, good)
                }
            }
        }
        _ => return Err("`call` must be poll, balance or report".into()),
    };
    Ok(json!({ "request": req.as_ref().map(canonical_request) }))
}

fn ids(obj: &Map<String, Value>) -> Result<Vec<String>, String> {
    let list = obj.get("ids").and_then(Value::as_array).ok_or("this case needs an `ids` array")?;
    list.iter().map(|v| v.as_str().map(str::to_string).ok_or_else(|| "`ids` must hold strings".to_string())).collect()
}

fn response_case(provider: &Provider, phase: &Value, obj: &Map<String, Value>) -> Result<Value, String> {
    let status = obj.get("status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok()).unwrap_or(200);
    let body = match (obj.get("body"), obj.get("body_repeat")) {
        (Some(Value::String(s)), None) => s.clone().into_bytes(),
        (None, Some(rep)) => {
            let text = rep.get("text").and_then(Value::as_str).ok_or("`body_repeat.text` must be a string")?;
            let count = rep.get("count").and_then(Value::as_u64).ok_or("`body_repeat.count` must be a number")?;
            let count = usize::try_from(count).map_err(|_| "`body_repeat.count` is too large")?;
            if text.len().saturating_mul(count) > MAX_BODY {
                return Err(format!("`body_repeat` would build more than {MAX_BODY} bytes"));
            }
            text.repeat(count).into_bytes()
        }
        _ => return Err("a response case needs exactly one of `body` (a string) or `body_repeat`".into()),
    };
    let resp = HttpResponse::new(status, body);
    Ok(match phase.as_str() {
        Some("submit") => match provider.parse_submit(&resp) {
            SubmitOutcome::Accepted { provider_task_id } => json!({ "accepted": provider_task_id }),
            SubmitOutcome::Solved(s) => {
                let mut solved = json!({ "text": s.text, "fields": s.fields, "provider_task_id": s.provider_task_id });
                if let Some(cost) = s.cost {
                    solved["cost"] = json!(cost);
                }
                json!({ "solved": solved })
            }
            SubmitOutcome::Failed(f) => json!({ "failed": failure_json(&f) }),
        },
        Some("poll" | "batch_poll") => {
            let ids = ids(obj)?;
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            match provider.parse_poll(&resp, &refs) {
                PollOutcome::PerTask(polls) => json!({ "tasks": polls.iter().map(poll_json).collect::<Vec<_>>() }),
                PollOutcome::Failed(f) => json!({ "failed": failure_json(&f) }),
            }
        }
        Some("balance") => match provider.parse_balance(&resp) {
            Ok(b) => json!({ "balance": b }),
            Err(f) => json!({ "failed": failure_json(&f) }),
        },
        Some("report") => match provider.parse_report(&resp) {
            Ok(()) => json!({ "ok": true }),
            Err(f) => json!({ "failed": failure_json(&f) }),
        },
        _ => return Err("`phase` must be submit, poll, batch_poll, balance or report".into()),
    })
}

fn retry_ms(f: &Failure) -> Value {
    f.retry_after.map_or(Value::Null, |d| Value::from(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
}

/// What a case's `source` must hold: one source object or a non-empty array of them, each
///
/// - `{"kind": "doc", "url": "https://..."}`: a provider documentation page;
/// - `{"kind": "client", "repo": "owner/name", "file": "path", "test"?: "name"}`: an official
///   client's file (and test) that sends or reads the same thing;
/// - `{"kind": "reviewed", "note": "..."}`: made by running the core and reviewed by hand (this
///   project's own behaviour, e.g. how a garbled answer is classed).
///
/// Every source may carry a `note`. The error says what is missing.
pub fn check_source(source: Option<&Value>) -> Result<(), String> {
    let list = match source {
        None => return Err("no `source`".into()),
        Some(Value::Array(items)) if !items.is_empty() => items.iter().collect::<Vec<_>>(),
        Some(Value::Array(_)) => return Err("an empty `source` list".into()),
        Some(one) => vec![one],
    };
    for s in list {
        let text = |k: &str| s.get(k).and_then(Value::as_str).filter(|v| !v.trim().is_empty());
        match s.get("kind").and_then(Value::as_str) {
            Some("doc") if text("url").is_some_and(|u| u.starts_with("https://")) => {}
            Some("doc") => return Err("a `doc` source needs an https `url`".into()),
            Some("client") if text("repo").is_some_and(|r| r.contains('/')) && text("file").is_some() => {}
            Some("client") => return Err("a `client` source needs `repo` (owner/name) and `file`".into()),
            Some("reviewed") if text("note").is_some() => {}
            Some("reviewed") => return Err("a `reviewed` source needs a `note` saying what was checked".into()),
            _ => return Err("a source's `kind` must be doc, client or reviewed".into()),
        }
        if let Some(extra) = s
            .as_object()
            .and_then(|o| o.keys().find(|k| !matches!(k.as_str(), "kind" | "url" | "repo" | "file" | "test" | "note")))
        {
            return Err(format!("unknown source field `{extra}`"));
        }
    }
    Ok(())
}

/// A failure without its human description (which may be reworded freely).
pub fn failure_json(f: &Failure) -> Value {
    json!({ "code": f.code, "class": f.class.as_str(), "retry_after_ms": retry_ms(f) })
}

fn poll_json(p: &TaskPoll) -> Value {
    match p {
        TaskPoll::NotReady => json!({ "status": "not_ready" }),
        TaskPoll::Ready(s) => {
            let mut ready = json!({ "status": "ready", "text": s.text, "fields": s.fields });
            if let Some(cost) = s.cost {
                ready["cost"] = json!(cost);
            }
            ready
        }
        TaskPoll::Failed(f) => json!({ "status": "failed", "failure": failure_json(f) }),
    }
}

/// A request as `{method, path, params}` (query and form parameters, sorted,
/// decoded) or `{method, path, json}`, with the key replaced by `KEY`.
pub fn canonical_request(req: &HttpRequest) -> Value {
    let secret = req.secret.as_ref().map(Secret::expose).filter(|s| !s.is_empty());
    let hide = |v: String| if Some(v.as_str()) == secret { KEY.to_string() } else { v };
    let mut out = Map::new();
    out.insert("method".into(), req.method.as_str().into());
    out.insert("path".into(), req.endpoint().into());
    let is_json = req.headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("content-type") && v.contains("json"));
    let body = req.body.as_deref().unwrap_or_default();
    if is_json {
        let text = core::str::from_utf8(body).unwrap_or_default();
        let mut value = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
        if let Some(Value::String(k)) = value.get_mut("clientKey") {
            *k = hide(std::mem::take(k));
        }
        out.insert("json".into(), value);
    } else {
        let mut params = std::collections::BTreeMap::new();
        let query = req.url.split_once('?').map(|(_, q)| q.split('#').next().unwrap_or(q)).unwrap_or("");
        for (k, v) in form_urlencoded::parse(query.as_bytes()).chain(form_urlencoded::parse(body)) {
            params.insert(k.into_owned(), Value::String(hide(v.into_owned())));
        }
        out.insert("params".into(), Value::Object(params.into_iter().collect()));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_request_hides_any_key() {
        let p = Provider::preset("2captcha").unwrap();
        let req = p.poll_request(&Secret::new("s3cr3t"), &["7"]);
        let c = canonical_request(&req);
        assert_eq!(
            c,
            json!({"method": "GET", "path": "/res.php",
                   "params": {"key": "KEY", "action": "get", "id": "7", "json": "1"}})
        );
        let p = Provider::preset("capsolver").unwrap();
        let c = canonical_request(&p.balance_request(&Secret::new("s3cr3t")));
        assert_eq!(c, json!({"method": "POST", "path": "/getBalance", "json": {"clientKey": "KEY"}}));
    }

    #[test]
    fn bad_cases_are_errors_not_panics() {
        assert!(evaluate(&json!(1)).is_err());
        assert!(evaluate(&json!({"provider": "nope", "code": "X"})).is_err());
        assert!(evaluate(&json!({"provider": "2captcha"})).is_err());
        assert!(evaluate(&json!({"provider": "2captcha", "phase": "poll", "body": "x"})).is_err());
        assert!(evaluate(
            &json!({"provider": "2captcha", "phase": "submit", "body_repeat": {"text": "x", "count": u64::MAX}})
        )
        .is_err());
    }
}
