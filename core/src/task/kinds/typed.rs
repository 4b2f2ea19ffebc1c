//! Typed Rust forms of the kinds, written by `core/build.rs` from the kind files
//! (`core/kinds/<kind>.toml`, docs/decisions/0051-every-kind-declared-once.md):
//!
//! - a struct per declared kind ([`AmazonWaf`], [`DataDome`], ...), its fields typed by their
//!   declared types (`String`, `Option<String>`, `bool`, `u64`, `f64`, `Vec<String>`, [`Proxy`]).
//!   [`ValidTask::try_from`] turns it into a checked task through the one reader and validator the JSON
//!   form goes through (`Task::from_json_value`), so a typed task is checked exactly as an untyped
//!   one; `TryFrom<&Task>` reads it back. [`AnyTask`] is any of them, by `type`.
//! - an answer struct per kind ([`AmazonWafAnswer`], [`GeeTestV4Answer`], [`CoordinatesTaskAnswer`],
//!   ...), read from a [`Solution`] by `TryFrom<&Solution>` through the one answer reader
//!   ([`super::answer::typed`]).
//!
//! Feature `declared-kinds`, which the browser build leaves out (`Task::Declared`).

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::answer;
use crate::error::InvalidTask;
use crate::solution::Solution;
use crate::task::{Declared, Proxy, Task, TaskKind, ValidTask};

include!(concat!(env!("OUT_DIR"), "/kind_typed.rs"));

/// A point clicked on an image, in the image's pixels.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// An answer that lacks a value its kind requires, or holds one of the wrong shape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AnswerError(String);

impl AnswerError {
    fn missing(kind: TaskKind, name: &str) -> Self {
        AnswerError(format!("the {kind} answer has no `{name}`"))
    }
}

/// `value` under `name` in the task's JSON.
fn put(json: &mut Map<String, Value>, name: &str, value: impl Serialize) -> Result<(), InvalidTask> {
    let value = serde_json::to_value(value).map_err(|e| InvalidTask::new(name, e.to_string()))?;
    json.insert(name.to_string(), value);
    Ok(())
}

/// The declared task in `task`, when it is of `kind`.
fn declared(task: &Task, kind: TaskKind) -> Result<&Declared, InvalidTask> {
    match task {
        Task::Declared(d) if d.kind() == kind => Ok(d),
        other => Err(InvalidTask::new("type", format!("a {} task, not {kind}", other.kind()))),
    }
}

fn not_declared(kind: TaskKind) -> InvalidTask {
    InvalidTask::new("type", format!("{kind} has no typed form here: its task type is `task::{kind:?}`"))
}

fn missing(field: &str) -> InvalidTask {
    InvalidTask::new(field, "missing field")
}

/// The value of `field` of a checked task, as the field's Rust type.
fn value<T: DeserializeOwned>(task: &Declared, field: &str) -> Result<Option<T>, InvalidTask> {
    task.get(field)
        .map(|v| serde_json::from_value(v.clone()).map_err(|e| InvalidTask::new(field, e.to_string())))
        .transpose()
}

/// The declared values of `solution`'s answer, by name.
fn answer_values(kind: TaskKind, solution: &Solution) -> Result<Map<String, Value>, AnswerError> {
    answer::typed(super::decl(kind), solution).map_err(AnswerError)
}

/// The value `name` of an answer, as its Rust type (the answer reader made it that shape).
fn take<T: DeserializeOwned>(values: &mut Map<String, Value>, name: &str) -> Option<T> {
    values.remove(name).and_then(|v| serde_json::from_value(v).ok())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::answer::test_solution as solution;
    use super::*;

    /// A text answer from a provider key or the answer's text, an optional one absent.
    #[test]
    fn text_answers_are_strings_and_a_missing_one_is_named() {
        let waf = AmazonWafAnswer::try_from(&solution("{}", json!({"cookies": {"aws-waf-token": "T"}}))).unwrap();
        assert_eq!(waf, AmazonWafAnswer { cookie: "T".into(), captcha_voucher: None });
        let token = RecaptchaV2Answer::try_from(&solution("03AGd", json!({}))).unwrap();
        assert_eq!(token.token, "03AGd");
        let none = GeeTestV4Answer::try_from(&solution("", json!({"captcha_id": "c"}))).unwrap_err();
        assert_eq!(none.to_string(), "the geetest_v4 answer has no `lot_number`");
    }

    #[test]
    fn points_numbers_objects_and_indices_have_their_rust_types() {
        let click = CoordinatesTaskAnswer::try_from(&solution("coordinates:x=12,y=34;x=5.5,y=6", json!({})));
        assert_eq!(click.unwrap().points, vec![Point { x: 12.0, y: 34.0 }, Point { x: 5.5, y: 6.0 }]);
        let angle = RotateTaskAnswer::try_from(&solution("rotate:135", json!({}))).unwrap();
        assert_eq!(angle.angle, 135.0);
        let cells = RecaptchaClassificationAnswer::try_from(&solution("", json!({"answer": [false, true, true]})));
        assert_eq!(cells.unwrap().cells, vec![1, 2]);
        let session = json!({"url": "https://a.test/done", "cookies": {"s": "1"}});
        let session = AntiGateAnswer::try_from(&solution("{...}", session)).unwrap();
        assert_eq!(session.url, "https://a.test/done");
        assert_eq!(session.cookies, json!({"s": "1"}).as_object().cloned());
        assert_eq!(session.local_storage, None);
    }

    fn proxy() -> Proxy {
        Proxy { kind: "http".into(), host: "h".into(), port: 1, login: None, password: None }
    }

    /// Strings, options, a required proxy: the task is the one its JSON reads as, and reads back.
    #[test]
    fn a_typed_task_is_the_task_its_json_is() {
        let typed = DataDome {
            captcha_url: "https://a.test/c".into(),
            page_url: "https://a.test/".into(),
            user_agent: "UA".into(),
            proxy: proxy(),
            cookie: None,
        };
        let json = json!({"type": "datadome", "captcha_url": "https://a.test/c", "page_url": "https://a.test/",
            "user_agent": "UA", "proxy": {"type": "http", "host": "h", "port": 1}});
        let task = ValidTask::try_from(typed.clone()).unwrap();
        assert_eq!(task, Task::from_json_value(json).unwrap());
        assert_eq!(DataDome::try_from(task.as_task()).unwrap(), typed);
    }

    /// A flag, whole and decimal numbers, lists and objects keep their types both ways.
    #[test]
    fn flags_numbers_lists_and_objects_keep_their_types() {
        let rotate = json!({"type": "rotate", "body": "aGk=", "angle": 40});
        let task = Task::from_json_value(rotate).unwrap();
        let typed = RotateTask::try_from(task.as_task()).unwrap();
        assert_eq!(typed.angle, Some(40));
        assert_eq!(ValidTask::try_from(typed).unwrap(), task);

        let grid = json!({"type": "grid", "body": "aGk=", "rows": 3, "cols": 3, "canSkip": true});
        let task = Task::from_json_value(grid).unwrap();
        let typed = GridTask::try_from(task.as_task()).unwrap();
        assert!(typed.can_skip);
        assert_eq!((typed.rows, typed.cols), (Some(3), Some(3)));
        assert_eq!(ValidTask::try_from(typed).unwrap(), task);

        let hc = json!({"type": "hcaptcha_classification", "images": ["aGk=", "aGk="], "question": "q"});
        let task = Task::from_json_value(hc).unwrap();
        let typed = HcaptchaClassification::try_from(task.as_task()).unwrap();
        assert_eq!(typed.images, vec!["aGk=".to_string(), "aGk=".to_string()]);

        let ag =
            json!({"type": "antigate", "page_url": "https://a.test/", "template_name": "T", "variables": {"a": 1}});
        let task = Task::from_json_value(ag).unwrap();
        let typed = AntiGate::try_from(task.as_task()).unwrap();
        assert_eq!(Value::Object(typed.variables.clone()), json!({"a": 1}));
        assert_eq!(ValidTask::try_from(typed).unwrap(), task);
    }

    /// A typed task is checked by the same validator: a bad value names the field.
    #[test]
    fn a_bad_typed_task_is_refused_naming_the_field() {
        let bad = DataDome {
            captcha_url: "not a url".into(),
            page_url: "https://a.test/".into(),
            user_agent: "UA".into(),
            proxy: proxy(),
            cookie: None,
        };
        assert_eq!(ValidTask::try_from(bad).unwrap_err().field, "captcha_url");
        let image = Task::from_json_value(json!({"type": "image", "body": "aGk="})).unwrap();
        assert_eq!(DataDome::try_from(image.as_task()).unwrap_err().field, "type");
        assert!(matches!(AnyTask::try_from(image.as_task()), Ok(AnyTask::Image(_))));
        let raw =
            Task::from_json_value(json!({"type": "raw", "method": "base64", "params": {"body": "aGk="}})).unwrap();
        assert_eq!(AnyTask::try_from(raw.as_task()).unwrap_err().field, "type");
    }
}
