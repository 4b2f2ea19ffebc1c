//! captcha-dlq-client: the one orchestration every captcha-dlq front end runs.
//!
//! The core (`captcha-dlq-core`) decides everything about a task and performs
//! nothing. This crate drives it: one async driver owns the engine, sends its
//! requests, writes its journal and dead letters, and hands answers to the
//! callers of [`Client::solve`], [`Client::solve_stream`], [`Client::replay_stream`]
//! and [`Client::recover_stream`]. It performs no I/O of its own either: a
//! front end plugs in a [`runtime::Runtime`] (clock, timers, spawning), a
//! [`runtime::Transport`] (one HTTP exchange), a [`runtime::Liveness`]
//! registry and a [`DlqStore`](captcha_dlq_core::dlq::DlqStore) — tokio,
//! reqwest and SQLite/Redis natively (crate `captcha-dlq`), gloo-net and
//! IndexedDB in the browser (`captcha-dlq-wasm`) — as quinn runs one driver
//! over tokio, smol and the browser.
//!
//! The Python, Node and browser packages are thin translations of this API.

pub mod adopt;
mod adopted;
#[cfg(feature = "alerts")]
pub mod alerts;
mod answer;
pub mod api_values;
#[cfg(feature = "retention")]
pub mod archive;
pub mod audit;
pub mod client;
pub mod dlq;
#[cfg(feature = "edit")]
pub mod dlq_edit;
pub mod driver;
pub mod error;
pub mod events;
#[cfg(feature = "files")]
pub mod files;
mod fleet_calls;
pub mod fleet_status;
mod host_items;
mod inner;
pub mod metrics;
#[cfg(any(feature = "alerts", feature = "retention"))]
pub mod ops_metrics;
pub mod options;
pub mod page;
pub mod prometheus;
pub mod recover;
#[cfg(feature = "audit")]
pub mod recover_kept;
pub mod replay;
#[cfg(feature = "retention")]
pub mod retention;
pub mod runtime;
pub mod solve_stream;
mod store_calls;
mod stream_end;
pub mod traces;

pub use adopted::{AdoptedAnswer, AdoptedHook, AdoptionStats};
#[cfg(feature = "alerts")]
pub use alerts::{verify_webhook, WebhookError, DEFAULT_WEBHOOK_TOLERANCE, SIGNATURE_HEADER};
pub use answer::Answer;
pub use audit::Operator;
pub use captcha_dlq_core as core;
/// The typed Rust task of every declared kind and the typed answer of every kind
/// (`typed::AmazonWaf`, `typed::AmazonWafAnswer`, ...), written from the core's kind
/// declarations. Feature `declared-kinds`, which the browser build leaves out.
#[cfg(feature = "declared-kinds")]
pub use captcha_dlq_core::task::kinds::typed;
pub use client::{Client, SolveHandle};
pub use dlq::{Dlq, ExportFormat};
#[cfg(feature = "edit")]
pub use dlq_edit::{EditRefused, EditReport, RecordDiff};
pub use driver::{Delivery, DriverStatus, Outcome, Receipt, StoreHealth};
pub use error::{Error, Result};
pub use events::EventSink;
pub use fleet_status::{AccountStatus, FleetStatus, OwnerStatus};
pub use host_items::CollectAll;
pub use metrics::MetricsSnapshot;
pub use recover::{RecoverCollector, RecoverItem, RecoverOptions, RecoverResult, RecoverStream, RecoverSummary};
#[cfg(feature = "audit")]
pub use recover_kept::KeptRecovery;
pub use replay::{ReplayCollector, ReplayItem, ReplayOptions, ReplayOutcome, ReplayResult, ReplayStream};
pub use runtime::{Backends, BoxFuture, Liveness, Runtime, Transport};
pub use solve_stream::{SolveInput, SolveResult, SolveStream};
