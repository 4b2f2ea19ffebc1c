//! captcha-dlq: the CAPTCHA-solving SDK on tokio.
//!
//! The orchestration is `captcha-dlq-client`'s, the same one the browser
//! package runs; this crate plugs in what a native process has: tokio timers,
//! reqwest (rustls) for HTTP, process-based liveness for journal owners, and
//! durable dead-letter stores — SQLite by default, Redis for fleets, memory
//! for scripts. The Python and Node packages and the `captcha-dlq` CLI are
//! built on this crate.
//!
//! ```no_run
//! # async fn run() -> Result<(), captcha_dlq::Error> {
//! use captcha_dlq::Task;
//! let client = captcha_dlq::builder().api_key("KEY").provider("captchaai").dlq("captcha-dlq.sqlite").build().await?;
//! let task = Task::from_json_str(r#"{"type":"recaptcha_v2","sitekey":"6Le-SITEKEY","page_url":"https://example.com/"}"#)?;
//! let token = client.solve(task).await?.text;
//! # Ok(()) }
//! ```

mod builder;
pub mod files;
pub mod liveness;
pub mod open;
pub mod runtime;
pub mod store;
#[cfg(feature = "otlp")]
pub mod traces;
pub mod transport;

pub use builder::{builder, connect, connect_with, ClientBuilder};
pub use captcha_dlq_client::*;
pub use captcha_dlq_core::{EngineConfig, Event, Solution, Task, ValidTask};
pub use open::{check_durability, open_store, open_store_with, DEFAULT_DLQ};
