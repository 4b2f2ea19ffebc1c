//! Replay requests started from the dashboard (one record, a selection, a
//! group, a filter), run in the background at the operator's rate with live
//! progress, a cancel button and the report at the end; the last ten are kept
//! (ServicePulse's list of retry requests, the SQS console's redrive velocity).
//!
//! The records are chosen when the request is made (their ids), so a record
//! that fails again is not picked up a second time by the same request. They
//! are replayed through [`Client::replay_stream`] in batches sized so that a
//! batch started at the chosen rate finishes starting well within its leases;
//! parked records are left alone (unpark them first). Answers of recovered
//! records are acknowledged here: the dashboard is their caller, so their
//! journal entries and records go.

use core::time::Duration;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use captcha_dlq_client::{Client, Operator, ReplayOptions, ReplayOutcome};
use captcha_dlq_core::dlq::replay::ReplayReport;
use captcha_dlq_core::dlq::{Filter, RecordState};
use captcha_dlq_core::Timestamp;
use futures::StreamExt;

use crate::scan;

/// Replay requests listed.
pub(crate) const KEPT: usize = 10;
/// Records per batch when no rate is set.
const BATCH: usize = 500;
/// Errors kept per request (the rest are counted).
const KEPT_ERRORS: usize = 5;

/// Where a request is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Choosing the records.
    Selecting,
    Running,
    /// Cancel asked: records already started finish.
    Cancelling,
    Finished,
    Cancelled,
    Failed(String),
}

impl Status {
    pub(crate) fn label(&self) -> &str {
        match self {
            Status::Selecting => "selecting",
            Status::Running => "running",
            Status::Cancelling => "cancelling",
            Status::Finished => "finished",
            Status::Cancelled => "cancelled",
            Status::Failed(_) => "failed",
        }
    }

    pub(crate) fn is_active(&self) -> bool {
        matches!(self, Status::Selecting | Status::Running | Status::Cancelling)
    }
}

/// A request's counts so far.
#[derive(Clone, Debug)]
pub(crate) struct Progress {
    pub(crate) status: Status,
    /// Records chosen (known once selecting is done).
    pub(crate) target: Option<u64>,
    /// Records with an outcome.
    pub(crate) done: u64,
    pub(crate) report: ReplayReport,
    pub(crate) errors: Vec<String>,
    pub(crate) error_count: u64,
    pub(crate) finished_at: Option<Timestamp>,
}

/// One replay request.
pub(crate) struct ReplayJob {
    pub(crate) id: u64,
    /// What was asked for, in words.
    pub(crate) what: String,
    /// Records per second, `None`: as fast as the client allows.
    pub(crate) per_second: Option<f64>,
    pub(crate) started_at: Timestamp,
    progress: Mutex<Progress>,
    cancelled: AtomicBool,
    /// The canceller of the batch running now.
    current: Mutex<Option<Arc<AtomicBool>>>,
}

impl ReplayJob {
    pub(crate) fn progress(&self) -> Progress {
        self.progress.lock().map(|p| p.clone()).unwrap_or_else(|p| p.into_inner().clone())
    }

    fn update(&self, f: impl FnOnce(&mut Progress)) {
        if let Ok(mut p) = self.progress.lock() {
            f(&mut p);
        }
    }

    /// Stops starting records; those started finish and are reported.
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Ok(current) = self.current.lock() {
            if let Some(c) = current.as_ref() {
                c.store(true, Ordering::SeqCst);
            }
        }
        self.update(|p| {
            if p.status.is_active() {
                p.status = Status::Cancelling;
            }
        });
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}

/// Which records a request replays.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    Ids(Vec<String>),
    Filter(Filter),
}

/// The requests, newest first.
#[derive(Default)]
pub(crate) struct ReplayJobs {
    next: AtomicU64,
    jobs: Mutex<VecDeque<Arc<ReplayJob>>>,
}

impl ReplayJobs {
    pub(crate) fn list(&self) -> Vec<Arc<ReplayJob>> {
        self.jobs.lock().map(|j| j.iter().cloned().collect()).unwrap_or_default()
    }

    pub(crate) fn get(&self, id: u64) -> Option<Arc<ReplayJob>> {
        self.list().into_iter().find(|j| j.id == id)
    }

    /// Starts a request in the background; `on_change` runs whenever records left the DLQ
    /// or changed (to drop cached overviews).
    pub(crate) fn start(
        &self,
        client: &Client,
        operator: Operator,
        what: String,
        target: Target,
        per_second: Option<f64>,
        on_change: Arc<dyn Fn() + Send + Sync>,
    ) -> Arc<ReplayJob> {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let job = Arc::new(ReplayJob {
            id,
            what,
            per_second,
            started_at: client.backends().runtime.now(),
            progress: Mutex::new(Progress {
                status: Status::Selecting,
                target: None,
                done: 0,
                report: ReplayReport::default(),
                errors: Vec::new(),
                error_count: 0,
                finished_at: None,
            }),
            cancelled: AtomicBool::new(false),
            current: Mutex::new(None),
        });
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.push_front(job.clone());
            // Finished requests beyond the last KEPT go; running ones stay listed.
            while jobs.len() > KEPT {
                match jobs.iter().rposition(|j| !j.progress().status.is_active()) {
                    Some(i) => {
                        jobs.remove(i);
                    }
                    None => break,
                }
            }
        }
        tokio::spawn(run(client.clone(), operator, job.clone(), target, on_change));
        job
    }
}

/// Each batch is one replay as `operator`, so one entry of the audit trail (naming its ids).
async fn run(
    client: Client,
    operator: Operator,
    job: Arc<ReplayJob>,
    target: Target,
    on_change: Arc<dyn Fn() + Send + Sync>,
) {
    let ids = match target {
        Target::Ids(ids) => ids,
        Target::Filter(filter) => {
            let mut ids = Vec::new();
            let chosen = scan::for_each(&client.dlq(), &filter, 1000, |r| {
                if r.state != RecordState::Parked {
                    ids.push(r.id.clone());
                }
            })
            .await;
            if let Err(e) = chosen {
                let now = client.backends().runtime.now();
                job.update(|p| {
                    p.status = Status::Failed(format!("could not choose the records: {e}"));
                    p.finished_at = Some(now);
                });
                return;
            }
            ids
        }
    };
    job.update(|p| {
        p.target = Some(ids.len() as u64);
        if p.status == Status::Selecting {
            p.status = Status::Running;
        }
    });
    let lease = client.options().replay_policy.lease();
    let batch = batch_size(job.per_second, lease);
    let mut total = ReplayReport::default();
    for chunk in ids.chunks(batch) {
        if job.is_cancelled() {
            break;
        }
        let options = ReplayOptions {
            filter: Some(Filter { ids: chunk.to_vec(), ..Filter::default() }),
            limit: Some(chunk.len()),
            explicit: true,
            per_second: job.per_second,
            operator: Some(operator.clone()),
        };
        let mut stream = client.replay_stream(options);
        if let Ok(mut current) = job.current.lock() {
            *current = Some(stream.canceller());
        }
        if job.is_cancelled() {
            stream.cancel();
        }
        while let Some(item) = stream.next().await {
            let mut error = None;
            match item {
                Ok(item) => match item.outcome {
                    ReplayOutcome::Recovered(delivery) => delivery.receipt.ack(),
                    ReplayOutcome::Error(e) => error = Some(format!("{}: {e}", item.id)),
                    ReplayOutcome::FailedAgain { .. }
                    | ReplayOutcome::Parked { .. }
                    | ReplayOutcome::Skipped { .. } => {}
                },
                Err(e) => error = Some(e.to_string()),
            }
            let so_far = stream.report();
            job.update(|p| {
                p.done += 1;
                p.report = total;
                p.report.merge(&so_far);
                if let Some(e) = error {
                    p.error_count += 1;
                    if p.errors.len() < KEPT_ERRORS {
                        p.errors.push(e);
                    }
                }
            });
            on_change();
        }
        total.merge(&stream.report());
    }
    let now = client.backends().runtime.now();
    job.update(|p| {
        p.report = total;
        p.finished_at = Some(now);
        p.status = if job.is_cancelled() { Status::Cancelled } else { Status::Finished };
    });
    on_change();
}

/// Records per `replay_stream`: at a rate, what starts within half a lease, so the last
/// record of a batch is started long before its lease could run out.
fn batch_size(per_second: Option<f64>, lease: Duration) -> usize {
    match per_second {
        Some(rate) if rate > 0.0 => {
            let fits = (rate * lease.as_secs_f64() / 2.0).floor();
            if fits < 1.0 {
                1
            } else if fits >= BATCH as f64 {
                BATCH
            } else {
                fits as usize
            }
        }
        _ => BATCH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_start_within_half_a_lease() {
        let lease = Duration::from_secs(300);
        assert_eq!(batch_size(None, lease), BATCH);
        assert_eq!(batch_size(Some(1.0), lease), 150);
        assert_eq!(batch_size(Some(0.001), lease), 1);
        assert_eq!(batch_size(Some(1000.0), lease), BATCH);
    }
}
