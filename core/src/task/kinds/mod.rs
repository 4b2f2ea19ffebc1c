//! Every task kind, declared once: its fields with their types and checks, its
//! answer's shape, its wire form per protocol and dialect, and the source of
//! each wire fact (docs/decisions/0051-every-kind-declared-once.md).
//!
//! One data file per kind, `core/kinds/<kind>.toml` (shared fields, answers,
//! preset lists and clients named once in `core/kinds/_shared.toml`), holds its
//! declaration; `core/build.rs` writes them as the [`KindDecl`] tables of
//! [`DECLS`] (and the typed structs of [`typed`]). The Rust reader, validator and
//! encoders of the declared kinds work from these tables; the kinds whose wire
//! form needs more than renames ([`Wire::Coded`]) keep their typed structs and
//! encoders, checked against their declarations by tests. The Python classes
//! and stubs, the TypeScript types, the CLI's list of kinds and the docs table
//! are written from the same tables by [`generate`] (`cargo xtask kinds`); the test
//! `core/tests/it/kinds_generated.rs` fails when a checked-in copy differs.

// Without `declared-kinds` (the browser build) descriptions and sources are `()` (`decl::Text`), passed as such.
#![cfg_attr(not(feature = "declared-kinds"), allow(clippy::unit_arg))]

pub mod decl;
#[cfg(feature = "declared-kinds")]
mod declared;

pub mod answer;
/// The kinds' forms in Python, TypeScript and the docs: feature `kinds-gen` (`cargo xtask kinds` and the drift test).
#[cfg(feature = "kinds-gen")]
pub mod generate;
/// Typed tasks and answers: feature `declared-kinds`, which the browser build leaves out.
#[cfg(feature = "declared-kinds")]
pub mod typed;

#[cfg(feature = "declared-kinds")]
use serde_json::Value;

pub use decl::{
    AnswerDecl, AnswerLife, AnswerType, CreateTaskDecl, Droppable, DroppedDecl, FieldDecl, FieldType, KindDecl, Source,
    V1Decl, Wire,
};
#[cfg(feature = "declared-kinds")]
pub use declared::Declared;

use super::TaskKind;
use crate::protocol::{Dialect, Protocol, PRESETS};

/// A declared kind's entry in [`DECLS`]: its declaration, or without feature `declared-kinds`
/// (the browser build, no `Task::Declared`), a stand-in with its name only.
#[cfg(feature = "declared-kinds")]
macro_rules! declared {
    ($decl:ident, $variant:ident, $life:expr) => {
        &$decl
    };
}
#[cfg(not(feature = "declared-kinds"))]
macro_rules! declared {
    ($decl:ident, $variant:ident, $life:expr) => {
        &KindDecl {
            kind: TaskKind::$variant,
            class: (),
            summary: (),
            fields: &[],
            answer: &[],
            life: $life,
            wire: Wire::Declared { v1: None, create_task: &[] },
            dropped: &[],
        }
    };
}

/// The declarations, written by `core/build.rs` from `core/kinds/<kind>.toml` (edit those).
// Without `declared-kinds` the declared kinds' tables are left out, and with them their wire types.
#[cfg_attr(not(feature = "declared-kinds"), allow(unused_imports))]
mod tables {
    use super::decl::{
        strip, AnswerDecl, AnswerLife, AnswerType, CreateTaskDecl, Droppable, DroppedDecl, FieldDecl, FieldType,
        KindDecl, Source, V1Decl, Wire,
    };
    use crate::protocol::Dialect;
    use crate::task::TaskKind;

    include!(concat!(env!("OUT_DIR"), "/kind_tables.rs"));
}
pub use tables::DECLS;

/// The declaration of `kind`.
pub fn decl(kind: TaskKind) -> &'static KindDecl {
    DECLS[kind.index()]
}

#[cfg(feature = "declared-kinds")]
/// The v1 form of a declared kind for the provider named `provider`: `None` when the kind is
/// coded, `Some(None)` when the provider does not solve it.
pub(crate) fn v1_form(kind: TaskKind, provider: &str) -> Option<Option<&'static V1Decl>> {
    v1_form_of(kind, provider)
}

fn v1_form_of(kind: TaskKind, provider: &str) -> Option<Option<&'static V1Decl>> {
    let Wire::Declared { v1, .. } = &decl(kind).wire else { return None };
    Some(v1.as_ref().filter(|v| provider == "custom" || v.services.contains(&provider)))
}

/// A createTask form of a declared kind in `dialect` (whether the dialect has one): as [`v1_form`].
pub(crate) fn create_task_form(kind: TaskKind, dialect: Dialect) -> Option<Option<&'static CreateTaskDecl>> {
    let Wire::Declared { create_task, .. } = &decl(kind).wire else { return None };
    Some(create_task.iter().find(|c| c.dialect == dialect))
}

#[cfg(feature = "declared-kinds")]
/// The createTask form of the task `t` in `dialect`: the form whose `when` field `t` holds, else
/// the one without `when`; `None` when the dialect has neither.
pub(crate) fn create_task_form_of(t: &Declared, dialect: Dialect) -> Option<&'static CreateTaskDecl> {
    let Wire::Declared { create_task, .. } = &decl(t.kind()).wire else { return None };
    let forms = || create_task.iter().filter(move |c| c.dialect == dialect);
    forms().find(|c| c.when.is_some_and(|field| t.get(field).is_some())).or_else(|| forms().find(|c| c.when.is_none()))
}

/// Cookies (`a=1; b=2`, or the v1 form `a:1;b:2`) written as
/// `a{between}1{separator}b{between}2`: each protocol's own form. A part with neither `=` nor
/// `:` is passed as it is.
#[cfg(feature = "declared-kinds")]
pub(crate) fn rewrite_cookies(text: &str, between: char, separator: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push_str(separator);
        }
        match part.split_once('=').or_else(|| part.split_once(':')) {
            Some((name, value)) => {
                out.push_str(name.trim());
                out.push(between);
                out.push_str(value.trim());
            }
            None => out.push_str(part),
        }
    }
    out
}

/// The presets that solve `kind`, for the error that says where it can go.
pub fn services_of(kind: TaskKind) -> Vec<&'static str> {
    if let Some(services) = decl(kind).coded_services() {
        return services.to_vec();
    }
    let mut out = Vec::new();
    for (name, _, protocol) in PRESETS {
        let solves = match protocol {
            Protocol::V1 => v1_form_of(kind, name).is_none_or(|f| f.is_some()),
            // A form kept for custom endpoints (`custom_only`) is not the preset's: it dropped the kind.
            Protocol::CreateTask(d) => {
                create_task_form(kind, *d).is_none_or(|f| f.is_some()) && decl(kind).dropped_by(name).is_none()
            }
        };
        if solves {
            out.push(*name);
        }
    }
    out
}

#[cfg(feature = "declared-kinds")]
/// A value of a declared task as a form parameter: text as is, a flag as `1`, a number in decimal.
pub(crate) fn param_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(true) => Some("1".into()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map, Value};

    use super::*;
    use crate::task::Task;

    /// A value every check of `ty` takes.
    fn sample(ty: FieldType) -> Value {
        match ty {
            FieldType::Url => json!("https://a.test/page"),
            FieldType::Image => json!("aGk="),
            FieldType::Cookies => json!("a=b; c=d"),
            FieldType::Int { min, max, .. } => json!(u64::from(min.max(1)).min(max)),
            FieldType::Number { min_milli, .. } => json!(f64::from(min_milli) / 1000.0),
            FieldType::Flag => json!(true),
            FieldType::Choice(names) => json!(names[0]),
            FieldType::Proxy => json!({"type": "http", "host": "h", "port": 1}),
            FieldType::StringMap => json!({"k": "v"}),
            FieldType::Object => json!({"type": "T"}),
            FieldType::Images { .. } => json!(["aGk=", "aGk="]),
            FieldType::Names { .. } => json!(["a.test"]),
            _ => json!("v"),
        }
    }

    fn full_task(d: &KindDecl) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("type".into(), json!(d.kind.as_str()));
        for f in d.fields {
            task.insert(f.name.into(), sample(f.ty));
        }
        task
    }

    /// Every kind, the typed structs of the coded ones included, reads exactly its declared
    /// fields under both spellings, writes them back under their names, and names a missing
    /// required field: a field added to a struct or a reader but not to its declaration (or
    /// the other way round) fails here.
    #[test]
    fn every_kind_reads_and_writes_exactly_its_declared_fields() {
        for d in DECLS {
            let task = Task::from_json_value(Value::Object(full_task(d)))
                .unwrap_or_else(|e| panic!("{}: a task with every field: {e}", d.kind));
            let written = serde_json::to_value(&task).unwrap();
            let mut keys: Vec<&str> = written.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort_unstable();
            let mut declared: Vec<&str> = d.fields.iter().map(|f| f.name).chain(["type"]).collect();
            declared.sort_unstable();
            assert_eq!(keys, declared, "{}: written fields", d.kind);

            let mut js = Map::new();
            for (k, v) in full_task(d) {
                let name = d.field(&k).map_or(k.clone(), FieldDecl::js_name);
                js.insert(name, v);
            }
            assert_eq!(
                Task::from_json_value(Value::Object(js)).as_ref(),
                Ok(&task),
                "{}: JavaScript spellings",
                d.kind
            );

            for f in d.fields.iter().filter(|f| f.required) {
                let mut missing = full_task(d);
                missing.remove(f.name);
                let e = Task::from_json_value(Value::Object(missing)).unwrap_err();
                assert_eq!(e.field, f.name, "{}: without {}", d.kind, f.name);
            }
            let mut unknown = full_task(d);
            unknown.insert("not_a_field".into(), json!("x"));
            assert_eq!(Task::from_json_value(Value::Object(unknown)).unwrap_err().field, "not_a_field");
        }
    }

    #[test]
    fn a_declared_kind_refuses_bad_values_naming_the_field() {
        let bad = |patch: Value| {
            let mut task = full_task(decl(TaskKind::Datadome));
            task.extend(patch.as_object().unwrap().clone());
            Task::from_json_value(Value::Object(task)).unwrap_err().field
        };
        assert_eq!(bad(json!({"captcha_url": "not a url"})), "captcha_url");
        assert_eq!(bad(json!({"page_url": " "})), "page_url");
        assert_eq!(bad(json!({"cookie": ""})), "cookie");
        assert_eq!(bad(json!({"user_agent": "UA\r\nX: 1"})), "user_agent");
        assert_eq!(bad(json!({"proxy": {"type": "ftp", "host": "h", "port": 1}})), "proxy.type");
        let mut no_proxy = full_task(decl(TaskKind::Datadome));
        no_proxy.remove("proxy");
        assert_eq!(Task::from_json_value(Value::Object(no_proxy)).unwrap_err().field, "proxy");
        let rotate = json!({"type": "rotate", "body": "aGk=", "angle": 400});
        assert_eq!(Task::from_json_value(rotate).unwrap_err().field, "angle");
        let audio = json!({"type": "audio", "body": "aGk=", "lang": "xx"});
        assert_eq!(Task::from_json_value(audio).unwrap_err().field, "lang");
    }

    /// The list and page fields of the image-classification, AntiGate and Cloudflare kinds: each
    /// bad value is refused with a problem that says what is wrong, naming the field or item.
    #[test]
    fn list_and_page_fields_refuse_bad_values_naming_the_field() {
        let problem = |task: Value| {
            let e = Task::from_json_value(task).unwrap_err();
            format!("{}: {}", e.field, e.problem)
        };
        let hc = |images: Value| json!({"type": "hcaptcha_classification", "images": images, "question": "q"});
        assert_eq!(problem(hc(json!([]))), "images: an empty list; give at least one");
        assert_eq!(problem(hc(json!(vec!["aGk="; 19]))), "images: 19 items, at most 18");
        assert!(problem(hc(json!(["aGk=", "@@@"]))).starts_with("images[1]: not valid base64"));
        assert_eq!(problem(hc(json!(["aGk=", ""]))), "images[1]: empty image");
        assert!(problem(hc(json!(["aGk=", "data:image/png;base64,aGk="]))).starts_with("images[1]: a data: URL"));
        assert!(problem(hc(json!(["aGk=", 5]))).starts_with("images[1]: expected a string"));
        assert!(problem(hc(json!("aGk="))).starts_with("images: expected an array"));
        let big = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            vec![0u8; crate::task::MAX_IMAGE_BYTES + 1],
        );
        assert_eq!(
            problem(hc(json!([big]))),
            format!(
                "images[0]: an image of {} bytes, at most {}",
                crate::task::MAX_IMAGE_BYTES + 1,
                crate::task::MAX_IMAGE_BYTES
            )
        );
        assert!(Task::from_json_value(hc(json!(vec!["aGk="; 18]))).is_ok());

        let ag = |domains: Value| {
            json!({"type": "antigate", "page_url": "https://a.test/", "template_name": "T", "variables": {},
                "domainsOfInterest": domains})
        };
        assert_eq!(problem(ag(json!([" "]))), "domains_of_interest[0]: must not be empty");
        assert_eq!(
            problem(ag(json!(["a.test\n"]))),
            "domains_of_interest[0]: control character U+000A at character 7; a single-line field allows none"
        );
        assert_eq!(problem(ag(json!([]))), "domains_of_interest: an empty list; give at least one");
        let antigate = Task::from_json_value(ag(json!(["a.test", "b.test"]))).unwrap();
        assert_eq!(serde_json::to_value(&antigate).unwrap()["domains_of_interest"], json!(["a.test", "b.test"]));

        let cf = |html: Value| {
            json!({"type": "cloudflare_challenge", "page_url": "https://a.test/", "html": html,
                "proxy": {"type": "http", "host": "h", "port": 1}})
        };
        assert!(Task::from_json_value(cf(json!("<html>\n<title>Just a moment...</title>\n</html>"))).is_ok());
        assert_eq!(problem(cf(json!("x".repeat(512 * 1024 + 1)))), "html: 524289 characters, at most 524288");
        assert_eq!(problem(cf(json!(" "))), "html: must not be empty");
        let rc = json!({"type": "recaptcha_classification", "image": "aGk=", "question": "/m/015qff", "grid": "5x5"});
        assert_eq!(problem(rc), "grid: \"5x5\" is not one of 3x3, 4x4, 1x1");
    }

    #[test]
    fn cookies_are_written_in_each_protocols_form() {
        assert_eq!(rewrite_cookies(" a=1;b = 2; ", ':', ";"), "a:1;b:2");
        assert_eq!(rewrite_cookies("a=1;b=2", '=', "; "), "a=1; b=2");
        let bad = json!({"type": "datadome", "captcha_url": "https://a.test/c", "page_url": "https://a.test/",
            "user_agent": "UA", "proxy": {"type": "http", "host": "h", "port": 1}, "cookie": "x"});
        assert!(Task::from_json_value(bad).is_ok(), "a Token cookie is not checked as pairs");
    }
}
