//! The crate's integration tests, one module per area, in one test binary: one link of the whole
//! stack instead of one per file (cargo-nextest still runs each test in a process of its own).

mod common;

mod ban;
mod faults;
mod json_protocol;
mod robustness;
mod scripts;
mod siteverify;
mod v1_protocol;
