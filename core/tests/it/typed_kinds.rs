//! The typed Rust tasks (`task::kinds::typed`) against the JSON form: every task case of
//! `tests/vectors/tasks.json` of a declared kind, read as its typed struct (by `type`, through
//! [`AnyTask`]), is the very task `Task::from_json_value` reads from the same JSON, and reads back
//! to the same typed struct. Every declared kind must have such a case.

use std::collections::BTreeSet;
use std::path::PathBuf;

use captcha_dlq_core::task::kinds::{self, typed::AnyTask};
use captcha_dlq_core::task::{Task, TaskKind, ValidTask};
use serde_json::Value;

#[test]
fn every_declared_kind_typed_from_its_vectors_is_the_task_its_json_is() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/tasks.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut covered = BTreeSet::new();
    for case in doc["cases"].as_array().expect("a `cases` array") {
        let Some(json) = case.get("task") else { continue };
        // A page task's `page_context` is set by `Dlq::page_task`, not a field of the typed task.
        if json.get("page_context").is_some() {
            continue;
        }
        let Ok(task) = Task::from_json_value(json.clone()) else { continue };
        if !kinds::decl(task.kind()).wire_is_declared() {
            continue;
        }
        let label = case["name"].as_str().unwrap_or("?");
        let typed: AnyTask =
            serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{label}: the typed form of {json}: {e}"));
        assert_eq!(ValidTask::try_from(typed.clone()).as_ref(), Ok(&task), "{label}: typed -> Task");
        assert_eq!(AnyTask::try_from(task.as_task()).as_ref(), Ok(&typed), "{label}: Task -> typed");
        covered.insert(task.kind());
    }
    let declared: BTreeSet<TaskKind> =
        TaskKind::ALL.into_iter().filter(|k| kinds::decl(*k).wire_is_declared()).collect();
    let missing: Vec<&TaskKind> = declared.difference(&covered).collect();
    assert!(missing.is_empty(), "declared kinds without a typed vector case: {missing:?}");
}
