//! Who acts on the DLQ ([`Operator`]), and the audit entry each of their actions leaves: the
//! one place an action (replay, purge, park, unpark, import; an edit or a retention eviction
//! through the same call) becomes an entry of the store's trail, so the CLI, the dashboard and
//! every binding get it without doing anything.
//!
//! Each action leaves two entries (issue 44, finding 9): its intent, written before it runs
//! ([`intend`]; an intent the store does not take stops the action, which then does not run),
//! and its result, written once the action ended, however it ended ([`record`]): a failed or
//! partly applied action is recorded with the records it touched so far and its error. A
//! result the store does not take is never passed over in silence: it is logged (target
//! `captcha_dlq`, level error), and when the action itself succeeded the caller gets an error
//! saying the action was applied but not recorded (when the action failed, its own error is the
//! answer).
//!
//! Names and park reasons are shown in terminals and pages: control characters and bidi or
//! invisible formatting characters are refused in both (`shown_text`).

use std::sync::Arc;

use captcha_dlq_core::support::quoted::Quoted;
use captcha_dlq_core::support::shown_text::check_shown_text;
use captcha_dlq_core::ConfigError;

/// Who is acting on the DLQ: a dashboard token's name, the CLI's `--as`, an API caller's name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Operator(Arc<str>);

impl Operator {
    /// The name of API callers that gave none.
    pub const API: &'static str = "api";
    /// The longest name taken.
    pub const MAX_LEN: usize = 128;

    /// A name of 1 to 128 characters, none of them a control, bidi or invisible formatting
    /// character (a name is shown in terminals and pages, and must read as what it is).
    pub fn new(name: &str) -> Result<Operator, ConfigError> {
        if name.trim().is_empty() {
            return Err(ConfigError::new("operator", "must name someone (it is empty)"));
        }
        if name.chars().count() > Self::MAX_LEN {
            return Err(ConfigError::new("operator", format!("is longer than {} characters", Self::MAX_LEN)));
        }
        if let Err(problem) = check_shown_text(name) {
            return Err(ConfigError::new("operator", format!("{} {problem}", Quoted(name))));
        }
        Ok(Operator(name.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Operator {
    fn default() -> Self {
        Operator(Self::API.into())
    }
}

impl core::fmt::Display for Operator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(feature = "audit")]
pub(crate) use captcha_dlq_core::dlq::audit::AuditAction as Action;
#[cfg(feature = "audit")]
pub(crate) use trail::{intend, record, Intent};

#[cfg(feature = "audit")]
mod trail {
    use captcha_dlq_core::dlq::audit::{AuditAction, AuditEntry, AuditStage};
    use captcha_dlq_core::dlq::StoreError;
    use serde_json::Value;

    use super::Operator;
    use crate::error::{Error, Result};
    use crate::Client;

    /// An action about to run, its intent in the trail.
    pub(crate) struct Intent {
        id: u64,
        action: AuditAction,
        filter: Value,
        detail: String,
    }

    /// Appends the intent of `action` by `operator` on the records `filter` selects, before
    /// it runs. An error means the trail did not take it: the action must not run.
    pub(crate) async fn intend(
        client: &Client,
        operator: &Operator,
        action: AuditAction,
        filter: Value,
        detail: String,
    ) -> Result<Intent> {
        let entry = AuditEntry {
            id: 0,
            at: client.backends().runtime.now(),
            operator: operator.as_str().to_string(),
            action,
            filter: filter.clone(),
            count: 0,
            detail: detail.clone(),
            error: None,
            stage: AuditStage::Intent,
            intent: None,
        };
        let store = client.backends().store.clone();
        match client.store_write(|| store.audit_append(&entry)).await {
            Ok(id) => Ok(Intent { id, action, filter, detail }),
            Err(e) => {
                let action = action.as_str();
                tracing::error!(target: "captcha_dlq", action, operator = %operator, error = %e, "the audit trail did not take an intent");
                Err(Error::Store(StoreError::Backend(format!(
                    "the {action} was not done: the audit trail did not take its intent: {e}"
                ))))
            }
        }
    }

    /// Appends the result of `intent` by `operator`, which touched `count` records and ended
    /// with `outcome` (`detail` replaces the intent's when given), and answers the outcome (see
    /// the module documentation for a failed write).
    pub(crate) async fn record<T>(
        client: &Client,
        operator: &Operator,
        intent: Intent,
        detail: Option<String>,
        count: u64,
        outcome: Result<T>,
    ) -> Result<T> {
        let action = intent.action;
        let entry = AuditEntry {
            id: 0,
            at: client.backends().runtime.now(),
            operator: operator.as_str().to_string(),
            action,
            filter: intent.filter,
            count,
            detail: detail.unwrap_or(intent.detail),
            error: outcome.as_ref().err().map(ToString::to_string),
            stage: AuditStage::Result,
            intent: Some(intent.id),
        };
        let store = client.backends().store.clone();
        let written = client.store_write(|| store.audit_append(&entry)).await;
        let Err(e) = written else { return outcome };
        let action = action.as_str();
        tracing::error!(target: "captcha_dlq", action, operator = %operator, count, error = %e, "the audit trail did not take an entry");
        match outcome {
            Err(failed) => Err(failed),
            Ok(_) => Err(Error::Store(StoreError::Backend(format!(
                "the {action} was applied ({count} records) but the audit trail did not take its entry: {e}"
            )))),
        }
    }
}
