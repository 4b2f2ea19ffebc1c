//! Many tasks at once, each result as soon as it exists.
//!
//! A reCAPTCHA token lives about two minutes: a batch must not hold its
//! answers until its slowest task ends. [`SolveStream`] yields results in
//! completion order, each with its input index, and never runs ahead of its
//! consumer by more than `concurrency` tasks (a task is submitted only when
//! the stream is polled and a slot is free). `solve_many` is the ordered
//! collect-all convenience on top.
//!
//! Dropping the stream (Ctrl-C, a cancelled coroutine) cancels what is not
//! finished: tasks not yet sent are dead-lettered as `Cancelled`, tasks the
//! provider already has run on and their answers wait in the journal for
//! `recover` — nothing is submitted twice because the caller stopped.

use core::pin::Pin;
use core::task::{Context, Poll};
use std::collections::{BTreeMap, VecDeque};

use captcha_dlq_core::{Solution, ValidTask};
use futures::stream::{FuturesUnordered, Stream, StreamExt};

use crate::client::Client;
use crate::driver::{Outcome, Receipt};
use crate::error::{Error, Result};
use crate::runtime::BoxFuture;
use crate::stream_end::StreamEnd;

/// One task of a batch, as the caller gave it (a task that could not be read is an error
/// in its own slot, not a failure of the batch).
#[derive(Debug)]
pub struct SolveInput {
    pub task: Result<ValidTask>,
    pub labels: BTreeMap<String, String>,
    pub key: Option<String>,
    /// How long the caller still wants it, in milliseconds from its submission: past that, a
    /// task not solved goes to the DLQ as `TTLExpired` and nothing more is paid for it.
    pub ttl_ms: Option<u64>,
}

impl SolveInput {
    pub fn new(task: ValidTask) -> Self {
        SolveInput { task: Ok(task), labels: BTreeMap::new(), key: None, ttl_ms: None }
    }
}

/// One finished task of a batch.
#[derive(Debug)]
pub struct SolveResult {
    /// Its position in the input.
    pub index: usize,
    /// Its record id (none if it was never accepted).
    pub id: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub key: Option<String>,
    pub outcome: Result<Solution>,
    /// The answer's receipt when the stream leaves acknowledging to its consumer
    /// ([`SolveStream::with_receipts`]); `None` when the stream acknowledged it itself.
    pub receipt: Option<Receipt>,
}

/// Results in completion order. See the module documentation.
#[must_use = "a stream does nothing unless polled"]
pub struct SolveStream {
    client: Client,
    inputs: std::iter::Enumerate<std::vec::IntoIter<SolveInput>>,
    running: FuturesUnordered<BoxFuture<'static, SolveResult>>,
    refused: VecDeque<SolveResult>,
    concurrency: usize,
    with_receipts: bool,
    end: StreamEnd,
}

impl core::fmt::Debug for SolveStream {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SolveStream")
            .field("running", &self.running.len())
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

impl Client {
    /// Solves `inputs` with at most `concurrency` in flight (the client's default when
    /// `None`), raising the engine's in-flight limit to that if it is lower.
    pub fn solve_stream(&self, inputs: Vec<SolveInput>, concurrency: Option<usize>) -> SolveStream {
        let concurrency = concurrency.unwrap_or(self.options().concurrency).max(1);
        let _ = self.ensure_in_flight(concurrency);
        SolveStream {
            client: self.clone(),
            inputs: inputs.into_iter().enumerate(),
            running: FuturesUnordered::new(),
            refused: VecDeque::new(),
            concurrency,
            with_receipts: false,
            end: StreamEnd::new(self.clone()),
        }
    }

    /// Solves `inputs`; one result per input, in input order. When it returns, the store
    /// holds what the results say (dead letters written, answers' journal entries removed).
    pub async fn solve_many(&self, inputs: Vec<SolveInput>, concurrency: Option<usize>) -> Vec<SolveResult> {
        let total = inputs.len();
        // The stream ends once the store holds what its results say.
        let mut results: Vec<SolveResult> = self.solve_stream(inputs, concurrency).collect().await;
        // One result per index: an unstable sort orders them the same.
        captcha_dlq_core::support::sort::sort_unstable_by(&mut results, |a, b| a.index.cmp(&b.index));
        debug_assert_eq!(results.len(), total);
        results
    }
}

impl SolveStream {
    /// Leaves each answer's receipt to the consumer ([`SolveResult::receipt`]) instead of
    /// acknowledging it when the task ends, for a consumer that hands answers on across a
    /// boundary where they can still be dropped (a binding's future cancelled after it was
    /// resolved): an answer whose receipt is dropped stays in the journal for `recover`.
    pub fn with_receipts(mut self) -> Self {
        self.with_receipts = true;
        self
    }

    /// Starts tasks while a slot is free; unreadable tasks are answered at once.
    fn refill(&mut self) {
        while self.running.len() < self.concurrency {
            let Some((index, input)) = self.inputs.next() else { return };
            let SolveInput { task, labels, key, ttl_ms } = input;
            match task {
                Err(e) => {
                    self.refused.push_back(SolveResult { index, id: None, labels, key, outcome: Err(e), receipt: None })
                }
                Ok(task) => {
                    let client = self.client.clone();
                    let with_receipts = self.with_receipts;
                    self.running.push(Box::pin(async move {
                        match client.submit_wanted(task, labels.clone(), key.clone(), ttl_ms).await {
                            Err(e) => SolveResult { index, id: None, labels, key, outcome: Err(e), receipt: None },
                            Ok(handle) => {
                                let id = Some(handle.id().to_string());
                                let (outcome, receipt) = if with_receipts {
                                    match handle.outcome().await.and_then(Outcome::into_delivery) {
                                        Ok(delivery) => (Ok(delivery.solution), Some(delivery.receipt)),
                                        Err(e) => (Err(e), None),
                                    }
                                } else {
                                    (handle.wait().await, None)
                                };
                                SolveResult { index, id, labels, key, outcome, receipt }
                            }
                        }
                    }));
                }
            }
        }
    }
}

impl Stream for SolveStream {
    type Item = SolveResult;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<SolveResult>> {
        self.refill();
        if let Some(refused) = self.refused.pop_front() {
            return Poll::Ready(Some(refused));
        }
        let next = futures::ready!(self.running.poll_next_unpin(cx));
        self.end.poll_after(next, cx)
    }
}

/// The error for an input that could not be read as a task, naming its place.
pub fn unreadable(index: usize, error: Error) -> Error {
    error.in_field(&format!("tasks[{index}]."))
}
