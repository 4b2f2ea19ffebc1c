//! Errors of the core's own API (not provider failures, which are [`crate::class::Failure`]s).

/// A task that can never be sent: names the field and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid task: {field}: {problem}")]
pub struct InvalidTask {
    /// The field as the user spells it (`page_url`, `min_score`, `proxy.port`).
    pub field: String,
    pub problem: String,
}

impl InvalidTask {
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        InvalidTask { field: field.into(), problem: problem.into() }
    }
}

/// A configuration value out of range, or a provider name that is not known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid configuration: {field}: {problem}")]
pub struct ConfigError {
    pub field: String,
    pub problem: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        ConfigError { field: field.into(), problem: problem.into() }
    }
}
