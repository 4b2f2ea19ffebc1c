//! captcha-dlq-core: the sans-IO heart of captcha-dlq.
//!
//! It decides everything (what to send, when, what a response means, when to
//! retry, when to give up and dead-letter) and performs nothing: no sockets,
//! no clock, no files. Drivers (`captcha-dlq` on tokio, `captcha-dlq-web` on
//! `fetch`) execute its [`Action`]s and feed back responses and the time.
//! See [`Engine`] for the calling contract.

pub mod class;
pub mod classify;
pub mod dlq;
pub mod engine;
pub mod error;
pub mod fleet;
pub mod history;
pub mod http;
pub mod journal;
pub mod labels;
pub mod protocol;
pub mod provider;
#[cfg(feature = "testkit")]
pub mod sim;
pub mod solution;
pub mod spend;
pub mod store_error;
#[doc(hidden)]
pub mod support;
pub mod task;
pub mod vectors;

pub use class::{ErrorClass, Failure};
pub use engine::{Action, Cancelled, Engine, EngineConfig, Event, JobId, RequestId};
pub use error::{ConfigError, InvalidTask};
pub use http::{HttpRequest, HttpResponse, Method, Secret, TransportError, TransportErrorKind, MAX_RESPONSE_BYTES};
pub use journal::JournalEntry;
pub use labels::Labels;
pub use provider::Provider;
pub use solution::Solution;
pub use support::time::Timestamp;
pub use task::{Task, TaskKind, ValidTask};
