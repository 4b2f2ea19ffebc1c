//! Recoveries started from the journal page: the entries a dead client left
//! in flight, finished (`resume`) or moved into the DLQ as interrupted, in
//! the background, with their counts; the last few are listed.
//!
//! The dashboard is not the caller who wanted those answers (that process is
//! gone): each answer is kept in its journal entry for whoever resumes the
//! task (the `batch` run again, or `recover`), never acknowledged into
//! nothing, and the recovery is audited under the operator's name
//! (`Client::recover_for_operator`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use captcha_dlq_client::{Client, KeptRecovery, Operator, RecoverOptions};
use captcha_dlq_core::Timestamp;

const KEPT: usize = 5;

#[derive(Clone, Debug)]
pub(crate) struct Recovery {
    pub(crate) owner: String,
    /// Finish the tasks (`true`) or dead-letter them as interrupted.
    pub(crate) resume: bool,
    pub(crate) started_at: Timestamp,
    /// The recovery's counts and the answers kept for whoever resumes their tasks.
    pub(crate) progress: KeptRecovery,
    pub(crate) error: Option<String>,
    pub(crate) finished_at: Option<Timestamp>,
}

#[derive(Default)]
pub(crate) struct Recoveries {
    runs: Mutex<VecDeque<Arc<Mutex<Recovery>>>>,
}

impl Recoveries {
    pub(crate) fn list(&self) -> Vec<Recovery> {
        self.runs
            .lock()
            .map(|runs| runs.iter().filter_map(|r| r.lock().ok().map(|r| r.clone())).collect())
            .unwrap_or_default()
    }

    pub(crate) fn start(
        &self,
        client: &Client,
        operator: Operator,
        owner: String,
        resume: bool,
        on_change: Arc<dyn Fn() + Send + Sync>,
    ) {
        let run = Arc::new(Mutex::new(Recovery {
            owner: owner.clone(),
            resume,
            started_at: client.backends().runtime.now(),
            progress: KeptRecovery::default(),
            error: None,
            finished_at: None,
        }));
        if let Ok(mut runs) = self.runs.lock() {
            runs.push_front(run.clone());
            runs.truncate(KEPT);
        }
        let client = client.clone();
        tokio::spawn(async move {
            let options = RecoverOptions { resume, key_prefix: None, owner: Some(owner), resolve_expired: false };
            let progress = |now: &KeptRecovery| {
                if let Ok(mut r) = run.lock() {
                    r.progress = *now;
                }
                on_change();
            };
            let (progress, error) = client.recover_for_operator(&operator, options, progress).await;
            let now = client.backends().runtime.now();
            if let Ok(mut r) = run.lock() {
                r.progress = progress;
                r.error = error.map(|e| e.to_string());
                r.finished_at = Some(now);
            }
            on_change();
        });
    }
}
