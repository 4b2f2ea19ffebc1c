//! What a solved task yields.

use serde::Serialize;

use crate::json_read::{deserialize_from_json, read_fields};

/// The answer: `text` is the token or the recognised text; `fields` keeps
/// every other value the provider returned (GeeTest's `validate`/`seccode`,
/// `userAgent`, `respKey`, cost…), as sent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Solution {
    pub text: String,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub fields: serde_json::Map<String, serde_json::Value>,
    /// The provider's id of the task that produced this answer (for `report`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_task_id: Option<String>,
    /// The provider that solved it, as the client names it (where `report` goes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// What it cost: as the provider reported it (anti-captcha, 2captcha API v2), else the
    /// configured price of the provider for the kind; absent when neither is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The answer's values by the names its kind declares (`cookie`, `points`, `lot_number`:
    /// `task::kinds::answer`), the same in every language; empty until the engine hands the
    /// answer over, and when the provider's answer lacks a declared value.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub answer: serde_json::Map<String, serde_json::Value>,
}

impl Solution {
    pub fn text(text: impl Into<String>) -> Self {
        Solution {
            text: text.into(),
            fields: serde_json::Map::new(),
            provider_task_id: None,
            provider: None,
            cost: None,
            answer: serde_json::Map::new(),
        }
    }
}

read_fields!(
    /// Unknown fields are ignored, as they were when `Solution` derived `Deserialize`.
    Solution, open, text: req, fields: or_default, provider_task_id: opt, provider: opt, cost: opt,
    answer: or_default
);

deserialize_from_json!(Solution);
