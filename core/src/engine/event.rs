//! What the engine reports for logs, progress bars and metrics. Drivers route
//! these to `tracing`, Python `logging` or a JS callback; none carries the key.

use core::fmt;

use serde::Serialize;

use super::JobId;
use crate::class::ErrorClass;
use crate::support::time::Timestamp;

/// Events about one provider name it in `provider` when the client has several (with one,
/// it is left out, as before there were several).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Accepted {
        job: JobId,
        id: String,
    },
    Submitted {
        job: JobId,
        attempt: u32,
        provider_task_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    Polled {
        tasks: usize,
        /// The polled jobs, for a front end's per-task traces; hosts' events count them only.
        /// Only with feature `traces`: nothing else reads them.
        #[cfg(feature = "traces")]
        #[serde(skip)]
        jobs: Vec<JobId>,
    },
    Retrying {
        job: JobId,
        code: String,
        class: ErrorClass,
        delay_ms: u64,
        attempt: u32,
    },
    /// A task moved to another provider (`from` cannot take it or gave up on it).
    Rerouted {
        job: JobId,
        from: String,
        to: String,
        reason: String,
    },
    Solved {
        job: JobId,
        attempts: u32,
        elapsed_ms: u64,
    },
    DeadLettered {
        job: JobId,
        id: String,
        reason: String,
        class: ErrorClass,
        attempts: u32,
    },
    Recovered {
        job: JobId,
        id: String,
        resumed_polling: bool,
    },
    /// An account error holds submissions (queued and new tasks wait) until `until` at the
    /// latest; the balance is checked meanwhile and a top-up resumes them.
    AccountHold {
        code: String,
        until: Timestamp,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    CircuitOpened {
        cause: String,
        until: Option<Timestamp>,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    CircuitHalfOpen {
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    CircuitClosed {
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    ConcurrencyChanged {
        limit: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    Paused {
        scope: PauseScope,
        code: String,
        until: Timestamp,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    BatchPollingDisabled {
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    /// The DLQ store failed or did not answer a call; submissions wait until it is back.
    StoreUnavailable {
        error: String,
    },
    /// The store answers again after `after_ms` of failures.
    StoreAvailable {
        after_ms: u64,
    },
    /// A store write was retried for as long as allowed and given up: what it was for.
    StoreGaveUp {
        what: String,
        error: String,
    },
}

/// How loud an event is in a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseScope {
    Submits,
    Polls,
}

impl Event {
    /// A short name (`solved`, `dead_lettered`…) for hosts that dispatch on it.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Accepted { .. } => "accepted",
            Event::Submitted { .. } => "submitted",
            Event::Polled { .. } => "polled",
            Event::Retrying { .. } => "retrying",
            Event::Rerouted { .. } => "rerouted",
            Event::Solved { .. } => "solved",
            Event::DeadLettered { .. } => "dead_lettered",
            Event::Recovered { .. } => "recovered",
            Event::CircuitOpened { .. } => "circuit_opened",
            Event::AccountHold { .. } => "account_hold",
            Event::CircuitHalfOpen { .. } => "circuit_half_open",
            Event::CircuitClosed { .. } => "circuit_closed",
            Event::ConcurrencyChanged { .. } => "concurrency_changed",
            Event::Paused { .. } => "paused",
            Event::BatchPollingDisabled { .. } => "batch_polling_disabled",
            Event::StoreUnavailable { .. } => "store_unavailable",
            Event::StoreAvailable { .. } => "store_available",
            Event::StoreGaveUp { .. } => "store_gave_up",
        }
    }

    /// How loud it is: a quiet log shows `Warn` and `Error`. Steps of the in-flight window
    /// (AIMD) are routine and only `Debug`; a circuit opening, the store failing and
    /// pauses a provider asked for are what an operator must see.
    pub fn level(&self) -> Level {
        match self {
            Event::StoreGaveUp { .. } => Level::Error,
            Event::CircuitOpened { .. }
            | Event::AccountHold { .. }
            | Event::Paused { .. }
            | Event::BatchPollingDisabled { .. }
            | Event::StoreUnavailable { .. } => Level::Warn,
            Event::CircuitHalfOpen { .. }
            | Event::CircuitClosed { .. }
            | Event::StoreAvailable { .. }
            | Event::Recovered { .. } => Level::Info,
            _ => Level::Debug,
        }
    }

    /// Whether a quiet log should still show it.
    pub fn is_warning(&self) -> bool {
        self.level() >= Level::Warn
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Accepted { job, id } => write!(f, "{job} accepted as {id}"),
            Event::Submitted { job, attempt, provider_task_id, provider } => {
                write!(f, "{job} submitted{} (attempt {attempt}, provider task {provider_task_id})", to(provider))
            }
            Event::Polled { tasks, .. } => write!(f, "polled {tasks} task(s)"),
            Event::Retrying { job, code, class, delay_ms, attempt } => {
                write!(f, "{job} retrying after {code} ({class}) in {}, attempt {attempt}", ms(*delay_ms))
            }
            Event::Rerouted { job, from, to, reason } => write!(f, "{job} moved from {from} to {to}: {reason}"),
            Event::Solved { job, attempts, elapsed_ms } => {
                write!(f, "{job} solved after {attempts} attempt(s) in {}", ms(*elapsed_ms))
            }
            Event::DeadLettered { job, id, reason, class, attempts } => {
                write!(f, "{job} dead-lettered as {id}: {reason} ({class}, attempts: {attempts})")
            }
            Event::Recovered { job, id, resumed_polling } => {
                write!(
                    f,
                    "{job} recovered {id} from the journal ({})",
                    if *resumed_polling { "polling" } else { "resubmitting" }
                )
            }
            Event::CircuitOpened { cause, until: Some(t), provider } => {
                write!(f, "{}circuit opened by {cause} until {t}", of(provider))
            }
            Event::CircuitOpened { cause, until: None, provider } => {
                write!(f, "{}circuit opened by {cause}; no submissions until reset", of(provider))
            }
            Event::AccountHold { code, until, provider } => write!(
                f,
                "{}submissions held by {code} until {until} at the latest; checking the balance, a top-up resumes them",
                of(provider)
            ),
            Event::CircuitHalfOpen { provider } => {
                write!(f, "{}circuit half-open: probing the provider with one request", of(provider))
            }
            Event::CircuitClosed { provider } => write!(f, "{}circuit closed", of(provider)),
            Event::ConcurrencyChanged { limit, provider } => write!(f, "{}in-flight limit now {limit}", of(provider)),
            Event::Paused { scope, code, until, provider } => {
                write!(f, "{}{scope:?} paused by {code} until {until}", of(provider))
            }
            Event::BatchPollingDisabled { reason, provider } => {
                write!(f, "{}batch polling disabled: {reason}", of(provider))
            }
            Event::StoreUnavailable { error } => {
                write!(f, "DLQ store not answering ({error}); submissions wait until it is back")
            }
            Event::StoreAvailable { after_ms } => write!(f, "DLQ store answers again after {}", ms(*after_ms)),
            Event::StoreGaveUp { what, error } => write!(f, "DLQ store write given up ({what}): {error}"),
        }
    }
}

/// `capsolver: ` before a provider's event, when the client has several.
fn of(provider: &Option<String>) -> String {
    provider.as_ref().map_or_else(String::new, |p| format!("{p}: "))
}

/// ` to capsolver` after a submission, when the client has several.
fn to(provider: &Option<String>) -> String {
    provider.as_ref().map_or_else(String::new, |p| format!(" to {p}"))
}

/// Milliseconds as seconds with one decimal (`1.5s`), rounded half up.
fn ms(v: u64) -> String {
    // Integer arithmetic: float formatting would link a second formatter into the browser build.
    let tenths = v.saturating_add(50) / 100;
    format!("{}.{}s", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::ms;

    #[test]
    fn durations_read_as_seconds_with_one_decimal() {
        assert_eq!(ms(0), "0.0s");
        assert_eq!(ms(49), "0.0s");
        assert_eq!(ms(50), "0.1s");
        assert_eq!(ms(1_500), "1.5s");
        assert_eq!(ms(61_949), "61.9s");
        assert_eq!(ms(u64::MAX), format!("{}.{}s", u64::MAX / 1000, (u64::MAX / 100) % 10));
    }
}
