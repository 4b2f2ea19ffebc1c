//! A task of a declared kind: its values, read and checked by its declaration.
//!
//! The fields are private and the only way in is [`Declared::read`], which
//! checks every value by its declared type: a `Declared` always holds a valid
//! task of its kind.

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::{Map, Value};

use super::decl::{FieldType, KindDecl};
use crate::error::InvalidTask;
use crate::support::float_text::float_text;
use crate::support::quoted::Quoted;
use crate::task::read::Fields;
use crate::task::{base64_image, http_url, limits, Proxy, TaskKind};

/// A task of a kind whose wire form is declared (see [`super::decl::Wire::Declared`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Declared {
    kind: TaskKind,
    /// The values given, by field name (snake_case); the proxy is apart.
    values: Map<String, Value>,
    proxy: Option<Proxy>,
}

impl Declared {
    pub fn kind(&self) -> TaskKind {
        self.kind
    }

    /// The value of `field`, if given.
    pub fn get(&self, field: &str) -> Option<&Value> {
        self.values.get(field)
    }

    /// The text of `field`, if given and a string.
    pub fn text(&self, field: &str) -> Option<&str> {
        self.values.get(field).and_then(Value::as_str)
    }

    pub fn proxy(&self) -> Option<&Proxy> {
        self.proxy.as_ref()
    }

    /// The values given, by field name, without the proxy.
    pub fn values(&self) -> &Map<String, Value> {
        &self.values
    }

    /// Reads the fields of `decl` from `f` (each by its name or JavaScript spelling) and
    /// checks them; the error names the field as the user spelled it.
    pub(in crate::task) fn read(decl: &'static KindDecl, f: &mut Fields) -> Result<Declared, InvalidTask> {
        let mut values = Map::new();
        let mut proxy = None;
        for field in decl.fields {
            let js = field.js_name();
            let mut spellings: Vec<&str> = Vec::with_capacity(1 + field.also.len());
            if js != field.name {
                spellings.push(&js);
            }
            spellings.extend(field.also);
            let name = field.name;
            let value: Option<Value> = match field.ty {
                FieldType::Proxy => {
                    proxy = f.proxy()?;
                    continue;
                }
                FieldType::Flag => f.read_spelled::<bool>(name, &spellings)?.filter(|on| *on).map(Value::Bool),
                // The services' default is the same as no value: not kept, so no form sends or refuses it.
                FieldType::Int { default, .. } => f
                    .read_spelled::<u64>(name, &spellings)?
                    .filter(|n| default.is_none_or(|d| *n != u64::from(d)))
                    .map(Value::from),
                FieldType::Number { .. } => f.read_spelled::<f64>(name, &spellings)?.map(Value::from),
                FieldType::StringMap => {
                    let map: std::collections::BTreeMap<String, String> =
                        f.read_spelled(name, &spellings)?.unwrap_or_default();
                    (!map.is_empty()).then(|| {
                        let mut object = Map::new();
                        for (k, v) in map {
                            object.insert(k, Value::String(v));
                        }
                        Value::Object(object)
                    })
                }
                FieldType::Object => f.read_spelled::<Map<String, Value>>(name, &spellings)?.map(Value::Object),
                FieldType::Images { .. } | FieldType::Names { .. } => f
                    .read_spelled::<Vec<String>>(name, &spellings)?
                    .map(|items| items.into_iter().map(Value::String).collect()),
                _ => f.read_spelled::<String>(name, &spellings)?.map(Value::String),
            };
            match value {
                Some(v) => {
                    values.insert(field.name.to_string(), v);
                }
                None if field.required => return Err(InvalidTask::new(field.name, "missing field")),
                None => {}
            }
        }
        if proxy.is_none() && decl.fields.iter().any(|d| d.ty == FieldType::Proxy && d.required) {
            return Err(InvalidTask::new("proxy", "missing field: this kind is solved through your proxy"));
        }
        let task = Declared { kind: decl.kind, values, proxy };
        task.validate(decl)?;
        Ok(task)
    }

    /// Checks every value by its declared type.
    fn validate(&self, decl: &KindDecl) -> Result<(), InvalidTask> {
        for field in decl.fields {
            let name = field.name;
            if field.ty == FieldType::Proxy {
                if let Some(p) = &self.proxy {
                    p.validate("proxy")?;
                }
                continue;
            }
            let Some(value) = self.values.get(name) else { continue };
            match (field.ty, value) {
                (FieldType::Int { min, max, not_above, .. }, v) => {
                    let n = v.as_u64().unwrap_or(u64::MAX);
                    if !(u64::from(min)..=max).contains(&n) {
                        return Err(InvalidTask::new(name, format!("{n} is outside {min}..={max}")));
                    }
                    let limit = not_above.and_then(|other| Some((other, self.values.get(other)?.as_u64()?)));
                    if let Some((other, limit)) = limit.filter(|(_, limit)| n > *limit) {
                        return Err(InvalidTask::new(name, format!("{name} {n} is greater than {other} {limit}")));
                    }
                }
                (FieldType::Number { min_milli, max_milli }, v) => {
                    let n = v.as_f64().unwrap_or(f64::NAN);
                    // Thousandths divided once: 100 / 1000.0 is the very double `0.1` is.
                    let (min, max) = (f64::from(min_milli) / 1000.0, f64::from(max_milli) / 1000.0);
                    if !(min..=max).contains(&n) {
                        let (n, min, max) = (float_text(n), float_text(min), float_text(max));
                        return Err(InvalidTask::new(name, format!("{n} is outside {min}..={max}")));
                    }
                }
                (FieldType::Choice(names), Value::String(s)) if !names.contains(&s.as_str()) => {
                    return Err(InvalidTask::new(name, format!("{} is not one of {}", Quoted(s), names.join(", "))));
                }
                (FieldType::Url, Value::String(s)) => {
                    limits::check_field(name, s, field.ty)?;
                    http_url(name, s)?;
                }
                (FieldType::Image, Value::String(s)) => {
                    limits::check_field(name, s, field.ty)?;
                    base64_image(name, s)?;
                }
                (FieldType::Text { max_chars: Some(max) }, Value::String(s)) => {
                    let chars = s.chars().count();
                    if chars > max as usize {
                        return Err(InvalidTask::new(
                            name,
                            format!("{chars} characters; the services take at most {max}"),
                        ));
                    }
                    if s.trim().is_empty() {
                        return Err(InvalidTask::new(name, "must not be empty"));
                    }
                    limits::check_field(name, s, field.ty)?;
                }
                (FieldType::Cookies, Value::String(s)) => {
                    limits::check_field(name, s, field.ty)?;
                    check_cookies(name, s)?;
                }
                (ty, Value::String(s)) => {
                    if s.trim().is_empty() {
                        return Err(InvalidTask::new(name, "must not be empty"));
                    }
                    limits::check_field(name, s, ty)?;
                }
                (FieldType::Images { max } | FieldType::Names { max }, Value::Array(items)) => {
                    check_list(name, items, max, field.ty)?;
                }
                // A key may be sent as `name[key]` (v1's `data[blob]`): no brackets in it.
                (FieldType::StringMap, Value::Object(map))
                    if map.keys().any(|k| k.is_empty() || k.contains(['[', ']'])) =>
                {
                    return Err(InvalidTask::new(name, "keys must be non-empty and contain no brackets"));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Checks a list of 1 to `max` images or names, each as its single form is checked; the error
/// names the item (`images[2]`).
fn check_list(field: &str, items: &[Value], max: u32, ty: FieldType) -> Result<(), InvalidTask> {
    if items.is_empty() {
        return Err(InvalidTask::new(field, "an empty list; give at least one"));
    }
    if items.len() > max as usize {
        return Err(InvalidTask::new(field, format!("{} items, at most {max}", items.len())));
    }
    for (i, item) in items.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let text = item.as_str().unwrap_or_default();
        limits::check_field(&at, text, ty)?;
        match ty {
            FieldType::Images { .. } => base64_image(&at, text)?,
            _ if text.trim().is_empty() => return Err(InvalidTask::new(at, "must not be empty")),
            _ => {}
        }
    }
    Ok(())
}

/// Checks that cookies are written `name=value; name2=value2`, the one spelling they are
/// given in; each protocol's own form is written from it by [`super::rewrite_cookies`].
fn check_cookies(field: &str, text: &str) -> Result<(), InvalidTask> {
    let mut parts = text.split(';').map(str::trim).filter(|p| !p.is_empty()).peekable();
    if parts.peek().is_none() {
        return Err(InvalidTask::new(field, "must not be empty"));
    }
    if parts.any(|p| p.split_once('=').is_none_or(|(name, _)| name.trim().is_empty())) {
        return Err(InvalidTask::new(
            field,
            "cookies are written `name=value; name2=value2` (a part has no name or no `=`)",
        ));
    }
    Ok(())
}

/// The task's JSON: `type`, its values, then the proxy. A struct, not a map, as the coded tasks
/// were: its field names are respelled in a host's casing (`pageUrl` in a JavaScript record),
/// the keys inside a value (a `string_map`'s) are not (`support::cased`).
impl Serialize for Declared {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let decl = super::decl(self.kind);
        let len = 1 + self.values.len() + usize::from(self.proxy.is_some());
        let mut out = serializer.serialize_struct("Declared", len)?;
        out.serialize_field("type", self.kind.as_str())?;
        for field in decl.fields {
            if let Some(v) = self.values.get(field.name) {
                out.serialize_field(field.name, v)?;
            }
        }
        if let Some(p) = &self.proxy {
            out.serialize_field("proxy", p)?;
        }
        out.end()
    }
}
