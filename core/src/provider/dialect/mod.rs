//! The `task` object of each createTask dialect: type names and field names
//! per service (anti-captcha, CapSolver, 2captcha API v2, CapMonster).
//!
//! A task value the dialect cannot express is refused naming the field rather
//! than dropped: a silently ignored `min_score` or proxy would produce answers
//! the site rejects. A kind the service does not solve at all is refused on
//! `type`. The raw escape hatch sends the user's own `task` object as is.
//!
//! A declared kind's object is built here from its tables (`task::kinds`): the form its dialect
//! and `when` choose, then its hook, if it names one (`provider::hooks`). The pieces the forms
//! share (proxy fields, cookies) are here too.

use serde_json::{Map, Value};

use super::Dialect;
use crate::error::InvalidTask;
#[cfg(feature = "declared-kinds")]
use crate::task::kinds::{CreateTaskDecl, FieldType};
#[cfg(feature = "declared-kinds")]
use crate::task::Declared;
#[cfg(feature = "declared-kinds")]
use crate::task::Proxy;
use crate::task::{Raw, Task};

/// A task object being written, or (`building: false`) only checked: the same code decides
/// what a dialect refuses in both cases, and a check copies none of the task's values (an
/// image body can be hundreds of kilobytes) into an object it would drop.
#[cfg(feature = "declared-kinds")]
struct Obj {
    map: Map<String, Value>,
    dialect: Dialect,
    building: bool,
}

#[cfg(feature = "declared-kinds")]
impl Obj {
    fn new(dialect: Dialect, building: bool, ty: String) -> Self {
        let mut map = Map::new();
        if building {
            map.insert("type".into(), Value::String(ty));
        }
        Obj { map, dialect, building }
    }
    fn put(&mut self, k: &str, v: impl Into<Value>) {
        if self.building {
            self.map.insert(k.to_string(), v.into());
        }
    }
    /// A text value, copied only when the object is built.
    fn put_text(&mut self, k: &str, v: &str) {
        if self.building {
            self.map.insert(k.to_string(), Value::String(v.to_string()));
        }
    }
    fn opt(&mut self, k: &str, v: &Option<String>) {
        if let Some(v) = v {
            self.put_text(k, v);
        }
    }
    /// anti-captcha style proxy fields (anti-captcha, 2captcha v2, CapMonster).
    fn proxy_fields(&mut self, p: &Proxy) {
        let kind = match (self.dialect, p.kind.as_str()) {
            // anti-captcha's `http` covers https proxies.
            (Dialect::AntiCaptcha, "https") => "http",
            (_, k) => k,
        };
        self.put("proxyType", kind);
        self.put_text("proxyAddress", &p.host);
        self.put("proxyPort", p.port);
        self.opt("proxyLogin", &p.login);
        self.opt("proxyPassword", &p.password);
    }
    fn done(self) -> Map<String, Value> {
        self.map
    }
}

/// CapSolver takes one proxy string: `scheme:host:port[:login:password]`.
#[cfg(feature = "declared-kinds")]
fn capsolver_proxy(p: &Proxy) -> String {
    match (&p.login, &p.password) {
        (Some(l), Some(pw)) => format!("{}:{}:{}:{l}:{pw}", p.kind, p.host, p.port),
        _ => format!("{}:{}:{}", p.kind, p.host, p.port),
    }
}

#[cfg(feature = "declared-kinds")]
fn with_proxy(o: &mut Obj, proxy: &Option<Proxy>) {
    if let Some(p) = proxy {
        if o.dialect == Dialect::CapSolver {
            o.put("proxy", capsolver_proxy(p));
        } else {
            o.proxy_fields(p);
        }
    }
}

/// The `task` object of `task` in dialect `d`, or what the dialect refuses.
pub(super) fn task_object(d: Dialect, task: &Task) -> Result<Map<String, Value>, InvalidTask> {
    match task {
        #[cfg(feature = "declared-kinds")]
        Task::Declared(t) => declared_object(d, t),
        Task::Raw(t) => raw_object(d, t).cloned(),
    }
}

/// What [`task_object`] would refuse, without building the object.
pub(super) fn check(d: Dialect, task: &Task) -> Result<(), InvalidTask> {
    match task {
        #[cfg(feature = "declared-kinds")]
        Task::Declared(t) => check_declared(d, t).map(drop),
        Task::Raw(t) => raw_object(d, t).map(drop),
    }
}

fn raw_object(d: Dialect, t: &Raw) -> Result<&Map<String, Value>, InvalidTask> {
    t.task.as_ref().ok_or_else(|| {
        InvalidTask::new(
            "task",
            format!("{} speaks the createTask API: a raw task needs a `task` object with its `type`", d.as_str()),
        )
    })
}

#[cfg(feature = "declared-kinds")]
/// The task object of a declared kind: the type for with or without a proxy, the fixed keys,
/// then each given field under its key (a dotted key one object down).
fn declared_object(d: Dialect, t: &Declared) -> Result<Map<String, Value>, InvalidTask> {
    let (form, ty) = check_declared(d, t)?;
    let mut o = Obj::new(d, true, ty.to_string());
    for (k, v) in form.fixed {
        let (k, v) = in_key_form(k, Value::String(v.to_string()));
        o.put(k, v);
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
    if let Some(hook) = form.hook {
        super::hooks::run(hook, d, t, &mut o.map);
    }
    if ty == "AntiGateTask" {
        // AntiGateTask takes HTTPS proxies only and lists no `proxyType`
        // (https://anti-captcha.com/apidoc/task-types/AntiGateTask); the official client sends
        // none (anticaptchaofficial 1.0.72, antigatetask.py).
        o.map.remove("proxyType");
    }
    Ok(o.done())
}

#[cfg(feature = "declared-kinds")]
/// The key and value as a declared key writes them (`CreateTaskDecl::params`): `base64:` before
/// the key sends the text base64-encoded (CapMonster's `htmlPageBase64`), `json:` the value as a
/// JSON string, `host:` a URL's host (a text that is no URL as it is), `int:` a whole number
/// held as text as a JSON number (CapMonster's Yidun `hct`, a millisecond timestamp: the text keeps
/// it exact in every language, the wire wants a number), `[]` after it a list of one
/// (`imagesBase64[]`, where the kind takes one image).
fn in_key_form(key: &str, value: Value) -> (&str, Value) {
    use base64::Engine as _;
    let (key, value) = if let Some(key) = key.strip_prefix("base64:") {
        let text = value.as_str().unwrap_or_default();
        (key, Value::String(base64::engine::general_purpose::STANDARD.encode(text)))
    } else if let Some(key) = key.strip_prefix("json:") {
        // FunCaptcha's extra values: one JSON string (`"data": "{\"blob\":\"...\"}"`).
        (key, Value::String(value.to_string()))
    } else if let Some(key) = key.strip_prefix("host:") {
        // The host of a URL, or the text as it is when it is a host already (FunCaptcha's `surl`).
        let text = value.as_str().unwrap_or_default();
        (key, Value::String(crate::support::weburl::host_of(text).unwrap_or_else(|| text.to_string())))
    } else if let Some(key) = key.strip_prefix("bool:") {
        // A flag the dialect defaults the other way (anti-captcha's `case`, true there).
        let flag = value.as_str().map(|text| text == "true");
        (key, flag.map_or(value, Value::Bool))
    } else if let Some(key) = key.strip_prefix("int:") {
        // A text that is not a whole number goes as it is: the service names what it refuses.
        let number = value.as_str().and_then(|text| text.parse::<i64>().ok());
        (key, number.map_or(value, Value::from))
    } else {
        (key, value)
    };
    match key.strip_suffix("[]") {
        Some(key) => (key, Value::Array(vec![value])),
        None => (key, value),
    }
}

/// Whether `d` can take the declared task `t`, and its form and type name: every refusal
/// [`declared_object`] can give, without building the object (routing asks it of every lane).
#[cfg(feature = "declared-kinds")]
pub(super) fn check_declared(d: Dialect, t: &Declared) -> Result<(&'static CreateTaskDecl, &'static str), InvalidTask> {
    let form = declared_form(d, t)?;
    // A field the dialect has no place for first: it names what to take out of the task (the
    // first in the declaration's order, as the services' pages list them).
    let given = crate::task::kinds::decl(t.kind()).fields.iter().filter_map(|f| Some((f.name, t.get(f.name)?)));
    for (field, value) in given {
        if !form.params.iter().any(|(f, _)| *f == field) {
            return Err(super::no_equivalent(&format!("{} (createTask API)", d.as_str()), field));
        }
        if let Some((_, max)) = form.at_most.iter().find(|(f, _)| *f == field) {
            if value.as_u64().is_some_and(|n| n > *max) {
                let problem = format!("{} (createTask API) takes it only up to {max}; use a raw task", d.as_str());
                return Err(InvalidTask::new(field, problem));
            }
        }
    }
    let ty = if t.proxy().is_some() { form.proxied } else { form.proxyless };
    let ty = ty.ok_or_else(|| {
        let how = if t.proxy().is_some() { "without a proxy" } else { "through your proxy" };
        InvalidTask::new("proxy", format!("{} solves {} tasks only {how}", d.as_str(), t.kind()))
    })?;
    for field in form.requires {
        if t.get(field).is_none() {
            // A form chosen by a field says which tasks need it (a Turnstile challenge page).
            let which = form.when.map_or_else(String::new, |when| format!(" with `{when}`"));
            return Err(InvalidTask::new(*field, format!("{} needs it for {} tasks{which}", d.as_str(), t.kind())));
        }
    }
    if t.proxy().is_some() {
        if let Some(field) = form.requires_proxied.iter().find(|field| t.get(field).is_none()) {
            return Err(InvalidTask::new(
                *field,
                format!("{} solves {} tasks through your proxy only with it: give `{field}`", d.as_str(), t.kind()),
            ));
        }
    }
    Ok((form, ty))
}

#[cfg(feature = "declared-kinds")]
fn declared_form(d: Dialect, t: &Declared) -> Result<&'static CreateTaskDecl, InvalidTask> {
    // Not `not_solved`: at a custom endpoint the dialect's name is not the preset that dropped the kind.
    crate::task::kinds::create_task_form_of(t, d).ok_or_else(|| super::does_not_solve(d.as_str(), t.kind()))
}

/// Cookies as the createTask APIs take them: `name=value; name2=value2`
/// (https://anti-captcha.com/apidoc/task-types/RecaptchaV2TaskProxyless), also when given in the
/// v1 form `name:value;...`.
#[cfg(feature = "declared-kinds")]
fn create_task_cookies(cookies: &str) -> String {
    crate::task::kinds::rewrite_cookies(cookies, '=', "; ")
}
