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

use captcha_dlq_core::{Solution, Task};
use futures::stream::{FuturesUnordered, Stream, StreamExt};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::runtime::BoxFuture;

/// One task of a batch, as the caller gave it (a task that could not be read is an error
/// in its own slot, not a failure of the batch).
#[derive(Debug)]
pub struct SolveInput {
    pub task: Result<Task>,
    pub labels: BTreeMap<String, String>,
    pub key: Option<String>,
}

impl SolveInput {
    pub fn new(task: Task) -> Self {
        SolveInput { task: Ok(task), labels: BTreeMap::new(), key: None }
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
}

/// Results in completion order. See the module documentation.
#[must_use = "a stream does nothing unless polled"]
pub struct SolveStream {
    client: Client,
    inputs: std::iter::Enumerate<std::vec::IntoIter<SolveInput>>,
    running: FuturesUnordered<BoxFuture<'static, SolveResult>>,
    refused: VecDeque<SolveResult>,
    concurrency: usize,
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
        }
    }

    /// Solves `inputs`; one result per input, in input order.
    pub async fn solve_many(&self, inputs: Vec<SolveInput>, concurrency: Option<usize>) -> Vec<SolveResult> {
        let total = inputs.len();
        let mut results: Vec<SolveResult> = self.solve_stream(inputs, concurrency).collect().await;
        results.sort_by_key(|r| r.index);
        debug_assert_eq!(results.len(), total);
        results
    }
}

impl SolveStream {
    /// Starts tasks while a slot is free; unreadable tasks are answered at once.
    fn refill(&mut self) {
        while self.running.len() < self.concurrency {
            let Some((index, input)) = self.inputs.next() else { return };
            let SolveInput { task, labels, key } = input;
            match task {
                Err(e) => self.refused.push_back(SolveResult { index, id: None, labels, key, outcome: Err(e) }),
                Ok(task) => {
                    let client = self.client.clone();
                    self.running.push(Box::pin(async move {
                        match client.submit(task, labels.clone(), key.clone()).await {
                            Err(e) => SolveResult { index, id: None, labels, key, outcome: Err(e) },
                            Ok(handle) => {
                                let id = Some(handle.id().to_string());
                                SolveResult { index, id, labels, key, outcome: handle.wait().await }
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
        match self.running.poll_next_unpin(cx) {
            Poll::Ready(Some(result)) => Poll::Ready(Some(result)),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The error for an input that could not be read as a task, naming its place.
pub fn unreadable(index: usize, error: Error) -> Error {
    error.in_field(&format!("tasks[{index}]."))
}
