//! captcha-dlq for the browser (package `captcha-dlq-web`): the core engine
//! driven by `fetch` and JS timers, with its dead-letter queue and in-flight
//! journal in IndexedDB, in memory, or in a host-provided JS object.
//!
//! Nothing here assumes a `window`: everything goes through `globalThis`, so
//! the package runs in pages, dedicated workers and (module) service workers.
//! The JS wrapper `js/index.js` turns the plain errors thrown here into
//! `Error` subclasses and offers the Node package's API shape.
//!
//! The crate is empty on other targets, so workspace-wide native builds and
//! lints pass through it.
#![cfg(target_arch = "wasm32")]

mod client;
mod clock;
mod convert;
mod driver;
mod error;
mod options;
mod owner;
pub mod store;
mod transport;
#[cfg(feature = "vectors")]
mod vectors;

#[cfg(feature = "vectors")]
pub use vectors::evaluate_vector;

pub use client::WasmClient;
pub use error::Error;
