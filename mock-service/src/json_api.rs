//! The createTask JSON protocol (`/createTask`, `/getTaskResult`, `/getBalance`) spoken by anti-captcha,
//! CapSolver, 2captcha API v2 and CapMonster, accepting each dialect's task type names.

use serde_json::{json, Map, Value};
use tokio::time::Instant;

use crate::reply::Reply;
use crate::state::{State, Status, Submission};
use crate::tokens::{self, Kind};

fn error(code: &str, description: &str) -> Reply {
    Reply::json(&json!({ "errorId": 1, "errorCode": code, "errorDescription": description }))
}

/// The JSON object of a request body, or the error answer for anything else.
fn body_object(body: &[u8]) -> Result<Map<String, Value>, Reply> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(error("ERROR_BAD_PARAMETERS", "the request body must be a JSON object")),
        Err(e) => Err(error("ERROR_BAD_PARAMETERS", &format!("the request body is not valid JSON: {e}"))),
    }
}

/// Parses the body, counts the request against its key and checks the key.
fn authenticate(state: &mut State, body: &[u8]) -> Result<Map<String, Value>, Reply> {
    let map = body_object(body)?;
    let key = map.get("clientKey").and_then(Value::as_str).filter(|k| !k.is_empty());
    if let Some(key) = key {
        state.counters.key(key).requests += 1;
    }
    state.check_key(key).map_err(|code| error(&code, "the account cannot be used"))?;
    Ok(map)
}

fn client_key(map: &Map<String, Value>) -> Option<String> {
    map.get("clientKey").and_then(Value::as_str).filter(|k| !k.is_empty()).map(str::to_string)
}

/// `POST /createTask`.
pub(crate) fn create_task(state: &mut State, body: &[u8], now: Instant) -> Reply {
    state.counters.submits += 1;
    let result = authenticate(state, body).and_then(|map| {
        if let Some(key) = client_key(&map) {
            state.counters.key(&key).submits += 1;
            state
                .check_ban(&key, now, false)
                .map_err(|code| error(&code, "too many submissions in a short time; the key is banned for a while"))?;
        }
        let task = match map.get("task") {
            Some(Value::Object(task)) => task,
            _ => return Err(error("ERROR_TASK_ABSENT", "task is missing or not an object")),
        };
        let mut submission = parse_task(state, task)?;
        submission.key = client_key(&map);
        let kind = submission.kind;
        state.submit(submission, now).map(|id| (id, kind)).map_err(|code| error(&code, "the task was refused"))
    });
    match result {
        // CapSolver's recognition tasks (images, reCAPTCHA classification) answer at once.
        Ok((id, Kind::Image | Kind::Selection { positions: true, .. })) if state.config.sync_image => {
            match state.status(id, now) {
                // CapSolver's synchronous recognition answer: the solution with the task id (a string there).
                Status::Ready { kind, token } => Reply::json(&json!({
                    "errorId": 0,
                    "errorCode": "",
                    "errorDescription": "",
                    "status": "ready",
                    "solution": tokens::solution(kind, id, token.as_deref()),
                    "taskId": id.to_string(),
                })),
                _ => Reply::json(&json!({ "errorId": 0, "taskId": id })),
            }
        }
        Ok((id, _)) => Reply::json(&json!({ "errorId": 0, "taskId": id })),
        Err(reply) => {
            state.counters.submit_errors += 1;
            reply
        }
    }
}

/// A string field, trimmed; `None` when absent or empty.
fn text<'a>(task: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    task.get(name).and_then(Value::as_str).map(str::trim).filter(|v| !v.is_empty())
}

/// The kind a task type names, in any dialect; `Err` with the refusal for hCaptcha and unknown types.
fn kind_of(state: &State, task: &Map<String, Value>) -> Result<Kind, Reply> {
    let Some(name) = text(task, "type") else {
        return Err(error("ERROR_TASK_NOT_SUPPORTED", "task.type is missing"));
    };
    let normalised = name.to_ascii_lowercase().replace("proxyless", "");
    let kind = match normalised.as_str() {
        "recaptchav2task" | "nocaptchatask" | "recaptchav2enterprisetask" => Kind::RecaptchaV2,
        "recaptchav3task" | "recaptchav3enterprisetask" => Kind::RecaptchaV3,
        "imagetotexttask" => Kind::Image,
        // CapMonster's Cloudflare challenge is a TurnstileTask asking for the cookie.
        "turnstiletask" if text(task, "cloudflareTaskType") == Some("cf_clearance") => Kind::Clearance,
        "turnstiletask" | "antiturnstiletask" => Kind::Turnstile,
        "anticloudflaretask" => Kind::Clearance,
        "antigatetask" => Kind::Session,
        // CapMonster's ComplexImageTask: a flag per grid cell (`metadata.Grid`) or per image.
        "compleximagetask" => {
            let grid = task.get("metadata").and_then(Value::as_object).and_then(|m| text(m, "Grid"));
            let cells = match (text(task, "class"), grid) {
                (Some("recaptcha"), Some("4x4")) => 16,
                (Some("recaptcha"), Some("1x1")) => 1,
                (Some("recaptcha"), _) => 9,
                (Some("funcaptcha"), _) => 6,
                (Some("hcaptcha"), _) => images(task, "imagesBase64").len().clamp(1, 18) as u8,
                _ => return Err(error("ERROR_BAD_PARAMETERS", "a ComplexImageTask needs its class")),
            };
            Kind::Selection { cells, positions: false }
        }
        // CapSolver's ReCaptchaV2Classification: the matching positions of a 3x3 grid.
        "recaptchav2classification" => Kind::Selection { cells: 9, positions: true },
        "funcaptchatask" => Kind::Funcaptcha,
        "geetesttask" => {
            // CapSolver's v4 task has `captchaId` and no `version`.
            let v4 = task.get("version").is_some_and(|v| v.as_u64() == Some(4) || v.as_str() == Some("4"))
                || text(task, "captchaId").is_some();
            if v4 {
                Kind::GeetestV4
            } else {
                Kind::Geetest
            }
        }
        "hcaptchatask" | "hcaptchaenterprisetask" if state.config.hcaptcha_code.is_empty() => Kind::Hcaptcha,
        "hcaptchatask" | "hcaptchaenterprisetask" => {
            return Err(error(&state.config.hcaptcha_code, "hCaptcha is not supported"));
        }
        "textcaptchatask" => Kind::Text,
        "imagetocoordinatestask" => Kind::Points,
        "amazontask" | "antiawswaftask" | "datadomeslidertask" => Kind::Cookie,
        "mtcaptchatask" | "prosopotask" | "binancetask" | "yiduntask" | "friendlycaptchatask" | "altchatask" => {
            Kind::Token
        }
        // CapMonster's CustomTask: the kind is its `class`.
        "customtask" => match text(task, "class") {
            Some("DataDome") => Kind::Cookie,
            Some("TenDI") => Kind::Fields(&["ticket", "randstr"]),
            Some(_) => Kind::Token,
            None => return Err(error("ERROR_BAD_PARAMETERS", "a CustomTask needs its class")),
        },
        _ => return Err(error("ERROR_TASK_NOT_SUPPORTED", &format!("task type {name:?} is not supported"))),
    };
    Ok(kind)
}

/// The strings of a list field (`imagesBase64`), empty when absent.
fn images<'a>(task: &'a Map<String, Value>, name: &str) -> Vec<&'a str> {
    task.get(name)
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn parse_task(state: &State, task: &Map<String, Value>) -> Result<Submission, Reply> {
    let kind = kind_of(state, task)?;
    let need = |name: &str, code: &str| {
        text(task, name).map(str::to_string).ok_or_else(|| error(code, &format!("task.{name} is required")))
    };
    let (site_key, page_url) = match kind {
        Kind::Text => (None, None),
        Kind::Points | Kind::Cells | Kind::Angle => {
            crate::v1::check_image(text(task, "body").unwrap_or_default())
                .map_err(|code| error(&code, "task.body must be a base64 image"))?;
            (None, None)
        }
        Kind::Selection { .. } => {
            let images = match text(task, "image") {
                Some(one) => vec![one],
                None => images(task, "imagesBase64"),
            };
            if images.is_empty() {
                return Err(error("ERROR_ZERO_CAPTCHA_FILESIZE", "task.imagesBase64 (or image) is required"));
            }
            for image in images {
                crate::v1::check_image(image).map_err(|code| error(&code, "each image must be base64"))?;
            }
            (None, text(task, "websiteURL").or_else(|| text(task, "websiteUrl")).map(str::to_string))
        }
        Kind::Clearance | Kind::Session => {
            need("websiteURL", "ERROR_PAGEURL")?;
            if kind == Kind::Session {
                need("templateName", "ERROR_BAD_PARAMETERS")?;
            } else if text(task, "proxyAddress").or_else(|| text(task, "proxy")).is_none() {
                return Err(error("ERROR_BAD_PARAMETERS", "a Cloudflare challenge is solved through your proxy"));
            }
            (text(task, "websiteKey").map(str::to_string), text(task, "websiteURL").map(str::to_string))
        }
        Kind::Token | Kind::Cookie | Kind::Fields(_) => {
            let url = need("websiteURL", "ERROR_PAGEURL")?;
            let key = ["websiteKey", "awsKey", "captchaUrl", "validateId"].iter().find_map(|k| text(task, k));
            (key.map(str::to_string), Some(url))
        }
        Kind::Image => {
            crate::v1::check_image(text(task, "body").unwrap_or_default())
                .map_err(|code| error(&code, "task.body must be a base64 image"))?;
            (None, None)
        }
        Kind::RecaptchaV2 | Kind::RecaptchaV3 => {
            let url = need("websiteURL", "ERROR_PAGEURL")?;
            (Some(need("websiteKey", "ERROR_GOOGLEKEY")?), Some(url))
        }
        Kind::Turnstile | Kind::Hcaptcha => {
            let url = need("websiteURL", "ERROR_PAGEURL")?;
            (Some(need("websiteKey", "ERROR_BAD_PARAMETERS")?), Some(url))
        }
        Kind::Funcaptcha => {
            let url = need("websiteURL", "ERROR_PAGEURL")?;
            (Some(need("websitePublicKey", "ERROR_BAD_PARAMETERS")?), Some(url))
        }
        Kind::Geetest => {
            let url = need("websiteURL", "ERROR_PAGEURL")?;
            need("challenge", "ERROR_BAD_PARAMETERS")?;
            (Some(need("gt", "ERROR_BAD_PARAMETERS")?), Some(url))
        }
        Kind::GeetestV4 => {
            let url = need("websiteURL", "ERROR_PAGEURL")?;
            // 2captcha v2 nests it in initParameters, CapSolver has a top-level captchaId,
            // anti-captcha and CapMonster take it in `gt` with `version: 4`.
            let id = text(task, "captchaId")
                .or_else(|| text(task, "gt"))
                .or_else(|| task.get("initParameters").and_then(Value::as_object).and_then(|p| text(p, "captcha_id")))
                .map(str::to_string)
                .ok_or_else(|| error("ERROR_BAD_PARAMETERS", "task.initParameters.captcha_id is required"))?;
            (Some(id), Some(url))
        }
    };
    // The task's text values, and those one object down (CapSolver's Turnstile `metadata.action`, `metadata.cdata`).
    let nested = task.values().filter_map(Value::as_object).flat_map(|inner| inner.values());
    let values = task.values().chain(nested).filter_map(Value::as_str).map(str::to_string).collect();
    Ok(Submission { kind, page_url, site_key, values, key: None })
}

/// `POST /getTaskResult`.
pub(crate) fn get_task_result(state: &mut State, body: &[u8], now: Instant) -> Reply {
    state.counters.polls_single += 1;
    state.counters.ids_polled += 1;
    let map = match authenticate(state, body) {
        Ok(map) => map,
        Err(reply) => return reply,
    };
    if let Some(key) = client_key(&map) {
        state.counters.key(&key).polls += 1;
    }
    // anti-captcha uses numbers, CapSolver strings.
    let id = match map.get("taskId") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    let Some(id) = id else {
        return error("ERROR_NO_SUCH_CAPCHA_ID", "taskId is missing or malformed");
    };
    match state.status(id, now) {
        Status::NotReady => Reply::json(&json!({ "errorId": 0, "status": "processing" })),
        Status::Ready { kind, token } => Reply::json(&json!({
            "errorId": 0,
            "status": "ready",
            "solution": tokens::solution(kind, id, token.as_deref()),
            "cost": format!("{:.5}", state.config.task_cost),
            "ip": "127.0.0.1",
            "solveCount": 1,
        })),
        Status::Failed(code) => error(&code, "the task failed"),
        Status::Unknown => error("ERROR_NO_SUCH_CAPCHA_ID", "no task with this id"),
    }
}

/// `POST /getBalance`.
pub(crate) fn get_balance(state: &mut State, body: &[u8]) -> Reply {
    state.counters.balance_checks += 1;
    match authenticate(state, body) {
        Ok(_) => Reply::json(&json!({ "errorId": 0, "balance": state.config.balance })),
        Err(reply) => reply,
    }
}
