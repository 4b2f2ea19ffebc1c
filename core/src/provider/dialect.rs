//! The `task` object of each createTask dialect: type names and field names
//! per service (anti-captcha, CapSolver, 2captcha API v2, CapMonster).
//!
//! A task value the dialect cannot express is refused naming the field rather
//! than dropped: a silently ignored `min_score` or proxy would produce answers
//! the site rejects. A kind the service does not solve at all is refused on
//! `type`. The raw escape hatch sends the user's own `task` object as is.

use serde_json::{json, Map, Value};

use super::Dialect;
use crate::error::InvalidTask;
#[cfg(not(target_arch = "wasm32"))]
use crate::task::kinds::{CreateTaskDecl, FieldType};
#[cfg(not(target_arch = "wasm32"))]
use crate::task::Declared;
use crate::task::{Proxy, Task};

struct Obj {
    map: Map<String, Value>,
    dialect: Dialect,
}

impl Obj {
    fn new(dialect: Dialect, ty: String) -> Self {
        let mut map = Map::new();
        map.insert("type".into(), Value::String(ty));
        Obj { map, dialect }
    }
    fn put(&mut self, k: &str, v: impl Into<Value>) {
        self.map.insert(k.to_string(), v.into());
    }
    fn opt(&mut self, k: &str, v: &Option<String>) {
        if let Some(v) = v {
            self.put(k, v.clone());
        }
    }
    fn flag(&mut self, k: &str, on: bool) {
        if on {
            self.put(k, true);
        }
    }
    /// Refuses `field` when set: this dialect has no place for it.
    fn deny(&self, field: &str, set: bool) -> Result<(), InvalidTask> {
        if set {
            return Err(InvalidTask::new(
                field,
                format!("{} (createTask API) has no equivalent of this field; use a raw task", self.dialect.as_str()),
            ));
        }
        Ok(())
    }
    /// anti-captcha style proxy fields (anti-captcha, 2captcha v2, CapMonster).
    fn proxy_fields(&mut self, p: &Proxy) {
        let kind = match (self.dialect, p.kind.as_str()) {
            // anti-captcha's `http` covers https proxies.
            (Dialect::AntiCaptcha, "https") => "http",
            (_, k) => k,
        };
        self.put("proxyType", kind);
        self.put("proxyAddress", p.host.clone());
        self.put("proxyPort", p.port);
        self.opt("proxyLogin", &p.login);
        self.opt("proxyPassword", &p.password);
    }
    fn done(self) -> Map<String, Value> {
        self.map
    }
}

/// `RecaptchaV2Task` vs `RecaptchaV2TaskProxyless` vs `ReCaptchaV2TaskProxyLess`. CapMonster's
/// types take the proxy fields optionally: no Proxyless suffix.
fn type_name(d: Dialect, base: &str, proxied: bool) -> String {
    match (d, proxied) {
        (Dialect::CapMonster, _) | (_, true) => base.to_string(),
        (Dialect::CapSolver, false) => format!("{base}ProxyLess"),
        (_, false) => format!("{base}Proxyless"),
    }
}

fn unsupported(d: Dialect, task: &Task) -> InvalidTask {
    InvalidTask::new("type", format!("{} does not solve {} tasks", d.as_str(), task.kind()))
}

/// CapSolver takes one proxy string: `scheme:host:port[:login:password]`.
fn capsolver_proxy(p: &Proxy) -> String {
    match (&p.login, &p.password) {
        (Some(l), Some(pw)) => format!("{}:{}:{}:{l}:{pw}", p.kind, p.host, p.port),
        _ => format!("{}:{}:{}", p.kind, p.host, p.port),
    }
}

fn with_proxy(o: &mut Obj, proxy: &Option<Proxy>) {
    if let Some(p) = proxy {
        if o.dialect == Dialect::CapSolver {
            o.put("proxy", capsolver_proxy(p));
        } else {
            o.proxy_fields(p);
        }
    }
}

/// The reCAPTCHA v3 worker queues anti-captcha and 2captcha API v2 document: `minScore` is
/// required and one of these (https://anti-captcha.com/apidoc/task-types/RecaptchaV3TaskProxyless,
/// https://2captcha.com/api-docs/recaptcha-v3). Unset asks for the lowest, the queue with most
/// workers; a value between two queues takes the next one up, so the token is at least as good as
/// asked. (The official anti-captcha client, anticaptchaofficial/recaptchav3proxyless.py, offers
/// 0.5/0.7/0.9; the documentation wins.)
const SCORE_QUEUES: [f64; 3] = [0.3, 0.7, 0.9];

fn score_queue(requested: Option<f64>) -> f64 {
    let wanted = requested.unwrap_or(SCORE_QUEUES[0]);
    SCORE_QUEUES.into_iter().find(|q| wanted <= *q).unwrap_or(SCORE_QUEUES[2])
}

/// The task's `domain` (`google.com` | `recaptcha.net`, checked by `Task::validate`) as each
/// dialect documents `apiDomain`:
/// - anti-captcha and CapMonster: `www.google.com` / `www.recaptcha.net`
///   (https://anti-captcha.com/apidoc/task-types/RecaptchaV2EnterpriseTask,
///   https://docs.capmonster.cloud/docs/captchas/recaptcha-v2-enterprise-task);
/// - CapSolver: `http://www.google.com/` / `http://www.recaptcha.net/`
///   (https://docs.capsolver.com/guide/captcha/ReCaptchaV2);
/// - 2captcha API v2: `google.com` / `recaptcha.net` (https://2captcha.com/api-docs/recaptcha-v3).
fn api_domain(d: Dialect, domain: &str) -> String {
    match d {
        Dialect::AntiCaptcha | Dialect::CapMonster => format!("www.{domain}"),
        Dialect::CapSolver => format!("http://www.{domain}/"),
        Dialect::TwoCaptchaV2 => domain.to_string(),
    }
}

/// The funcaptcha JS subdomain from a `surl` that may be a full URL.
fn subdomain(surl: &str) -> String {
    crate::weburl::host_of(surl).unwrap_or_else(|| surl.to_string())
}

/// FunCaptcha's extra values as the createTask APIs take them: one JSON string
/// (`"data": "{\"blob\":\"...\"}"`, CapMonster docs captchas/funcaptcha-task and
/// anti-captcha task-types/FunCaptchaTaskProxyless).
fn funcaptcha_data(data: &std::collections::BTreeMap<String, String>) -> String {
    // Inserted one by one, not `collect()`ed: `Map::from_iter` brings a stable sort's code into the .wasm.
    let mut object = Map::new();
    for (k, v) in data {
        object.insert(k.clone(), v.clone().into());
    }
    Value::Object(object).to_string()
}

pub(super) fn task_object(d: Dialect, task: &Task) -> Result<Map<String, Value>, InvalidTask> {
    use Dialect::*;
    match task {
        Task::Image(t) => {
            let mut o = Obj::new(d, "ImageToTextTask".into());
            o.put("body", t.body.clone());
            let numeric = t.numeric.filter(|n| *n != 0);
            o.deny("language", t.language.is_some_and(|l| l != 0))?;
            o.deny("lang", t.lang.is_some())?;
            match d {
                AntiCaptcha | TwoCaptchaV2 => {
                    // https://anti-captcha.com/apidoc/task-types/ImageToTextTask and
                    // https://2captcha.com/api-docs/normal-captcha: phrase, case, numeric, math,
                    // minLength, maxLength, comment (2captcha also imgInstructions).
                    o.flag("phrase", t.phrase);
                    if d == AntiCaptcha {
                        // anti-captcha's `case` defaults to TRUE (ImageToTextTask page); every other
                        // service and the v1 API default to case-insensitive, so it is always sent.
                        // The official client does the same: anticaptchaofficial/antinetworking.py `case = False`.
                        o.put("case", t.regsense);
                    } else {
                        o.flag("case", t.regsense);
                    }
                    if let Some(n) = numeric {
                        // anti-captcha documents numeric 0..2; 2captcha 0..4.
                        o.deny("numeric", d == AntiCaptcha && n > 2)?;
                        o.put("numeric", n);
                    }
                    o.flag("math", t.calc);
                    if let Some(n) = t.min_len {
                        o.put("minLength", n);
                    }
                    if let Some(n) = t.max_len {
                        o.put("maxLength", n);
                    }
                    o.opt("comment", &t.textinstructions);
                    o.deny("imginstructions", d == AntiCaptcha && t.imginstructions.is_some())?;
                    o.opt("imgInstructions", &t.imginstructions);
                }
                CapMonster => {
                    // https://docs.capmonster.cloud/docs/captchas/image-to-text: case, numeric (0/1),
                    // math. The official client (capmonstercloud_client/requests/ImageToTextRequest.py)
                    // spells it `Case`; the documented `case` is sent.
                    o.deny("phrase", t.phrase)?;
                    o.deny("min_len", t.min_len.is_some())?;
                    o.deny("max_len", t.max_len.is_some())?;
                    o.deny("textinstructions", t.textinstructions.is_some())?;
                    o.deny("imginstructions", t.imginstructions.is_some())?;
                    o.deny("numeric", numeric.is_some_and(|n| n != 1))?;
                    o.flag("case", t.regsense);
                    if numeric.is_some() {
                        o.put("numeric", 1);
                    }
                    o.flag("math", t.calc);
                }
                CapSolver => {
                    // https://docs.capsolver.com/guide/recognition/ImageToTextTask: body, case, module.
                    // The answer comes back in the createTask response itself (see create_task::parse_submit).
                    o.deny("phrase", t.phrase)?;
                    o.deny("numeric", numeric.is_some())?;
                    o.deny("calc", t.calc)?;
                    o.deny("min_len", t.min_len.is_some())?;
                    o.deny("max_len", t.max_len.is_some())?;
                    o.deny("textinstructions", t.textinstructions.is_some())?;
                    o.deny("imginstructions", t.imginstructions.is_some())?;
                    o.flag("case", t.regsense);
                }
            }
            Ok(o.done())
        }
        Task::Text(t) => {
            // Only 2captcha (and rucaptcha, the same API) document text questions: TextCaptchaTask
            // with the question in `comment`.
            if d != TwoCaptchaV2 {
                return Err(unsupported(d, task));
            }
            let mut o = Obj::new(d, "TextCaptchaTask".into());
            o.put("comment", t.text.clone());
            o.deny("lang", t.lang.is_some())?;
            Ok(o.done())
        }
        Task::RecaptchaV2(t) => {
            let proxied = t.proxy.is_some();
            // CapSolver's reCAPTCHA v2 page lists ReCaptchaV2TaskProxyLess and the two Enterprise
            // types; the proxied `ReCaptchaV2Task` is from its earlier pages (and
            // AndreiDrang/python3-capsolver's task enum), kept as is.
            let base = match (d, t.enterprise) {
                (CapSolver, false) => "ReCaptchaV2Task",
                (CapSolver, true) => "ReCaptchaV2EnterpriseTask",
                (_, false) => "RecaptchaV2Task",
                (_, true) => "RecaptchaV2EnterpriseTask",
            };
            let mut o = Obj::new(d, type_name(d, base, proxied));
            o.put("websiteURL", t.page_url.clone());
            o.put("websiteKey", t.sitekey.clone());
            let domain = t.domain.as_deref().map(|x| api_domain(d, x));
            match d {
                CapSolver => {
                    // https://docs.capsolver.com/guide/captcha/ReCaptchaV2: data-s is
                    // `recaptchaDataSValue` for the normal version and `enterprisePayload.s` for
                    // Enterprise; `pageAction` is the anchor's `sa`.
                    if t.enterprise {
                        if let Some(s) = &t.data_s {
                            o.put("enterprisePayload", json!({ "s": s }));
                        }
                    } else {
                        o.opt("recaptchaDataSValue", &t.data_s);
                    }
                    o.flag("isInvisible", t.invisible);
                    o.opt("pageAction", &t.action);
                    o.deny("cookies", t.cookies.is_some())?;
                    o.opt("userAgent", &t.user_agent);
                    o.opt("apiDomain", &domain);
                }
                AntiCaptcha if t.enterprise => {
                    // https://anti-captcha.com/apidoc/task-types/RecaptchaV2EnterpriseTask
                    if let Some(s) = &t.data_s {
                        o.put("enterprisePayload", json!({ "s": s }));
                    }
                    o.deny("invisible", t.invisible)?;
                    o.deny("action", t.action.is_some())?;
                    o.opt("userAgent", &t.user_agent);
                    o.opt("cookies", &t.cookies.as_deref().map(create_task_cookies));
                    o.opt("apiDomain", &domain);
                }
                CapMonster if t.enterprise => {
                    // https://docs.capmonster.cloud/docs/captchas/recaptcha-v2-enterprise-task and the
                    // official client (capmonstercloud_client/requests/RecaptchaV2EnterpiseRequest.py):
                    // `enterprisePayload: {s}`, `pageAction`, `apiDomain`; no isInvisible.
                    if let Some(s) = &t.data_s {
                        o.put("enterprisePayload", json!({ "s": s }));
                    }
                    o.deny("invisible", t.invisible)?;
                    o.opt("pageAction", &t.action);
                    o.opt("userAgent", &t.user_agent);
                    o.opt("cookies", &t.cookies.as_deref().map(create_task_cookies));
                    o.opt("apiDomain", &domain);
                }
                AntiCaptcha | CapMonster => {
                    // https://anti-captcha.com/apidoc/task-types/RecaptchaV2TaskProxyless: no
                    // apiDomain or action for the non-Enterprise types. CapMonster's
                    // https://docs.capmonster.cloud/docs/captchas/no-captcha-task is the same:
                    // recaptchaDataSValue, userAgent, cookies, isInvisible; no apiDomain or pageAction.
                    o.opt("recaptchaDataSValue", &t.data_s);
                    o.flag("isInvisible", t.invisible);
                    o.opt("userAgent", &t.user_agent);
                    o.opt("cookies", &t.cookies.as_deref().map(create_task_cookies));
                    o.deny("domain", t.domain.is_some())?;
                    o.deny("action", t.action.is_some())?;
                }
                TwoCaptchaV2 => {
                    o.opt("recaptchaDataSValue", &t.data_s);
                    o.flag("isInvisible", t.invisible);
                    o.opt("userAgent", &t.user_agent);
                    o.opt("cookies", &t.cookies.as_deref().map(create_task_cookies));
                    o.opt("apiDomain", &domain);
                    // No pageAction found in 2captcha's API v2 reCAPTCHA v2 task; the v1 API takes `action`.
                    o.deny("action", t.action.is_some())?;
                }
            }
            with_proxy(&mut o, &t.proxy);
            Ok(o.done())
        }
        Task::RecaptchaV3(t) => {
            let ty = match (d, t.enterprise) {
                (CapSolver, false) => "ReCaptchaV3TaskProxyLess",
                (CapSolver, true) => "ReCaptchaV3EnterpriseTaskProxyLess",
                (_, _) => "RecaptchaV3TaskProxyless",
            };
            let mut o = Obj::new(d, ty.into());
            o.put("websiteURL", t.page_url.clone());
            o.put("websiteKey", t.sitekey.clone());
            o.opt("pageAction", &t.action);
            let domain = t.domain.as_deref().map(|x| api_domain(d, x));
            match d {
                AntiCaptcha => {
                    // https://anti-captcha.com/apidoc/task-types/RecaptchaV3TaskProxyless (minScore
                    // required) and .../RecaptchaV3Enterprise (`isEnterprise: true`); no apiDomain.
                    o.put("minScore", score_queue(t.min_score));
                    o.flag("isEnterprise", t.enterprise);
                    o.deny("domain", t.domain.is_some())?;
                }
                TwoCaptchaV2 => {
                    // https://2captcha.com/api-docs/recaptcha-v3: minScore required (0.3/0.7/0.9),
                    // isEnterprise, apiDomain.
                    o.put("minScore", score_queue(t.min_score));
                    o.flag("isEnterprise", t.enterprise);
                    o.opt("apiDomain", &domain);
                }
                CapSolver => {
                    // https://docs.capsolver.com/guide/captcha/ReCaptchaV3: no minScore.
                    o.deny("min_score", t.min_score.is_some())?;
                    o.opt("apiDomain", &domain);
                }
                CapMonster => {
                    // https://docs.capmonster.cloud/docs/captchas/recaptcha-v3-task: minScore 0.1..0.9
                    // as asked, `isEnterprise` for Enterprise; no apiDomain.
                    o.deny("domain", t.domain.is_some())?;
                    if let Some(s) = t.min_score {
                        o.put("minScore", s);
                    }
                    o.flag("isEnterprise", t.enterprise);
                }
            }
            Ok(o.done())
        }
        Task::Turnstile(t) => {
            let ty = match d {
                CapSolver => "AntiTurnstileTaskProxyLess".to_string(),
                _ => type_name(d, "TurnstileTask", t.proxy.is_some()),
            };
            let mut o = Obj::new(d, ty);
            o.put("websiteURL", t.page_url.clone());
            o.put("websiteKey", t.sitekey.clone());
            match d {
                AntiCaptcha => {
                    // https://anti-captcha.com/apidoc/task-types/TurnstileTask: action, cData, chlPageData.
                    // Some translations of the TurnstileTaskProxyless page spell it `turnstileCData`;
                    // unresolved, `cData` as on the TurnstileTask page is kept.
                    o.opt("action", &t.action);
                    o.opt("cData", &t.data);
                    o.opt("chlPageData", &t.pagedata);
                    o.deny("user_agent", t.user_agent.is_some())?;
                }
                TwoCaptchaV2 => {
                    o.opt("action", &t.action);
                    o.opt("data", &t.data);
                    o.opt("pagedata", &t.pagedata);
                    o.opt("userAgent", &t.user_agent);
                }
                CapMonster => {
                    // https://docs.capmonster.cloud/docs/captchas/turnstile-challenge-task: a challenge
                    // page's `pageData` is the `cloudflareTaskType: "token"` variant, which requires
                    // pageAction, data, pageData and userAgent (so does the official client,
                    // capmonstercloud_client/requests/TurnstileRequest.py).
                    if t.pagedata.is_some() {
                        o.put("cloudflareTaskType", "token");
                        for (field, value) in [("action", &t.action), ("data", &t.data), ("user_agent", &t.user_agent)]
                        {
                            if value.is_none() {
                                return Err(InvalidTask::new(
                                    field,
                                    "capmonster solves a Turnstile challenge page (pagedata) only with action, data and user_agent",
                                ));
                            }
                        }
                    }
                    o.opt("pageAction", &t.action);
                    o.opt("data", &t.data);
                    o.opt("pageData", &t.pagedata);
                    o.opt("userAgent", &t.user_agent);
                }
                CapSolver => {
                    o.deny("pagedata", t.pagedata.is_some())?;
                    o.deny("user_agent", t.user_agent.is_some())?;
                    o.deny("proxy", t.proxy.is_some())?;
                    let mut meta = Map::new();
                    if let Some(a) = &t.action {
                        meta.insert("action".into(), a.clone().into());
                    }
                    if let Some(c) = &t.data {
                        meta.insert("cdata".into(), c.clone().into());
                    }
                    if !meta.is_empty() {
                        o.put("metadata", meta);
                    }
                }
            }
            with_proxy(&mut o, &t.proxy);
            Ok(o.done())
        }
        Task::GeetestV3(t) => {
            let mut o = Obj::new(d, geetest_type(d, t.proxy.is_some()));
            o.put("websiteURL", t.page_url.clone());
            o.put("gt", t.gt.clone());
            o.put("challenge", t.challenge.clone());
            o.opt("geetestApiServerSubdomain", &t.api_server);
            if d == CapSolver {
                o.deny("user_agent", t.user_agent.is_some())?;
                o.deny("proxy", t.proxy.is_some())?;
            }
            o.opt("userAgent", &t.user_agent);
            with_proxy(&mut o, &t.proxy);
            Ok(o.done())
        }
        Task::GeetestV4(t) => {
            let mut o = Obj::new(d, geetest_type(d, t.proxy.is_some()));
            o.put("websiteURL", t.page_url.clone());
            match d {
                CapSolver => {
                    o.deny("user_agent", t.user_agent.is_some())?;
                    o.deny("proxy", t.proxy.is_some())?;
                    o.put("captchaId", t.captcha_id.clone());
                }
                TwoCaptchaV2 => {
                    o.put("version", 4);
                    o.put("initParameters", json!({ "captcha_id": t.captcha_id }));
                }
                AntiCaptcha | CapMonster => {
                    // Both take the v4 captcha_id in `gt`.
                    o.put("gt", t.captcha_id.clone());
                    o.put("version", 4);
                }
            }
            o.opt("userAgent", &t.user_agent);
            with_proxy(&mut o, &t.proxy);
            Ok(o.done())
        }
        // CapSolver lists no FunCaptcha task and no hCaptcha token task
        // (https://docs.capsolver.com/guide/support).
        Task::Funcaptcha(_) | Task::Hcaptcha(_) if d == CapSolver => Err(unsupported(d, task)),
        Task::Funcaptcha(t) => {
            // CapMonster: https://docs.capmonster.cloud/docs/captchas/funcaptcha-task, FunCaptchaTask
            // with optional proxy fields, as the official client
            // (capmonstercloud_client/requests/FuncaptchaRequest.py).
            let mut o = Obj::new(d, type_name(d, "FunCaptchaTask", t.proxy.is_some()));
            o.put("websiteURL", t.page_url.clone());
            o.put("websitePublicKey", t.publickey.clone());
            if let Some(s) = &t.surl {
                o.put("funcaptchaApiJSSubdomain", subdomain(s));
            }
            if !t.data.is_empty() {
                o.put("data", funcaptcha_data(&t.data));
            }
            o.opt("userAgent", &t.user_agent);
            with_proxy(&mut o, &t.proxy);
            Ok(o.done())
        }
        Task::Hcaptcha(t) => {
            // CapMonster: https://docs.capmonster.cloud/docs/captchas/hcaptcha-task, HCaptchaTask with
            // rqdata in `data` (a plain string) and optional proxy fields
            // (capmonstercloud_client/requests/HcaptchaRequest.py).
            let mut o = Obj::new(d, type_name(d, "HCaptchaTask", t.proxy.is_some()));
            o.put("websiteURL", t.page_url.clone());
            o.put("websiteKey", t.sitekey.clone());
            o.flag("isInvisible", t.invisible);
            if let Some(r) = &t.data {
                if d == CapMonster {
                    o.put("data", r.clone());
                } else {
                    o.put("enterprisePayload", json!({ "rqdata": r }));
                }
            }
            o.opt("userAgent", &t.user_agent);
            with_proxy(&mut o, &t.proxy);
            Ok(o.done())
        }
        #[cfg(not(target_arch = "wasm32"))]
        Task::Declared(t) => declared_object(d, t),
        Task::Raw(t) => match &t.task {
            Some(obj) => Ok(obj.clone()),
            None => Err(InvalidTask::new(
                "task",
                format!("{} speaks the createTask API: a raw task needs a `task` object with its `type`", d.as_str()),
            )),
        },
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// The task object of a declared kind: the type for with or without a proxy, the fixed keys,
/// then each given field under its key (a dotted key one object down).
fn declared_object(d: Dialect, t: &Declared) -> Result<Map<String, Value>, InvalidTask> {
    let (form, ty) = check_declared(d, t)?;
    let mut o = Obj::new(d, ty.to_string());
    for (k, v) in form.fixed {
        o.put(k, *v);
    }
    for (field, value) in t.values() {
        let key = form.params.iter().find(|(f, _)| f == field).map_or("", |(_, key)| key);
        if key.is_empty() {
            // A hint this dialect does without (see `CreateTaskDecl::params`).
            continue;
        }
        let value = if crate::task::kinds::decl(t.kind()).field(field).is_some_and(|f| f.ty == FieldType::Cookies) {
            Value::String(create_task_cookies(value.as_str().unwrap_or_default()))
        } else {
            value.clone()
        };
        let (key, value) = in_key_form(key, value);
        match key.split_once('.') {
            Some((outer, inner)) => {
                let slot = o.map.entry(outer).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(nested) = slot {
                    nested.insert(inner.to_string(), value);
                }
            }
            None => o.put(key, value),
        }
    }
    with_proxy(&mut o, &t.proxy().cloned());
    Ok(o.done())
}

#[cfg(not(target_arch = "wasm32"))]
/// The key and value as a declared key writes them (`CreateTaskDecl::params`): `base64:` before
/// the key sends the text base64-encoded (CapMonster's `htmlPageBase64`), `[]` after it a list of
/// one (`imagesBase64[]`, where the kind takes one image).
fn in_key_form(key: &str, value: Value) -> (&str, Value) {
    use base64::Engine as _;
    let (key, value) = match key.strip_prefix("base64:") {
        Some(key) => {
            let text = value.as_str().unwrap_or_default();
            (key, Value::String(base64::engine::general_purpose::STANDARD.encode(text)))
        }
        None => (key, value),
    };
    match key.strip_suffix("[]") {
        Some(key) => (key, Value::Array(vec![value])),
        None => (key, value),
    }
}

/// Whether `d` can take the declared task `t`, and its form and type name: every refusal
/// [`declared_object`] can give, without building the object (routing asks it of every lane).
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn check_declared(d: Dialect, t: &Declared) -> Result<(&'static CreateTaskDecl, &'static str), InvalidTask> {
    let form = declared_form(d, t)?;
    let ty = if t.proxy().is_some() { form.proxied } else { form.proxyless };
    let ty = ty.ok_or_else(|| {
        let how = if t.proxy().is_some() { "without a proxy" } else { "through your proxy" };
        InvalidTask::new("proxy", format!("{} solves {} tasks only {how}", d.as_str(), t.kind()))
    })?;
    for field in form.requires {
        if t.get(field).is_none() {
            return Err(InvalidTask::new(*field, format!("{} needs it for {} tasks", d.as_str(), t.kind())));
        }
    }
    if let Some(field) = t.values().keys().find(|field| !form.params.iter().any(|(f, _)| f == field)) {
        return Err(super::no_equivalent(&format!("{} (createTask API)", d.as_str()), field));
    }
    Ok((form, ty))
}

#[cfg(not(target_arch = "wasm32"))]
fn declared_form(d: Dialect, t: &Declared) -> Result<&'static CreateTaskDecl, InvalidTask> {
    match crate::task::kinds::create_task_form(t.kind(), d) {
        Some(Some(form)) => Ok(form),
        _ => Err(super::not_solved(d.as_str(), t.kind())),
    }
}

/// Cookies as the createTask APIs take them: `name=value; name2=value2`
/// (https://anti-captcha.com/apidoc/task-types/RecaptchaV2TaskProxyless), also when given in the
/// v1 form `name:value;...`.
fn create_task_cookies(cookies: &str) -> String {
    crate::task::kinds::rewrite_cookies(cookies, '=', "; ")
}

fn geetest_type(d: Dialect, proxied: bool) -> String {
    match d {
        Dialect::CapSolver => "GeeTestTaskProxyLess".into(),
        _ => type_name(d, "GeeTestTask", proxied),
    }
}
