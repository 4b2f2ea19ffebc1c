//! captcha-dlq for the browser (package `captcha-dlq-web`): the one
//! orchestration every front end runs (`captcha-dlq-client`), with what a
//! browser has plugged in, exported to JS through wasm-bindgen.
//!
//! - [`runtime`]: the clock (`Date.now`), timers (`setTimeout` through
//!   gloo-timers), `spawn_local`, and a seed from `crypto.getRandomValues`;
//! - [`transport`]: HTTP through gloo-net over the global `fetch`, with a
//!   per-request timeout on an `AbortController`;
//! - [`liveness`]: Web Locks tell live clients (tabs, workers) from gone ones;
//! - [`store`]: `memory`, `indexeddb:NAME` and store objects written in JS,
//!   the last two through the core's one host-store protocol (the audit trail
//!   is one of their tables);
//! - `archive` (feature `retention`): the caller's function that keeps what
//!   retention evicts;
//! - [`native`]: the native surface of `docs/bindings.md` (`open`,
//!   `NativeClient`, its jobs and streams), the same the Node addon exports,
//!   so one JS wrapper serves both packages.
//!
//! Every value crosses the boundary through serde-wasm-bindgen ([`convert`]);
//! the binding decides nothing (options, tasks, results, errors are read and
//! written by `captcha_dlq_client::api_values`). Nothing here assumes a `window`:
//! the package runs in a page, a dedicated worker and an MV3 service worker.
//!
//! The crate is empty on other targets, so workspace-wide native builds and
//! lints pass through it.
#![cfg(target_arch = "wasm32")]

#[cfg(feature = "retention")]
pub mod archive;
pub mod convert;
pub mod error;
pub mod liveness;
pub mod native;
pub mod runtime;
pub mod store;
mod streams;
pub mod transport;
#[cfg(feature = "vectors")]
mod vectors;

#[cfg(feature = "vectors")]
pub use vectors::evaluate_vector;
