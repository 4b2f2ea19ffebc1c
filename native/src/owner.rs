//! Who works on a journal entry, so that `recover` takes over only the tasks
//! of processes that are gone, never those of a live neighbour sharing the DLQ.
//!
//! An owner is `host/pid/instance`. On the same host a process is alive while
//! `/proc/<pid>` exists; within this process an instance is alive while its
//! client is open. Entries of other hosts are taken over once older than a
//! grace period, since their liveness cannot be seen from here.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use captcha_dlq_core::{JournalEntry, Timestamp};

fn live_instances() -> &'static Mutex<HashSet<String>> {
    static LIVE: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashSet::new()))
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// A registered owner identity; unregistered when dropped (the client closed).
#[derive(Debug)]
pub(crate) struct Owner(String);

impl Owner {
    pub(crate) fn register() -> Owner {
        let id = format!("{}/{}/{}", host(), std::process::id(), ulid::Ulid::generate());
        if let Ok(mut live) = live_instances().lock() {
            live.insert(id.clone());
        }
        Owner(id)
    }

    pub(crate) fn id(&self) -> &str {
        &self.0
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        if let Ok(mut live) = live_instances().lock() {
            live.remove(&self.0);
        }
    }
}

/// Whether `entry` belongs to nobody alive and may be recovered.
pub(crate) fn is_orphaned(entry: &JournalEntry, now: Timestamp, foreign_grace: Duration) -> bool {
    let Some(owner) = entry.owner.as_deref() else { return true };
    let mut parts = owner.splitn(3, '/');
    let (Some(h), Some(pid), Some(_)) = (parts.next(), parts.next(), parts.next()) else { return true };
    if h != host() {
        return now.since(entry.updated_at) > foreign_grace;
    }
    if pid == std::process::id().to_string() {
        return live_instances().lock().map(|live| !live.contains(owner)).unwrap_or(false);
    }
    !std::path::Path::new("/proc").join(pid).exists()
}
