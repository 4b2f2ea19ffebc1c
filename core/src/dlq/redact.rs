//! The one rule for secrets a task carries (issue 44, finding 2), used wherever a record
//! leaves the operator's hands: exports for viewers, edit diffs and their history entries, the
//! retention archive, and every dashboard page.
//!
//! A task holds secrets in three shapes, and each is caught by one part of the rule:
//! - a member whose *name* says it holds one ([`is_secret_name`]): a proxy's `login` and
//!   `password`, `cookies`, `proxyLogin`/`proxyPassword` in a raw createTask object,
//!   `api_key`, `token`, `secret`, `session_id`, `authorization`…; its value is replaced
//!   (every string inside it, for an object or a list, so the shape stays);
//! - credentials written *inside a text* ([`redact_text`]): a raw proxy string
//!   `login:pass@host:port` (2captcha's `proxy` parameter), a URL with user info
//!   (`http://login:pass@host`, `socks5://token@host`), and `key=…` / `"clientKey": "…"`
//!   as HTTP libraries quote a polled URL or a request body in their errors;
//! - both, anywhere in a record's JSON ([`redact_value`]): every member of every object and
//!   every string, at any depth, so a new task field or a declared kind is covered without
//!   being listed here.
//!
//! What is shown in place of a secret is [`REDACTED`]. Redaction is for reading: a redacted
//! record is a value to show or export, not a task to solve again, so it stays JSON.

use std::borrow::Cow;

use serde_json::Value;

use crate::dlq::record::DeadLetterRecord;
use crate::support::cased;
use crate::support::json_read::Casing;

/// Shown in place of a secret's value.
pub const REDACTED: &str = "[redacted]";

/// Name endings (lowercase, without `_`, `-` and `.`) of members that hold a secret:
/// `proxy_password`, `proxyLogin`, `tspd_cookie`, `s_s_c_session_id`, `client-secret`.
const SECRET_ENDINGS: [&str; 17] = [
    "password",
    "passwd",
    "login",
    "secret",
    "apikey",
    "clientkey",
    "accesskey",
    "privatekey",
    "token",
    "cookie",
    "cookies",
    "authorization",
    "sessionid",
    "credentials",
    "credential",
    "localstorage",
    "bearer",
];

/// Whole names (normalised likewise) that hold a secret: 2captcha's own `key`, `pass`, `auth`.
const SECRET_NAMES: [&str; 4] = ["key", "pass", "auth", "session"];

/// Whether a member named `name` holds a secret (see the module documentation).
pub fn is_secret_name(name: &str) -> bool {
    let normal: String =
        name.chars().filter(|c| !matches!(c, '_' | '-' | '.')).map(|c| c.to_ascii_lowercase()).collect();
    SECRET_NAMES.contains(&normal.as_str()) || SECRET_ENDINGS.iter().any(|end| normal.ends_with(end))
}

/// `text` with the credentials it spells out replaced: the user info of a URL or of a raw proxy
/// string (`login:pass@host`), and `key=…` / quoted `clientKey`/`apiKey`/`api_key` values.
/// Borrowed when there is nothing to replace.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let userinfo = redact_userinfo(text);
    let scrubbed = scrub_secrets(&userinfo);
    if scrubbed == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(scrubbed)
    }
}

/// `text` with API keys replaced: `key=…` (as `requests` quotes a polled `res.php?key=…&action=get`
/// in its exception messages, which the seeds stored verbatim) and quoted `clientKey`/`apiKey`/
/// `api_key` values. Part of [`redact_text`]; the import of seed files uses it alone.
pub fn scrub_secrets(text: &str) -> String {
    let mut out = scrub_after(text, "key=", |before| {
        before.is_none_or(|c| matches!(c, '?' | '&' | ' ' | '(' | '\'' | '"' | '\n' | '\t'))
    });
    for name in ["clientKey", "apiKey", "api_key"] {
        out = scrub_quoted_field(&out, name);
    }
    out
}

fn ends_value(c: char) -> bool {
    c.is_whitespace() || matches!(c, '&' | '\'' | '"' | ')' | ';' | ',' | '<' | '>' | '#')
}

/// Replaces the value after each `marker` (when `boundary` accepts the char before it).
fn scrub_after(text: &str, marker: &str, boundary: impl Fn(Option<char>) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(marker) {
        let (head, tail) = rest.split_at(pos);
        let before = head.chars().next_back().or_else(|| out.chars().next_back());
        out.push_str(head);
        out.push_str(marker);
        let value_start = tail.strip_prefix(marker).unwrap_or(tail);
        if boundary(before) {
            let end = value_start.find(ends_value).unwrap_or(value_start.len());
            if end > 0 {
                out.push_str(REDACTED);
            }
            rest = &value_start[end..];
        } else {
            rest = value_start;
        }
    }
    out.push_str(rest);
    out
}

/// Replaces the value of `"name": "value"` or `'name': 'value'` (JSON or a Python dict repr).
fn scrub_quoted_field(text: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(name) {
        let (head, tail) = rest.split_at(pos + name.len());
        out.push_str(head);
        let after_name = tail.trim_start_matches(['"', '\'']).trim_start();
        let Some(after_colon) = after_name.strip_prefix([':', '=']) else {
            rest = tail;
            continue;
        };
        let value = after_colon.trim_start();
        let Some(quote) = value.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            rest = tail;
            continue;
        };
        let body = &value[1..];
        let Some(end) = body.find(quote) else {
            rest = tail;
            continue;
        };
        let prefix_len = tail.len() - value.len();
        out.push_str(&tail[..prefix_len]);
        out.push(quote);
        out.push_str(REDACTED);
        out.push(quote);
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Characters that end the user info scanned back from an `@`: the start of a word, a value
/// or a URL's authority.
fn starts_userinfo(c: char) -> bool {
    c.is_whitespace() || matches!(c, '/' | '"' | '\'' | '=' | '&' | '?' | ',' | ';' | '(' | '<' | '[' | '{' | '`')
}

/// Replaces `user[:pass]` before each `@` that follows `://` (a URL's user info, whatever it
/// holds), and `login:pass` before an `@` followed by a host (a raw proxy string; a colon is
/// required there so that an e-mail address is left alone).
fn redact_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut done = 0; // bytes of `text` already in `out`
    for (at, _) in text.match_indices('@') {
        if at < done {
            continue;
        }
        let head = &text[done..at];
        let start = head.rfind(starts_userinfo).map_or(0, |i| i + head[i..].chars().next().map_or(1, char::len_utf8));
        let userinfo = &head[start..];
        let after_scheme = head[..start].ends_with("://");
        let host_follows = text[at + 1..].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '[');
        let secret =
            !userinfo.is_empty() && userinfo != REDACTED && (after_scheme || (userinfo.contains(':') && host_follows));
        if secret {
            out.push_str(&head[..start]);
            out.push_str(REDACTED);
            out.push('@');
        } else {
            out.push_str(head);
            out.push('@');
        }
        done = at + 1;
    }
    if done == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[done..]);
    Cow::Owned(out)
}

/// Redacts `value` in place: members with a secret's name, and every string by [`redact_text`].
pub fn redact_value(value: &mut Value) {
    match value {
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                if is_secret_name(name) {
                    hide(member);
                } else {
                    redact_value(member);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_value),
        Value::String(s) => {
            if let Cow::Owned(clean) = redact_text(s) {
                *s = clean;
            }
        }
        _ => {}
    }
}

/// Every string in `value` becomes [`REDACTED`] (objects and lists keep their shape; numbers and
/// flags say nothing secret on their own and stay).
fn hide(value: &mut Value) {
    match value {
        Value::String(s) => *s = REDACTED.to_string(),
        Value::Object(members) => members.values_mut().for_each(hide),
        Value::Array(items) => items.iter_mut().for_each(hide),
        _ => {}
    }
}

/// A record as it is exported (snake_case), redacted: what a viewer may read.
pub fn redacted_record(record: &DeadLetterRecord) -> Value {
    let mut value = cased::to_value(record, Casing::Snake).unwrap_or(Value::Null);
    redact_value(&mut value);
    value
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_scrubbed() {
        let text = "HTTPSConnectionPool(host='ocr.captchaai.com', port=443): Max retries exceeded with url: \
                    /res.php?key=abcdef0123456789&action=get&id=71823460&json=1 (Caused by ...)";
        let clean = scrub_secrets(text);
        assert!(!clean.contains("abcdef0123456789"), "{clean}");
        assert!(clean.contains("/res.php?key=[redacted]&action=get"), "{clean}");
        assert_eq!(scrub_secrets("monkey=1 key=s3cret"), "monkey=1 key=[redacted]");
        let json = r#"{"clientKey": "s3cret", "task": {}} and 'api_key': 'x1'"#;
        assert_eq!(scrub_secrets(json), r#"{"clientKey": "[redacted]", "task": {}} and 'api_key': '[redacted]'"#);
        assert_eq!(scrub_secrets("clientKey alone, apiKey=\"y\""), "clientKey alone, apiKey=\"[redacted]\"");
        assert_eq!(scrub_secrets("ключ key=é"), "ключ key=[redacted]");
    }

    #[test]
    fn secret_names_are_found_in_every_casing() {
        for name in [
            "password",
            "proxy_password",
            "proxyPassword",
            "proxyLogin",
            "login",
            "cookies",
            "tspd_cookie",
            "api_key",
            "apiKey",
            "clientKey",
            "client-secret",
            "token",
            "existing_token",
            "s_s_c_session_id",
            "Authorization",
            "key",
            "local_storage",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["sitekey", "page_url", "host", "port", "type", "user_agent", "proxytype", "gt", "challenge"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn credentials_in_text_are_replaced_in_every_form() {
        let cases = [
            ("login:pass@10.0.0.1:3128", "[redacted]@10.0.0.1:3128"),
            ("http://login:pass@proxy.test:8080", "http://[redacted]@proxy.test:8080"),
            ("socks5://tok3n@proxy.test:1080", "socks5://[redacted]@proxy.test:1080"),
            ("proxy=user:pw@h.test:1&x=1", "proxy=[redacted]@h.test:1&x=1"),
            ("connect to u:p@h:1 failed; retry u2:p2@h2:2", "connect to [redacted]@h:1 failed; retry [redacted]@h2:2"),
            ("/res.php?key=abc123&action=get", "/res.php?key=[redacted]&action=get"),
            ("write to ops@example.com", "write to ops@example.com"),
            ("no secrets here", "no secrets here"),
            ("ключ:пароль@хост:1", "[redacted]@хост:1"),
        ];
        for (text, want) in cases {
            assert_eq!(redact_text(text), want, "{text}");
        }
        assert!(matches!(redact_text("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_value_is_redacted_at_any_depth_keeping_its_shape() {
        let mut task = json!({
            "type": "raw",
            "params": {"proxy": "u:hunter2@1.2.3.4:80", "proxytype": "HTTP", "cookies": "sid=s3cret"},
            "task": {"proxyLogin": "u", "proxyPassword": "hunter2", "proxyAddress": "1.2.3.4", "proxyPort": 80,
                     "local_storage": {"a": "x"}, "websiteURL": "https://u:pw@site.test/"},
            "proxy": {"type": "http", "host": "h", "port": 1, "login": "u", "password": "hunter2"},
        });
        redact_value(&mut task);
        let text = task.to_string();
        for secret in ["hunter2", "s3cret", "\"u\"", "u:pw"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(task["params"]["proxy"], "[redacted]@1.2.3.4:80");
        assert_eq!(task["params"]["proxytype"], "HTTP");
        assert_eq!(task["task"]["proxyPort"], 80);
        assert_eq!(task["task"]["local_storage"], json!({"a": "[redacted]"}));
        assert_eq!(task["proxy"]["host"], "h");
        assert_eq!(task["proxy"]["password"], REDACTED);
        assert_eq!(task["task"]["websiteURL"], "https://[redacted]@site.test/");
    }
}
