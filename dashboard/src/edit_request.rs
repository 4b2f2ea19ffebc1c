//! What an operator asks the edit form for: the records (a selection) and the edit as typed
//! in its two JSON fields, read into the core's `Edit`. Shared by the edit handlers and their
//! views.

use captcha_dlq_core::dlq::Edit;
use captcha_dlq_core::support::json_read::FromJson;
use serde_json::{Map, Value};

use crate::query::Selection;
use crate::respond::Failure;

/// What the operator is editing: the selection, and the edit as typed (kept to fill the form
/// and the preview's hidden fields again).
pub(crate) struct EditRequest {
    pub(crate) selection: Selection,
    pub(crate) task_text: String,
    pub(crate) labels_text: String,
}

impl EditRequest {
    /// The edit the two JSON fields describe; errors name the field.
    pub(crate) fn edit(&self) -> Result<Edit, Failure> {
        let object = |name: &str, text: &str| -> Result<Value, Failure> {
            if text.trim().is_empty() {
                return Ok(Value::Object(Map::new()));
            }
            serde_json::from_str(text).map_err(|e| Failure::bad_request(format!("{name}: not valid JSON: {e}")))
        };
        let value = serde_json::json!({
            "task": object("task", &self.task_text)?,
            "labels": object("labels", &self.labels_text)?,
        });
        Edit::from_json(value).map_err(|e| Failure::bad_request(e.to_string()))
    }
}
