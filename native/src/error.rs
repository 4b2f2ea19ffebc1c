//! The native API's errors. Bindings map these to host exceptions in one place each.

use captcha_dlq_core::dlq::{DeadLetterRecord, StoreError};
use captcha_dlq_core::{ConfigError, ErrorClass, Failure, InvalidTask};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The task could not be solved; it is in the DLQ (`stored`) with this record.
    #[error("task {} dead-lettered: {}: {}", .record.id, .record.reason, .record.description)]
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
            Error::Closed => "CLOSED",
            Error::Io(_) => "IO_ERROR",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
