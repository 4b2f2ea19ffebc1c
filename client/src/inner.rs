//! What every clone of a [`Client`] shares, and the calls that reach the driver and the store
//! through it: the command channel, the store with the client's timeout and retries, the
//! fleet ledger. The rest of the client's API (`client.rs`) and the adopter (`adopt.rs`) are
//! written over these.

use core::future::Future;
use core::time::Duration;
use std::sync::Arc;

use crate::options::ClientOptions;
use captcha_dlq_core::dlq::StoreError;
use futures::channel::mpsc;

use crate::adopted::SharedStats;
use crate::driver::{Command, SharedHealth};
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::runtime::Backends;

pub(crate) struct Inner {
    pub(crate) commands: mpsc::UnboundedSender<Command>,
    pub(crate) backends: Backends,
    pub(crate) options: ClientOptions,
    pub(crate) owner: String,
    pub(crate) health: SharedHealth,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) adoption: SharedStats,
    /// Alerts sent, dropped and failed; records evicted by retention.
    #[cfg(any(feature = "alerts", feature = "retention"))]
    pub(crate) ops: Arc<crate::ops_metrics::OpsCounters>,
    /// The alerts still to send, which `close` waits for (`alerts` option).
    #[cfg(feature = "alerts")]
    pub(crate) alerts: Option<crate::alerts::Outstanding>,
    /// Where retention keeps what it evicts, when the front end gave one (the browser's
    /// function); else the `archive` file of the options.
    #[cfg(feature = "retention")]
    pub(crate) archive: Option<Arc<dyn crate::archive::Archive>>,
}

/// A solving client. Cheap to clone; all clones share one engine, driver and store.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl core::fmt::Debug for Client {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let providers: Vec<(&str, &str)> =
            self.inner.options.providers().iter().map(|p| (p.name.as_str(), p.provider.base_url())).collect();
        f.debug_struct("Client").field("providers", &providers).field("api_key", &"***").finish_non_exhaustive()
    }
}

impl Client {
    /// This client's owner id, as stamped on its journal entries.
    pub fn owner(&self) -> &str {
        &self.inner.owner
    }

    pub fn backends(&self) -> &Backends {
        &self.inner.backends
    }

    pub(crate) fn send(&self, command: Command) -> Result<()> {
        self.inner.commands.unbounded_send(command).map_err(|_| Error::Closed)
    }

    /// The fleet as the store's ledger sees it (every client's heartbeat row and each shared
    /// account's state), or `None` when the store has no ledger (memory: one process is the
    /// fleet). Read with the store's timeout.
    pub async fn fleet_view(&self) -> Result<Option<captcha_dlq_core::fleet::FleetView>> {
        let Some(ledger) = ledger_of(&self.inner.backends) else { return Ok(None) };
        let runtime = &self.inner.backends.runtime;
        let timeout = self.inner.options.store.timeout();
        if let futures::future::Either::Left((view, _)) =
            futures::future::select(ledger.view(runtime.now()), runtime.sleep(timeout)).await
        {
            return Ok(Some(view?));
        }
        Err(Error::Store(captcha_dlq_core::dlq::StoreError::Timeout(format!(
            "the fleet ledger did not answer within {} ms",
            timeout.as_millis()
        ))))
    }

    /// Calls the store with the client's per-call timeout.
    pub(crate) async fn store_call<T>(&self, call: impl Future<Output = Result<T, StoreError>>) -> Result<T> {
        let timeout = self.inner.backends.runtime.sleep(self.inner.options.store.timeout());
        let ms = self.inner.options.store.timeout_ms;
        futures::pin_mut!(call);
        match futures::future::select(call, timeout).await {
            futures::future::Either::Left((result, _)) => result.map_err(Error::Store),
            futures::future::Either::Right(_) => {
                Err(Error::Store(StoreError::Timeout(format!("the DLQ store did not answer within {ms} ms"))))
            }
        }
    }

    /// A store write that must not be lost (settling a lease): retried with backoff while
    /// the store fails transiently, for at most the client's `store.retry_for`.
    pub(crate) async fn store_write<T, F, Fut>(&self, mut call: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, StoreError>>,
    {
        let runtime = &self.inner.backends.runtime;
        let started = runtime.now();
        let mut delay = Duration::from_millis(250);
        loop {
            match self.store_call(call()).await {
                Err(Error::Store(e))
                    if e.is_transient() && runtime.now().since(started) < self.inner.options.store.retry_for() =>
                {
                    runtime.sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(5));
                }
                other => return other,
            }
        }
    }
}

/// The store's fleet ledger, where a fleet can be: natively. The browser's stores (IndexedDB,
/// a JS store object) are one tab's or one worker's and keep no ledger, so in the `.wasm` this
/// is `None` outright and the fleet's machinery (syncs, adoption, the fleet view) is left out
/// of the build rather than carried as dead weight under the size guard.
pub(crate) fn ledger_of(backends: &Backends) -> Option<Arc<dyn captcha_dlq_core::fleet::FleetLedger>> {
    #[cfg(feature = "fleet")]
    return backends.store.fleet_ledger();
    #[cfg(not(feature = "fleet"))]
    {
        let _ = backends;
        None
    }
}
