//! The errors of the client API, with the stable codes every binding maps to its host's
//! exceptions (one module per binding does that mapping, and decides nothing).

use captcha_dlq_core::dlq::{DeadLetterRecord, StoreError};
use captcha_dlq_core::{ConfigError, ErrorClass, Failure, InvalidTask};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The task could not be solved. `stored`: its record is in the DLQ; otherwise the
    /// store could not take it and this record is the only copy.
    #[error("task {} dead-lettered: {}: {}{}", .record.id, .record.reason, .record.description,
            if *.stored { "" } else { " (the DLQ could not store the record; it is in this error)" })]
    SolveFailed { record: Box<DeadLetterRecord>, stored: bool },
    #[error(transparent)]
    InvalidTask(#[from] InvalidTask),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A direct request (balance, report) failed; `class` says how.
    #[error("{}: {} ({})", .0.code, .0.description, .0.class)]
    Provider(Failure),
    /// The caller cancelled. `runs_on`: the provider already had the task; it is still
    /// being polled and its answer will be in the journal for `recover`, so nobody should
    /// submit it again.
    #[error("task {id} cancelled{}", if *.runs_on {
        ": the provider already had it, so it runs on and its answer is kept in the journal for recover()"
    } else { "" })]
    Cancelled { id: String, runs_on: bool },
    #[error("the client is closed; tasks still in flight are in the journal and `recover` resumes them")]
    Closed,
    #[error("{0}")]
    Io(String),
}

impl Error {
    /// Whether the account (key, balance, IP) is the problem rather than the task.
    pub fn is_account_error(&self) -> bool {
        match self {
            Error::SolveFailed { record, .. } => record.class == ErrorClass::AccountTerminal,
            Error::Provider(f) => f.class == ErrorClass::AccountTerminal,
            _ => false,
        }
    }

    /// A stable machine-readable code, shared by every binding.
    pub fn code(&self) -> &'static str {
        match self {
            _ if self.is_account_error() => "ACCOUNT_ERROR",
            Error::SolveFailed { .. } => "SOLVE_FAILED",
            Error::InvalidTask(_) => "INVALID_TASK",
            Error::Config(_) => "INVALID_CONFIG",
            Error::Store(_) => "STORE_ERROR",
            Error::Provider(_) => "PROVIDER_ERROR",
            Error::Cancelled { .. } => "CANCELLED",
            Error::Closed => "CLOSED",
            Error::Io(_) => "IO_ERROR",
        }
    }

    /// The field a configuration or task error names, if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::InvalidTask(e) => Some(&e.field),
            Error::Config(e) => Some(&e.field),
            _ => None,
        }
    }

    /// The same error with its field named under `prefix` (`tasks[3].` + `sitekey`).
    pub fn in_field(self, prefix: &str) -> Error {
        match self {
            Error::InvalidTask(e) => Error::InvalidTask(InvalidTask::new(format!("{prefix}{}", e.field), e.problem)),
            Error::Config(e) => Error::Config(ConfigError::new(format!("{prefix}{}", e.field), e.problem)),
            other => other,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
