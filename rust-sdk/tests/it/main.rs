//! The crate's integration tests, one module per area, in one test binary: one link of the whole
//! stack instead of one per file (cargo-nextest still runs each test in a process of its own).

mod support;

mod adopt;
mod alerts;
mod audit;
mod e2e;
mod expiry;
mod fleet;
mod redirects;
mod reliability;
mod retention;
mod store_redis;
mod store_redis_deployments;
mod store_sqlite;
#[cfg(feature = "otlp")]
mod traces;
