//! Reading typed values out of untrusted JSON, field by field.
//!
//! [`FromJson`] takes the place of serde's derived `Deserialize` for every
//! type the core reads back (configuration, records, journal entries, store
//! replies). A derived deserializer is generic over the input format, so each
//! type grows a visitor, a field-name visitor and one copy of both per input
//! it is read from (`serde_json::Value`, `&str`); an internally tagged enum
//! adds a buffering layer on top. That was the largest part of the browser
//! build. A reader over an already parsed [`Value`] is written once per type,
//! and it knows where it is, so every error names its field as a path
//! (`retry.max_attempts`, `records[3].task`, `labels.env`) without any
//! path-tracking wrapper.
//!
//! The rules follow what the derived implementations did:
//! - an object field that is absent is an error (`missing field`) unless the
//!   type gives a default ([`Fields::or`]); an absent or `null` `Option` field
//!   is `None` ([`Fields::opt`]); `null` for anything else is a wrong type;
//! - integers are JSON integers in range: `1.5`, `1.0`, `-1` (for an unsigned
//!   field) and `1e3` are refused;
//! - unknown fields are an error where the type says so ([`Fields::finish`]),
//!   and ignored elsewhere.
//!
//! Types keep `serde::Deserialize` (for `serde_json::from_str` in the native
//! crates) through [`deserialize_from_json!`], which parses a [`Value`] and
//! hands it to [`FromJson`].

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub use crate::support::json_field::{json_type, FieldError};

/// Reads `value` as `T`; on failure names the field as a dotted path.
pub fn decode<T: FromJson>(value: &Value) -> Result<T, FieldError> {
    T::from_json(value.clone())
}

use crate::support::time::Timestamp;

/// A type read from a parsed JSON value; errors name the field as a path
/// relative to `value` (empty when `value` itself is wrong).
pub trait FromJson: Sized {
    fn from_json(value: Value) -> Result<Self, FieldError>;
}

/// A type read as changes over a base value: the fields the JSON gives
/// replace the base's, the others keep the base's value (a user's partial
/// configuration over a provider's documented defaults).
pub trait ReadOver: Sized {
    fn read_over(self, value: Value) -> Result<Self, FieldError>;
}

/// For `impl Deserialize`: parses a [`Value`], then reads it with [`FromJson`];
/// the error text is `field: problem`.
pub fn deserialize<'de, T: FromJson, D: serde::Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    let value = <Value as serde::Deserialize>::deserialize(deserializer)?;
    T::from_json(value).map_err(serde::de::Error::custom)
}

/// `impl Deserialize` for types that implement [`FromJson`], one small function each.
macro_rules! deserialize_from_json {
    ($($t:ty),+ $(,)?) => {$(
        impl<'de> ::serde::Deserialize<'de> for $t {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::support::json_read::deserialize(deserializer)
            }
        }
    )+};
}
pub(crate) use deserialize_from_json;

/// `impl FromJson` for a struct whose every field is read under its own name, in the order
/// written, by the [`Fields`] reader written beside it: `req`, `opt`, `or_default` or
/// `or(default)`. `closed` refuses the keys it does not name ([`Fields::finish`]); `open`
/// leaves them be (records and rows a newer version may have written). Attributes (a doc
/// comment) go on the `impl`.
macro_rules! read_fields {
    ($(#[$meta:meta])* $t:ident, $rule:ident, $($field:ident: $how:ident $(($default:expr))?),+ $(,)?) => {
        $(#[$meta])*
        impl $crate::support::json_read::FromJson for $t {
            fn from_json(value: ::serde_json::Value) -> Result<Self, $crate::support::json_read::FieldError> {
                let mut f = $crate::support::json_read::Fields::new(value)?;
                let read = $t { $($field: f.$how(stringify!($field) $(, $default)?)?),+ };
                $crate::support::json_read::read_fields!(@end f, $rule);
                Ok(read)
            }
        }
    };
    (@end $f:ident, closed) => { $f.finish()? };
    (@end $f:ident, open) => { drop($f) };
}
pub(crate) use read_fields;

/// How a host spells field names: Rust and Python in snake_case (the schema's own
/// spelling), JavaScript in camelCase. Only names of fields are respelled; the keys of
/// maps (labels, a solution's extra fields) and values are data and stay as given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Casing {
    #[default]
    Snake,
    Camel,
}

std::thread_local! {
    static CASING: Cell<Casing> = const { Cell::new(Casing::Snake) };
}

/// Reads `value` as a `T` whose field names are spelled in `casing`; errors name fields
/// as the host spells them (`retry.maxAttempts`). Unknown fields stay errors.
pub fn read_cased<T: FromJson>(value: Value, casing: Casing) -> Result<T, FieldError> {
    with_casing(casing, || T::from_json(value))
}

/// Runs `read` with field names spelled in `casing` (for readers other than [`FromJson`],
/// such as [`ReadOver`]).
pub fn with_casing<T>(casing: Casing, read: impl FnOnce() -> T) -> T {
    let previous = CASING.with(|c| c.replace(casing));
    let result = read();
    CASING.with(|c| c.set(previous));
    result
}

/// The casing [`read_cased`] is reading with right now.
pub fn current_casing() -> Casing {
    CASING.with(Cell::get)
}

/// `name` (a schema field name, snake_case) as the current reader spells it.
pub fn spelled(name: &str) -> Cow<'_, str> {
    match current_casing() {
        Casing::Snake => Cow::Borrowed(name),
        Casing::Camel => Cow::Owned(crate::support::json_field::camel(name)),
    }
}

/// The fields of one JSON object, taken out by name. The names asked for are
/// remembered, so that [`Fields::finish`] can list them when it finds a field
/// nobody asked for.
#[derive(Debug)]
pub struct Fields {
    map: Map<String, Value>,
    known: Vec<&'static str>,
}

impl Fields {
    /// The fields of `value`, which must be an object.
    pub fn new(value: Value) -> Result<Fields, FieldError> {
        match value {
            // Readers ask for about as many fields as an object has: one allocation for the
            // names asked, not one per doubling (a record asks for ~19).
            Value::Object(map) => {
                let known = Vec::with_capacity(map.len() + 4);
                Ok(Fields { map, known })
            }
            other => Err(FieldError::expected("an object", &other)),
        }
    }

    fn take(&mut self, name: &'static str) -> Option<Value> {
        self.known.push(name);
        self.map.remove(spelled(name).as_ref())
    }

    /// A field that must be present.
    pub fn req<T: FromJson>(&mut self, name: &'static str) -> Result<T, FieldError> {
        match self.take(name) {
            Some(v) => T::from_json(v).map_err(|e| e.in_field(&spelled(name))),
            None => Err(FieldError::new(spelled(name), "missing field")),
        }
    }

    /// A field that is `default` when absent (`null` is read as a `T`, as serde did).
    pub fn or<T: FromJson>(&mut self, name: &'static str, default: T) -> Result<T, FieldError> {
        match self.take(name) {
            Some(v) => T::from_json(v).map_err(|e| e.in_field(&spelled(name))),
            None => Ok(default),
        }
    }

    /// A field read over `base` ([`ReadOver`]); `base` itself when absent.
    pub fn over<T: ReadOver>(&mut self, name: &'static str, base: T) -> Result<T, FieldError> {
        match self.take(name) {
            Some(v) => base.read_over(v).map_err(|e| e.in_field(&spelled(name))),
            None => Ok(base),
        }
    }

    /// A field that is `T::default()` when absent.
    pub fn or_default<T: FromJson + Default>(&mut self, name: &'static str) -> Result<T, FieldError> {
        self.or(name, T::default())
    }

    /// An optional field: `None` when absent or `null`.
    pub fn opt<T: FromJson>(&mut self, name: &'static str) -> Result<Option<T>, FieldError> {
        self.or(name, None)
    }

    /// A field keyed by a task kind's name (`recaptcha_v2`), which is data, not a field name:
    /// the kind's own name is accepted in every casing, and JavaScript's camelCase spelling
    /// (`recaptchaV2`) too; both at once is an error. `None` when absent.
    /// The value comes with the key it was given under, for errors about it (not generic: one
    /// copy in the browser build).
    pub fn kind_key(&mut self, kind: &'static str) -> Result<Option<(String, Value)>, FieldError> {
        self.known.push(kind);
        let camel = crate::support::json_field::camel(kind);
        let own = self.map.remove(kind);
        let other = if camel == kind { None } else { self.map.remove(&camel) };
        let (spelled, value) = match (own, other) {
            (Some(_), Some(_)) => return Err(FieldError::new(kind, format!("given twice, as `{kind}` and `{camel}`"))),
            (Some(v), None) => (kind.to_string(), v),
            (None, Some(v)) => (camel, v),
            (None, None) => return Ok(None),
        };
        Ok(Some((spelled, value)))
    }

    /// The tag of an internally tagged enum (`{"kind": "fixed", ...}`): the
    /// index of its value in `variants`.
    pub fn tag(&mut self, name: &'static str, variants: &[&str]) -> Result<usize, FieldError> {
        let value: String = self.req(name)?;
        variants
            .iter()
            .position(|v| *v == value)
            .ok_or_else(|| FieldError::new(spelled(name), unknown_value(&value, variants)))
    }

    /// Refuses the fields nobody asked for (types that deny unknown fields).
    /// Types that ignore them just drop the reader.
    pub fn finish(self) -> Result<(), FieldError> {
        let Some(key) = self.map.keys().next() else { return Ok(()) };
        let known: Vec<Cow<'_, str>> = self.known.iter().map(|k| spelled(k)).collect();
        let known: Vec<&str> = known.iter().map(|k| k.as_ref()).collect();
        let problem = match known.as_slice() {
            [] => format!("unknown field `{key}`, there are no fields"),
            [one] => format!("unknown field `{key}`, expected `{one}`"),
            known => format!("unknown field `{key}`, expected one of {}", quoted(known)),
        };
        Err(FieldError::new(key.clone(), problem))
    }
}

/// `` `a`, `b`, `c` ``
fn quoted(names: &[&str]) -> String {
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('`');
        out.push_str(name);
        out.push('`');
    }
    out
}

fn unknown_value(value: &str, expected: &[&str]) -> String {
    format!("unknown value `{value}`, expected one of {}", quoted(expected))
}

/// A unit-only enum written as its name (`"transient"`); `all` lists the
/// variants and `name` spells each one.
pub fn unit_variant<T: Copy>(value: Value, all: &[T], name: fn(T) -> &'static str) -> Result<T, FieldError> {
    let text = String::from_json(value)?;
    all.iter().copied().find(|v| name(*v) == text).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|v| name(*v)).collect();
        FieldError::whole(unknown_value(&text, &names))
    })
}

impl FromJson for Value {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        Ok(value)
    }
}

impl FromJson for String {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::String(s) => Ok(s),
            other => Err(FieldError::expected("a string", &other)),
        }
    }
}

impl FromJson for bool {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::Bool(b) => Ok(b),
            other => Err(FieldError::expected("true or false", &other)),
        }
    }
}

impl FromJson for f64 {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match &value {
            Value::Number(n) => n.as_f64().ok_or_else(|| FieldError::whole(format!("{n} is not a number"))),
            other => Err(FieldError::expected("a number", other)),
        }
    }
}

/// A whole number in `0..=max` (`n` is printed through serde_json's own
/// number formatting: `f64`'s `Display` would add a float formatter).
fn unsigned(value: Value, max: u64) -> Result<u64, FieldError> {
    let Value::Number(n) = &value else { return Err(FieldError::expected("a whole number", &value)) };
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) if u <= max => Ok(u),
        (Some(_), _) => Err(FieldError::whole(format!("{n} is too large: expected a whole number up to {max}"))),
        (None, Some(_)) => Err(FieldError::whole(format!("{n} is negative: expected a whole number from 0 to {max}"))),
        (None, None) => Err(not_whole(n)),
    }
}

fn not_whole(n: &serde_json::Number) -> FieldError {
    let fractional = n.as_f64().is_some_and(|f| f.fract() != 0.0);
    if fractional {
        FieldError::whole(format!("{n} is not a whole number"))
    } else {
        // `1.0`, `1e3`: serde refused these too, and integer fields never held them.
        FieldError::whole(format!("expected a whole number written without a decimal point or exponent, got {n}"))
    }
}

macro_rules! unsigned_from_json {
    ($($t:ty),+) => {$(
        impl FromJson for $t {
            fn from_json(value: Value) -> Result<Self, FieldError> {
                // `max` fits `u64` and the value is at most `max`, so both casts are exact.
                unsigned(value, <$t>::MAX as u64).map(|v| v as $t)
            }
        }
    )+};
}
unsigned_from_json!(u8, u16, u32, u64, usize);

impl FromJson for i64 {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let Value::Number(n) = &value else { return Err(FieldError::expected("a whole number", &value)) };
        match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Ok(i),
            (None, Some(_)) => {
                Err(FieldError::whole(format!("{n} is too large: expected a whole number up to {}", i64::MAX)))
            }
            (None, None) => Err(not_whole(n)),
        }
    }
}

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::Null => Ok(None),
            other => T::from_json(other).map(Some),
        }
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::Array(items) => {
                items.into_iter().enumerate().map(|(i, v)| T::from_json(v).map_err(|e| e.in_item(i))).collect()
            }
            other => Err(FieldError::expected("an array", &other)),
        }
    }
}

impl<T: FromJson> FromJson for BTreeMap<String, T> {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::Object(map) => {
                // Inserts one by one rather than `collect()`: `BTreeMap::from_iter` sorts its input
                // with a stable sort, a few KB of code per map type in the .wasm, and the keys
                // arrive sorted and unique anyway.
                let mut out = BTreeMap::new();
                for (k, v) in map {
                    let v = T::from_json(v).map_err(|e| e.in_field(&k))?;
                    out.insert(k, v);
                }
                Ok(out)
            }
            other => Err(FieldError::expected("an object", &other)),
        }
    }
}

impl FromJson for Map<String, Value> {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::Object(map) => Ok(map),
            other => Err(FieldError::expected("an object", &other)),
        }
    }
}

impl FromJson for Timestamp {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        match value {
            Value::String(s) => Timestamp::parse_rfc3339(&s).map_err(|e| FieldError::whole(e.to_string())),
            other => Err(FieldError::expected("an RFC 3339 date-time string", &other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decode_names_the_path() {
        let e = decode::<Vec<u32>>(&json!([1, "x"])).unwrap_err();
        assert_eq!((e.field.as_str(), e.problem.as_str()), ("[1]", "expected a whole number, got a string"));
        assert_eq!(decode::<Vec<u32>>(&json!([1, 2])).unwrap(), [1, 2]);
    }

    fn fails<T: FromJson + core::fmt::Debug>(v: Value) -> (String, String) {
        let e = T::from_json(v).unwrap_err();
        (e.field, e.problem)
    }

    fn problem<T: FromJson + core::fmt::Debug>(v: Value) -> String {
        let (field, problem) = fails::<T>(v);
        assert_eq!(field, "", "{problem}");
        problem
    }

    #[test]
    fn camel_case_readers_take_and_name_fields_as_the_host_spells_them() {
        #[derive(Debug)]
        struct Opts {
            max_attempts: u32,
            labels: BTreeMap<String, String>,
        }
        impl FromJson for Opts {
            fn from_json(value: Value) -> Result<Self, FieldError> {
                let mut f = Fields::new(value)?;
                let o = Opts { max_attempts: f.or("max_attempts", 1)?, labels: f.or_default("labels")? };
                f.finish()?;
                Ok(o)
            }
        }
        let o: Opts = read_cased(json!({"maxAttempts": 3, "labels": {"jobId": "x"}}), Casing::Camel).unwrap();
        assert_eq!(o.max_attempts, 3);
        assert_eq!(o.labels.get("jobId").map(String::as_str), Some("x"), "map keys are data: never respelled");
        let e = read_cased::<Opts>(json!({"max_attempts": 3}), Casing::Camel).unwrap_err();
        assert_eq!(e.field, "max_attempts");
        assert!(e.problem.contains("expected one of `maxAttempts`, `labels`"), "{}", e.problem);
        let e = read_cased::<Opts>(json!({"maxAttempts": "3"}), Casing::Camel).unwrap_err();
        assert_eq!(e.field, "maxAttempts");
        let snake: Opts = read_cased(json!({"max_attempts": 2}), Casing::Snake).unwrap();
        assert_eq!(snake.max_attempts, 2);
        assert_eq!(current_casing(), Casing::Snake, "the casing is restored after a read");
    }

    #[test]
    fn scalars_accept_their_type_and_name_the_one_they_got() {
        assert_eq!(String::from_json(json!("x")).unwrap(), "x");
        assert_eq!(problem::<String>(json!(5)), "expected a string, got a number");
        assert_eq!(problem::<String>(json!(null)), "expected a string, got null");
        assert!(bool::from_json(json!(true)).unwrap());
        assert_eq!(problem::<bool>(json!("yes")), "expected true or false, got a string");
        assert_eq!(f64::from_json(json!(2)).unwrap(), 2.0);
        assert_eq!(f64::from_json(json!(0.25)).unwrap(), 0.25);
        assert_eq!(problem::<f64>(json!([])), "expected a number, got an array");
        assert_eq!(Value::from_json(json!({"a": [1]})).unwrap(), json!({"a": [1]}));
        assert_eq!(Map::from_json(json!({"a": 1})).unwrap(), json!({"a": 1}).as_object().unwrap().clone());
        assert_eq!(problem::<Map<String, Value>>(json!([1])), "expected an object, got an array");
    }

    #[test]
    fn integers_refuse_fractions_negatives_and_overflow() {
        assert_eq!(u32::from_json(json!(4_294_967_295u64)).unwrap(), u32::MAX);
        assert_eq!(u64::from_json(json!(u64::MAX)).unwrap(), u64::MAX);
        assert_eq!(u8::from_json(json!(0)).unwrap(), 0);
        assert_eq!(usize::from_json(json!(7)).unwrap(), 7);
        assert_eq!(problem::<u32>(json!(1.5)), "1.5 is not a whole number");
        assert_eq!(
            problem::<u32>(json!(2.0)),
            "expected a whole number written without a decimal point or exponent, got 2.0"
        );
        assert_eq!(problem::<u32>(json!(-1)), "-1 is negative: expected a whole number from 0 to 4294967295");
        assert_eq!(problem::<u16>(json!(70000)), "70000 is too large: expected a whole number up to 65535");
        assert_eq!(problem::<u8>(json!(256)), "256 is too large: expected a whole number up to 255");
        assert_eq!(problem::<u32>(json!("5")), "expected a whole number, got a string");
        assert_eq!(problem::<u64>(json!(null)), "expected a whole number, got null");
        assert_eq!(i64::from_json(json!(-5)).unwrap(), -5);
        assert_eq!(i64::from_json(json!(i64::MAX)).unwrap(), i64::MAX);
        assert!(problem::<i64>(json!(u64::MAX)).contains("is too large"));
        assert_eq!(problem::<i64>(json!(-0.5)), "-0.5 is not a whole number");
        assert_eq!(problem::<i64>(json!(true)), "expected a whole number, got a boolean");
    }

    #[test]
    fn containers_prefix_the_path() {
        assert_eq!(Option::<u32>::from_json(json!(null)).unwrap(), None);
        assert_eq!(Option::<u32>::from_json(json!(3)).unwrap(), Some(3));
        assert_eq!(problem::<Option<u32>>(json!("3")), "expected a whole number, got a string");
        assert_eq!(Vec::<String>::from_json(json!(["a", "b"])).unwrap(), ["a", "b"]);
        assert_eq!(problem::<Vec<String>>(json!("a")), "expected an array, got a string");
        assert_eq!(fails::<Vec<String>>(json!(["a", 1])), ("[1]".into(), "expected a string, got a number".into()));
        assert_eq!(fails::<Vec<Vec<u8>>>(json!([[1], [2, -3]])).0, "[1][1]");
        let labels = BTreeMap::<String, String>::from_json(json!({"env": "prod"})).unwrap();
        assert_eq!(labels["env"], "prod");
        assert_eq!(
            fails::<BTreeMap<String, String>>(json!({"env": 1})),
            ("env".into(), "expected a string, got a number".into())
        );
        assert_eq!(problem::<BTreeMap<String, String>>(json!(["env"])), "expected an object, got an array");
        assert_eq!(fails::<BTreeMap<String, Vec<u32>>>(json!({"a": [0, 0.5]})).0, "a[1]");
    }

    #[test]
    fn timestamps_are_rfc3339_strings() {
        let t = Timestamp::from_json(json!("2026-11-21T10:00:05Z")).unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-21T10:00:05Z");
        assert_eq!(problem::<Timestamp>(json!("yesterday")), "not an RFC 3339 timestamp: \"yesterday\"");
        assert_eq!(problem::<Timestamp>(json!(17)), "expected an RFC 3339 date-time string, got a number");
    }

    #[derive(Debug, PartialEq)]
    struct Inner {
        port: u16,
        tags: Vec<String>,
    }

    impl FromJson for Inner {
        fn from_json(value: Value) -> Result<Self, FieldError> {
            let mut f = Fields::new(value)?;
            let inner = Inner { port: f.req("port")?, tags: f.or_default("tags")? };
            f.finish()?;
            Ok(inner)
        }
    }

    #[derive(Debug, PartialEq)]
    struct Outer {
        name: String,
        inner: Option<Inner>,
        items: Vec<Inner>,
        level: u32,
    }

    impl FromJson for Outer {
        fn from_json(value: Value) -> Result<Self, FieldError> {
            let mut f = Fields::new(value)?;
            let outer = Outer {
                name: f.req("name")?,
                inner: f.opt("inner")?,
                items: f.or_default("items")?,
                level: f.or("level", 7)?,
            };
            f.finish()?;
            Ok(outer)
        }
    }

    fn field(v: Value) -> (String, String) {
        fails::<Outer>(v)
    }

    #[test]
    fn objects_name_wrong_missing_and_unknown_fields_at_any_depth() {
        assert_eq!(field(json!({"name": 5})), ("name".into(), "expected a string, got a number".into()));
        assert_eq!(field(json!({"name": "a", "inner": {"port": "x"}})).0, "inner.port");
        assert_eq!(
            field(json!({"name": "a", "inner": {"port": 70000}})),
            ("inner.port".into(), "70000 is too large: expected a whole number up to 65535".into())
        );
        assert_eq!(
            field(json!({"name": "a", "inner": {"port": 1, "prot": 2}})),
            ("inner.prot".into(), "unknown field `prot`, expected one of `port`, `tags`".into())
        );
        assert_eq!(field(json!({"name": "a", "inner": {}})), ("inner.port".into(), "missing field".into()));
        assert_eq!(field(json!({})), ("name".into(), "missing field".into()));
        assert_eq!(field(json!({"name": "a", "inner": {"port": 1, "tags": ["a", 7]}})).0, "inner.tags[1]");
        assert_eq!(
            field(json!({"name": "a", "items": [{"port": 1}, {"port": 2, "tags": []}, {"port": -1}]})).0,
            "items[2].port"
        );
        assert_eq!(
            field(json!({"name": "a", "items": [{"port": 1}, {}]})),
            ("items[1].port".into(), "missing field".into())
        );
        assert_eq!(
            field(json!({"name": "a", "items": {}})),
            ("items".into(), "expected an array, got an object".into())
        );
        assert_eq!(field(json!("not an object")), (String::new(), "expected an object, got a string".into()));
        assert_eq!(field(json!({"name": "a", "we\"ird": 1})).0, "we\"ird");
        assert_eq!(field(json!({"name": "a", "level": 1.5})), ("level".into(), "1.5 is not a whole number".into()));
        // `null` is absent for an Option, a wrong type for anything else (as serde had it).
        assert_eq!(field(json!({"name": "a", "items": null})), ("items".into(), "expected an array, got null".into()));
        let ok = Outer::from_json(json!({"name": "a", "inner": null})).unwrap();
        assert_eq!(ok, Outer { name: "a".into(), inner: None, items: vec![], level: 7 });
        let ok = Outer::from_json(json!({"name": "a", "inner": {"port": 8, "tags": ["t"]}, "level": 2})).unwrap();
        assert_eq!((ok.inner, ok.level), (Some(Inner { port: 8, tags: vec!["t".into()] }), 2));
    }

    #[test]
    fn unknown_fields_list_what_was_asked_for() {
        let one = |v: Value| {
            let mut f = Fields::new(v).unwrap();
            let _: Option<u32> = f.opt("only").unwrap();
            f.finish().unwrap_err()
        };
        assert_eq!(one(json!({"x": 1})).problem, "unknown field `x`, expected `only`");
        assert_eq!(
            Fields::new(json!({"x": 1})).unwrap().finish().unwrap_err().problem,
            "unknown field `x`, there are no fields"
        );
        assert!(Fields::new(json!({})).unwrap().finish().is_ok());
        // A type that ignores unknown fields just does not call `finish`.
        let mut f = Fields::new(json!({"a": 1, "b": 2})).unwrap();
        assert_eq!(f.req::<u32>("a").unwrap(), 1);
    }

    #[test]
    fn tags_and_unit_variants_name_the_choices() {
        let tag = |v: Value| Fields::new(v).unwrap().tag("kind", &["one", "two"]);
        assert_eq!(tag(json!({"kind": "two"})).unwrap(), 1);
        assert_eq!(tag(json!({})).unwrap_err(), FieldError::new("kind", "missing field"));
        assert_eq!(
            tag(json!({"kind": "three"})).unwrap_err(),
            FieldError::new("kind", "unknown value `three`, expected one of `one`, `two`")
        );
        assert_eq!(tag(json!({"kind": 1})).unwrap_err(), FieldError::new("kind", "expected a string, got a number"));
        let name = |b: bool| if b { "yes" } else { "no" };
        assert!(unit_variant(json!("yes"), &[false, true], name).unwrap());
        assert_eq!(
            unit_variant(json!("maybe"), &[false, true], name).unwrap_err(),
            FieldError::whole("unknown value `maybe`, expected one of `no`, `yes`")
        );
        assert_eq!(
            unit_variant(json!(1), &[false, true], name).unwrap_err().problem,
            "expected a string, got a number"
        );
    }

    #[test]
    fn deserialize_goes_through_from_json() {
        #[derive(Debug)]
        struct Port(u16);
        impl FromJson for Port {
            fn from_json(value: Value) -> Result<Self, FieldError> {
                let mut f = Fields::new(value)?;
                Ok(Port(f.req("port")?))
            }
        }
        deserialize_from_json!(Port);
        assert_eq!(serde_json::from_str::<Port>(r#"{"port": 80}"#).unwrap().0, 80);
        let e = serde_json::from_str::<Port>(r#"{"port": -1}"#).unwrap_err().to_string();
        assert!(e.starts_with("port: -1 is negative"), "{e}");
        let e = serde_json::from_value::<Port>(json!([])).unwrap_err().to_string();
        assert_eq!(e, "expected an object, got an array");
    }
}
