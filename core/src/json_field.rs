//! Deserializing untrusted JSON into a typed value with an error that names
//! the offending field (`retry.max_attempts`, `records[3].task`).
//!
//! serde reports *what* is wrong but not *where* in a `Value`. Path-tracking
//! wrappers (serde_path_to_error) fix that by wrapping every visitor, which
//! doubles the deserialization code of each type (too much for the browser
//! build). Instead the value is printed in serde_json's pretty form, one
//! key per line, and parsed from that text: serde_json's error then carries a
//! line number, and the line's enclosing keys are the path.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// A field path (empty for the value as a whole) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub problem: String,
}

impl FieldError {
    /// The field under `prefix` (`"replay"` + `"max_deliveries"` → `replay.max_deliveries`).
    pub fn field_under(&self, prefix: &str) -> String {
        match (prefix.is_empty(), self.field.is_empty()) {
            (_, true) => prefix.to_string(),
            (true, false) => self.field.clone(),
            (false, false) if self.field.starts_with('[') => format!("{prefix}{}", self.field),
            (false, false) => format!("{prefix}.{}", self.field),
        }
    }
}

/// Deserializes `value` as `T`; on failure names the field as a dotted path.
pub fn decode<T: DeserializeOwned>(value: &Value) -> Result<T, FieldError> {
    // Printing a `Value` cannot fail: its keys are strings and its numbers finite.
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    serde_json::from_str(&text).map_err(|e| {
        let message = e.to_string();
        let problem = match message.rfind(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        let mut path = path_at_line(&text, e.line());
        // serde names a missing field only in its message, at the object's end.
        if let Some(missing) = problem.strip_prefix("missing field `").and_then(|rest| rest.split('`').next()) {
            path.push(Segment::Key(missing.to_string()));
        }
        FieldError { field: join(&path), problem }
    })
}

/// `fooBarMs` → `foo_bar_ms`, `recaptchaV2` → `recaptcha_v2`; snake_case stays
/// as is. JS callers pass camelCase options; the Rust types are snake_case.
pub fn snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Every object key below `value` in snake_case (values are left alone).
pub fn snake_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (snake(&k), snake_keys(v))).collect()),
        Value::Array(items) => Value::Array(items.into_iter().map(snake_keys).collect()),
        other => other,
    }
}

/// How a JSON value's type reads in an error message (`a string`, `an object`).
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[derive(Clone, Debug)]
enum Segment {
    Key(String),
    Index(usize),
}

/// The keys and indices leading to line `target` (1-based) of pretty-printed
/// JSON. A closing `}`/`]` line belongs to its container.
fn path_at_line(text: &str, target: usize) -> Vec<Segment> {
    let mut path: Vec<Segment> = Vec::new();
    // Per depth: how many elements the enclosing array has shown so far.
    let mut counters: Vec<usize> = vec![0];
    for (number, line) in text.lines().enumerate().take(target) {
        let trimmed = line.trim_start();
        let depth = (line.len() - trimmed.len()) / 2;
        if trimmed.starts_with(['}', ']']) {
            path.truncate(depth);
            continue;
        }
        if depth == 0 {
            // The top-level value's own line.
            if trimmed.ends_with(['{', '[']) {
                counters = vec![0, 0];
            }
            continue;
        }
        let segment = match leading_key(trimmed) {
            Some(key) => Segment::Key(key),
            None => {
                if counters.len() <= depth {
                    counters.resize(depth + 1, 0);
                }
                let counter = &mut counters[depth];
                *counter += 1;
                Segment::Index(*counter - 1)
            }
        };
        path.truncate(depth - 1);
        path.push(segment);
        if trimmed.ends_with(['{', '[']) {
            counters.truncate(depth + 1);
            counters.push(0);
        }
        if number + 1 == target {
            break;
        }
    }
    path
}

/// The key of a `"key": value` line, unescaped.
fn leading_key(line: &str) -> Option<String> {
    if !line.starts_with('"') {
        return None;
    }
    let bytes = line.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => break,
            _ => i += 1,
        }
    }
    let rest = line.get(i + 1..)?;
    if !rest.starts_with(": ") {
        return None; // a string element of an array
    }
    serde_json::from_str(&line[..=i]).ok()
}

fn join(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Segment::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        port: u16,
        #[serde(default)]
        tags: Vec<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        items: Vec<Inner>,
    }

    fn field(v: Value) -> (String, String) {
        let e = decode::<Outer>(&v).unwrap_err();
        (e.field, e.problem)
    }

    #[test]
    fn names_wrong_types_unknown_and_missing_fields_at_any_depth() {
        assert_eq!(field(json!({"name": 5})).0, "name");
        assert_eq!(field(json!({"name": "a", "inner": {"port": "x"}})).0, "inner.port");
        assert_eq!(field(json!({"name": "a", "inner": {"port": 70000}})).0, "inner.port");
        let (f, p) = field(json!({"name": "a", "inner": {"port": 1, "prot": 2}}));
        assert_eq!(f, "inner.prot");
        assert!(p.starts_with("unknown field `prot`"), "{p}");
        let (f, p) = field(json!({"name": "a", "inner": {}}));
        assert_eq!((f.as_str(), p.as_str()), ("inner.port", "missing field `port`"));
        assert_eq!(field(json!({})).0, "name");
        assert_eq!(field(json!({"name": "a", "inner": {"port": 1, "tags": ["a", 7]}})).0, "inner.tags[1]");
        assert_eq!(
            field(json!({"name": "a", "items": [{"port": 1}, {"port": 2, "tags": []}, {"port": -1}]})).0,
            "items[2].port"
        );
        assert_eq!(field(json!({"name": "a", "items": [{"port": 1}, {}]})).0, "items[1].port");
        assert_eq!(field(json!("not an object")).0, "");
        assert_eq!(field(json!({"name": "a", "we\"ird": 1})).0, "we\"ird");
    }

    #[test]
    fn camel_case_keys_become_snake_case_at_every_depth() {
        assert_eq!(snake("maxAttempts"), "max_attempts");
        assert_eq!(snake("recaptchaV2"), "recaptcha_v2");
        assert_eq!(snake("already_snake"), "already_snake");
        assert_eq!(
            snake_keys(json!({"retry": {"maxAttempts": 3}, "list": [{"baseMs": 1}], "v": "keepCase"})),
            json!({"retry": {"max_attempts": 3}, "list": [{"base_ms": 1}], "v": "keepCase"})
        );
    }

    #[test]
    fn decodes_good_values_and_prefixes_fields() {
        let ok: Outer = decode(&json!({"name": "a", "items": [{"port": 1, "tags": ["x"]}]})).unwrap();
        assert_eq!(ok.items[0].tags, ["x"]);
        let e = FieldError { field: "a.b".into(), problem: String::new() };
        assert_eq!(e.field_under("filter"), "filter.a.b");
        assert_eq!(e.field_under(""), "a.b");
        assert_eq!(FieldError { field: String::new(), problem: String::new() }.field_under("replay"), "replay");
    }
}
