//! Error classes: what the engine does with each way a request or task can fail.
//!
//! The table that maps provider codes onto these classes is the `classify` module, which uses
//! this one; this module holds the vocabulary.

use core::fmt;
use core::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::support::json_read::{deserialize_from_json, unit_variant, FieldError, FromJson};

/// What a failure means for the task and for the client (docs/decisions/0064-error-classes.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Not a failure: ask again at the next interval.
    NotReady,
    /// Unparseable body, HTTP 5xx, connect/read error, one request's timeout: retry the request.
    Transient,
    /// The service asks us to slow down for at least `retry_after`.
    RetryAfter,
    /// The task failed but a new submission may succeed (unsolvable, deadline).
    TaskTerminal,
    /// The task's parameters are wrong: dead-letter for operator review.
    FixInput,
    /// The account cannot work (bad key, no money, IP not allowed): stop sending.
    AccountTerminal,
    /// The application cancelled the task.
    Cancelled,
    /// Dead-lettered explicitly by the application with its own reason.
    Application,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 8] = [
        ErrorClass::NotReady,
        ErrorClass::Transient,
        ErrorClass::RetryAfter,
        ErrorClass::TaskTerminal,
        ErrorClass::FixInput,
        ErrorClass::AccountTerminal,
        ErrorClass::Cancelled,
        ErrorClass::Application,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::NotReady => "not_ready",
            ErrorClass::Transient => "transient",
            ErrorClass::RetryAfter => "retry_after",
            ErrorClass::TaskTerminal => "task_terminal",
            ErrorClass::FixInput => "fix_input",
            ErrorClass::AccountTerminal => "account_terminal",
            ErrorClass::Cancelled => "cancelled",
            ErrorClass::Application => "application",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        ErrorClass::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl FromJson for ErrorClass {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        unit_variant(value, &ErrorClass::ALL, ErrorClass::as_str)
    }
}

deserialize_from_json!(ErrorClass);

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One failed exchange, already classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The provider's code (`ERROR_CAPTCHA_UNSOLVABLE`, `ERROR: 1005`) or a
    /// system reason (`Network`, `HTTP 502`, `UnparseableResponse`).
    pub code: String,
    pub class: ErrorClass,
    /// Human-readable, never containing the API key.
    pub description: String,
    /// The minimum wait the service asked for, if any.
    pub retry_after: Option<Duration>,
    /// The service has no free worker (a retry-after answer): fewer tasks go at once instead
    /// of the whole provider pausing. The provider's codec decides it (`Provider::classify`),
    /// so the engine never reads a provider's code.
    pub congestion: bool,
    /// The service charges for this failure (anti-captcha bills `ERROR_CAPTCHA_UNSOLVABLE`):
    /// the engine resubmits such a task a bounded number of times. Set by the provider's codec.
    pub billed: bool,
}

impl Failure {
    pub fn new(code: impl Into<String>, class: ErrorClass, description: impl Into<String>) -> Self {
        Failure {
            code: code.into(),
            class,
            description: description.into(),
            retry_after: None,
            congestion: false,
            billed: false,
        }
    }

    /// This failure says the service has no free worker (see [`Failure::congestion`]).
    pub fn congested(mut self) -> Self {
        self.congestion = true;
        self
    }

    pub fn with_retry_after(mut self, d: Duration) -> Self {
        self.retry_after = Some(d);
        self
    }
}

/// System reasons used besides provider codes (docs/decisions/0065-dead-letter-record-schema-1.md).
pub mod reason {
    pub const TIMEOUT: &str = "Timeout";
    pub const NETWORK: &str = "Network";
    pub const MAX_DELIVERY_COUNT_EXCEEDED: &str = "MaxDeliveryCountExceeded";
    pub const TTL_EXPIRED: &str = "TTLExpired";
    pub const CIRCUIT_OPEN: &str = "CircuitOpen";
    pub const INTERRUPTED: &str = "Interrupted";
    pub const CANCELLED: &str = "Cancelled";
    /// The DLQ store did not answer long enough that a task waiting to be sent again was
    /// let go (its answer could not have been kept).
    pub const STORE_UNAVAILABLE: &str = "StoreUnavailable";
    pub const UNPARSEABLE: &str = "UnparseableResponse";
    pub const INVALID_TASK: &str = "InvalidTask";
    /// The client's budget cap is spent: nothing more is submitted (class `account_terminal`).
    pub const BUDGET_EXHAUSTED: &str = "BudgetExhausted";
    /// Every configured service that was tried answered that it does not solve the task's kind
    /// (class `fix_input`: configure a service that does, then replay).
    pub const NO_SERVICE_FOR_KIND: &str = "NoServiceForKind";
}
