//! Recoveries started from the journal page: the entries a dead client left
//! in flight, finished (`resume`) or moved into the DLQ as interrupted, in
//! the background, with their counts; the last few are listed.
//!
//! The dashboard is the caller of what it recovers: an answer found is
//! acknowledged (its entry and key settle) and counted, not shown — the
//! process that wanted it is gone. An application that still wants its
//! answers runs its own `recover` (`captcha-dlq recover` prints them).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use captcha_dlq_client::{Client, RecoverOptions, RecoverSummary};
use captcha_dlq_core::Timestamp;
use futures::StreamExt;

const KEPT: usize = 5;

#[derive(Clone, Debug)]
pub(crate) struct Recovery {
    pub(crate) owner: String,
    /// Finish the tasks (`true`) or dead-letter them as interrupted.
    pub(crate) resume: bool,
    pub(crate) started_at: Timestamp,
    pub(crate) summary: RecoverSummary,
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

    pub(crate) fn start(&self, client: &Client, owner: String, resume: bool, on_change: Arc<dyn Fn() + Send + Sync>) {
        let run = Arc::new(Mutex::new(Recovery {
            owner: owner.clone(),
            resume,
            started_at: client.backends().runtime.now(),
            summary: RecoverSummary::default(),
            error: None,
            finished_at: None,
        }));
        if let Ok(mut runs) = self.runs.lock() {
            runs.push_front(run.clone());
            runs.truncate(KEPT);
        }
        let client = client.clone();
        tokio::spawn(async move {
            let mut stream = client.recover_stream(RecoverOptions { resume, key_prefix: None, owner: Some(owner) });
            let mut error = None;
            while let Some(item) = stream.next().await {
                match item {
                    Ok(item) => {
                        if let Ok(delivery) = item.outcome {
                            delivery.receipt.ack();
                        }
                    }
                    Err(e) => error = Some(e.to_string()),
                }
                let summary = stream.summary();
                if let Ok(mut r) = run.lock() {
                    r.summary = summary;
                }
                on_change();
            }
            let now = client.backends().runtime.now();
            if let Ok(mut r) = run.lock() {
                r.summary = stream.summary();
                r.error = error;
                r.finished_at = Some(now);
            }
            on_change();
        });
    }
}
