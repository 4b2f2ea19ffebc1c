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

/// `RecaptchaV2Task` vs `RecaptchaV2TaskProxyless` vs `ReCaptchaV2TaskProxyLess`.
fn type_name(d: Dialect, base: &str, proxied: bool) -> String {
    match (d, proxied) {
        (_, true) => base.to_string(),
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

/// anti-captcha accepts only 0.3, 0.7 and 0.9: take the nearest not below the request.
fn anticaptcha_score(s: f64) -> f64 {
    if s <= 0.3 {
        0.3
    } else if s <= 0.7 {
        0.7
    } else {
        0.9
    }
}

/// The funcaptcha JS subdomain from a `surl` that may be a full URL.
fn subdomain(surl: &str) -> String {
    crate::weburl::host_of(surl).unwrap_or_else(|| surl.to_string())
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
                    o.flag("phrase", t.phrase);
                    o.flag("case", t.regsense);
                    if let Some(n) = numeric {
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
                }
                CapMonster => {
                    o.deny("phrase", t.phrase)?;
                    o.deny("min_len", t.min_len.is_some())?;
                    o.deny("max_len", t.max_len.is_some())?;
                    o.deny("textinstructions", t.textinstructions.is_some())?;
                    o.deny("numeric", numeric.is_some_and(|n| n != 1))?;
                    o.flag("Case", t.regsense);
                    if numeric.is_some() {
                        o.put("numeric", 1);
                    }
                    o.flag("math", t.calc);
                }
                CapSolver => {
                    o.deny("phrase", t.phrase)?;
                    o.deny("regsense", t.regsense)?;
                    o.deny("numeric", numeric.is_some())?;
                    o.deny("calc", t.calc)?;
                    o.deny("min_len", t.min_len.is_some())?;
                    o.deny("max_len", t.max_len.is_some())?;
                    o.deny("textinstructions", t.textinstructions.is_some())?;
                }
            }
            Ok(o.done())
        }
        Task::RecaptchaV2(t) => {
            let proxied = t.proxy.is_some();
            let base = match (d, t.enterprise) {
                (CapSolver, false) => "ReCaptchaV2Task",
                (CapSolver, true) => "ReCaptchaV2EnterpriseTask",
                (CapMonster, false) => "RecaptchaV2Task",
                (CapMonster, true) => "RecaptchaV2EnterpriseTask",
                (_, false) => "RecaptchaV2Task",
                (_, true) => "RecaptchaV2EnterpriseTask",
            };
            // CapMonster's types take the proxy fields optionally: no Proxyless suffix.
            let ty = if d == CapMonster { base.to_string() } else { type_name(d, base, proxied) };
            let mut o = Obj::new(d, ty);
            o.put("websiteURL", t.page_url.clone());
            o.put("websiteKey", t.sitekey.clone());
            match d {
                CapSolver => {
                    if let Some(s) = &t.data_s {
                        o.put("enterprisePayload", json!({ "s": s }));
                    }
                    o.flag("isInvisible", t.invisible);
                    o.deny("cookies", t.cookies.is_some())?;
                    o.opt("userAgent", &t.user_agent);
                    o.opt("apiDomain", &t.domain);
                }
                AntiCaptcha if t.enterprise => {
                    if let Some(s) = &t.data_s {
                        o.put("enterprisePayload", json!({ "s": s }));
                    }
                    o.deny("invisible", t.invisible)?;
                    o.opt("userAgent", &t.user_agent);
                    o.opt("cookies", &t.cookies);
                    o.opt("apiDomain", &t.domain);
                }
                AntiCaptcha => {
                    o.opt("recaptchaDataSValue", &t.data_s);
                    o.flag("isInvisible", t.invisible);
                    o.opt("userAgent", &t.user_agent);
                    o.opt("cookies", &t.cookies);
                    o.deny("domain", t.domain.is_some())?;
                }
                TwoCaptchaV2 | CapMonster => {
                    o.opt("recaptchaDataSValue", &t.data_s);
                    o.flag("isInvisible", t.invisible);
                    o.opt("userAgent", &t.user_agent);
                    o.opt("cookies", &t.cookies);
                    o.opt("apiDomain", &t.domain);
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
            match d {
                AntiCaptcha | TwoCaptchaV2 => {
                    if let Some(s) = t.min_score {
                        o.put("minScore", if d == AntiCaptcha { anticaptcha_score(s) } else { s });
                    }
                    o.flag("isEnterprise", t.enterprise);
                    o.opt("apiDomain", &t.domain);
                }
                CapSolver => {
                    o.deny("min_score", t.min_score.is_some())?;
                    o.opt("apiDomain", &t.domain);
                }
                CapMonster => {
                    o.deny("enterprise", t.enterprise)?;
                    o.deny("domain", t.domain.is_some())?;
                    if let Some(s) = t.min_score {
                        o.put("minScore", s);
                    }
                }
            }
            Ok(o.done())
        }
        Task::Turnstile(t) => {
            let ty = match d {
                CapSolver => "AntiTurnstileTaskProxyLess".to_string(),
                CapMonster => "TurnstileTask".to_string(),
                _ => type_name(d, "TurnstileTask", t.proxy.is_some()),
            };
            let mut o = Obj::new(d, ty);
            o.put("websiteURL", t.page_url.clone());
            o.put("websiteKey", t.sitekey.clone());
            match d {
                AntiCaptcha => {
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
        Task::Funcaptcha(t) => {
            if matches!(d, CapSolver | CapMonster) {
                return Err(unsupported(d, task));
            }
            let mut o = Obj::new(d, type_name(d, "FunCaptchaTask", t.proxy.is_some()));
            o.put("websiteURL", t.page_url.clone());
            o.put("websitePublicKey", t.publickey.clone());
            if let Some(s) = &t.surl {
                o.put("funcaptchaApiJSSubdomain", subdomain(s));
            }
            if !t.data.is_empty() {
                // The createTask APIs take the data blob as a JSON string.
                o.put(
                    "data",
                    Value::Object(t.data.iter().map(|(k, v)| (k.clone(), v.clone().into())).collect()).to_string(),
                );
            }
            o.opt("userAgent", &t.user_agent);
            with_proxy(&mut o, &t.proxy);
            Ok(o.done())
        }
        Task::Hcaptcha(t) => {
            if matches!(d, CapSolver | CapMonster) {
                return Err(unsupported(d, task));
            }
            let mut o = Obj::new(d, type_name(d, "HCaptchaTask", t.proxy.is_some()));
            o.put("websiteURL", t.page_url.clone());
            o.put("websiteKey", t.sitekey.clone());
            o.flag("isInvisible", t.invisible);
            if let Some(r) = &t.data {
                o.put("enterprisePayload", json!({ "rqdata": r }));
            }
            o.opt("userAgent", &t.user_agent);
            with_proxy(&mut o, &t.proxy);
            Ok(o.done())
        }
        Task::Raw(t) => match &t.task {
            Some(obj) => Ok(obj.clone()),
            None => Err(InvalidTask::new(
                "task",
                format!("{} speaks the createTask API: a raw task needs a `task` object with its `type`", d.as_str()),
            )),
        },
    }
}

fn geetest_type(d: Dialect, proxied: bool) -> String {
    match d {
        Dialect::CapSolver => "GeeTestTaskProxyLess".into(),
        Dialect::CapMonster => "GeeTestTask".into(),
        _ => type_name(d, "GeeTestTask", proxied),
    }
}
