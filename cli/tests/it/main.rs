//! The crate's integration tests, one module per area, in one test binary: one link of the whole
//! stack instead of one per file (cargo-nextest still runs each test in a process of its own).

mod support;

mod adopt;
mod alerts;
mod audit;
mod cli;
mod dashboard;
mod durability;
mod edit;
mod fleet;
mod providers;
mod retain;
#[cfg(feature = "otlp")]
mod traces;
