//! captcha-dlq: the tokio driver of the core engine, with SQLite and Redis stores.

pub mod store;
