//! The driver's writes to the DLQ store, off the engine loop.
//!
//! The engine never waits for a store: every journal write, answer, removal
//! and dead letter becomes an [`Op`] here. Ops run a bounded number at once
//! (SQLite and Redis commit concurrent writes together), each with a timeout
//! (a hung store is noticed in seconds, not at a socket timeout), and in order
//! per task id (a later write of an entry never lands before an earlier one;
//! writes waiting behind one still running are merged when the later one
//! replaces them). A failing write is retried with backoff while the store is
//! down, for at most `retry_for`; the driver learns when the store goes down
//! and comes back (it holds submissions meanwhile), and which ops were given up.

use core::task::{Context, Poll};
use core::time::Duration;
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::sync::Arc;

use crate::options::StoreCallOptions;
use captcha_dlq_core::dlq::{DeadLetterRecord, DlqStore, StoreError};
use captcha_dlq_core::{JobId, JournalEntry, Solution, Timestamp};
use futures::channel::oneshot;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use crate::runtime::{BoxFuture, Runtime};

/// An answer to hand over once its journal entry is written.
#[derive(Debug)]
pub(crate) struct Handoff {
    pub job: JobId,
    pub id: String,
    pub labels: BTreeMap<String, String>,
    pub solution: Solution,
}

/// One write the driver needs.
#[derive(Debug)]
pub(crate) enum Op {
    /// Write a journal entry; `gate`: the engine holds this job until it is written.
    Upsert { entry: Box<JournalEntry>, gate: Option<JobId> },
    /// Write the entry holding a solved task's answer, then hand the answer over.
    /// (Both are boxed: the entry travels on with the delivery, and they keep `Op` small.)
    Answer { entry: Box<JournalEntry>, handoff: Box<Handoff> },
    /// The answer reached its caller: remove the entry (the store settles its key).
    Forget { id: String },
    /// Store a dead letter (the store drops its journal entry in the same transaction).
    Push { job: JobId, record: Box<DeadLetterRecord> },
}

impl Op {
    fn id(&self) -> &str {
        match self {
            Op::Upsert { entry, .. } => &entry.id,
            Op::Answer { entry, .. } => &entry.id,
            Op::Forget { id } => id,
            Op::Push { record, .. } => &record.id,
        }
    }

    /// What the write is for, in words (for the message when it is given up).
    pub(crate) fn describe(&self) -> String {
        match self {
            Op::Upsert { entry, gate: Some(_) } => format!("journal entry of new task {} (not submitted)", entry.id),
            Op::Upsert { entry, gate: None } => format!("journal update of task {}", entry.id),
            Op::Answer { entry, .. } => format!("answer of task {} (handed over without a durable copy)", entry.id),
            Op::Forget { id } => format!("removal of delivered task {id} (recover would deliver it again)"),
            Op::Push { record, .. } => format!("dead letter {} (kept in the error instead)", record.id),
        }
    }
}

/// What the driver hears from the store calls. (Moved once each; boxing the op would only
/// add an allocation per write.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum StoreEvent {
    /// An op ended: written, or given up (`Err`) after retries or on an error about the data.
    Finished(Op, Result<(), StoreError>),
    /// A call failed while the store looked healthy.
    Down(StoreError),
    /// A call succeeded after failures, `after` them.
    Up(Duration),
}

struct Queued {
    op: Op,
    attempt: u32,
    first_failed: Option<Timestamp>,
    /// Its place in the order writes were asked for, for [`StoreCalls::flush`].
    number: u64,
}

type Call = BoxFuture<'static, (String, Result<(), StoreError>)>;

pub(crate) struct StoreCalls {
    store: Arc<dyn DlqStore>,
    runtime: Arc<dyn Runtime>,
    options: StoreCallOptions,
    /// Per task id, the ops in order; the head is running or waiting to start.
    queues: BTreeMap<String, VecDeque<Queued>>,
    /// Heads ready to start at a time, in order.
    waiting: BTreeSet<(Timestamp, u64, String)>,
    running: HashSet<String>,
    calls: FuturesUnordered<Call>,
    sequence: u64,
    down_since: Option<Timestamp>,
    events: VecDeque<StoreEvent>,
    /// The number the next write gets.
    next_number: u64,
    /// Writes queued or running (by number).
    unfinished: BTreeSet<u64>,
    /// Who waits for every write numbered below theirs to end.
    flushes: Vec<(u64, oneshot::Sender<()>)>,
}

/// First retry after a failed write; doubles up to [`MAX_RETRY_DELAY`].
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(250);
const MAX_RETRY_DELAY: Duration = Duration::from_secs(5);

impl StoreCalls {
    pub(crate) fn new(store: Arc<dyn DlqStore>, runtime: Arc<dyn Runtime>, options: StoreCallOptions) -> Self {
        StoreCalls {
            store,
            runtime,
            options,
            queues: BTreeMap::new(),
            waiting: BTreeSet::new(),
            running: HashSet::new(),
            calls: FuturesUnordered::new(),
            sequence: 0,
            down_since: None,
            events: VecDeque::new(),
            next_number: 0,
            unfinished: BTreeSet::new(),
            flushes: Vec::new(),
        }
    }

    /// Answers `done` once every write asked for so far has ended (written, or given up
    /// after its retries), so that what a caller acknowledged is in the store when it reads.
    pub(crate) fn flush(&mut self, done: oneshot::Sender<()>) {
        self.flushes.push((self.next_number, done));
        self.answer_flushes();
    }

    fn answer_flushes(&mut self) {
        let oldest = self.unfinished.first().copied().unwrap_or(u64::MAX);
        let (due, waiting): (Vec<_>, Vec<_>) = self.flushes.drain(..).partition(|(below, _)| oldest >= *below);
        self.flushes = waiting;
        for (_, done) in due {
            let _ = done.send(());
        }
    }

    fn queued(&mut self, op: Op) -> Queued {
        let number = self.next_number;
        self.next_number += 1;
        self.unfinished.insert(number);
        Queued { op, attempt: 0, first_failed: None, number }
    }

    /// A write left the queue (ended, or merged into a later one).
    fn ended(&mut self, write: &Queued) {
        self.unfinished.remove(&write.number);
        self.answer_flushes();
    }

    /// Writes queued or running.
    pub(crate) fn unfinished(&self) -> usize {
        self.unfinished.len()
    }

    /// Whether nothing is queued or running.
    pub(crate) fn is_idle(&self) -> bool {
        self.queues.is_empty()
    }

    pub(crate) fn is_down(&self) -> bool {
        self.down_since.is_some()
    }

    /// Since when calls have been failing, if they are.
    pub(crate) fn down_since(&self) -> Option<Timestamp> {
        self.down_since
    }

    /// How long a write is retried before it is given up.
    pub(crate) fn retry_for(&self) -> Duration {
        self.options.retry_for()
    }

    /// Queues `op` behind the ops of the same task.
    pub(crate) fn push(&mut self, op: Op, now: Timestamp) {
        let id = op.id().to_string();
        let head_running = self.running.contains(&id);
        let queued = self.queues.get(&id).map_or(0, VecDeque::len);
        if queued == 0 {
            let write = self.queued(op);
            self.queues.entry(id.clone()).or_default().push_back(write);
            self.sequence += 1;
            self.waiting.insert((now, self.sequence, id));
            return;
        }
        // Writes behind the running head that the new one makes pointless are merged away.
        let keep_from = usize::from(head_running);
        match op {
            Op::Upsert { entry, gate: None } => {
                let queue = self.queues.entry(id.clone()).or_default();
                let mergeable = queue.len() > keep_from;
                if let (true, Some(Queued { op: Op::Upsert { entry: last, .. }, .. })) = (mergeable, queue.back_mut()) {
                    *last = entry; // keeps the gate (and the number) of the write it replaces
                    return;
                }
                let write = self.queued(Op::Upsert { entry, gate: None });
                self.queues.entry(id).or_default().push_back(write);
            }
            Op::Forget { .. } | Op::Push { .. } => {
                let mut dropped = Vec::new();
                let queue = self.queues.entry(id.clone()).or_default();
                while queue.len() > keep_from && matches!(queue.back(), Some(Queued { op: Op::Upsert { .. }, .. })) {
                    dropped.extend(queue.pop_back());
                }
                let now_empty = queue.is_empty();
                let write = self.queued(op);
                for superseded in &dropped {
                    self.ended(superseded);
                }
                if now_empty {
                    self.waiting.retain(|(_, _, w)| *w != id);
                    self.sequence += 1;
                    self.waiting.insert((now, self.sequence, id.clone()));
                }
                self.queues.entry(id).or_default().push_back(write);
            }
            other => {
                let write = self.queued(other);
                self.queues.entry(id).or_default().push_back(write);
            }
        }
    }

    /// When a waiting op may start, if one is blocked only by time.
    pub(crate) fn next_wakeup(&self) -> Option<Timestamp> {
        if self.running.len() >= self.options.concurrency {
            return None;
        }
        self.waiting.first().map(|(t, _, _)| *t)
    }

    /// Starts what may start, then reports the next event, if any.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<StoreEvent> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Poll::Ready(event);
            }
            self.start_due();
            match self.calls.poll_next_unpin(cx) {
                Poll::Ready(Some((id, result))) => self.settle(id, result),
                Poll::Ready(None) | Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn start_due(&mut self) {
        let now = self.runtime.now();
        while self.running.len() < self.options.concurrency {
            let Some((at, _, _)) = self.waiting.first() else { break };
            if *at > now {
                break;
            }
            let Some((_, _, id)) = self.waiting.pop_first() else { break };
            let Some(head) = self.queues.get(&id).and_then(VecDeque::front) else { continue };
            let call = self.call(&head.op);
            self.running.insert(id.clone());
            let timeout = self.runtime.sleep(self.options.timeout());
            let ms = self.options.timeout_ms;
            let what = head.op.describe();
            self.calls.push(Box::pin(async move {
                let result = futures::select_biased! {
                    r = call.fuse() => r,
                    () = timeout.fuse() => Err(StoreError::Timeout(format!("no answer within {ms} ms ({what})"))),
                };
                (id, result)
            }));
        }
    }

    fn call(&self, op: &Op) -> BoxFuture<'static, Result<(), StoreError>> {
        let store = self.store.clone();
        match op {
            // A new task's entry is created; every later write (its provider task id, its answer)
            // needs the entry still there and still this client's: an entry another client took
            // over (or took over and finished) is not written back (`StoreError::Taken`).
            Op::Upsert { entry, gate: Some(_) } => {
                let entry = entry.clone();
                Box::pin(async move { store.journal_upsert(&entry).await })
            }
            Op::Upsert { entry, gate: None } => {
                let entry = entry.clone();
                Box::pin(async move { store.journal_update(&entry).await })
            }
            Op::Answer { entry, .. } => {
                let entry = entry.clone();
                Box::pin(async move { store.journal_update(&entry).await })
            }
            Op::Forget { id } => {
                let id = id.clone();
                let now = self.runtime.now();
                Box::pin(async move { store.journal_forget(&id, now).await })
            }
            Op::Push { record, .. } => {
                let record = (**record).clone();
                Box::pin(async move { store.push(record).await.map(|_| ()) })
            }
        }
    }

    fn settle(&mut self, id: String, result: Result<(), StoreError>) {
        self.running.remove(&id);
        let now = self.runtime.now();
        let Some(queue) = self.queues.get_mut(&id) else { return };
        let Some(head) = queue.front_mut() else { return };
        match result {
            Ok(()) => {
                if let Some(since) = self.down_since.take() {
                    self.events.push_back(StoreEvent::Up(now.since(since)));
                }
                if let Some(done) = queue.pop_front() {
                    self.unfinished.remove(&done.number);
                    self.events.push_back(StoreEvent::Finished(done.op, Ok(())));
                }
            }
            Err(e) if e.is_transient() => {
                if self.down_since.is_none() {
                    self.down_since = Some(now);
                    self.events.push_back(StoreEvent::Down(e.clone()));
                }
                let first = *head.first_failed.get_or_insert(now);
                if now.since(first) < self.options.retry_for() {
                    let delay = FIRST_RETRY_DELAY.saturating_mul(1 << head.attempt.min(8)).min(MAX_RETRY_DELAY);
                    head.attempt += 1;
                    self.sequence += 1;
                    self.waiting.insert((now.add(delay), self.sequence, id));
                    return;
                }
                if let Some(done) = queue.pop_front() {
                    self.unfinished.remove(&done.number);
                    self.events.push_back(StoreEvent::Finished(done.op, Err(e)));
                }
            }
            Err(e) => {
                if let Some(done) = queue.pop_front() {
                    self.unfinished.remove(&done.number);
                    self.events.push_back(StoreEvent::Finished(done.op, Err(e)));
                }
            }
        }
        if queue.is_empty() {
            self.queues.remove(&id);
        } else {
            self.sequence += 1;
            self.waiting.insert((now, self.sequence, id));
        }
        self.answer_flushes();
    }
}
