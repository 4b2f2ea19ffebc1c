//! What a solved task yields.

use serde::Serialize;

use crate::support::json_read::{deserialize_from_json, read_fields};
use crate::support::time::Timestamp;

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
    /// When the engine received the answer, in Unix milliseconds (absent in answers written by
    /// an earlier version, which are treated as solved when their journal entry was last written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solved_at: Option<u64>,
    /// When the answer stops being good, in Unix milliseconds: `solved_at` plus its kind's
    /// declared life (`answer_life` in `core/kinds/<kind>.toml`); absent for an answer that
    /// does not expire (a recognised text). Past it the answer is never handed over as good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The fields the page added to the task that the provider had no place for and that the
    /// answer is not bound to, so they were left out of what was sent (`provider::page_context`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
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
            solved_at: None,
            expires_at: None,
            left_out: Vec::new(),
        }
    }

    /// Stamps the answer as received `now`, good for `life_ms` (`None`: it does not expire).
    pub fn stamp(&mut self, now: Timestamp, life_ms: Option<u64>) {
        let at = now.as_unix_millis();
        self.solved_at = Some(at);
        self.expires_at = life_ms.map(|ms| at.saturating_add(ms));
    }

    /// Whether the answer is past its life at `now`. The one test every hand-over applies
    /// (recover, adoption, replay, streams: docs/decisions/0060-answers-expire-task-ttl.md).
    pub fn expired(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|at| now.as_unix_millis() >= at)
    }
}

read_fields!(
    /// Unknown fields are ignored, as they were when `Solution` derived `Deserialize`.
    Solution, open, text: req, fields: or_default, provider_task_id: opt, provider: opt, cost: opt,
    answer: or_default, solved_at: opt, expires_at: opt, left_out: or_default
);

deserialize_from_json!(Solution);
