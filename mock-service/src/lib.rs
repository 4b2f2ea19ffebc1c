//! A scriptable mock CAPTCHA solving service for tests and demos.
//!
//! It speaks the 2captcha-compatible v1 protocol (`/in.php`, `/res.php`) and the createTask JSON protocol
//! (`/createTask`, `/getTaskResult`, `/getBalance`) as the providers document them, written independently of
//! the captcha-dlq client so that it checks the client rather than mirroring it. Per-task outcomes and
//! faults (5xx, HTML 502, truncated JSON, TCP resets, slow answers) and an opt-in submit-rate ban per
//! key (2captcha's `MAX_USER_TURN`, [`BanRule`]) are scripted with a [`MockConfig`],
//! which is plain JSON so that Python, Node and browser tests can use the same scripts through the
//! `captcha-dlq-mock` binary and the `/mock/*` endpoints:
//!
//! - `GET /mock/counters`: the [`Counters`] as JSON;
//! - `POST /mock/script`: replace the script (a [`MockConfig`] as JSON);
//! - `POST /mock/reset`: forget tasks and counters;
//! - `GET /mock/config`: the current script.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use captcha_dlq_mock::{MockConfig, MockSolver};
//! let config = MockConfig::from_json(r#"{
//!     "default": {"solve_after_ms": 50},
//!     "rules": [{"match": {"page_url_contains": "page/2"}, "behavior": {"outcome": "unsolvable"}}],
//!     "faults": {"seed": 7, "http_5xx": 0.1}
//! }"#).map_err(std::io::Error::other)?;
//! let mock = MockSolver::start(config).await?;
//! println!("{}/in.php", mock.base_url());
//! mock.shutdown().await;
//! # Ok(()) }
//! ```

mod ban;
mod config;
mod counters;
mod json_api;
pub mod redis_server;
mod reply;
mod server;
mod siteverify;
mod state;
mod tokens;
mod v1;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use config::{
    BanRule, Behavior, Faults, Matcher, MockConfig, Outcome, Rule, MAX_BAN_MS, MAX_BAN_SUBMITS, MAX_SLOW_MS,
};
pub use counters::{Counters, KeyCounters, OTHER_KEYS};

use server::{lock, Shared};
use state::State;

/// Starts mock solvers.
#[derive(Debug)]
pub struct MockSolver;

impl MockSolver {
    /// Binds `127.0.0.1:config.port` (0 = a free port) and serves on the current tokio runtime.
    pub async fn start(config: MockConfig) -> io::Result<MockHandle> {
        config.validate().map_err(|message| io::Error::new(io::ErrorKind::InvalidInput, message))?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port)).await?;
        let addr = listener.local_addr()?;
        let shared: Shared = Arc::new(Mutex::new(State::new(config)));
        let task = tokio::spawn(server::accept_loop(listener, shared.clone()));
        Ok(MockHandle { addr, shared, task })
    }

    /// Starts a mock on its own runtime thread, for callers without a tokio runtime.
    pub fn start_blocking(config: MockConfig) -> io::Result<BlockingMockHandle> {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
        let handle = runtime.block_on(MockSolver::start(config))?;
        Ok(BlockingMockHandle { handle: Some(handle), runtime: Some(runtime) })
    }
}

/// A running mock; dropping it stops the mock.
#[derive(Debug)]
pub struct MockHandle {
    addr: SocketAddr,
    shared: Shared,
    task: JoinHandle<()>,
}

impl MockHandle {
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A snapshot of the counters.
    pub fn counters(&self) -> Counters {
        lock(&self.shared).counters.clone()
    }

    /// Connections accepted and not yet closed. Once a client process is killed and this is 0,
    /// every request it had sent has been handled and counted.
    pub fn open_connections(&self) -> usize {
        lock(&self.shared).open_connections
    }

    /// The current script.
    pub fn config(&self) -> MockConfig {
        lock(&self.shared).config.clone()
    }

    /// Replaces the script (tasks already submitted keep their behavior; the fault RNG restarts).
    pub fn set_script(&self, config: MockConfig) -> Result<(), String> {
        config.validate()?;
        lock(&self.shared).set_script(config);
        Ok(())
    }

    /// Forgets every task and counter.
    pub fn reset(&self) {
        lock(&self.shared).reset();
    }

    /// Stops accepting and drops every open connection.
    pub async fn shutdown(mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
    }
}

impl Drop for MockHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A mock running on its own runtime; dropping it stops the mock and the runtime.
#[derive(Debug)]
pub struct BlockingMockHandle {
    handle: Option<MockHandle>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl BlockingMockHandle {
    fn inner(&self) -> Option<&MockHandle> {
        self.handle.as_ref()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.inner().map(MockHandle::base_url).unwrap_or_default()
    }

    /// The bound address.
    pub fn addr(&self) -> Option<SocketAddr> {
        self.inner().map(MockHandle::addr)
    }

    /// A snapshot of the counters.
    pub fn counters(&self) -> Counters {
        self.inner().map(MockHandle::counters).unwrap_or_default()
    }

    /// Replaces the script.
    pub fn set_script(&self, config: MockConfig) -> Result<(), String> {
        self.inner().ok_or_else(|| "the mock has been shut down".to_string())?.set_script(config)
    }

    /// Forgets every task and counter.
    pub fn reset(&self) {
        if let Some(handle) = self.inner() {
            handle.reset();
        }
    }

    /// Stops the mock and its runtime; outside an async context it returns once the port is closed.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let handle = self.handle.take();
        let Some(runtime) = self.runtime.take() else { return };
        if tokio::runtime::Handle::try_current().is_err() {
            // Outside any runtime blocking is allowed: wait until the listener is really closed.
            if let Some(handle) = handle {
                runtime.block_on(handle.shutdown());
            }
            runtime.shutdown_timeout(std::time::Duration::from_secs(1));
        } else {
            // Inside another runtime blocking would panic; this never blocks (the port closes shortly after).
            drop(handle);
            runtime.shutdown_background();
        }
    }
}

impl Drop for BlockingMockHandle {
    fn drop(&mut self) {
        self.stop();
    }
}
