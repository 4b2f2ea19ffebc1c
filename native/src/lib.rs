//! captcha-dlq: the CAPTCHA-solving SDK on tokio.
//!
//! It runs the sans-IO engine of `captcha-dlq-core` over reqwest and tokio
//! timers, keeps failed tasks in a durable dead-letter queue (SQLite by
//! default, Redis for fleets) and journals in-flight tasks so that a killed
//! process loses nothing. The Python and Node packages and the `captcha-dlq`
//! CLI are built on this crate.
//!
//! ```no_run
//! # async fn run() -> Result<(), captcha_dlq::Error> {
//! use captcha_dlq::{Client, Task};
//! let client = Client::builder().api_key("KEY").provider("captchaai").dlq("captcha-dlq.sqlite").build().await?;
//! let task = Task::from_json_str(r#"{"type":"recaptcha_v2","sitekey":"6Le-SITEKEY","page_url":"https://example.com/"}"#)?;
//! let token = client.solve(task).await?.text;
//! # Ok(()) }
//! ```

pub mod client;
mod driver;
pub mod error;
pub mod open;
mod owner;
pub mod store;
mod transport;

pub use captcha_dlq_core as core;
pub use captcha_dlq_core::{EngineConfig, Event, Solution, Task};
pub use client::{Client, ClientBuilder, DlqSpec, RecoverReport, RecoveredSolution, ReplayOptions, SolveHandle};
pub use driver::JobOutcome;
pub use error::{Error, Result};
pub use open::open_store;
