//! Realistic-looking answers, derived deterministically from the task id so that tests can recompute them
//! and two tasks never share one.

use serde_json::{json, Value};

/// The kinds of task the mock solves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Image to text.
    Image,
    /// reCAPTCHA v2 (also invisible and enterprise).
    RecaptchaV2,
    /// reCAPTCHA v3.
    RecaptchaV3,
    /// Cloudflare Turnstile.
    Turnstile,
    /// GeeTest v3.
    Geetest,
    /// GeeTest v4.
    GeetestV4,
    /// FunCaptcha / Arkose.
    Funcaptcha,
    /// hCaptcha, solved only when the script's `hcaptcha_code` is `""`.
    Hcaptcha,
    /// A text question.
    Text,
    /// Any other token kind (MTCaptcha, Friendly Captcha, CaptchaFox, ...): one opaque string.
    Token,
    /// A cookie kind (AWS WAF, DataDome, TSPD): the cookie's value.
    Cookie,
    /// Points on an image (coordinates, canvas, Temu).
    Points,
    /// Cells of an image grid.
    Cells,
    /// The angle to rotate an image by.
    Angle,
    /// An answer of several named values (Tencent's ticket and randstr, Lemin's, Capy's).
    Fields(&'static [&'static str]),
    /// Cloudflare's challenge page: the `cf_clearance` cookie and the user agent it is bound to.
    Clearance,
    /// An image classification (ComplexImageTask and its kin) of `cells` images or grid cells,
    /// answered as a flag per cell (CapMonster's `answer`) or as the matching positions
    /// (CapSolver's `objects`).
    Selection { cells: u8, positions: bool },
    /// An AntiGate template's browser session (url, domain, cookies, localStorage, fingerprint).
    Session,
}

impl Kind {
    /// The kind's name as used by matchers.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::RecaptchaV2 => "recaptcha_v2",
            Kind::RecaptchaV3 => "recaptcha_v3",
            Kind::Turnstile => "turnstile",
            Kind::Geetest => "geetest",
            Kind::GeetestV4 => "geetest_v4",
            Kind::Funcaptcha => "funcaptcha",
            Kind::Hcaptcha => "hcaptcha",
            Kind::Text => "text",
            Kind::Token => "token",
            Kind::Cookie => "cookie",
            Kind::Points => "points",
            Kind::Cells => "cells",
            Kind::Angle => "angle",
            Kind::Fields(_) => "fields",
            Kind::Clearance => "clearance",
            Kind::Selection { .. } => "selection",
            Kind::Session => "session",
        }
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const HEX: &[u8; 16] = b"0123456789abcdef";

/// `len` pseudo-random characters of `alphabet`, a pure function of `(id, salt)`.
fn chars(id: u64, salt: u64, len: usize, alphabet: &[u8]) -> String {
    let mut rng = fastrand::Rng::with_seed(id ^ salt.rotate_left(17));
    (0..len).map(|_| char::from(alphabet[rng.usize(..alphabet.len())])).collect()
}

/// The answer of task `id` as the single string the v1 protocol returns (GeeTest: a JSON object's text).
pub fn answer_text(kind: Kind, id: u64, fixed: Option<&str>) -> String {
    if let Some(fixed) = fixed {
        return fixed.to_string();
    }
    match kind {
        Kind::Image => chars(id, 1, 6, b"abcdefghijkmnpqrstuvwxyz23456789"),
        // Real tokens start with 03A and run to several hundred characters; the id in hex keeps them unique.
        Kind::RecaptchaV2 | Kind::RecaptchaV3 => {
            format!("03AGdBq2{:x}{}", id, chars(id, 2, 480, ALPHABET))
        }
        Kind::Turnstile => format!("0.{:x}{}", id, chars(id, 3, 300, ALPHABET)),
        Kind::Hcaptcha => format!("P1_eyJ{:x}{}", id, chars(id, 11, 400, ALPHABET)),
        Kind::Funcaptcha => format!(
            "{:x}{}|r=eu-west-1|meta=3|meta_width=558|metabgclr=transparent|pk=mock|at=40|rid=1|ag=101|cdn_url=https://client-api.arkoselabs.com/cdn/fc",
            id,
            chars(id, 4, 40, HEX)
        ),
        Kind::Geetest | Kind::GeetestV4 => geetest_answer(kind, id).to_string(),
        Kind::Text => chars(id, 11, 8, b"abcdefghijkmnpqrstuvwxyz"),
        Kind::Token => format!("{:x}.{}", id, chars(id, 12, 200, ALPHABET)),
        Kind::Cookie => format!("{:x}{}", id, chars(id, 13, 120, ALPHABET)),
        Kind::Points => {
            let mut rng = fastrand::Rng::with_seed(id ^ 14);
            let points: Vec<String> =
                (0..3).map(|_| format!("x={},y={}", rng.u32(1..300), rng.u32(1..200))).collect();
            format!("coordinates:{}", points.join(";"))
        }
        Kind::Cells => {
            let mut rng = fastrand::Rng::with_seed(id ^ 15);
            let cells: Vec<String> = (0..3).map(|i| (i * 3 + rng.u32(1..=3)).to_string()).collect();
            format!("click:{}", cells.join("/"))
        }
        Kind::Angle => (fastrand::Rng::with_seed(id ^ 16).u32(1..36) * 10).to_string(),
        Kind::Fields(_) => fields_answer(kind, id).to_string(),
        Kind::Clearance => chars(id, 17, 160, ALPHABET),
        Kind::Selection { .. } => selection(kind, id).to_string(),
        Kind::Session => session(id).to_string(),
    }
}

/// The user agent the mock's workers solve Turnstile and Cloudflare challenges with.
const WORKER_USER_AGENT: &str =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

/// Which cells match: about a third of them, at least one, as flags or as positions.
fn selection(kind: Kind, id: u64) -> Value {
    let Kind::Selection { cells, positions } = kind else { return Value::Null };
    let mut rng = fastrand::Rng::with_seed(id ^ 18);
    let mut flags: Vec<bool> = (0..cells).map(|_| rng.u8(0..3) == 0).collect();
    let nothing_matches = !flags.contains(&true);
    if let (true, Some(first)) = (nothing_matches, flags.first_mut()) {
        *first = true;
    }
    if positions {
        json!(flags.iter().enumerate().filter(|(_, f)| **f).map(|(i, _)| i).collect::<Vec<_>>())
    } else {
        json!(flags)
    }
}

/// An AntiGate session, in anti-captcha's solution keys.
fn session(id: u64) -> Value {
    json!({
        "url": format!("https://mock.test/done/{id:x}"),
        "domain": "mock.test",
        "cookies": { "session": chars(id, 19, 32, ALPHABET) },
        "localStorage": { "state": chars(id, 20, 16, ALPHABET) },
        "fingerprint": { "self.navigator.userAgent": WORKER_USER_AGENT },
    })
}

/// GeeTest answers are JSON objects, in the field names each version uses.
pub fn geetest_answer(kind: Kind, id: u64) -> Value {
    if kind == Kind::GeetestV4 {
        json!({
            "captcha_id": chars(id, 5, 32, HEX),
            "lot_number": chars(id, 6, 32, HEX),
            "pass_token": chars(id, 7, 64, HEX),
            "gen_time": (1_700_000_000 + id % 100_000_000).to_string(),
            "captcha_output": chars(id, 8, 120, ALPHABET),
        })
    } else {
        json!({
            "challenge": chars(id, 9, 34, HEX),
            "validate": chars(id, 10, 32, HEX),
            "seccode": format!("{}|jordan", chars(id, 10, 32, HEX)),
        })
    }
}

/// An answer of named values, each one as long as a real one roughly is.
fn fields_answer(kind: Kind, id: u64) -> Value {
    let Kind::Fields(names) = kind else { return Value::Null };
    let mut object = serde_json::Map::new();
    for (i, name) in names.iter().enumerate() {
        object.insert((*name).to_string(), Value::String(chars(id, 20 + i as u64, 32, ALPHABET)));
    }
    Value::Object(object)
}

/// The answer as a JSON value for v1 `json=1` answers: an object for GeeTest and the kinds of
/// several values, a string otherwise.
pub fn answer_value(kind: Kind, id: u64, fixed: Option<&str>) -> Value {
    match (kind, fixed) {
        (Kind::Geetest | Kind::GeetestV4, None) => geetest_answer(kind, id),
        (Kind::Fields(_), None) => fields_answer(kind, id),
        (Kind::Selection { .. }, None) => selection(kind, id),
        (Kind::Session, None) => session(id),
        _ => Value::String(answer_text(kind, id, fixed)),
    }
}

/// The `solution` object of a createTask `getTaskResult` answer.
pub fn solution(kind: Kind, id: u64, fixed: Option<&str>) -> Value {
    match kind {
        Kind::Image => json!({ "text": answer_text(kind, id, fixed) }),
        Kind::RecaptchaV2 | Kind::RecaptchaV3 => {
            let token = answer_text(kind, id, fixed);
            json!({ "gRecaptchaResponse": token, "token": token })
        }
        Kind::Turnstile => json!({
            "token": answer_text(kind, id, fixed),
            "userAgent": WORKER_USER_AGENT,
        }),
        // CapMonster's `cf_clearance` with CapSolver's `cookies` and `userAgent`: each client reads its own.
        Kind::Clearance => {
            let cookie = answer_text(kind, id, fixed);
            json!({ "cf_clearance": cookie, "cookies": { "cf_clearance": cookie }, "userAgent": WORKER_USER_AGENT })
        }
        Kind::Selection { positions, .. } => {
            let cells = match fixed {
                Some(text) => serde_json::from_str(text).unwrap_or(Value::Null),
                None => selection(kind, id),
            };
            if positions {
                json!({ "type": "multi", "objects": cells })
            } else {
                json!({ "answer": cells })
            }
        }
        Kind::Session => match fixed {
            Some(text) => serde_json::from_str(text).unwrap_or_else(|_| json!({ "url": text })),
            None => session(id),
        },
        Kind::Funcaptcha => json!({ "token": answer_text(kind, id, fixed) }),
        Kind::Hcaptcha => {
            let token = answer_text(kind, id, fixed);
            json!({ "gRecaptchaResponse": token, "token": token })
        }
        Kind::Text | Kind::Cells => json!({ "text": answer_text(kind, id, fixed) }),
        Kind::Token => json!({ "token": answer_text(kind, id, fixed) }),
        Kind::Cookie => json!({ "cookie": answer_text(kind, id, fixed) }),
        Kind::Angle => json!({ "rotate": answer_text(kind, id, fixed).parse::<u32>().unwrap_or(0) }),
        Kind::Points => {
            let text = answer_text(kind, id, fixed);
            let points: Vec<Value> = text
                .trim_start_matches("coordinates:")
                .split(';')
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    let n = |s: &str| s.split_once('=').and_then(|(_, v)| v.parse::<u32>().ok());
                    Some(json!({ "x": n(x)?, "y": n(y)? }))
                })
                .collect();
            json!({ "coordinates": points })
        }
        Kind::Fields(_) => match fixed {
            Some(text) => serde_json::from_str(text).unwrap_or_else(|_| json!({ "token": text })),
            None => fields_answer(kind, id),
        },
        Kind::Geetest | Kind::GeetestV4 => match fixed {
            Some(text) => serde_json::from_str(text).unwrap_or_else(|_| json!({ "token": text })),
            None => geetest_answer(kind, id),
        },
    }
}

/// What a site sends to `siteverify` for the answer of task `id`: the token, the recognised text, GeeTest v3's
/// `validate` or v4's `pass_token`.
pub fn verifiable_response(kind: Kind, id: u64, fixed: Option<&str>) -> String {
    match (kind, fixed) {
        (Kind::Geetest, None) => geetest_answer(kind, id)["validate"].as_str().unwrap_or_default().to_string(),
        (Kind::GeetestV4, None) => geetest_answer(kind, id)["pass_token"].as_str().unwrap_or_default().to_string(),
        _ => answer_text(kind, id, fixed),
    }
}
