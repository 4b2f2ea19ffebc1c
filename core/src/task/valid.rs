//! A task that passed its checks, the only form in which the engine, records and the journal
//! hold one.
//!
//! A task is checked once: by [`ValidTask::new`] (a task built in code) or by
//! [`Task::from_json_value`] (read from JSON: a new task, a record, a journal entry, a
//! binding's task object), which feeds it to the same constructor. Nothing else builds a
//! `ValidTask`, so whoever holds one trusts it and never checks it again. The task is
//! shared (`Arc`): a job, its journal entries and its dead-letter record hold the same one.
//! It reads and serializes as the [`Task`] it holds, so records, journals and vectors are
//! unchanged; with the fields a page added, if any (`page_context`, [`PageContext`]).

use std::ops::Deref;
use std::sync::Arc;

use serde::Serialize;

use super::page_context::PageContext;
use super::Task;
use crate::error::InvalidTask;
use crate::support::json_read::{deserialize_from_json, FieldError, FromJson};

/// A [`Task`] whose every field was checked; read it through `Deref` or [`ValidTask::as_task`].
/// With it, which of its fields a page added (checked against the task when read).
#[derive(Clone, PartialEq)]
pub struct ValidTask(Arc<Task>, PageContext);

#[cfg(test)]
std::thread_local! {
    /// Tasks checked on this thread: lets tests see that a task is checked once.
    static CHECKS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl ValidTask {
    /// Checks every field of `task`; the error names the first bad one.
    pub fn new(task: Task) -> Result<Self, InvalidTask> {
        task.validate()?;
        Ok(ValidTask(Arc::new(task), PageContext::default()))
    }

    /// The task with the fields the page added (read and checked by `Task::from_json_value`).
    pub(super) fn with_page_context(mut self, context: PageContext) -> Self {
        self.1 = context;
        self
    }

    /// The fields of this task that a page added (empty for a task the user wrote).
    pub fn page_context(&self) -> &PageContext {
        &self.1
    }

    /// Reads a task from JSON and checks it: [`Task::from_json_value`].
    pub fn from_json_value(value: serde_json::Value) -> Result<Self, InvalidTask> {
        Task::from_json_value(value)
    }

    pub fn as_task(&self) -> &Task {
        &self.0
    }

    /// The task itself (copied only when it is shared).
    pub fn into_task(self) -> Task {
        Arc::unwrap_or_clone(self.0)
    }

    /// How many times this thread has run [`Task::validate`] so far.
    #[cfg(test)]
    pub(crate) fn checks_on_this_thread() -> u32 {
        CHECKS.with(std::cell::Cell::get)
    }

    /// Counts one run of [`Task::validate`].
    #[cfg(test)]
    pub(in crate::task) fn count_check() {
        CHECKS.with(|c| c.set(c.get() + 1));
    }
}

impl Deref for ValidTask {
    type Target = Task;
    fn deref(&self) -> &Task {
        &self.0
    }
}

impl AsRef<Task> for ValidTask {
    fn as_ref(&self) -> &Task {
        &self.0
    }
}

impl TryFrom<Task> for ValidTask {
    type Error = InvalidTask;
    fn try_from(task: Task) -> Result<Self, InvalidTask> {
        ValidTask::new(task)
    }
}

impl From<ValidTask> for Task {
    fn from(task: ValidTask) -> Task {
        task.into_task()
    }
}

impl PartialEq<Task> for ValidTask {
    fn eq(&self, other: &Task) -> bool {
        *self.0 == *other
    }
}

impl std::fmt::Debug for ValidTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for ValidTask {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.1.is_empty() {
            return self.0.serialize(serializer);
        }
        // A page task keeps its `page_context` in records and journals, so a replay or a recovery
        // may leave out what the first submission could.
        let mut value = serde_json::to_value(&*self.0).map_err(serde::ser::Error::custom)?;
        if let serde_json::Value::Object(obj) = &mut value {
            self.1.write(obj);
        }
        value.serialize(serializer)
    }
}

/// Tasks read back from records and journals go through the same checks as new ones, so a
/// hand-edited or foreign file cannot smuggle in a task the codecs were never meant to see.
impl FromJson for ValidTask {
    fn from_json(value: serde_json::Value) -> Result<Self, FieldError> {
        if !value.is_object() {
            return Err(FieldError::expected("an object", &value));
        }
        Task::from_json_value(value).map_err(|e| FieldError::new(e.field, e.problem))
    }
}

deserialize_from_json!(ValidTask);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::task::Raw;

    /// A raw task (the one kind built as a struct: the declared kinds are only read and checked).
    fn raw(method: Option<&str>) -> Task {
        Task::Raw(Box::new(Raw { method: method.map(str::to_string), ..Default::default() }))
    }

    #[test]
    fn the_constructor_refuses_an_invalid_task_naming_the_field() {
        assert_eq!(ValidTask::new(raw(None)).unwrap_err().field, "method");
        assert_eq!(ValidTask::try_from(raw(Some(" "))).unwrap_err().field, "method");
        let proxied =
            |proxy| json!({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://a.test/", "proxy": proxy});
        let bad_port = json!({"type": "http", "host": "h", "port": 0});
        assert_eq!(ValidTask::from_json_value(proxied(bad_port)).unwrap_err().field, "proxy.port");
        let no_login = json!({"type": "socks5", "host": "h", "port": 1080, "password": "p"});
        assert_eq!(ValidTask::from_json_value(proxied(no_login)).unwrap_err().field, "proxy.login");
        assert_eq!(ValidTask::from_json_value(json!({"type": "image", "body": ""})).unwrap_err().field, "body");
        assert_eq!(ValidTask::from_json_value(json!("text")).unwrap_err().field, "task");
    }

    #[test]
    fn a_valid_task_reads_and_writes_as_its_task() {
        let task = raw(Some("userrecaptcha"));
        let valid = ValidTask::new(task.clone()).expect("valid");
        assert_eq!(valid, task);
        assert_eq!(serde_json::to_string(&valid).unwrap(), serde_json::to_string(&task).unwrap());
        assert_eq!(format!("{valid:?}"), format!("{task:?}"));
        let back: ValidTask = serde_json::from_value(serde_json::to_value(&valid).unwrap()).expect("reads back");
        assert_eq!(back, valid);
        assert_eq!(back.into_task(), task);
        let stored =
            serde_json::from_value::<ValidTask>(json!({"type": "turnstile", "sitekey": "", "page_url": "https://a"}));
        assert!(stored.unwrap_err().to_string().starts_with("sitekey: must not be empty"));
    }
}
