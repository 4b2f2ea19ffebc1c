//! Plumbing the other captcha-dlq crates share with the core: reading JSON in a host's casing
//! (`json_read`, `json_field`, `cased`), quoting untrusted text into messages (`quoted`), keeping
//! control and bidi characters out of what operators read (`shown_text`),
//! number text (`float_text`), sorting without allocation (`sort`), web URLs (`weburl`) and
//! the millisecond clock (`time`, whose [`Timestamp`](time::Timestamp) the crate root
//! re-exports as part of the domain).
//!
//! Hidden from the documentation and outside the API's stability promise, as quinn-proto does
//! with `coding`: the core's public surface is the domain (tasks, providers, the engine, the
//! DLQ, the fleet); these are how it is built.

pub mod cased;
pub mod float_text;
pub mod json_field;
pub mod json_read;
pub mod quoted;
pub mod shown_text;
pub mod sort;
pub mod time;
pub mod weburl;
