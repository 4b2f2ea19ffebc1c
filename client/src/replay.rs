//! Replaying the DLQ: records are leased, decided on by the core's replay
//! policy, solved again through the engine, and settled — and each solved
//! record's answer is handed to the caller, not thrown away.
//!
//! A replayed task is journaled under its record's id before it is sent, so
//! the store hands the record to nobody else while it runs and `recover`
//! finishes it if the process dies. Solved: the answer is written into the
//! journal, handed over, and on acknowledgement the entry and the record go
//! together. Failed again: the lease is settled with the updated record
//! (parked once its task had `park_after_attempts` attempts).
//!
//! Replays already started always finish (stopping mid-way would only make
//! someone pay for them again); [`ReplayStream::cancel`] and dropping the
//! stream stop starting new ones and return their leases untouched.

use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::options::DEFAULT_REPLAY_LIMIT;
use captcha_dlq_core::dlq::replay::{ReplayDecision, ReplayReport};
use captcha_dlq_core::dlq::{DeadLetterRecord, Filter, Leased, RecordState};
use captcha_dlq_core::support::float_text::float_text;
use captcha_dlq_core::{ConfigError, Solution};
use futures::channel::{mpsc, oneshot};
use futures::stream::{FuturesUnordered, Stream, StreamExt};

use crate::answer::Answer;
#[cfg(feature = "audit")]
use crate::audit::{self, Action, Operator};
use crate::client::Client;
use crate::driver::{Command, Delivery, Outcome, Receipt};
use crate::error::{Error, Result};
use crate::runtime::BoxFuture;
use crate::stream_end::StreamEnd;

/// The slowest replay rate: one record a day. Slower makes no sense, and far enough down the
/// interval between starts no longer fits a `Duration` (which panicked, records leased).
pub const MIN_PER_SECOND: f64 = 1.0 / 86_400.0;
/// The fastest replay rate: past it the engine's own submit rate decides anyway.
pub const MAX_PER_SECOND: f64 = 10_000.0;

/// The interval between starts at `per_second` records per second (`None`: at once), or why
/// the rate is refused: not a number, or outside [`MIN_PER_SECOND`]..=[`MAX_PER_SECOND`].
pub fn start_interval(per_second: Option<f64>) -> core::result::Result<Option<Duration>, ConfigError> {
    let Some(rate) = per_second else { return Ok(None) };
    // Written so that NaN fails too.
    if !(MIN_PER_SECOND..=MAX_PER_SECOND).contains(&rate) {
        return Err(ConfigError::new(
            "per_second",
            // `float_text`, not `f64`'s `Display`: the browser build carries no second float formatter.
            format!(
                "{} is not a replay rate: between one record a day ({}) and {} records per second",
                float_text(rate),
                float_text(MIN_PER_SECOND),
                float_text(MAX_PER_SECOND)
            ),
        ));
    }
    Ok(Some(Duration::from_secs_f64(1.0 / rate)))
}

/// Which records a replay takes, how many, and how fast.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    /// `None`: the classes the policy replays automatically.
    pub filter: Option<Filter>,
    /// At most this many records (default [`DEFAULT_REPLAY_LIMIT`]).
    pub limit: Option<usize>,
    /// An operator asked for these records: review classes are replayed too.
    pub explicit: bool,
    /// Records started per second at most (SQS-style redrive velocity); `None`: at once.
    /// Checked by [`start_interval`] before any record is leased.
    pub per_second: Option<f64>,
    /// Who the replay's audit entry names; `None`: [`Operator::default`] (`api`). Not in the
    /// browser build, which keeps no trail (feature `audit`).
    #[cfg(feature = "audit")]
    pub operator: Option<Operator>,
}

/// What happened to one leased record. `A` is the answer: a [`Delivery`] (with the receipt
/// that removes the record once acknowledged) as the stream yields it, or the bare
/// [`Solution`] once it is handed over ([`ReplayItem::handed_over`]).
#[derive(Debug)]
pub enum ReplayOutcome<A = Delivery> {
    /// Solved: the answer.
    Recovered(A),
    /// Failed again and returned to the DLQ (`parked` once worn out).
    FailedAgain { record: Box<DeadLetterRecord>, parked: bool },
    /// Parked by the policy without a new attempt.
    Parked { reason: String },
    /// Left as it was (a review class, an already parked record, the replay cancelled).
    Skipped { why: String },
    /// Could not be tried (the store refused its journal entry).
    Error(Error),
}

#[derive(Debug)]
pub struct ReplayItem<A = Delivery> {
    pub id: String,
    pub labels: BTreeMap<String, String>,
    pub outcome: ReplayOutcome<A>,
}

impl ReplayItem {
    /// The item as a caller keeps it after taking its answer, and the answer's receipt (to
    /// acknowledge once the answer is safe with the caller).
    pub fn handed_over(self) -> (ReplayItem<Solution>, Option<Receipt>) {
        let (outcome, receipt) = match self.outcome {
            ReplayOutcome::Recovered(d) => (ReplayOutcome::Recovered(d.solution), Some(d.receipt)),
            ReplayOutcome::FailedAgain { record, parked } => (ReplayOutcome::FailedAgain { record, parked }, None),
            ReplayOutcome::Parked { reason } => (ReplayOutcome::Parked { reason }, None),
            ReplayOutcome::Skipped { why } => (ReplayOutcome::Skipped { why }, None),
            ReplayOutcome::Error(e) => (ReplayOutcome::Error(e), None),
        };
        (ReplayItem { id: self.id, labels: self.labels, outcome }, receipt)
    }
}

/// Replay outcomes as they come; the report is complete once the stream ends.
#[must_use = "a replay stops starting records when its stream is dropped"]
pub struct ReplayStream {
    items: mpsc::UnboundedReceiver<Result<ReplayItem>>,
    report: Arc<Mutex<ReplayReport>>,
    cancelled: Arc<AtomicBool>,
    end: StreamEnd,
}

impl core::fmt::Debug for ReplayStream {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReplayStream").field("report", &self.report()).finish_non_exhaustive()
    }
}

impl ReplayStream {
    /// The counts so far (final once the stream has ended).
    pub fn report(&self) -> ReplayReport {
        self.report.lock().map(|r| *r).unwrap_or_default()
    }

    /// Stops starting records; those already started finish and are reported.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    /// A handle that cancels this replay from elsewhere (a dashboard's cancel button).
    pub fn canceller(&self) -> Arc<AtomicBool> {
        self.cancelled.clone()
    }
}

impl Drop for ReplayStream {
    fn drop(&mut self) {
        self.cancel();
    }
}

impl Stream for ReplayStream {
    type Item = Result<ReplayItem>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = futures::ready!(self.items.poll_next_unpin(cx));
        self.end.poll_after(next, cx)
    }
}

impl Client {
    /// Replays records from the DLQ; see the module documentation.
    pub fn replay_stream(&self, options: ReplayOptions) -> ReplayStream {
        let (tx, rx) = mpsc::unbounded();
        let report = Arc::new(Mutex::new(ReplayReport::default()));
        let cancelled = Arc::new(AtomicBool::new(false));
        let run = Replayer {
            client: self.clone(),
            tx,
            report: report.clone(),
            cancelled: cancelled.clone(),
            #[cfg(feature = "audit")]
            errors: Mutex::new(Errors::default()),
        };
        self.backends().runtime.spawn(Box::pin(run.run(options)));
        ReplayStream { items: rx, report, cancelled, end: StreamEnd::new(self.clone()) }
    }

    /// Replays records and returns the counts, every answer and every outcome (the shape
    /// every language's `replay` returns); each answer is acknowledged, and its record is
    /// gone from the store when this returns.
    pub async fn replay(&self, options: ReplayOptions) -> Result<ReplayResult> {
        let mut stream = self.replay_stream(options);
        let mut collected = ReplayCollector::default();
        while let Some(item) = stream.next().await {
            let (item, receipt) = item?.handed_over();
            if let Some(receipt) = receipt {
                receipt.ack();
            }
            collected.push(item);
        }
        Ok(collected.finish(stream.report()))
    }
}

struct Replayer {
    client: Client,
    tx: mpsc::UnboundedSender<Result<ReplayItem>>,
    report: Arc<Mutex<ReplayReport>>,
    cancelled: Arc<AtomicBool>,
    /// What failed, for the audit entry.
    #[cfg(feature = "audit")]
    errors: Mutex<Errors>,
}

/// How many items of a replay failed, and the first failure's words.
#[cfg(feature = "audit")]
#[derive(Default)]
struct Errors {
    count: u64,
    first: Option<String>,
}

type Running = BoxFuture<'static, (Leased, Result<Outcome>)>;

impl Replayer {
    fn count(&self, f: impl FnOnce(&mut ReplayReport)) {
        if let Ok(mut r) = self.report.lock() {
            f(&mut r);
        }
    }

    fn emit(&self, item: Result<ReplayItem>) {
        #[cfg(feature = "audit")]
        self.note_failure(&item);
        let _ = self.tx.unbounded_send(item);
    }

    #[cfg(feature = "audit")]
    fn note_failure(&self, item: &Result<ReplayItem>) {
        let failed = match item {
            Err(e) | Ok(ReplayItem { outcome: ReplayOutcome::Error(e), .. }) => Some(e.to_string()),
            Ok(_) => None,
        };
        if let (Some(why), Ok(mut errors)) = (failed, self.errors.lock()) {
            errors.count += 1;
            errors.first.get_or_insert(why);
        }
    }

    /// The replay's audit entry: the records it leased, its counts, its first error. A failed
    /// write is the stream's last item.
    #[cfg(feature = "audit")]
    async fn audit(&self, intent: audit::Intent, operator: &Operator) {
        let report = self.report.lock().map(|r| *r).unwrap_or_default();
        let (failed, first) = match self.errors.lock() {
            Ok(mut e) => (e.count, e.first.take()),
            Err(_) => (0, None),
        };
        let detail = format!(
            "recovered {}, failed again {}, parked {}, skipped {}, errors {failed}",
            report.recovered, report.failed_again, report.parked, report.skipped
        );
        let outcome = match first {
            Some(why) => Err(Error::Io(format!("{failed} records could not be replayed; the first: {why}"))),
            None => Ok(()),
        };
        let recorded = audit::record(&self.client, operator, intent, Some(detail), report.received, outcome).await;
        if let Err(e) = recorded {
            // The replay's own failures were items already; only the trail's is new.
            if failed == 0 {
                let _ = self.tx.unbounded_send(Err(e));
            }
        }
    }

    fn stopped(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst) || self.tx.is_closed()
    }

    async fn run(self, options: ReplayOptions) {
        // A refused option is no replay: nothing leased, nothing in the trail.
        let interval = match start_interval(options.per_second) {
            Ok(interval) => interval,
            Err(e) => return self.emit(Err(e.into())),
        };
        let policy = self.client.options().replay_policy.clone();
        let filter = options.filter.clone().or_else(|| policy.auto_filter());
        // The intent first: a trail that refuses it stops the replay before anything is leased.
        #[cfg(feature = "audit")]
        let operator = options.operator.clone().unwrap_or_default();
        #[cfg(feature = "audit")]
        let intent = {
            let filter_json = filter.as_ref().map_or(serde_json::Value::Null, Filter::compact_json);
            let limit = options.limit.unwrap_or(DEFAULT_REPLAY_LIMIT).max(1);
            let rate = options.per_second.map_or_else(|| "unpaced".to_string(), |r| format!("{}/s", float_text(r)));
            let what = format!("replay up to {limit} records, {rate}");
            match audit::intend(&self.client, &operator, Action::Replay, filter_json, what).await {
                Ok(intent) => intent,
                Err(e) => return self.emit(Err(e)),
            }
        };
        if let Some(filter) = &filter {
            self.replay(filter, &options, interval).await;
        }
        #[cfg(feature = "audit")]
        self.audit(intent, &operator).await;
    }

    async fn replay(&self, filter: &Filter, options: &ReplayOptions, interval: Option<Duration>) {
        let client = self.client.clone();
        let policy = client.options().replay_policy.clone();
        let limit = options.limit.unwrap_or(DEFAULT_REPLAY_LIMIT).max(1);
        let store = client.backends().store.clone();
        let runtime = client.backends().runtime.clone();
        let now = runtime.now();
        let leased = match client.store_call(store.receive(filter, limit, policy.lease(), now)).await {
            Ok(leased) => leased,
            Err(e) => return self.emit(Err(e)),
        };
        self.count(|r| r.received = leased.len() as u64);
        let mut pending = leased.into_iter();
        let mut running: FuturesUnordered<Running> = FuturesUnordered::new();
        let mut next_start = runtime.now();
        loop {
            let may_start = !self.stopped() && pending.len() > 0;
            if may_start && runtime.now() >= next_start {
                if let Some(lease) = pending.next() {
                    self.start(lease, options.explicit, &mut running).await;
                }
                if let Some(i) = interval {
                    next_start = next_start.add(i).max(runtime.now());
                }
                continue;
            }
            if !may_start && running.is_empty() {
                break;
            }
            let finished = if may_start {
                let wait = runtime.sleep(next_start.since(runtime.now()));
                match futures::future::select(running.next(), wait).await {
                    futures::future::Either::Left((finished, _)) => finished,
                    futures::future::Either::Right(_) => None,
                }
            } else {
                running.next().await
            };
            if let Some((lease, outcome)) = finished {
                self.settle(lease, outcome).await;
            }
        }
        // Cancelled: the leases not started go back untouched.
        for lease in pending {
            let why = "the replay was cancelled before this record was tried".to_string();
            self.count(|r| r.skipped += 1);
            let id = lease.record.id.clone();
            let result = client.store_write(|| store.abandon(&lease.token, None, runtime.now())).await;
            let outcome = match result {
                Ok(_) => ReplayOutcome::Skipped { why },
                Err(e) => ReplayOutcome::Error(e),
            };
            self.emit(Ok(ReplayItem { id, labels: lease.record.labels.clone(), outcome }));
        }
    }

    async fn start(&self, lease: Leased, explicit: bool, running: &mut FuturesUnordered<Running>) {
        let client = &self.client;
        let policy = &client.options().replay_policy;
        let store = client.backends().store.clone();
        let runtime = client.backends().runtime.clone();
        let decision = policy.decide(&lease.record, explicit);
        self.count(|r| r.count_decision(&decision));
        let id = lease.record.id.clone();
        let labels = lease.record.labels.clone();
        let outcome = match decision {
            ReplayDecision::Replay { attempts_allowed } => {
                let (accepted, accepted_rx) = oneshot::channel();
                let (done, done_rx) = oneshot::channel();
                let record = Box::new(lease.record.clone());
                if let Err(e) = client.send(Command::Replay { record, attempts: attempts_allowed, accepted, done }) {
                    return self.emit(Err(e));
                }
                match accepted_rx.await {
                    Ok(Ok(_)) => {
                        running.push(Box::pin(async move {
                            let outcome = done_rx.await.map_err(|_| Error::Closed);
                            (lease, outcome)
                        }));
                        return;
                    }
                    Ok(Err(invalid)) => {
                        // Invalid under this version's rules: it needs a person, not retries.
                        self.count(|r| {
                            r.retried -= 1;
                            r.parked += 1;
                        });
                        let reason = invalid.to_string();
                        match client.store_write(|| store.park(&id, &reason, runtime.now())).await {
                            Ok(_) => ReplayOutcome::Parked { reason },
                            Err(e) => ReplayOutcome::Error(e),
                        }
                    }
                    Err(_) => return self.emit(Err(Error::Closed)),
                }
            }
            ReplayDecision::Park { reason } => {
                match client.store_write(|| store.park(&id, &reason, runtime.now())).await {
                    Ok(_) => ReplayOutcome::Parked { reason },
                    Err(e) => ReplayOutcome::Error(e),
                }
            }
            ReplayDecision::Skip { why } => {
                match client.store_write(|| store.abandon(&lease.token, None, runtime.now())).await {
                    Ok(_) => ReplayOutcome::Skipped { why },
                    Err(e) => ReplayOutcome::Error(e),
                }
            }
        };
        self.emit(Ok(ReplayItem { id, labels, outcome }));
    }

    async fn settle(&self, lease: Leased, outcome: Result<Outcome>) {
        let client = &self.client;
        let store = client.backends().store.clone();
        let runtime = client.backends().runtime.clone();
        let id = lease.record.id.clone();
        let labels = lease.record.labels.clone();
        let outcome = match outcome {
            Ok(outcome) => Ok(client.good_or_expired(outcome).await),
            Err(e) => Err(e),
        };
        let outcome = match outcome {
            Ok(Outcome::Solved(delivery)) => {
                self.count(|r| r.recovered += 1);
                ReplayOutcome::Recovered(*delivery)
            }
            Ok(Outcome::FailedAgain(record)) => {
                let settled = client.options().replay_policy.settle(&lease.record, *record);
                let update = settled.clone();
                match client.store_write(|| store.abandon(&lease.token, Some(update.clone()), runtime.now())).await {
                    Ok(state) => {
                        let parked = state == RecordState::Parked;
                        self.count(|r| if parked { r.parked += 1 } else { r.failed_again += 1 });
                        ReplayOutcome::FailedAgain { record: Box::new(settled), parked }
                    }
                    Err(e) => ReplayOutcome::Error(e),
                }
            }
            Ok(Outcome::DeadLettered { record, .. }) => {
                // Stored by the driver (its lease holder had gone): reported as it stands.
                let parked = record.state == RecordState::Parked;
                self.count(|r| if parked { r.parked += 1 } else { r.failed_again += 1 });
                ReplayOutcome::FailedAgain { record, parked }
            }
            Ok(Outcome::NotSubmitted(e)) => {
                self.count(|r| {
                    r.retried -= 1;
                    r.skipped += 1;
                });
                let _ = client.store_write(|| store.abandon(&lease.token, None, runtime.now())).await;
                ReplayOutcome::Error(Error::Store(e))
            }
            Ok(Outcome::RunsOn { id }) => ReplayOutcome::Error(Error::Cancelled { id, runs_on: true }),
            // Another client finishes the replay (its journal entry is that client's now).
            Ok(Outcome::TakenOver(e)) => ReplayOutcome::Error(Error::Store(e)),
            Err(e) => ReplayOutcome::Error(e),
        };
        self.emit(Ok(ReplayItem { id, labels, outcome }));
    }
}

/// What `replay` returns: the counts, each answer, and every record's outcome in the order
/// they came (answers included).
#[derive(Debug)]
pub struct ReplayResult {
    pub report: ReplayReport,
    pub solved: Vec<Answer>,
    pub items: Vec<ReplayItem<Solution>>,
}

/// A replay's items as they are handed over, into a [`ReplayResult`].
#[derive(Debug, Default)]
pub struct ReplayCollector {
    solved: Vec<Answer>,
    items: Vec<ReplayItem<Solution>>,
}

impl ReplayCollector {
    pub fn push(&mut self, item: ReplayItem<Solution>) {
        if let ReplayOutcome::Recovered(solution) = &item.outcome {
            let answer =
                Answer { id: item.id.clone(), key: None, labels: item.labels.clone(), solution: solution.clone() };
            self.solved.push(answer);
        }
        self.items.push(item);
    }

    /// The result, with the stream's final report.
    pub fn finish(self, report: ReplayReport) -> ReplayResult {
        ReplayResult { report, solved: self.solved, items: self.items }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_out_of_range_is_refused_naming_the_range() {
        assert_eq!(start_interval(None), Ok(None));
        assert_eq!(start_interval(Some(2.0)), Ok(Some(Duration::from_millis(500))));
        for rate in [0.0, 20_000.0, f64::NAN] {
            let e = start_interval(Some(rate)).expect_err("refused");
            assert_eq!(e.field, "per_second");
            assert!(e.problem.ends_with("is not a replay rate: between one record a day (0.000011574074074074073) and 10000 records per second"), "{}", e.problem);
        }
        let e = start_interval(Some(0.5e-6)).expect_err("below a record a day");
        let given = e.problem.split(' ').next().unwrap_or_default();
        assert_eq!(given.parse::<f64>(), Ok(0.5e-6), "{}", e.problem);
    }
}
