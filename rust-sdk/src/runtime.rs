//! The tokio runtime under the orchestration: the system clock, tokio timers, and the
//! driver spawned on the runtime the client was built on.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use captcha_dlq_client::{BoxFuture, Runtime};
use captcha_dlq_core::Timestamp;

/// The current wall-clock time as the engine counts it.
pub fn now() -> Timestamp {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    Timestamp::from_unix_millis(u64::try_from(ms).unwrap_or(u64::MAX))
}

/// Runs on a tokio runtime (the one current when it is made).
#[derive(Debug, Clone)]
pub struct TokioRuntime {
    handle: tokio::runtime::Handle,
}

impl TokioRuntime {
    /// The runtime this is called on; `None` outside one.
    pub fn current() -> Option<TokioRuntime> {
        tokio::runtime::Handle::try_current().ok().map(|handle| TokioRuntime { handle })
    }

    pub fn with_handle(handle: tokio::runtime::Handle) -> TokioRuntime {
        TokioRuntime { handle }
    }
}

impl Runtime for TokioRuntime {
    fn now(&self) -> Timestamp {
        now()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }

    fn spawn(&self, future: BoxFuture<'static, ()>) {
        self.handle.spawn(future);
    }

    fn random_seed(&self) -> u64 {
        fastrand::u64(..)
    }
}
