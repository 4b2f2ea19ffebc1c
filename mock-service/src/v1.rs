//! The 2captcha-compatible v1 protocol (`in.php` / `res.php`), as documented by 2captcha and CaptchaAI.
//!
//! Plain answers are `OK|<value>` or a bare code; `json=1` answers `{"status":1|0,"request":...}`.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::reply::Reply;
use crate::state::{State, Status, Submission};
use crate::tokens::{self, Kind};

/// Request parameters, query and form merged (form wins).
pub(crate) type Params = BTreeMap<String, String>;

/// Largest decoded image accepted (2captcha's documented limit is 100 kB).
const MAX_IMAGE_BYTES: usize = 100 * 1024;

fn get<'a>(params: &'a Params, name: &str) -> Option<&'a str> {
    params.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
}

fn wants_json(params: &Params) -> bool {
    get(params, "json") == Some("1")
}

fn ok(json: bool, plain: String, value: Value) -> Reply {
    if json {
        Reply::json(&json!({ "status": 1, "request": value }))
    } else {
        Reply::text(plain)
    }
}

fn err(json: bool, code: &str) -> Reply {
    if json {
        Reply::json(&json!({ "status": 0, "request": code, "error_text": describe(code) }))
    } else {
        Reply::text(code)
    }
}

fn describe(code: &str) -> &'static str {
    match code {
        "CAPCHA_NOT_READY" => "The captcha is not solved yet",
        "ERROR_KEY_DOES_NOT_EXIST" | "ERROR_WRONG_USER_KEY" => "The API key is wrong or does not exist",
        "ERROR_ZERO_BALANCE" => "The account has no funds",
        "ERROR_PAGEURL" => "pageurl is missing",
        "ERROR_GOOGLEKEY" => "googlekey is missing or malformed",
        "ERROR_BAD_PARAMETERS" => "Required parameters are missing or malformed",
        "ERROR_CAPTCHA_UNSOLVABLE" => "The workers could not solve the captcha",
        "ERROR_WRONG_CAPTCHA_ID" => "No task with this id",
        "ERROR_WRONG_ID_FORMAT" => "The task id is not a number",
        "ERROR_NO_SLOT_AVAILABLE" => "No free workers, retry later",
        "MAX_USER_TURN" => "Too many submissions in a short time; the key is banned for a while",
        _ => "Mock error",
    }
}

/// Counts a request against the key it carries.
fn count_key(state: &mut State, params: &Params) -> Option<String> {
    let key = get(params, "key").map(str::to_string);
    if let Some(key) = &key {
        state.counters.key(key).requests += 1;
    }
    key
}

/// `in.php`: validates the key and the method's required parameters, then accepts or refuses the task.
pub(crate) fn submit(state: &mut State, params: &Params, now: Instant) -> Reply {
    let json = wants_json(params);
    let key = count_key(state, params);
    state.counters.submits += 1;
    if let Some(key) = &key {
        state.counters.key(key).submits += 1;
    }
    // The ban rule counts every submission of a working key, whatever its task: 2captcha's limit is
    // on `in.php` requests.
    let result = state
        .check_key(key.as_deref())
        .and_then(|()| key.as_deref().map_or(Ok(()), |key| state.check_ban(key, now, true)))
        .and_then(|()| parse_task(state, params))
        .and_then(|s| state.submit(s, now));
    match result {
        Ok(id) => ok(json, format!("OK|{id}"), Value::String(id.to_string())),
        Err(code) => {
            state.counters.submit_errors += 1;
            err(json, &code)
        }
    }
}

/// The task a v1 submit describes, or the code the real service refuses it with.
fn parse_task(state: &State, params: &Params) -> Result<Submission, String> {
    let need = |name: &str, code: &str| get(params, name).map(str::to_string).ok_or_else(|| code.to_string());
    let method = get(params, "method").ok_or("ERROR_BAD_PARAMETERS")?;
    let (kind, site_key, page_url) = match method {
        "userrecaptcha" => {
            let site_key = need("googlekey", "ERROR_GOOGLEKEY")?;
            let page_url = need("pageurl", "ERROR_PAGEURL")?;
            let kind = if get(params, "version") == Some("v3") { Kind::RecaptchaV3 } else { Kind::RecaptchaV2 };
            (kind, Some(site_key), Some(page_url))
        }
        "turnstile" => {
            let site_key = need("sitekey", "ERROR_BAD_PARAMETERS")?;
            (Kind::Turnstile, Some(site_key), Some(need("pageurl", "ERROR_PAGEURL")?))
        }
        "geetest" => {
            let gt = need("gt", "ERROR_BAD_PARAMETERS")?;
            need("challenge", "ERROR_BAD_PARAMETERS")?;
            (Kind::Geetest, Some(gt), Some(need("pageurl", "ERROR_PAGEURL")?))
        }
        "geetest_v4" => {
            let id = need("captcha_id", "ERROR_BAD_PARAMETERS")?;
            (Kind::GeetestV4, Some(id), Some(need("pageurl", "ERROR_PAGEURL")?))
        }
        "funcaptcha" => {
            let key = need("publickey", "ERROR_BAD_PARAMETERS")?;
            (Kind::Funcaptcha, Some(key), Some(need("pageurl", "ERROR_PAGEURL")?))
        }
        "base64" => {
            check_image(params.get("body").map(String::as_str).unwrap_or_default())?;
            (other_kind(method, params).unwrap_or(Kind::Image), None, None)
        }
        "hcaptcha" if state.config.hcaptcha_code.is_empty() => {
            let site_key = need("sitekey", "ERROR_BAD_PARAMETERS")?;
            (Kind::Hcaptcha, Some(site_key), Some(need("pageurl", "ERROR_PAGEURL")?))
        }
        "hcaptcha" => return Err(state.config.hcaptcha_code.clone()),
        other => {
            let kind = other_kind(other, params).ok_or("ERROR_BAD_PARAMETERS")?;
            if matches!(kind, Kind::Points | Kind::Cells | Kind::Angle | Kind::Text) && other != "post" {
                check_image(params.get("body").map(String::as_str).unwrap_or_default())?;
            }
            let site_key = ["sitekey", "app_id", "captcha_id", "captchakey", "misery_key", "master_url_id"]
                .iter()
                .find_map(|k| get(params, k))
                .map(str::to_string);
            (kind, site_key, get(params, "pageurl").map(str::to_string))
        }
    };
    let key = get(params, "key").map(str::to_string);
    Ok(Submission { kind, page_url, site_key, values: params.values().cloned().collect(), key })
}

/// The kind of the other 2captcha methods this mock answers (its own list, written from
/// 2captcha's API: the mock stays independent of the client's kind declarations).
fn other_kind(method: &str, params: &Params) -> Option<Kind> {
    let flag = |name: &str| get(params, name) == Some("1");
    Some(match method {
        "base64" if flag("coordinatescaptcha") || flag("canvas") => Kind::Points,
        "base64" if flag("recaptcha") => Kind::Cells,
        "post" if get(params, "textcaptcha").is_some() => Kind::Text,
        "rotatecaptcha" => Kind::Angle,
        "temuimage" => Kind::Points,
        "amazon_waf" | "datadome" | "tspd" => Kind::Cookie,
        "tencent" => Kind::Fields(&["appid", "ret", "ticket", "randstr"]),
        "lemin" => Kind::Fields(&["answer", "challenge_id"]),
        "capy" => Kind::Fields(&["captchakey", "challengekey", "answer"]),
        "mt_captcha" | "friendly_captcha" | "prosopo" | "altcha" | "cutcaptcha" | "keycaptcha" | "cybersiara"
        | "yandex" | "captchafox" | "atb_captcha" | "vkcaptcha" | "binance" | "yidun" | "basilisk" | "alibaba"
        | "hunt" | "vkimage" | "audio" => Kind::Token,
        _ => return None,
    })
}

/// Checks a base64 image body like the service does: present, decodable, not too big.
pub(crate) fn check_image(body: &str) -> Result<(), String> {
    // A client that forgets to percent-encode the body turns '+' into ' '; the real service tolerates it.
    let cleaned: String =
        body.chars().filter(|c| *c != '\n' && *c != '\r').map(|c| if c == ' ' { '+' } else { c }).collect();
    let cleaned = cleaned.trim_start_matches("data:image/png;base64,").trim_start_matches("data:image/jpeg;base64,");
    if cleaned.is_empty() {
        return Err("ERROR_ZERO_CAPTCHA_FILESIZE".to_string());
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(cleaned)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(cleaned.trim_end_matches('=')))
        .map_err(|_| "ERROR_IMAGE_TYPE_NOT_SUPPORTED".to_string())?;
    if bytes.is_empty() {
        return Err("ERROR_ZERO_CAPTCHA_FILESIZE".to_string());
    }
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err("ERROR_TOO_BIG_CAPTCHA_FILESIZE".to_string());
    }
    Ok(())
}

/// `res.php`: answers, batch answers, balance and reports.
pub(crate) fn result(state: &mut State, params: &Params, now: Instant) -> Reply {
    let json = wants_json(params);
    let key = count_key(state, params);
    if let Err(code) = state.check_key(key.as_deref()) {
        return err(json, &code);
    }
    match get(params, "action") {
        Some("get") => {
            if let Some(key) = &key {
                state.counters.key(key).polls += 1;
            }
            if let Some(ids) = get(params, "ids") {
                poll_batch(state, ids, json, now)
            } else {
                poll_one(state, get(params, "id"), json, now)
            }
        }
        Some("getbalance") => {
            state.counters.balance_checks += 1;
            let balance = format!("{:.5}", state.config.balance);
            ok(json, balance.clone(), Value::String(balance))
        }
        Some(action @ ("reportgood" | "reportbad")) => {
            if action == "reportgood" {
                state.counters.reports_good += 1;
            } else {
                state.counters.reports_bad += 1;
            }
            match get(params, "id").map(str::parse::<u64>) {
                None | Some(Err(_)) => err(json, "ERROR_WRONG_ID_FORMAT"),
                Some(Ok(id)) if state.knows(id) => {
                    ok(json, "OK_REPORT_RECORDED".to_string(), json!("OK_REPORT_RECORDED"))
                }
                Some(Ok(_)) => err(json, "ERROR_WRONG_CAPTCHA_ID"),
            }
        }
        None => err(json, "ERROR_EMPTY_ACTION"),
        Some(_) => err(json, "ERROR_BAD_PARAMETERS"),
    }
}

fn poll_one(state: &mut State, id: Option<&str>, json: bool, now: Instant) -> Reply {
    state.counters.polls_single += 1;
    state.counters.ids_polled += 1;
    let Some(Ok(id)) = id.map(str::parse::<u64>) else {
        return err(json, "ERROR_WRONG_ID_FORMAT");
    };
    match state.status(id, now) {
        Status::NotReady => err(json, "CAPCHA_NOT_READY"),
        Status::Ready { kind, token } => ok(
            json,
            format!("OK|{}", tokens::answer_text(kind, id, token.as_deref())),
            tokens::answer_value(kind, id, token.as_deref()),
        ),
        Status::Failed(code) => err(json, &code),
        Status::Unknown => err(json, "ERROR_WRONG_CAPTCHA_ID"),
    }
}

/// `action=get&ids=a,b,c`: one answer per id, `|`-separated in the order asked.
fn poll_batch(state: &mut State, ids: &str, json: bool, now: Instant) -> Reply {
    state.counters.polls_batch += 1;
    let ids: Vec<&str> = ids.split(',').map(str::trim).filter(|id| !id.is_empty()).collect();
    if ids.is_empty() {
        return err(json, "ERROR_WRONG_ID_FORMAT");
    }
    if ids.len() > state.config.max_batch_ids {
        return err(json, "ERROR_BAD_PARAMETERS");
    }
    state.counters.ids_polled += ids.len() as u64;
    let answers: Vec<String> = ids
        .iter()
        .map(|id| match id.parse::<u64>() {
            Err(_) => "ERROR_WRONG_ID_FORMAT".to_string(),
            Ok(id) => match state.status(id, now) {
                Status::NotReady => "CAPCHA_NOT_READY".to_string(),
                Status::Ready { kind, token } => tokens::answer_text(kind, id, token.as_deref()),
                Status::Failed(code) => code,
                Status::Unknown => "ERROR_WRONG_CAPTCHA_ID".to_string(),
            },
        })
        .collect();
    let joined = answers.join("|");
    ok(json, joined.clone(), Value::String(joined))
}
