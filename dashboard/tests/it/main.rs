//! The crate's integration tests, one module per area, in one test binary: one link of the whole
//! stack instead of one per file (cargo-nextest still runs each test in a process of its own).

mod support;

mod browser;
mod browser_audit;
mod http;
mod http_edit;
mod https;
