//! captcha-dlq for the browser (package `captcha-dlq-web`): the core's
//! sans-IO engine and DLQ policy compiled to wasm, behind synchronous calls.
//!
//! The package's JS (`js/`) owns everything with a clock or a socket: the
//! driver loop (`driver.js`: fetch with per-request timeouts, timers, journal
//! and DLQ writes), the stores (`stores.js`: IndexedDB and memory), and the
//! client (`index.js`). This module decides: task and option validation,
//! provider wire formats, retries, polling, rate and circuit, the replay
//! policy, import, export and analysis. Nothing here assumes a `window`.
//!
//! The crate is empty on other targets, so workspace-wide native builds and
//! lints pass through it.
#![cfg(target_arch = "wasm32")]

mod convert;
mod dlq;
mod engine;
mod error;
mod options;
#[cfg(feature = "conformance")]
pub mod store;
#[cfg(feature = "vectors")]
mod vectors;

#[cfg(feature = "vectors")]
pub use vectors::evaluate_vector;

pub use dlq::{analyse, check_stored, export_records, keys_of, read_filter, read_page};
pub use engine::{read_labels, validate_options, WasmEngine};
pub use error::Error;
