//! Which fields of a task the page added rather than the user: a page front end's
//! `Dlq::page_task` fills the browser's user agent, cookies and proxy into a widget's task and
//! names them in the task's `page_context` (`["user_agent", "cookies"]`). A service with no place
//! for such a field may leave it out where the kind marks the field `droppable` (the answer is not
//! bound to it): `provider::page_context` decides that; this module only reads, checks and writes
//! the list. A task without it (every task a user writes) has no field a service may leave out.
//! docs/decisions/0077-page-context-a-service-may-drop.md.

use serde_json::{Map, Value};

use super::{kinds, Task, TaskKind};
use crate::error::InvalidTask;

/// The key of the list in task JSON (`pageContext` is read too).
pub const KEY: &str = "page_context";

/// The fields of a task that the page added (names as the kind declares them); empty for a
/// task the user wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageContext(Vec<&'static str>);

impl PageContext {
    pub fn fields(&self) -> &[&'static str] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, field: &str) -> bool {
        self.0.contains(&field)
    }

    /// The names a page front end filled (`TaskContext::fill`'s list) as a kind declares them.
    pub fn of_names(kind: TaskKind, names: &[&str]) -> PageContext {
        let decl = kinds::decl(kind);
        PageContext(names.iter().filter_map(|n| decl.field(n).map(|f| f.name)).collect())
    }

    /// Takes the list out of a task's JSON object, if there (`None`: no list).
    pub(super) fn take(obj: &mut Map<String, Value>) -> Option<Value> {
        obj.remove(KEY).or_else(|| obj.remove("pageContext"))
    }

    /// Reads the list given with `task`: names of fields its kind declares and the task holds.
    pub(super) fn read(value: Value, task: &Task) -> Result<PageContext, InvalidTask> {
        let Value::Array(names) = value else {
            return Err(InvalidTask::new(KEY, "expected a list of the task's field names the page added"));
        };
        if names.is_empty() {
            return Ok(PageContext::default());
        }
        let decl = kinds::decl(task.kind());
        let held = serde_json::to_value(task).unwrap_or(Value::Null);
        let mut fields = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let at = format!("{KEY}[{i}]");
            let name = name.as_str().ok_or_else(|| InvalidTask::new(&at, "expected a field name (a string)"))?;
            let field = decl.field(name).ok_or_else(|| {
                InvalidTask::new(&at, format!("{} tasks have no field {name:?}", task.kind().as_str()))
            })?;
            if held.get(field.name).is_none_or(Value::is_null) {
                return Err(InvalidTask::new(&at, format!("the task has no {name:?} for the page to have added")));
            }
            if !fields.contains(&field.name) {
                fields.push(field.name);
            }
        }
        Ok(PageContext(fields))
    }

    /// Writes the list into a task's JSON object (nothing when empty: a user's task is unchanged).
    pub(super) fn write(&self, obj: &mut Map<String, Value>) {
        if !self.0.is_empty() {
            obj.insert(KEY.into(), Value::from(self.0.clone()));
        }
    }
}
