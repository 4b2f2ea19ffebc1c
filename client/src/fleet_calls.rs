//! The driver's calls to the store's fleet ledger: each [`Action::FleetSync`] the engine asks
//! for becomes one `FleetLedger::sync`, with the store's timeout, off the engine loop; its
//! grant (or failure) goes back through [`Engine::fleet_synced`]. When the client closes, its
//! owner row leaves the ledger, so its tasks stop counting against the fleet's window at once.
//!
//! [`Action::FleetSync`]: captcha_dlq_core::Action::FleetSync
//! [`Engine::fleet_synced`]: captcha_dlq_core::Engine::fleet_synced

use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::Arc;

use captcha_dlq_core::engine::FleetSync;
use captcha_dlq_core::fleet::{FleetGrant, FleetLedger, OwnerInfo};
use captcha_dlq_core::Timestamp;
use futures::stream::{FuturesUnordered, StreamExt};

use crate::runtime::{BoxFuture, Runtime};

/// A finished sync: what was asked, and the ledger's answer or why there is none.
pub(crate) type Synced = (FleetSync, Result<FleetGrant, String>);

pub(crate) struct FleetCalls {
    ledger: Arc<dyn FleetLedger>,
    owner: OwnerInfo,
    timeout: Duration,
    calls: FuturesUnordered<BoxFuture<'static, Synced>>,
}

impl FleetCalls {
    /// `owner` is the client's owner id; native ids read `host/pid/instance` (see the native
    /// liveness), from which the fleet view shows host and pid; other ids show as they are.
    pub(crate) fn new(ledger: Arc<dyn FleetLedger>, owner: &str, started_at: Timestamp, timeout: Duration) -> Self {
        let mut parts = owner.splitn(3, '/');
        let (host, pid) = match (parts.next(), parts.next().and_then(|p| p.parse::<u32>().ok()), parts.next()) {
            (Some(host), Some(pid), Some(_)) => (host.to_string(), pid),
            _ => (owner.to_string(), 0),
        };
        FleetCalls {
            ledger,
            owner: OwnerInfo { owner: owner.to_string(), host, pid, started_at },
            timeout,
            calls: FuturesUnordered::new(),
        }
    }

    pub(crate) fn start(&mut self, sync: FleetSync, runtime: &Arc<dyn Runtime>, now: Timestamp) {
        let (ledger, owner, runtime) = (self.ledger.clone(), self.owner.clone(), runtime.clone());
        let timeout = self.timeout;
        self.calls.push(Box::pin(async move {
            let call = ledger.sync(&sync.account, &owner, &sync.report, now);
            let result = match futures::future::select(call, runtime.sleep(timeout)).await {
                futures::future::Either::Left((answer, _)) => answer.map_err(|e| e.to_string()),
                futures::future::Either::Right(_) => {
                    Err(format!("the fleet ledger did not answer within {} ms", timeout.as_millis()))
                }
            };
            (sync, result)
        }));
    }

    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Synced> {
        if self.calls.is_empty() {
            return Poll::Pending;
        }
        match self.calls.poll_next_unpin(cx) {
            Poll::Ready(Some(synced)) => Poll::Ready(synced),
            _ => Poll::Pending,
        }
    }

    /// Waits for the syncs in flight (each within the store's timeout) and answers them: a
    /// closing client takes their grants in before it computes its last reports, since a sync
    /// dropped unanswered would lose what it reported (an operator's resume, a spend).
    pub(crate) async fn finish(&mut self) -> Vec<Synced> {
        let mut done = Vec::new();
        while let Some(synced) = self.calls.next().await {
            done.push(synced);
        }
        done
    }

    /// Sends a closing client's last reports (each within the store's timeout; a ledger that
    /// does not answer loses them, as it would a killed client's).
    pub(crate) fn report_finally(
        &self,
        syncs: Vec<FleetSync>,
        runtime: &Arc<dyn Runtime>,
        now: Timestamp,
    ) -> BoxFuture<'static, ()> {
        let (ledger, owner, runtime, timeout) =
            (self.ledger.clone(), self.owner.clone(), runtime.clone(), self.timeout);
        Box::pin(async move {
            for sync in syncs {
                let call = ledger.sync(&sync.account, &owner, &sync.report, now);
                if let futures::future::Either::Left((Err(e), _)) =
                    futures::future::select(call, runtime.sleep(timeout)).await
                {
                    tracing::debug!(target: "captcha_dlq", error = %e, "a closing client's last fleet report was not taken");
                }
            }
        })
    }

    /// Takes the client's row out of the ledger (within the store's timeout; a ledger that does
    /// not answer forgets the row by itself once its heartbeat is older than the owners' TTL).
    pub(crate) fn leave(&self, runtime: &Arc<dyn Runtime>) -> BoxFuture<'static, ()> {
        let (ledger, owner, runtime, timeout) =
            (self.ledger.clone(), self.owner.owner.clone(), runtime.clone(), self.timeout);
        Box::pin(async move {
            // The timeout starts when the call does (after the last reports), not before.
            let sleep = runtime.sleep(timeout);
            let leave = ledger.leave(&owner);
            if let futures::future::Either::Left((Err(e), _)) = futures::future::select(leave, sleep).await {
                tracing::debug!(target: "captcha_dlq", error = %e, "the fleet ledger kept this client's row; it lapses by itself");
            }
        })
    }
}
