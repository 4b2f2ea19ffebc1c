//! Errors that name the offending field of an untrusted JSON value
//! (`retry.max_attempts`, `records[3].task`), and the helpers every reader
//! of such values shares. The readers themselves are [`crate::support::json_read`].

use core::fmt;

use serde_json::Value;

/// A field path (empty for the value as a whole) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub problem: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        FieldError { field: field.into(), problem: problem.into() }
    }

    /// A problem with the value as a whole (the path is filled in by the callers above it).
    pub fn whole(problem: impl Into<String>) -> Self {
        FieldError { field: String::new(), problem: problem.into() }
    }

    /// `expected {what}, got a number`.
    pub fn expected(what: &str, got: &Value) -> Self {
        FieldError::whole(format!("expected {what}, got {}", json_type(got)))
    }

    /// The field under `prefix` (`"replay"` + `"max_deliveries"` → `replay.max_deliveries`).
    pub fn field_under(&self, prefix: &str) -> String {
        match (prefix.is_empty(), self.field.is_empty()) {
            (_, true) => prefix.to_string(),
            (true, false) => self.field.clone(),
            (false, false) if self.field.starts_with('[') => format!("{prefix}{}", self.field),
            (false, false) => format!("{prefix}.{}", self.field),
        }
    }

    /// This error, found inside the object field `key`.
    pub fn in_field(mut self, key: &str) -> Self {
        self.field = self.field_under(key);
        self
    }

    /// This error, found inside array element `index`.
    pub fn in_item(mut self, index: usize) -> Self {
        self.field = self.field_under(&format!("[{index}]"));
        self
    }
}

/// `retry.max_attempts: must be at least 1`, or the problem alone for the whole value.
impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.problem)
        } else {
            write!(f, "{}: {}", self.field, self.problem)
        }
    }
}

impl std::error::Error for FieldError {}

/// `max_in_flight` → `maxInFlight`, `recaptcha_v2` → `recaptchaV2`: a schema field name
/// as JavaScript spells it (the inverse of [`snake`] for the names the schema uses).
pub fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn paths_join_keys_and_indices() {
        let e = FieldError::new("a.b", "bad");
        assert_eq!(e.field_under("filter"), "filter.a.b");
        assert_eq!(e.field_under(""), "a.b");
        assert_eq!(FieldError::whole("bad").field_under("replay"), "replay");
        assert_eq!(FieldError::whole("bad").in_field("port").in_field("proxy").field, "proxy.port");
        assert_eq!(FieldError::whole("bad").in_field("task").in_item(3).in_field("records").field, "records[3].task");
        assert_eq!(FieldError::whole("bad").in_item(1).in_item(0).field, "[0][1]");
        assert_eq!(FieldError::whole("bad").in_item(2).in_field("tags").field, "tags[2]");
        assert_eq!(FieldError::new("x", "bad").to_string(), "x: bad");
        assert_eq!(FieldError::whole("bad").to_string(), "bad");
        assert_eq!(FieldError::expected("a string", &json!(1)).problem, "expected a string, got a number");
    }
}
