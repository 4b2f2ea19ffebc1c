//! Task kinds: what the user asks to have solved, validated at construction.
//!
//! Field names are snake_case (the Rust and record spelling) with camelCase
//! aliases, because JS users pass `{ pageUrl, userAgent }` objects. Build tasks
//! from untrusted JSON with [`Task::from_json_value`] / [`Task::from_json_str`]:
//! they reject unknown fields and wrong types naming the field, then check the
//! task once, giving a [`ValidTask`] (the only form the engine takes).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::InvalidTask;
use crate::support::json_read::{deserialize_from_json, unit_variant, FieldError, FromJson};
use crate::support::quoted::Quoted;
use read::{json_type, Fields};

pub mod context;
pub(crate) mod kind_ms;
pub mod kinds;
mod limits;
pub mod page_context;
mod read;
mod valid;

#[cfg(feature = "declared-kinds")]
pub use kinds::Declared;

#[cfg(feature = "declared-kinds")]
pub(crate) use limits::base64_decoded_len;
pub use limits::MAX_IMAGE_BYTES;
pub use valid::ValidTask;

/// One CAPTCHA to solve. The `type` tag names the kind (`recaptcha_v2`, ...).
/// Variants are boxed so that a `Task` (kept in journal entries, records and
/// engine queues) stays two words however many options a kind grows.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Task {
    Raw(Box<Raw>),
    /// A kind whose fields and wire form are declared as data (`task::kinds`); it writes its
    /// own `type`. Feature `declared-kinds`, not in the browser build (docs/decisions/0051-every-kind-declared-once.md: it
    /// would take the `.wasm` over its size guard); there such a kind is sent as a raw task.
    #[serde(untagged)]
    #[cfg(feature = "declared-kinds")]
    Declared(Box<Declared>),
}

/// The escape hatch: `method` + free parameters for 2captcha-compatible
/// services, or a whole `task` object (with its `type`) for createTask ones.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Raw {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A proxy the solver's workers should use to load the page.
#[derive(Clone, PartialEq, Eq, Serialize)]
// Read by the typed tasks (`kinds::typed`, feature `declared-kinds`); the task reader checks it.
#[cfg_attr(feature = "declared-kinds", derive(serde::Deserialize))]
pub struct Proxy {
    /// `http`, `https`, `socks4` or `socks5`.
    #[serde(rename = "type")]
    pub kind: String,
    pub host: String,
    pub port: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

impl std::fmt::Debug for Proxy {
    // The proxy password is a credential too: keep it out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("kind", &self.kind)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("login", &self.login)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .finish()
    }
}

impl Proxy {
    pub const TYPES: [&'static str; 4] = ["http", "https", "socks4", "socks5"];

    /// `login:password@host:port` (or `host:port`), the 2captcha `proxy` format.
    pub fn address(&self) -> String {
        match (&self.login, &self.password) {
            (Some(l), Some(p)) => format!("{l}:{p}@{}:{}", self.host, self.port),
            (Some(l), None) => format!("{l}@{}:{}", self.host, self.port),
            _ => format!("{}:{}", self.host, self.port),
        }
    }

    pub(in crate::task) fn validate(&self, field: &str) -> Result<(), InvalidTask> {
        if !Self::TYPES.contains(&self.kind.as_str()) {
            return Err(InvalidTask::new(
                format!("{field}.type"),
                format!("unknown proxy type {}; expected one of {}", Quoted(&self.kind), Self::TYPES.join(", ")),
            ));
        }
        if self.host.trim().is_empty() || self.host.contains(['/', '@', ' ']) {
            return Err(InvalidTask::new(format!("{field}.host"), "must be a host name or IP address"));
        }
        if !(1..=65535).contains(&self.port) {
            return Err(InvalidTask::new(format!("{field}.port"), format!("{} is not a port (1..65535)", self.port)));
        }
        if self.password.is_some() && self.login.is_none() {
            return Err(InvalidTask::new(format!("{field}.login"), "a proxy password needs a login"));
        }
        Ok(())
    }
}

// `TaskKind`: a variant per kind file (`core/kinds/<kind>.toml`), in the order of their
// `position`s, with `ALL`, `as_str` and `schedule`, written by core/build.rs
// (docs/decisions/0078-one-task-model.md).
include!(concat!(env!("OUT_DIR"), "/task_kind.rs"));

impl TaskKind {
    pub fn parse(s: &str) -> Option<Self> {
        TaskKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The kind's position in [`TaskKind::ALL`], for tables indexed by kind.
    pub const fn index(self) -> usize {
        // Declared in the order of `ALL` (checked by a test).
        self as usize
    }
}

impl Serialize for TaskKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for TaskKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromJson for TaskKind {
    fn from_json(value: serde_json::Value) -> Result<Self, FieldError> {
        unit_variant(value, &TaskKind::ALL, TaskKind::as_str)
    }
}

/// Read as a [`ValidTask`] is: checked (see there).
impl FromJson for Task {
    fn from_json(value: serde_json::Value) -> Result<Self, FieldError> {
        ValidTask::from_json(value).map(ValidTask::into_task)
    }
}

deserialize_from_json!(TaskKind, Task);

impl Task {
    /// The declaration of the task's kind.
    pub fn kind_decl(&self) -> &'static kinds::KindDecl {
        kinds::decl(self.kind())
    }

    pub fn kind(&self) -> TaskKind {
        match self {
            Task::Raw(_) => TaskKind::Raw,
            #[cfg(feature = "declared-kinds")]
            Task::Declared(t) => t.kind(),
        }
    }

    /// The site's key for the challenge (GeeTest `gt`/`captcha_id`, FunCaptcha
    /// `publickey`), for grouping failures by site.
    pub fn sitekey(&self) -> Option<&str> {
        match self {
            Task::Raw(t) => raw_value(t, &["googlekey", "sitekey"], &["websiteKey"]),
            #[cfg(feature = "declared-kinds")]
            Task::Declared(t) => {
                ["sitekey", "gt", "publickey", "app_id", "captcha_id", "master_url_id", "misery_key", "scene_id"]
                    .iter()
                    .find_map(|f| t.text(f))
            }
        }
    }

    pub fn page_url(&self) -> Option<&str> {
        match self {
            Task::Raw(t) => raw_value(t, &["pageurl"], &["websiteURL"]),
            #[cfg(feature = "declared-kinds")]
            Task::Declared(t) => t.text("page_url"),
        }
    }

    /// Parses a task from JSON (snake_case or camelCase fields) and checks it, once
    /// ([`ValidTask::new`]). Every error names the field (`type`, `page_url`, `proxy.port`, ...).
    pub fn from_json_value(value: serde_json::Value) -> Result<ValidTask, InvalidTask> {
        let serde_json::Value::Object(mut obj) = value else {
            return Err(InvalidTask::new("task", format!("expected a JSON object, got {}", json_type(&value))));
        };
        let tag = match obj.remove("type") {
            Some(serde_json::Value::String(s)) => s,
            Some(other) => {
                return Err(InvalidTask::new("type", format!("expected a string, got {}", json_type(&other))))
            }
            None => return Err(InvalidTask::new("type", "missing field")),
        };
        let kind = TaskKind::parse(&tag).ok_or_else(|| {
            let known: Vec<&str> = TaskKind::ALL.iter().map(|k| k.as_str()).collect();
            InvalidTask::new(
                "type",
                format!("unknown task type {}; expected one of {}", Quoted(&tag), known.join(", ")),
            )
        })?;
        let page_context = page_context::PageContext::take(&mut obj);
        let mut f = Fields::new(obj, "");
        let task = match kind {
            TaskKind::Raw => Task::Raw(Box::new(f.raw()?)),
            #[cfg(feature = "declared-kinds")]
            declared => Task::Declared(Box::new(Declared::read(kinds::decl(declared), &mut f)?)),
            #[cfg(not(feature = "declared-kinds"))]
            _ => return Err(InvalidTask::new("type", "this kind is not in this build (cargo feature `declared-kinds` is off, as in the browser build); send it as a raw task")),
        };
        f.finish()?;
        let page_context = match page_context {
            Some(list) => page_context::PageContext::read(list, &task)?,
            None => page_context::PageContext::default(),
        };
        Ok(ValidTask::new(task)?.with_page_context(page_context))
    }

    /// [`Task::from_json_value`] on text.
    pub fn from_json_str(text: &str) -> Result<ValidTask, InvalidTask> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| InvalidTask::new("task", format!("not valid JSON: {e}")))?;
        Task::from_json_value(value)
    }

    /// Checks every field; the error names the first bad one. Called by [`ValidTask::new`]
    /// only: a task is checked once, when it becomes a `ValidTask`.
    pub(in crate::task) fn validate(&self) -> Result<(), InvalidTask> {
        #[cfg(test)]
        ValidTask::count_check();
        limits::check(self)?;
        match self {
            Task::Raw(t) => t.validate(),
            // Checked when read: a `Declared` holds only valid values.
            #[cfg(feature = "declared-kinds")]
            Task::Declared(_) => Ok(()),
        }
    }
}

impl Raw {
    fn validate(&self) -> Result<(), InvalidTask> {
        if self.method.is_none() && self.task.is_none() {
            return Err(InvalidTask::new("method", "a raw task needs `method` (and `params`) or a `task` object"));
        }
        opt_non_empty("method", &self.method)?;
        if self.params.keys().any(|k| k.is_empty()) {
            return Err(InvalidTask::new("params", "parameter names must be non-empty"));
        }
        if self.params.contains_key("key") || self.params.contains_key("method") {
            return Err(InvalidTask::new("params", "`key` and `method` are set by the client, not in params"));
        }
        if let Some(task) = &self.task {
            match task.get("type") {
                Some(serde_json::Value::String(s)) if !s.trim().is_empty() => {}
                _ => return Err(InvalidTask::new("task.type", "a raw task object needs a non-empty string `type`")),
            }
        }
        Ok(())
    }
}

/// A base64 image: not empty, not a data: URL, decodable.
#[cfg(feature = "declared-kinds")]
pub(in crate::task) fn base64_image(field: &str, value: &str) -> Result<(), InvalidTask> {
    if value.trim().is_empty() {
        return Err(InvalidTask::new(field, "empty image"));
    }
    // Providers accept both padded and unpadded base64; whitespace from
    // wrapped encoders is common and harmless.
    if value.trim_start().starts_with("data:") {
        return Err(InvalidTask::new(field, "a data: URL; pass only the base64 part after the comma"));
    }
    use base64::Engine as _;
    let compact: String = value.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    match engine.decode(compact.as_bytes()) {
        Ok(bytes) if !bytes.is_empty() => Ok(()),
        Ok(_) => Err(InvalidTask::new(field, "empty image")),
        Err(e) => Err(InvalidTask::new(field, format!("not valid base64: {e}"))),
    }
}

fn raw_value<'a>(t: &'a Raw, params: &[&str], task_keys: &[&str]) -> Option<&'a str> {
    params
        .iter()
        .find_map(|k| t.params.get(*k).map(String::as_str))
        .or_else(|| task_keys.iter().find_map(|k| t.task.as_ref()?.get(*k)?.as_str()))
}

fn non_empty(field: &str, value: &str) -> Result<(), InvalidTask> {
    if value.trim().is_empty() {
        return Err(InvalidTask::new(field, "must not be empty"));
    }
    Ok(())
}

fn opt_non_empty(field: &str, value: &Option<String>) -> Result<(), InvalidTask> {
    value.as_deref().map_or(Ok(()), |v| non_empty(field, v))
}

#[cfg(feature = "declared-kinds")]
pub(in crate::task) fn http_url(field: &str, value: &str) -> Result<(), InvalidTask> {
    crate::support::weburl::parse(value).map(drop).map_err(|e| InvalidTask::new(field, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err_field(v: serde_json::Value) -> String {
        match Task::from_json_value(v) {
            Err(e) => e.field,
            Ok(t) => format!("accepted {t:?}"),
        }
    }

    #[test]
    fn kind_index_is_the_position_in_all() {
        for (i, kind) in TaskKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), i, "{kind}");
        }
    }

    #[test]
    fn camel_case_aliases_are_accepted() {
        let t = Task::from_json_value(json!({"type": "recaptcha_v3", "sitekey": "k", "pageUrl": "https://a.test/",
            "minScore": 0.3}))
        .unwrap();
        assert_eq!(t.kind(), TaskKind::RecaptchaV3);
        assert_eq!(t.page_url(), Some("https://a.test/"));
        assert_eq!(t.sitekey(), Some("k"));
        // Serialises with the snake_case names.
        let back = serde_json::to_value(&t).unwrap();
        assert_eq!(
            back,
            json!({"type": "recaptcha_v3", "sitekey": "k", "page_url": "https://a.test/", "min_score": 0.3})
        );
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(err_field(json!({"type": "recaptcha_v2", "page_url": "https://a.test"})), "sitekey");
        assert_eq!(err_field(json!({"type": "recaptcha_v2", "sitekey": 5, "page_url": "https://a.test"})), "sitekey");
        assert_eq!(
            err_field(json!({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://a.test", "x": 1})),
            "x"
        );
        assert_eq!(err_field(json!({"type": "nope"})), "type");
        assert_eq!(err_field(json!({"sitekey": "k"})), "type");
        assert_eq!(err_field(json!([1])), "task");
        assert_eq!(err_field(json!({"type": "recaptcha_v2", "sitekey": "k", "page_url": "ftp://a.test"})), "page_url");
        assert_eq!(err_field(json!({"type": "recaptcha_v2", "sitekey": "k", "page_url": "/relative"})), "page_url");
        assert_eq!(
            err_field(json!({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://a.test",
                "proxy": {"type": "http", "host": "h", "port": "x"}})),
            "proxy.port"
        );
        assert_eq!(
            err_field(json!({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://a.test",
                "proxy": {"type": "http", "port": 80}})),
            "proxy.host"
        );
        assert_eq!(
            err_field(json!({"type": "turnstile", "sitekey": "k", "page_url": "https://a.test",
                "proxy": {"type": "ftp", "host": "h", "port": 80}})),
            "proxy.type"
        );
        assert_eq!(
            err_field(json!({"type": "turnstile", "sitekey": "k", "page_url": "https://a.test",
                "proxy": {"type": "http", "host": "h", "port": 0}})),
            "proxy.port"
        );
        assert_eq!(err_field(json!({"type": "image", "body": "@@@"})), "body");
        assert_eq!(err_field(json!({"type": "image", "body": ""})), "body");
        assert_eq!(err_field(json!({"type": "image", "body": "aGk=", "min_len": 5, "max_len": 2})), "min_len");
        assert_eq!(err_field(json!({"type": "raw"})), "method");
        assert_eq!(err_field(json!({"type": "raw", "method": " "})), "method");
    }

    #[test]
    fn new_kinds_and_fields_name_their_errors() {
        let text = Task::from_json_value(json!({"type": "text", "text": "Is today Monday?", "lang": "en"})).unwrap();
        assert_eq!((text.kind(), text.sitekey(), text.page_url()), (TaskKind::Text, None, None));
        assert_eq!(err_field(json!({"type": "text"})), "text");
        assert_eq!(err_field(json!({"type": "text", "text": 5})), "text");
        assert_eq!(err_field(json!({"type": "text", "text": "q", "lang": ""})), "lang");
        assert_eq!(err_field(json!({"type": "text", "text": "x".repeat(141)})), "text");
        assert_eq!(err_field(json!({"type": "text", "text": "q", "sitekey": "k"})), "sitekey");
        let hint = Task::from_json_value(json!({"type": "image", "body": "aGk=", "imgInstructions": "aGk="})).unwrap();
        assert!(matches!(hint.as_task(), Task::Declared(t) if t.text("imginstructions") == Some("aGk=")));
        assert_eq!(err_field(json!({"type": "image", "body": "aGk=", "imginstructions": "@@@"})), "imginstructions");
        assert_eq!(err_field(json!({"type": "image", "body": "aGk=", "imgInstructions": "data:x"})), "imginstructions");
        let v2 = Task::from_json_value(json!({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://a.test",
            "action": "login"}))
        .unwrap();
        assert_eq!(serde_json::to_value(&v2).unwrap()["action"], "login");
        assert_eq!(
            err_field(json!({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://a.test", "action": " "})),
            "action"
        );
    }

    #[test]
    fn a_field_given_in_both_spellings_is_an_error_and_null_is_absent() {
        let twice = Task::from_json_value(json!({"type": "turnstile", "sitekey": "k", "page_url": "https://a.test",
            "pageUrl": "https://b.test"}))
        .unwrap_err();
        assert_eq!(twice.field, "page_url");
        assert!(twice.problem.contains("pageUrl"), "{}", twice.problem);
        let t = Task::from_json_value(json!({"type": "turnstile", "sitekey": "k", "page_url": "https://a.test",
            "proxy": null, "action": null}))
        .unwrap();
        assert_eq!(t.sitekey(), Some("k"));
        assert_eq!(
            err_field(json!({"type": "turnstile", "sitekey": "k", "page_url": "https://a.test", "proxy": [1]})),
            "proxy"
        );
        assert_eq!(err_field(json!({"type": "image", "body": "aGk=", "numeric": -1})), "numeric");
        assert_eq!(err_field(json!({"type": "image", "body": "aGk=", "min_len": 1.5})), "min_len");
        assert_eq!(err_field(json!({"type": "image", "body": "aGk=", "minLen": "5"})), "minLen");
        // `caseSensitive`, the official 2captcha clients' name for `regsense`: taken, but not beside it.
        let case = Task::from_json_value(json!({"type": "image", "body": "aGk=", "caseSensitive": true})).unwrap();
        assert_eq!(serde_json::to_value(&case).unwrap()["regsense"], true);
        let twice =
            Task::from_json_value(json!({"type": "image", "body": "aGk=", "regsense": true, "caseSensitive": false}));
        assert_eq!(twice.unwrap_err().field, "regsense");
    }

    #[test]
    fn an_image_tasks_numbers_keep_their_rules() {
        // 0 is the services' "any": the same as none, so not kept (no form sends or refuses it).
        let any = Task::from_json_value(json!({"type": "image", "body": "aGk=", "numeric": 0, "language": 0})).unwrap();
        assert_eq!(serde_json::to_value(&any).unwrap(), json!({"type": "image", "body": "aGk="}));
        let wrong =
            Task::from_json_value(json!({"type": "image", "body": "aGk=", "min_len": 9, "maxLen": 3})).unwrap_err();
        assert_eq!((wrong.field.as_str(), wrong.problem.as_str()), ("min_len", "min_len 9 is greater than max_len 3"));
        assert_eq!(err_field(json!({"type": "image", "body": "aGk=", "max_len": 0})), "max_len");
        assert_eq!(err_field(json!({"type": "image", "body": "aGk=", "numeric": 5})), "numeric");
        assert_eq!(err_field(json!({"type": "image", "body": "aGk=", "language": 3})), "language");
        assert_eq!(err_field(json!({"type": "turnstile", "sitekey": "k", "pageUrl": 5})), "pageUrl");
    }

    #[test]
    fn stored_tasks_are_checked_when_read_back() {
        let bad: Result<Task, _> =
            serde_json::from_str(r#"{"type": "turnstile", "sitekey": "", "page_url": "https://a"}"#);
        assert!(bad.unwrap_err().to_string().starts_with("sitekey: must not be empty"));
    }

    #[test]
    fn proxy_password_is_not_in_debug() {
        let p = Proxy {
            kind: "http".into(),
            host: "h".into(),
            port: 1,
            login: Some("u".into()),
            password: Some("pw-secret".into()),
        };
        assert!(!format!("{p:?}").contains("pw-secret"));
        assert_eq!(p.address(), "u:pw-secret@h:1");
    }
}
