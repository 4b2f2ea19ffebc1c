//! Size and character limits on everything a task carries, checked first by
//! [`Task::validate`](super::Task::validate).
//!
//! Every string of a task, at any depth (proxy parts, FunCaptcha `data`, raw
//! `params` and `task`, object keys), is held to the rule of its field, found
//! by the field's name as records spell it (`proxy.*` by its full path, map
//! entries by the map's name). The limits are several times what a real
//! value needs, so they stop mistakes and abuse (a 1 MB sitekey, a page
//! pasted as a URL, a NUL that cuts a form field short), not real tasks.
//! Errors name the field and the limit and never quote the value: it may be
//! a credential, and it may be a megabyte long.
//!
//! A service's own, tighter limits (2captcha's 100 kB images) are checked
//! when a request for it is built, in `provider::limits`.

use serde_json::Value;

use super::kinds::decl::FieldType;
use super::Task;
use crate::error::InvalidTask;
use crate::support::cased;
use crate::support::json_read::Casing;

/// The largest image the core takes, decoded: CAPTCHA images are a few kB;
/// the tightest documented service limit is 100 kB (2captcha, CaptchaAI), and
/// a task (with its image) is kept in every journal entry and DLQ record.
pub const MAX_IMAGE_BYTES: usize = 1 << 20;

/// What a field may hold besides its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// One line: no control characters at all.
    SingleLine,
    /// Text that may have tabs and line breaks, no other control characters.
    MultiLine,
    /// Base64 of an image (line breaks from wrapping encoders allowed),
    /// at most [`MAX_IMAGE_BYTES`] once decoded.
    Base64Image,
}

#[derive(Clone, Copy, Debug)]
struct Rule {
    shape: Shape,
    max_chars: usize,
}

const fn single_line(max_chars: usize) -> Rule {
    Rule { shape: Shape::SingleLine, max_chars }
}

const fn multi_line(max_chars: usize) -> Rule {
    Rule { shape: Shape::MultiLine, max_chars }
}

/// Base64 of the largest image, twice over to leave room for line breaks
/// and other whitespace (the decoded size is the real check).
const IMAGE_TEXT_CHARS: usize = MAX_IMAGE_BYTES.div_ceil(3) * 4 * 2;

/// Site keys and challenge ids: real ones are 20-40 characters (reCAPTCHA
/// 40, hCaptcha and FunCaptcha UUIDs 36, GeeTest `gt`/`challenge`/`captcha_id`
/// 32, Turnstile about 24).
const KEY: Rule = single_line(256);
/// RFC 9110 section 4.1 asks for URIs of at least 8000 octets to be
/// supported; common servers refuse longer request lines, so a longer page
/// URL could not be loaded by the solver's worker either.
const URL: Rule = single_line(8192);
/// Browser user agents are 100-300 characters; room for long custom ones.
const USER_AGENT: Rule = single_line(2048);
/// A `Cookie` header: common servers cap a header line at 8 KiB (nginx's
/// `large_client_header_buffers`, Apache's 8190 bytes); twice that.
const COOKIES: Rule = single_line(16_384);
/// Opaque page tokens (reCAPTCHA `data-s`, Turnstile `cData` and
/// `chlPageData`, hCaptcha `rqdata`, FunCaptcha `data[blob]`): hundreds to a
/// few thousand characters.
const TOKEN: Rule = single_line(65_536);
/// Names and codes: `type`, `action` (Turnstile allows 32 characters),
/// `domain`, `lang`, a raw `method`, `proxy.type`, and every object key.
const SHORT: Rule = single_line(256);
/// Instructions shown to the worker: a sentence or a few lines.
const INSTRUCTIONS: Rule = multi_line(4096);
/// A DNS name is at most 253 characters (RFC 1035); IPv6 literals are shorter.
const PROXY_HOST: Rule = single_line(253);
/// Proxy logins with session options (`user-session-abc-country-us`) stay
/// under 100 characters.
const CREDENTIAL: Rule = single_line(512);
/// Raw `params` and `task` may carry an image (`method=base64`'s `body`)
/// or free text, so they get the image's length and may span lines.
const RAW: Rule = multi_line(IMAGE_TEXT_CHARS);
/// A page's HTML as served (Cloudflare's "Just a moment..." page is tens of kB).
const PAGE: Rule = multi_line(512 * 1024);
/// A field added without a rule here: bounded, and no NUL or other control
/// character except tabs and line breaks.
const UNLISTED: Rule = multi_line(65_536);

/// The rule for a field, by its path (`proxy.host`) or the top-level name it is under.
fn rule_for(path: &str) -> Rule {
    match path {
        "proxy.host" => PROXY_HOST,
        "proxy.login" | "proxy.password" => CREDENTIAL,
        "proxy.type" => SHORT,
        _ => match path.split(['.', '[']).next().unwrap_or(path) {
            "sitekey" | "gt" | "challenge" | "captcha_id" | "publickey" => KEY,
            "page_url" | "api_server" | "surl" => URL,
            "user_agent" => USER_AGENT,
            "cookies" => COOKIES,
            "data_s" | "data" | "pagedata" => TOKEN,
            "type" | "action" | "domain" | "lang" | "method" => SHORT,
            "textinstructions" => INSTRUCTIONS,
            "body" => Rule { shape: Shape::Base64Image, max_chars: IMAGE_TEXT_CHARS },
            "params" | "task" => RAW,
            _ => UNLISTED,
        },
    }
}

/// The rule of a declared field's type (`kinds::decl::FieldType`).
fn rule_of(ty: FieldType) -> Rule {
    match ty {
        FieldType::Key | FieldType::Choice(_) | FieldType::Names { .. } => KEY,
        FieldType::Url => URL,
        FieldType::UserAgent => USER_AGENT,
        FieldType::Cookies => COOKIES,
        FieldType::Image | FieldType::Images { .. } => Rule { shape: Shape::Base64Image, max_chars: IMAGE_TEXT_CHARS },
        FieldType::Page => PAGE,
        FieldType::Text { .. } => INSTRUCTIONS,
        FieldType::Token | FieldType::StringMap | FieldType::Object => TOKEN,
        FieldType::Int { .. } | FieldType::Number { .. } | FieldType::Flag | FieldType::Proxy => SHORT,
    }
}

#[cfg(feature = "declared-kinds")]
/// Checks one string of a declared field against its type's rule.
pub(super) fn check_field(field: &str, text: &str, ty: FieldType) -> Result<(), InvalidTask> {
    check_text(field, text, rule_of(ty))
}

/// Checks every string of `task` against its field's rule.
pub(super) fn check(task: &Task) -> Result<(), InvalidTask> {
    // The record form names every field as errors do, for every kind, including fields added
    // later. Through the one serializer every value goes out by (a second one was a copy of
    // every task kind's encoder in the browser build).
    let record =
        cased::to_value(task, Casing::Snake).map_err(|e| InvalidTask::new("task", format!("cannot be read: {e}")))?;
    let Value::Object(fields) = record else {
        return Err(InvalidTask::new("task", "is not an object"));
    };
    // A declared kind's fields are held to the rules of their declared types.
    #[cfg(feature = "declared-kinds")]
    let declared = match task {
        Task::Declared(d) => Some(super::kinds::decl(d.kind())),
        _ => None,
    };
    #[cfg(not(feature = "declared-kinds"))]
    let declared: Option<&super::kinds::KindDecl> = None;
    fields.iter().try_for_each(|(name, value)| {
        // The proxy's parts keep their own rules (`proxy.host`, `proxy.password`).
        let rule = declared.and_then(|d| d.field(name)).filter(|f| f.ty != FieldType::Proxy).map(|f| rule_of(f.ty));
        check_value(name, value, rule)
    })
}

/// The limits of a task's `proxy` (its parts' own rules, `proxy.host`, ...), for a proxy given apart from a task.
pub(super) fn check_proxy(proxy: &Value) -> Result<(), InvalidTask> {
    check_value("proxy", proxy, None)
}

/// `top`: the rule of a declared top-level field, which then holds for everything under it.
fn check_value(path: &str, value: &Value, top: Option<Rule>) -> Result<(), InvalidTask> {
    match value {
        Value::String(text) => check_text(path, text, top.unwrap_or_else(|| rule_for(path))),
        Value::Array(items) => {
            items.iter().enumerate().try_for_each(|(i, v)| check_value(&format!("{path}[{i}]"), v, top))
        }
        Value::Object(entries) => entries.iter().try_for_each(|(key, v)| {
            // The key is named by its map (it may be the very thing that is too long).
            check_key(path, key)?;
            check_value(&format!("{path}.{key}"), v, top)
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

fn check_key(map: &str, key: &str) -> Result<(), InvalidTask> {
    check_text(map, key, SHORT).map_err(|e| InvalidTask::new(map, format!("a key has {}", e.problem)))
}

fn check_text(field: &str, text: &str, rule: Rule) -> Result<(), InvalidTask> {
    // Bytes bound characters from above: count only when it can matter.
    if text.len() > rule.max_chars {
        let chars = text.chars().count();
        if chars > rule.max_chars {
            return Err(InvalidTask::new(field, format!("{chars} characters, at most {}", rule.max_chars)));
        }
    }
    let allowed = |c: char| match rule.shape {
        Shape::SingleLine => !c.is_control(),
        Shape::MultiLine => !c.is_control() || matches!(c, '\t' | '\n' | '\r'),
        Shape::Base64Image => !c.is_control() || c.is_ascii_whitespace(),
    };
    if let Some((at, c)) = text.chars().enumerate().find(|(_, c)| !allowed(*c)) {
        let which = match rule.shape {
            Shape::SingleLine => "a single-line field allows none",
            Shape::MultiLine | Shape::Base64Image => "only tabs and line breaks are allowed",
        };
        return Err(InvalidTask::new(
            field,
            format!("control character U+{:04X} at character {}; {which}", u32::from(c), at + 1),
        ));
    }
    if rule.shape == Shape::Base64Image {
        let bytes = base64_decoded_len(text);
        if bytes > MAX_IMAGE_BYTES {
            return Err(InvalidTask::new(field, format!("an image of {bytes} bytes, at most {MAX_IMAGE_BYTES}")));
        }
    }
    Ok(())
}

/// How many bytes `text` decodes to if it is base64 (whitespace and padding
/// ignored), without decoding it.
pub(crate) fn base64_decoded_len(text: &str) -> usize {
    let digits = text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=').count();
    digits / 4 * 3 + (digits % 4 * 3) / 4
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use serde_json::json;

    use super::*;

    fn problem(v: serde_json::Value) -> String {
        match Task::from_json_value(v) {
            Err(e) => format!("{}: {}", e.field, e.problem),
            Ok(t) => format!("accepted {t:?}"),
        }
    }

    fn recaptcha(extra: serde_json::Value) -> serde_json::Value {
        let mut task = json!({"type": "recaptcha_v2", "sitekey": "6Le-KEY", "page_url": "https://a.test/"});
        task.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        task
    }

    /// The report's cases: a 1 MB sitekey and page URL, a NUL in a sitekey.
    #[test]
    fn oversized_and_control_characters_are_refused_naming_the_field() {
        let mb = "k".repeat(1 << 20);
        assert_eq!(problem(recaptcha(json!({"sitekey": mb}))), "sitekey: 1048576 characters, at most 256");
        let url = format!("https://a.test/{}", "p".repeat(1 << 20));
        assert_eq!(problem(recaptcha(json!({"page_url": url}))), "page_url: 1048591 characters, at most 8192");
        assert_eq!(
            problem(recaptcha(json!({"sitekey": "6Le\u{0}KEY"}))),
            "sitekey: control character U+0000 at character 4; a single-line field allows none"
        );
        assert_eq!(
            problem(recaptcha(json!({"user_agent": "Mozilla/5.0\r\nX-Injected: 1"}))),
            "user_agent: control character U+000D at character 12; a single-line field allows none"
        );
        // Characters, not bytes: 256 four-byte characters fit.
        assert!(problem(recaptcha(json!({"sitekey": "🔑".repeat(256)}))).starts_with("accepted"));
        assert_eq!(problem(recaptcha(json!({"sitekey": "🔑".repeat(257)}))), "sitekey: 257 characters, at most 256");
    }

    #[test]
    fn nested_values_and_keys_are_checked() {
        let proxy = json!({"proxy": {"type": "http", "host": "h", "port": 1, "login": "u", "password": "p\u{7f}"}});
        assert_eq!(
            problem(recaptcha(proxy)),
            "proxy.password: control character U+007F at character 2; a single-line field allows none"
        );
        let host = json!({"proxy": {"type": "http", "host": "h".repeat(254), "port": 1}});
        assert_eq!(problem(recaptcha(host)), "proxy.host: 254 characters, at most 253");
        let blob = json!({"type": "funcaptcha", "publickey": "K", "page_url": "https://a.test/",
            "data": {"blob": "b\u{0}"}});
        assert_eq!(
            problem(blob),
            "data.blob: control character U+0000 at character 2; a single-line field allows none"
        );
        let long_key = json!({"type": "raw", "method": "userrecaptcha", "params": {"k".repeat(300): "v"}});
        assert_eq!(problem(long_key), "params: a key has 300 characters, at most 256");
        let raw_task = json!({"type": "raw", "task": {"type": "T", "nested": [{"x": "\u{1b}[31m"}]}});
        assert_eq!(
            problem(raw_task),
            "task.nested[0].x: control character U+001B at character 1; only tabs and line breaks are allowed"
        );
        // Free text in raw params may span lines.
        let text = json!({"type": "raw", "method": "textcaptcha", "params": {"textcaptcha": "line 1\nline 2"}});
        assert!(problem(text).starts_with("accepted"));
    }

    #[test]
    fn image_size_is_the_decoded_size() {
        let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
        let image = |body: String| json!({"type": "image", "body": body});
        assert!(problem(image(b64(MAX_IMAGE_BYTES))).starts_with("accepted"));
        assert_eq!(problem(image(b64(MAX_IMAGE_BYTES + 1))), "body: an image of 1048577 bytes, at most 1048576");
        // Wrapped at 76 characters with CRLF, as MIME encoders do: the same image.
        let wrapped: Vec<String> =
            b64(MAX_IMAGE_BYTES).as_bytes().chunks(76).map(|c| String::from_utf8_lossy(c).into()).collect();
        assert!(problem(image(wrapped.join("\r\n"))).starts_with("accepted"));
        assert_eq!(
            problem(image(format!("aGk={}", " ".repeat(IMAGE_TEXT_CHARS)))),
            format!("body: {} characters, at most {IMAGE_TEXT_CHARS}", IMAGE_TEXT_CHARS + 4)
        );
        for n in 0..40 {
            assert_eq!(base64_decoded_len(&b64(n)), n);
            assert_eq!(base64_decoded_len(b64(n).trim_end_matches('=')), n);
        }
    }

    /// Control characters JSON text does not escape (DEL, C1) are found in short tasks too.
    #[test]
    fn short_tasks_with_unescaped_control_characters_are_refused() {
        assert_eq!(
            problem(recaptcha(json!({"sitekey": "6Le\u{7f}"}))),
            "sitekey: control character U+007F at character 4; a single-line field allows none"
        );
        assert_eq!(
            problem(recaptcha(json!({"action": "a\u{85}b"}))),
            "action: control character U+0085 at character 2; a single-line field allows none"
        );
        assert!(problem(recaptcha(json!({"action": "ok"}))).starts_with("accepted"));
        // A multi-line field allows a line break.
        let text = json!({"type": "raw", "method": "textcaptcha", "params": {"textcaptcha": "1\n2"}});
        assert!(problem(text).starts_with("accepted"));
    }

    /// At the limits, real-looking values of every rule pass.
    #[test]
    fn values_at_the_limits_pass() {
        let task = json!({"type": "recaptcha_v2", "sitekey": "k".repeat(256), "page_url":
            format!("https://a.test/{}", "p".repeat(8192 - 15)), "user_agent": "u".repeat(2048),
            "cookies": format!("c={}", "c".repeat(16_384 - 2)), "data_s": "d".repeat(65_536),
            "proxy": {"type": "socks5", "host": "h".repeat(253), "port": 1080, "login": "l".repeat(512),
                "password": "p".repeat(512)}});
        assert!(problem(task).starts_with("accepted"));
    }
}
