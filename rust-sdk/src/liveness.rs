//! Which clients are alive, natively: an owner is `host/pid/instance`. On this host a
//! process is alive while `/proc/<pid>` exists; in this process an instance is alive while
//! its client is open. Entries of other hosts are taken over once older than a grace
//! period, since their liveness cannot be seen from here.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use captcha_dlq_client::{BoxFuture, Liveness};
use captcha_dlq_core::Timestamp;

fn live_instances() -> &'static Mutex<HashSet<String>> {
    static LIVE: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashSet::new()))
}

/// This host's name (`/proc/sys/kernel/hostname`; `localhost` when it cannot be read).
pub fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Process-based liveness (see the module documentation).
#[derive(Debug, Default)]
pub struct ProcessLiveness;

impl ProcessLiveness {
    fn gone_now(owner: &str, updated_at: Timestamp, now: Timestamp, grace: Duration) -> bool {
        let mut parts = owner.splitn(3, '/');
        let (Some(h), Some(pid), Some(_)) = (parts.next(), parts.next(), parts.next()) else { return true };
        if h != host() {
            return now.since(updated_at) > grace;
        }
        if pid == std::process::id().to_string() {
            return live_instances().lock().map(|live| !live.contains(owner)).unwrap_or(false);
        }
        !std::path::Path::new("/proc").join(pid).exists()
    }
}

impl Liveness for ProcessLiveness {
    fn register(&self) -> String {
        let id = format!("{}/{}/{}", host(), std::process::id(), ulid::Ulid::generate());
        if let Ok(mut live) = live_instances().lock() {
            live.insert(id.clone());
        }
        id
    }

    fn release(&self, owner: &str) {
        if let Ok(mut live) = live_instances().lock() {
            live.remove(owner);
        }
    }

    fn is_gone(&self, owner: &str, updated_at: Timestamp, now: Timestamp, grace: Duration) -> BoxFuture<'static, bool> {
        let gone = Self::gone_now(owner, updated_at, now, grace);
        Box::pin(async move { gone })
    }
}
