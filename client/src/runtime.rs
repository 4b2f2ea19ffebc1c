//! What a front end plugs into the orchestration.
//!
//! quinn runs one connection driver over a `Runtime` trait implemented for
//! tokio, smol and the browser; this crate does the same for the solving
//! client. A front end supplies:
//! - a [`Runtime`]: the wall clock, timers and a way to run the driver future
//!   (tokio natively; a `setTimeout` promise and `spawn_local` in the browser);
//! - a [`Transport`]: one HTTP exchange with a timeout (reqwest natively,
//!   gloo-net over `fetch` in the browser);
//! - a [`Liveness`] registry: which clients (owners of journal entries) are
//!   alive, so `recover` takes over only what a dead client left behind
//!   (process ids natively, Web Locks in the browser);
//! - a [`DlqStore`](captcha_dlq_core::dlq::DlqStore): SQLite, Redis, memory,
//!   IndexedDB or a store written in the host language.
//!
//! Everything else (what to send, when, what an answer means, retries,
//! journaling order, replay, recovery) is the same code for all of them.

use core::time::Duration;
use std::sync::Arc;

use captcha_dlq_core::dlq::DlqStore;
use captcha_dlq_core::{HttpRequest, HttpResponse, Timestamp, TransportError};

pub use captcha_dlq_core::dlq::store::MaybeSendSync;

/// A boxed future: `Send` natively, where the driver may run on any worker thread; not in
/// the browser, where everything runs on one thread and JS values are not `Send`.
#[cfg(feature = "send")]
pub type BoxFuture<'a, T> = futures::future::BoxFuture<'a, T>;
#[cfg(not(feature = "send"))]
pub type BoxFuture<'a, T> = futures::future::LocalBoxFuture<'a, T>;

/// Clock, timers and a place to run the driver.
pub trait Runtime: MaybeSendSync + 'static {
    /// The wall-clock time, as the engine counts it.
    fn now(&self) -> Timestamp;
    /// A future that completes after `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
    /// Runs `future` to completion in the background.
    fn spawn(&self, future: BoxFuture<'static, ()>);
    /// A random seed for the engine's jitter and record ids (the OS's randomness).
    fn random_seed(&self) -> u64;
}

/// One HTTP exchange. The request carries its own timeout; an exchange that takes
/// longer fails with [`TransportErrorKind::Timeout`](captcha_dlq_core::TransportErrorKind).
/// Error messages must not contain the API key (it is in URLs and bodies).
pub trait Transport: MaybeSendSync + 'static {
    /// One exchange with a solving service. A redirect to another host is not followed: the
    /// key would go with it (the native transport follows only same-host redirects).
    fn send(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse, TransportError>>;

    /// One exchange that follows no redirect at all (a 3xx is the answer): webhooks, whose
    /// URL was checked and whose body names the client's failures. The default sends as
    /// [`send`](Self::send) does, for transports that have no choice (the browser's).
    fn send_without_redirects(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse, TransportError>> {
        self.send(request)
    }
}

/// Which clients are alive.
pub trait Liveness: MaybeSendSync + 'static {
    /// A fresh owner id for a client, alive until [`release`](Self::release).
    fn register(&self) -> String;
    fn release(&self, owner: &str);
    /// Whether the client `owner`, which last touched an entry at `updated_at`, is gone.
    /// Owners whose liveness cannot be seen from here (another machine) count as gone once
    /// the entry is older than `grace`.
    fn is_gone(&self, owner: &str, updated_at: Timestamp, now: Timestamp, grace: Duration) -> BoxFuture<'static, bool>;
}

/// Everything a front end plugs in, as shared handles.
#[derive(Clone)]
#[allow(missing_debug_implementations)] // trait objects of the front end
pub struct Backends {
    pub runtime: Arc<dyn Runtime>,
    pub transport: Arc<dyn Transport>,
    pub liveness: Arc<dyn Liveness>,
    pub store: Arc<dyn DlqStore>,
}
