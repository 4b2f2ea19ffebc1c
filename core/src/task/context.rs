//! What a task takes from where it is solved: a browser's proxy, cookies and user agent (the page front ends),
//! and a client's `task_defaults` (every task). One rule for both, decided here: a value goes only into a task
//! whose kind declares the field (`core/kinds/*.toml`), and a value the task already carries is kept (except
//! the browser's cookies, which replace what `document.cookie` showed: the browser's own list includes the
//! HttpOnly ones).
//!
//! A proxy is read in the forms a browser or a user gives it: a URL (`http://login:password@host:port`,
//! `socks5://host:port`, `host:port`), Playwright's `{ server, username, password }`, or the task's own form
//! (`{ type, host, port, login, password }`). Its credentials are secrets: no error here repeats them.

use serde_json::{Map, Value};

use crate::error::InvalidTask;
use crate::support::json_read::{FieldError, Fields, FromJson};
use crate::task::{Task, ValidTask};

/// A browser's or a client's values for the tasks it solves; each `None` leaves the field as the task has it.
#[derive(Clone, Default, PartialEq)]
pub struct TaskContext {
    /// In the task's form (`{ type, host, port, login?, password? }`), checked.
    pub proxy: Option<Value>,
    pub user_agent: Option<String>,
    /// `name=value; name=value`.
    pub cookies: Option<String>,
}

impl core::fmt::Debug for TaskContext {
    // The proxy's credentials and the cookies are secrets: neither is shown.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaskContext")
            .field("proxy", &self.proxy.as_ref().map(proxy_shown))
            .field("user_agent", &self.user_agent)
            .field("cookies", &self.cookies.as_ref().map(|_| "***"))
            .finish()
    }
}

/// A proxy for showing: `type://host:port`, never its login or password.
pub fn proxy_shown(proxy: &Value) -> String {
    let text = |k: &str| proxy.get(k).and_then(Value::as_str).unwrap_or("?").to_string();
    let port = proxy.get("port").map(|p| p.to_string()).unwrap_or_else(|| "?".to_string());
    format!("{}://{}:{port}", text("type"), text("host"))
}

/// Reads a proxy given as `field` (see the module doc): `None` for `null`/`false` (no proxy).
pub fn read_proxy(value: Value, field: &str) -> Result<Option<Value>, InvalidTask> {
    let proxy = match value {
        Value::Null | Value::Bool(false) => return Ok(None),
        Value::String(url) => proxy_of_url(&url, None, None, field)?,
        Value::Object(mut obj) if obj.contains_key("server") => {
            let server = match obj.remove("server") {
                Some(Value::String(s)) => s,
                _ => return Err(InvalidTask::new(format!("{field}.server"), "expected a proxy URL (a string)")),
            };
            let mut text = |k: &str| match obj.remove(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.is_empty() => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(InvalidTask::new(format!("{field}.{k}"), "expected a string")),
            };
            let (username, password) = (text("username")?, text("password")?);
            // Playwright's `bypass` says which hosts the browser reaches directly: nothing for a task.
            obj.remove("bypass");
            if let Some(k) = obj.keys().next() {
                return Err(InvalidTask::new(
                    format!("{field}.{k}"),
                    "unknown field (a proxy is { server, username, password } or { type, host, port, login, password })",
                ));
            }
            proxy_of_url(&server, username, password, field)?
        }
        Value::Object(obj) => obj,
        other => {
            return Err(InvalidTask::new(
                field,
                format!("expected a proxy URL, an object or false, got {}", super::read::json_type(&other)),
            ))
        }
    };
    check_proxy(Value::Object(proxy), field).map(Some)
}

/// A proxy checked as a task's `proxy` is (the one reader, check and limits), errors named under `field`.
fn check_proxy(proxy: Value, field: &str) -> Result<Value, InvalidTask> {
    let named = |e: InvalidTask| InvalidTask::new(e.field.replacen("proxy", field, 1), e.problem);
    let mut fields = super::read::Fields::new(Map::from_iter([("proxy".to_string(), proxy)]), "");
    let Some(proxy) = fields.proxy().map_err(named)? else { return Ok(Value::Null) };
    proxy.validate("proxy").map_err(named)?;
    let value = serde_json::to_value(&proxy).unwrap_or(Value::Null);
    super::limits::check_proxy(&value).map_err(named)?;
    Ok(value)
}

fn proxy_of_url(
    url: &str,
    login: Option<String>,
    password: Option<String>,
    field: &str,
) -> Result<Map<String, Value>, InvalidTask> {
    let url = url.trim();
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("http".to_string(), url),
    };
    // Chromium's `--proxy-server` also takes `socks` for SOCKS5 and per-scheme lists (`http=h:1;https=h:2`):
    // the first entry is the one a page's requests go through.
    let rest = rest.split(';').next().unwrap_or_default();
    let rest = rest.split_once('=').map(|(_, r)| r).unwrap_or(rest);
    let (rest, scheme) = match rest.split_once("://") {
        Some((inner, r)) => (r, inner.to_ascii_lowercase()),
        None => (rest, scheme),
    };
    let kind = match scheme.as_str() {
        "http" | "https" | "socks4" | "socks5" => scheme.clone(),
        "socks" | "socks5h" => "socks5".to_string(),
        _ => {
            return Err(InvalidTask::new(
                field,
                format!(
                    "a proxy URL's scheme is one of http, https, socks4, socks5 (got {})",
                    crate::support::quoted::Quoted(&scheme)
                ),
            ))
        }
    };
    let rest = rest.trim_end_matches('/');
    let (userinfo, address) = match rest.rsplit_once('@') {
        Some((u, a)) => (Some(u), a),
        None => (None, rest),
    };
    let (mut url_login, mut url_password) = (None, None);
    if let Some(userinfo) = userinfo {
        let (l, p) = userinfo.split_once(':').map_or((userinfo, None), |(l, p)| (l, Some(p)));
        url_login = Some(percent_decoded(l));
        url_password = p.map(percent_decoded);
    }
    let (host, port) =
        address.rsplit_once(':').ok_or_else(|| InvalidTask::new(field, "a proxy URL names its port (`host:port`)"))?;
    let port: u32 = port.parse().map_err(|_| InvalidTask::new(format!("{field}.port"), "not a port number"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let mut out = Map::new();
    out.insert("type".into(), Value::String(kind));
    out.insert("host".into(), Value::String(host.to_string()));
    out.insert("port".into(), Value::from(port));
    if let Some(l) = login.or(url_login).filter(|l| !l.is_empty()) {
        out.insert("login".into(), Value::String(l));
    }
    if let Some(p) = password.or(url_password).filter(|p| !p.is_empty()) {
        out.insert("password".into(), Value::String(p));
    }
    Ok(out)
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl TaskContext {
    /// `task` (task JSON) with this context's values in the fields its kind takes (see the module doc);
    /// answers the task and the names of the fields it filled. `replace_cookies`: the browser's cookies
    /// replace the task's.
    pub fn fill(&self, task: Value, replace_cookies: bool) -> Result<(Value, Vec<&'static str>), InvalidTask> {
        let Value::Object(mut obj) = task else {
            return Err(InvalidTask::new("task", "expected a JSON object"));
        };
        let kind = obj
            .get("type")
            .and_then(Value::as_str)
            .and_then(crate::task::TaskKind::parse)
            .ok_or_else(|| InvalidTask::new("type", "missing or unknown task type"))?;
        let decl = crate::task::kinds::decl(kind);
        let mut filled = Vec::new();
        let takes = |name: &str| decl.field(name).is_some();
        let has = |obj: &Map<String, Value>, snake: &str, camel: &str| {
            obj.get(snake).or_else(|| obj.get(camel)).is_some_and(|v| !v.is_null())
        };
        if let Some(proxy) = &self.proxy {
            if takes("proxy") && !has(&obj, "proxy", "proxy") {
                obj.insert("proxy".into(), proxy.clone());
                filled.push("proxy");
            }
        }
        if let Some(ua) = &self.user_agent {
            if takes("user_agent") && !has(&obj, "user_agent", "userAgent") {
                obj.insert("user_agent".into(), Value::String(ua.clone()));
                filled.push("user_agent");
            }
        }
        if let Some(cookies) = self.cookies.as_ref().filter(|c| !c.trim().is_empty()) {
            if takes("cookies") && (replace_cookies || !has(&obj, "cookies", "cookies")) {
                obj.insert("cookies".into(), Value::String(cookies.clone()));
                filled.push("cookies");
            }
        }
        Ok((Value::Object(obj), filled))
    }

    /// `task` with this context's values (the client's `task_defaults`), checked again only when one was added.
    pub fn apply(&self, task: ValidTask) -> Result<ValidTask, InvalidTask> {
        if self.proxy.is_none() && self.user_agent.is_none() && self.cookies.is_none() {
            return Ok(task);
        }
        // The task with its `page_context` (the fields a page added stay named as such).
        let value = serde_json::to_value(&task).map_err(|e| InvalidTask::new("task", e.to_string()))?;
        let (value, filled) = self.fill(value, false)?;
        if filled.is_empty() {
            return Ok(task);
        }
        Task::from_json_value(value)
    }
}

/// The client's `task_defaults`: `{ proxy, user_agent }` for every task whose kind takes them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskDefaults(pub TaskContext);

impl FromJson for TaskDefaults {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let proxy: Option<Value> = f.opt("proxy")?;
        let user_agent: Option<String> = f.opt("user_agent")?;
        f.finish()?;
        let proxy = match proxy {
            Some(p) => read_proxy(p, "proxy").map_err(|e| FieldError::new(e.field, e.problem))?,
            None => None,
        };
        if let Some(ua) = &user_agent {
            if ua.trim().is_empty() || ua.chars().any(char::is_control) {
                return Err(FieldError::new("user_agent", "expected a user agent (non-empty, one line)"));
            }
        }
        Ok(TaskDefaults(TaskContext { proxy, user_agent, cookies: None }))
    }
}

impl TaskDefaults {
    pub fn apply(&self, task: ValidTask) -> Result<ValidTask, InvalidTask> {
        self.0.apply(task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn proxies_are_read_in_each_form_and_checked() {
        let p = read_proxy(json!("http://u:p%40ss@127.0.0.1:8080"), "proxy").unwrap().unwrap();
        assert_eq!(p, json!({ "type": "http", "host": "127.0.0.1", "port": 8080, "login": "u", "password": "p@ss" }));
        let p = read_proxy(json!({ "server": "socks5://10.0.0.1:1080", "username": "a", "password": "b" }), "proxy")
            .unwrap()
            .unwrap();
        assert_eq!(p, json!({ "type": "socks5", "host": "10.0.0.1", "port": 1080, "login": "a", "password": "b" }));
        let p = read_proxy(json!("proxy.example:3128"), "proxy").unwrap().unwrap();
        assert_eq!(p, json!({ "type": "http", "host": "proxy.example", "port": 3128 }));
        assert_eq!(read_proxy(json!(false), "proxy").unwrap(), None);
        let e = read_proxy(json!({ "type": "http", "host": "h", "port": 0 }), "options.proxy").unwrap_err();
        assert_eq!(e.field, "options.proxy.port");
        let e = read_proxy(json!("ftp://u:secret@h:1"), "proxy").unwrap_err();
        assert!(!e.problem.contains("secret"), "{e:?}");
        let e = read_proxy(json!("http://u:secret@h"), "proxy").unwrap_err();
        assert!(!e.problem.contains("secret"), "{e:?}");
        let e = read_proxy(json!({ "server": "http://h:1", "colour": "red" }), "proxy").unwrap_err();
        assert_eq!(e.field, "proxy.colour");
    }

    #[test]
    fn values_go_only_where_the_kind_takes_them() {
        let ctx = TaskContext {
            proxy: Some(json!({ "type": "http", "host": "h", "port": 1, "login": "l", "password": "secret" })),
            user_agent: Some("UA/1".into()),
            cookies: Some("a=1; b=2".into()),
        };
        let (v2, filled) = ctx
            .fill(json!({ "type": "recaptcha_v2", "sitekey": "k", "page_url": "https://x/", "cookies": "a=1" }), true)
            .unwrap();
        assert_eq!(filled, ["proxy", "user_agent", "cookies"]);
        assert_eq!(v2["cookies"], "a=1; b=2");
        // reCAPTCHA v3 takes no user agent or cookies.
        let (v3, filled) =
            ctx.fill(json!({ "type": "recaptcha_v3", "sitekey": "k", "page_url": "https://x/" }), true).unwrap();
        assert!(!filled.contains(&"cookies") && !filled.contains(&"user_agent"), "{filled:?} {v3}");
        // A task's own value is kept.
        let (t, _) = ctx
            .fill(json!({ "type": "turnstile", "sitekey": "k", "page_url": "https://x/", "user_agent": "Mine" }), true)
            .unwrap();
        assert_eq!(t["user_agent"], "Mine");
        assert!(!format!("{ctx:?}").contains("secret") && !format!("{ctx:?}").contains("b=2"));
    }

    #[test]
    fn defaults_are_applied_to_checked_tasks_and_unknown_keys_refused() {
        let defaults = TaskDefaults::from_json(json!({ "proxy": "http://l:pw@h:3128", "user_agent": "UA/2" })).unwrap();
        let task =
            Task::from_json_value(json!({ "type": "hcaptcha", "sitekey": "k", "page_url": "https://x/" })).unwrap();
        let task = defaults.apply(task).unwrap();
        let v = serde_json::to_value(task.as_task()).unwrap();
        assert_eq!(v["proxy"]["host"], "h");
        assert_eq!(v["user_agent"], "UA/2");
        let image = Task::from_json_value(json!({ "type": "image", "body": "aGVsbG8=" })).unwrap();
        assert_eq!(defaults.apply(image.clone()).unwrap(), image);
        let e = TaskDefaults::from_json(json!({ "proxy": "http://h:1", "colour": 1 })).unwrap_err();
        assert!(e.field.contains("colour"), "{e:?}");
        let e = TaskDefaults::from_json(json!({ "proxy": { "type": "gopher", "host": "h", "port": 1 } })).unwrap_err();
        assert_eq!(e.field, "proxy.type");
        assert!(!format!("{defaults:?}").contains("pw"));
    }
}
