//! The crate's integration tests, one module per area, in one test binary: one link of the whole
//! stack instead of one per file (cargo-nextest still runs each test in a process of its own).

mod support;

mod answer_expiry;
mod casing;
mod dlq_export;
mod dlq_memory;
mod failover;
mod fleet_hold;
mod from_json;
mod kind_files;
mod kinds_generated;
mod providers_doc;
mod reliability;
mod scenarios;
mod synchronous_answers;
mod table_lock;
mod typed_kinds;
mod vectors;
mod weburl_vs_url;
