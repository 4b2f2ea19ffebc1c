//! The driver: one future that owns the engine and performs its actions.
//!
//! It runs on whatever the front end's [`Runtime`] spawns it on. Each turn it
//! drains the engine's actions (requests go out through the [`Transport`],
//! writes become store calls, answers and dead letters go to whoever waits),
//! then waits for the first of: a command from a client handle, an HTTP
//! answer, a finished store call, or the engine's (or a store retry's) timer.
//!
//! The order that makes a task end exactly once is kept here:
//! - a new task is sent only after its journal entry is written (the engine
//!   holds it until [`Engine::journaled`]); if the entry cannot be written it
//!   is withdrawn and its caller gets a store error: nothing was paid;
//! - an answer is written into the journal before it is handed over, and its
//!   entry is removed only when the caller acknowledges it ([`Receipt::ack`]);
//!   an answer nobody takes stays in the journal for `recover`;
//! - a dead letter is stored before its caller hears of it, and an error says
//!   when the store could not take it (the record travels in the error).
//!
//! [`Runtime`]: crate::runtime::Runtime
//! [`Transport`]: crate::runtime::Transport

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use captcha_dlq_core::dlq::{DeadLetterRecord, StoreError};
use captcha_dlq_core::engine::{Expired, LaneStatus};
use captcha_dlq_core::spend::SpendReport;
use captcha_dlq_core::{
    Action, Cancelled, Engine, Event, HttpResponse, InvalidTask, JobId, JournalEntry, RequestId, Solution, Timestamp,
    TransportError, ValidTask,
};
use futures::channel::{mpsc, oneshot};
use futures::stream::{FuturesUnordered, StreamExt};

use crate::events::EventLog;
use crate::fleet_calls::{FleetCalls, Synced};
use crate::runtime::{Backends, BoxFuture};
use crate::store_calls::{Handoff, Op, StoreCalls, StoreEvent};
use crate::traces::{TaskLeft, TaskOrigin};

/// How a job ended, as its waiter hears it.
#[derive(Debug)]
pub enum Outcome {
    /// Solved. Acknowledge the delivery once the answer is in the caller's hands. (Boxed: an
    /// answer is the largest outcome, and keeps `Outcome` small.)
    Solved(Box<Delivery>),
    /// Failed for good; `stored`: the record is in the DLQ (else only here).
    DeadLettered { record: Box<DeadLetterRecord>, stored: bool },
    /// A replay failed again: the replayer settles its lease with this record.
    FailedAgain(Box<DeadLetterRecord>),
    /// Never submitted: its journal entry could not be written.
    NotSubmitted(StoreError),
    /// The caller cancelled after the provider had the task: it runs on without a waiter.
    RunsOn { id: String },
    /// Another client of the fleet took the task over while this one was not heard from (its
    /// journal write was fenced off, `StoreError::Taken`): the answer goes to that client's
    /// consumer, never to two.
    TakenOver(StoreError),
}

/// A solved task's answer, with the receipt that lets its journal entry go.
#[derive(Debug)]
pub struct Delivery {
    pub id: String,
    pub labels: BTreeMap<String, String>,
    pub solution: Solution,
    pub receipt: Receipt,
    /// The journal entry holding the answer (a fresh answer's), so that an answer found past
    /// its life when it is handed over becomes its dead letter (`Client::good_or_expired`).
    pub(crate) entry: Option<Box<JournalEntry>>,
}

/// Proof that an answer was handed over. [`ack`](Receipt::ack) it once the answer is
/// safely with the caller (returned, printed and flushed): the journal entry holding it
/// is removed then. Dropped without `ack`, the answer stays in the journal and
/// `recover` delivers it (again, with the same id and provider task id).
#[derive(Debug)]
#[must_use = "an answer's journal entry is only removed when its receipt is acknowledged"]
pub struct Receipt {
    id: String,
    commands: mpsc::UnboundedSender<Command>,
}

impl Receipt {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn ack(self) {
        let _ = self.commands.unbounded_send(Command::Delivered { id: self.id });
    }
}

pub(crate) type Reply<T> = oneshot::Sender<T>;

pub(crate) enum Command {
    Submit {
        task: ValidTask,
        labels: BTreeMap<String, String>,
        key: Option<String>,
        /// The caller's `ttl_ms`: how long it still wants the task.
        ttl: Option<Duration>,
        accepted: Reply<Result<(JobId, String), InvalidTask>>,
        done: Reply<Outcome>,
    },
    Replay {
        record: Box<DeadLetterRecord>,
        attempts: u32,
        accepted: Reply<Result<JobId, InvalidTask>>,
        done: Reply<Outcome>,
    },
    /// Resume (or with `resume: false` dead-letter) a journal entry; refused with `Busy`
    /// when a job of this client already works on that id.
    Recover {
        entry: Box<JournalEntry>,
        resume: bool,
        /// What becomes of an answer past its life (`RecoverOptions::resolve_expired`).
        expired: Expired,
        done: Reply<Outcome>,
        accepted: Reply<Claim>,
    },
    /// Wait for a job of this client that runs without a waiter (cancelled after it was
    /// submitted, or whose caller went away).
    Adopt {
        id: String,
        done: Reply<Outcome>,
        adopted: Reply<Claim>,
    },
    Cancel {
        job: JobId,
    },
    Delivered {
        id: String,
    },
    ResetCircuit,
    /// End the account hold of the provider named, or of every provider (`Engine::resume_accounts`).
    /// Feature `fleet` (with `audit`, the trail that records it); not in the browser build.
    #[cfg(feature = "fleet")]
    ResumeAccounts {
        provider: Option<String>,
        reply: Reply<Result<Vec<String>, captcha_dlq_core::ConfigError>>,
    },
    /// A site's verdict on an answer (client/src/page.rs), for `accepted` routing.
    PageVerdict {
        provider: String,
        kind: captcha_dlq_core::TaskKind,
        accepted: bool,
    },
    EnsureInFlight(u32),
    Status {
        reply: Reply<DriverStatus>,
    },
    Spend {
        reply: Reply<SpendReport>,
    },
    Shutdown {
        ack: Reply<()>,
    },
    /// Answer once every store write asked for before this command has ended.
    Flush {
        done: Reply<()>,
    },
}

/// Whether a journal entry could be taken over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Taken: its outcome comes on the `done` channel.
    Taken,
    /// A job of this client works on it and someone waits for it.
    Busy,
    /// No job of this client has it.
    Unknown,
}

/// What the driver knows right now (for metrics and dashboards).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DriverStatus {
    /// Tasks accepted and not ended.
    pub jobs: usize,
    /// Tasks with a provider.
    pub in_flight: usize,
    /// The in-flight limits of every provider, summed.
    pub in_flight_limit: u32,
    /// Jobs running on after their caller cancelled or went away.
    pub detached: usize,
    /// The account error that stopped submissions (at every provider), if any.
    pub account_failure: Option<String>,
    pub store_down: bool,
    /// Store writes asked for and not yet ended (journal entries, answers, removals, dead
    /// letters): a task leaves `jobs` when it ends, its dead letter is in the store once this
    /// count drains (or [`Client::flush`](crate::Client::flush) returns).
    pub store_writes: usize,
    /// How often a provider was found unreachable since the client started.
    pub unreachable_episodes: u32,
    /// Each provider's state, in configuration order.
    pub providers: Vec<LaneStatus>,
}

/// What clients can read about the store's health without asking the driver.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StoreHealth {
    /// Whether the last store call succeeded.
    pub available: bool,
    /// Writes given up after retrying (each also reported as an event and an error).
    pub failures: u64,
    pub last_error: Option<String>,
}

pub(crate) type SharedHealth = Arc<Mutex<StoreHealth>>;

type Answer = (RequestId, Result<HttpResponse, TransportError>);

pub(crate) struct Driver {
    engine: Engine,
    backends: Backends,
    store_calls: StoreCalls,
    /// The store's fleet ledger calls, when the client shares its accounts' limits.
    fleet: Option<FleetCalls>,
    owner: String,
    log: EventLog,
    health: SharedHealth,
    commands: mpsc::UnboundedReceiver<Command>,
    /// For receipts handed out with answers.
    command_tx: mpsc::UnboundedSender<Command>,
    requests: FuturesUnordered<BoxFuture<'static, Answer>>,
    waiters: HashMap<JobId, Reply<Outcome>>,
    /// Record id of every live job, and back.
    ids: HashMap<JobId, String>,
    jobs_by_id: HashMap<String, JobId>,
    /// Live jobs nobody waits for, by record id.
    detached: HashMap<String, JobId>,
    timer: Option<(Timestamp, BoxFuture<'static, ()>)>,
    /// While the store is down: when the tasks waiting to be sent are let go (see
    /// [`Engine::release_unsent`]), so that a store that stays away ends them instead of
    /// holding them until their deadline.
    store_release_at: Option<Timestamp>,
    shutting_down: Option<Reply<()>>,
}

/// What woke the driver. Moved once per wake-up; boxing the large variants would only add
/// an allocation to every store event.
#[allow(clippy::large_enum_variant)]
enum Wake {
    Command(Option<Command>),
    Answer(Answer),
    Store(StoreEvent),
    Fleet(Synced),
    Timer,
}

impl Driver {
    pub(crate) fn new(
        engine: Engine,
        backends: Backends,
        store_calls: StoreCalls,
        owner: String,
        log: EventLog,
        health: SharedHealth,
        (commands, command_tx): (mpsc::UnboundedReceiver<Command>, mpsc::UnboundedSender<Command>),
    ) -> Driver {
        Driver {
            engine,
            backends,
            store_calls,
            fleet: None,
            owner,
            log,
            health,
            commands,
            command_tx,
            requests: FuturesUnordered::new(),
            waiters: HashMap::new(),
            ids: HashMap::new(),
            jobs_by_id: HashMap::new(),
            detached: HashMap::new(),
            timer: None,
            store_release_at: None,
            shutting_down: None,
        }
    }

    /// Runs the fleet ledger's syncs the engine asks for (see `fleet_calls`).
    pub(crate) fn with_fleet(mut self, fleet: Option<FleetCalls>) -> Driver {
        self.fleet = fleet;
        self
    }

    fn now(&self) -> Timestamp {
        self.backends.runtime.now()
    }

    /// Runs until `Shutdown` or until every client handle is gone. Jobs in flight then stay
    /// in the journal; writes already queued are finished first (for at most one store
    /// timeout and retry period).
    pub(crate) async fn run(mut self) {
        loop {
            self.release_if_store_gone();
            self.perform_actions();
            self.log.metrics().set_jobs(self.engine.job_count(), self.engine.in_flight());
            if self.shutting_down.is_some() && self.store_calls.is_idle() {
                break;
            }
            self.arm_timer();
            let wake = futures::future::poll_fn(|cx| self.poll_wake(cx)).await;
            match wake {
                Wake::Command(Some(command)) => self.command(command),
                Wake::Command(None) => {
                    // Every handle is gone: finish the queued writes, then stop.
                    if self.shutting_down.is_none() {
                        let (ack, _) = oneshot::channel();
                        self.shutting_down = Some(ack);
                    }
                }
                Wake::Answer((rid, result)) => {
                    let now = self.now();
                    self.engine.handle_response(rid, result, now);
                    // Take every answer already here before acting, so polls line up in batches.
                    while let Some(Some((rid, result))) = futures::FutureExt::now_or_never(self.requests.next()) {
                        self.engine.handle_response(rid, result, now);
                    }
                }
                Wake::Store(event) => self.store_event(event),
                Wake::Fleet((sync, result)) => {
                    let now = self.now();
                    if let Err(e) = &result {
                        tracing::warn!(target: "captcha_dlq", "DLQ store not answering its fleet ledger sync ({e}); submissions at that provider wait for the next");
                    }
                    self.engine.fleet_synced(sync, result, now);
                }
                Wake::Timer => self.timer = None,
            }
        }
        // A client closing with tasks in flight keeps its row: it lapses after the owners' TTL,
        // and the fleet then adopts those tasks (their entries name this client). Leaving at
        // once would leave them to `recover` alone.
        let in_flight = self.engine.job_count() > 0;
        if let Some(fleet) = self.fleet.as_mut() {
            // A sync still out carries news (an operator's resume, spend): its answer is taken in,
            // and a failed one's report goes again with the last reports below.
            for (sync, result) in fleet.finish().await {
                let now = self.backends.runtime.now();
                self.engine.fleet_synced(sync, result, now);
            }
        }
        let now = self.now();
        let goodbye = self.fleet.as_ref().map(|fleet| {
            // What this client spent since its last sync reaches the fleet before it goes.
            let last = fleet.report_finally(self.engine.fleet_final_syncs(now), &self.backends.runtime, now);
            (last, (!in_flight).then(|| fleet.leave(&self.backends.runtime)))
        });
        if let Some((last, leave)) = goodbye {
            last.await;
            if let Some(leave) = leave {
                leave.await;
            }
        }
        self.backends.liveness.release(&self.owner);
        // Spans are exported before `close` returns (the tasks still running end theirs here).
        #[cfg(feature = "traces")]
        if let Some(exported) = self.log.close(self.now()) {
            exported.await;
        }
        if let Some(ack) = self.shutting_down.take() {
            let _ = ack.send(());
        }
    }

    fn poll_wake(&mut self, cx: &mut Context<'_>) -> Poll<Wake> {
        if self.shutting_down.is_none() {
            if let Poll::Ready(c) = self.commands.poll_next_unpin(cx) {
                return Poll::Ready(Wake::Command(c));
            }
        }
        if !self.requests.is_empty() {
            if let Poll::Ready(Some(answer)) = self.requests.poll_next_unpin(cx) {
                return Poll::Ready(Wake::Answer(answer));
            }
        }
        if let Poll::Ready(event) = self.store_calls.poll(cx) {
            return Poll::Ready(Wake::Store(event));
        }
        if let Some(Poll::Ready(synced)) = self.fleet.as_mut().map(|fleet| fleet.poll(cx)) {
            return Poll::Ready(Wake::Fleet(synced));
        }
        // A write that failed in that poll may have been scheduled for a retry earlier than
        // the timer: wake to re-arm it, or nothing would start the retry.
        if let Some(at) = self.store_calls.next_wakeup() {
            if self.timer.as_ref().is_none_or(|(armed, _)| at < *armed) {
                return Poll::Ready(Wake::Timer);
            }
        }
        if let Some((_, sleep)) = &mut self.timer {
            if Pin::new(sleep).poll(cx).is_ready() {
                return Poll::Ready(Wake::Timer);
            }
        }
        Poll::Pending
    }

    /// Lets the tasks waiting to be sent go once the store has been down for as long as a
    /// write is retried: not sent, their callers hear why (nothing was paid); sent before,
    /// they are dead-lettered. Again every such period while the store stays down.
    fn release_if_store_gone(&mut self) {
        let Some(since) = self.store_calls.down_since() else {
            self.store_release_at = None;
            return;
        };
        let period = self.store_calls.retry_for();
        let now = self.now();
        let due = *self.store_release_at.get_or_insert(since.add(period));
        if now < due {
            return;
        }
        self.store_release_at = Some(now.add(period));
        let waited = now.since(since);
        for job in self.engine.release_unsent(waited, now) {
            self.log.task_left(job, TaskLeft::NotSubmitted, now);
            let id = self.ids.get(&job).cloned().unwrap_or_default();
            self.untrack(job);
            if let Some(waiter) = self.waiters.remove(&job) {
                let why = StoreError::Backend(format!(
                    "task {id} was not submitted (nothing was paid): the DLQ store has not answered for {} ms",
                    waited.as_millis()
                ));
                let _ = waiter.send(Outcome::NotSubmitted(why));
            }
        }
    }

    /// Sleeps until the engine's next timeout, the next store retry or the moment waiting
    /// tasks are let go for a store that is down, whichever is first.
    fn arm_timer(&mut self) {
        let next = [self.engine.poll_timeout(), self.store_calls.next_wakeup(), self.store_release_at]
            .into_iter()
            .flatten()
            .min();
        let Some(at) = next else {
            self.timer = None;
            return;
        };
        if self.timer.as_ref().is_some_and(|(t, _)| *t == at) {
            return;
        }
        // A timeout already due still sleeps a moment: the engine had its turn just now, so
        // whatever keeps it from acting (a pause, a full window) needs time to pass.
        let wait = at.since(self.now()).max(Duration::from_millis(1));
        self.timer = Some((at, self.backends.runtime.sleep(wait)));
    }

    /// `Client::flush`: the store writes asked for so far and, with a tracer that batches (the client's
    /// OTLP/HTTP JSON one), the spans ended so far; `done` answers once both are.
    fn flush(&mut self, done: oneshot::Sender<()>) {
        #[cfg(feature = "traces")]
        if let Some(exported) = self.log.flush_traces() {
            let (written, stored) = oneshot::channel();
            self.store_calls.flush(written);
            self.backends.runtime.spawn(Box::pin(async move {
                // A flush cancelled by the client closing stays cancelled.
                if stored.await.is_ok() {
                    exported.await;
                    let _ = done.send(());
                }
            }));
            return;
        }
        self.store_calls.flush(done)
    }

    fn command(&mut self, command: Command) {
        let now = self.now();
        match command {
            Command::Submit { task, labels, key, ttl, accepted, done } => {
                let kind = task.kind();
                match self.engine.submit_wanted(task, labels, key, ttl, now) {
                    Ok(job) => {
                        let id = self.engine.job_record_id(job).unwrap_or_default().to_string();
                        self.log.task_started(&self.engine, (job, &id, kind), TaskOrigin::Submitted, now);
                        self.track(job, id.clone());
                        self.waiters.insert(job, done);
                        if accepted.send(Ok((job, id))).is_err() {
                            // Its caller went away before hearing of it (a cancelled future,
                            // Ctrl-C): cancel it as its dropped handle would have, so that it is
                            // not submitted after the caller stopped.
                            self.command(Command::Cancel { job });
                        }
                    }
                    Err(e) => {
                        let _ = accepted.send(Err(e));
                    }
                }
            }
            Command::Replay { record, attempts, accepted, done } => {
                let id = record.id.clone();
                let kind = record.task.kind();
                match self.engine.replay(*record, attempts, now) {
                    Ok(job) => {
                        self.log.task_started(&self.engine, (job, &id, kind), TaskOrigin::Replayed, now);
                        self.track(job, id);
                        self.waiters.insert(job, done);
                        let _ = accepted.send(Ok(job));
                    }
                    Err(e) => {
                        let _ = accepted.send(Err(e));
                    }
                }
            }
            Command::Recover { entry, resume, expired, done, accepted } => {
                if self.jobs_by_id.contains_key(&entry.id) {
                    let _ = accepted.send(Claim::Busy);
                    return;
                }
                let id = entry.id.clone();
                let kind = entry.task.kind();
                let job = if resume {
                    self.engine.recover_with(*entry, expired, now)
                } else {
                    self.engine.interrupt(*entry, now)
                };
                self.log.task_started(&self.engine, (job, &id, kind), TaskOrigin::Recovered, now);
                self.track(job, id);
                self.waiters.insert(job, done);
                let _ = accepted.send(Claim::Taken);
            }
            Command::Adopt { id, done, adopted } => {
                let claim = match self.detached.remove(&id) {
                    Some(job) => {
                        self.waiters.insert(job, done);
                        Claim::Taken
                    }
                    None if self.jobs_by_id.contains_key(&id) => Claim::Busy,
                    None => Claim::Unknown,
                };
                let _ = adopted.send(claim);
            }
            Command::Cancel { job } => match self.engine.cancel(job, now) {
                Cancelled::RunsOn => {
                    let id = self.ids.get(&job).cloned().unwrap_or_default();
                    if let Some(waiter) = self.waiters.remove(&job) {
                        let _ = waiter.send(Outcome::RunsOn { id: id.clone() });
                    }
                    self.detached.insert(id, job);
                }
                // Dead-lettered: its waiter hears of it like any other dead letter.
                Cancelled::DeadLettered | Cancelled::Unknown => {}
            },
            Command::Delivered { id } => self.store_calls.push(Op::Forget { id }, now),
            Command::Flush { done } => self.flush(done),
            Command::ResetCircuit => self.engine.reset_circuit(),
            #[cfg(feature = "fleet")]
            Command::ResumeAccounts { provider, reply } => {
                let _ = reply.send(self.engine.resume_accounts(provider.as_deref()));
            }
            Command::PageVerdict { provider, kind, accepted } => {
                self.engine.page_verdict(&provider, kind, accepted, now)
            }
            Command::EnsureInFlight(limit) => self.engine.ensure_in_flight_limit(limit),
            Command::Status { reply } => {
                let _ = reply.send(DriverStatus {
                    jobs: self.engine.job_count(),
                    in_flight: self.engine.in_flight(),
                    in_flight_limit: self.engine.concurrency_limit(),
                    detached: self.detached.len(),
                    account_failure: self.engine.account_failure().map(|f| format!("{}: {}", f.code, f.description)),
                    store_down: self.store_calls.is_down(),
                    store_writes: self.store_calls.unfinished(),
                    unreachable_episodes: self.engine.unreachable_episodes(),
                    providers: self.engine.lanes(),
                });
            }
            Command::Spend { reply } => {
                let _ = reply.send(self.engine.spend());
            }
            Command::Shutdown { ack } => self.shutting_down = Some(ack),
        }
    }

    fn perform_actions(&mut self) {
        loop {
            let now = self.now();
            let Some(action) = self.engine.poll_action(now) else { break };
            match action {
                Action::Send { request_id, request } => {
                    let transport = self.backends.transport.clone();
                    let runtime = self.backends.runtime.clone();
                    let metrics = self.log.metrics().clone();
                    self.requests.push(Box::pin(async move {
                        let endpoint = request.endpoint().to_string();
                        let url = request.url.clone();
                        let answer = transport.send(request).await;
                        metrics.http_exchange(&url, &endpoint, &answer, runtime.now().since(now));
                        (request_id, answer)
                    }));
                }
                Action::Journal { mut entry, gates } => {
                    entry.owner = Some(self.owner.clone());
                    self.store_calls.push(Op::Upsert { entry: Box::new(entry), gate: gates }, now);
                }
                Action::Solved { job, id, labels, solution, persist } => {
                    self.untrack(job);
                    let handoff = Handoff { job, id, labels, solution };
                    match persist {
                        Some(mut entry) => {
                            entry.owner = Some(self.owner.clone());
                            self.store_calls.push(Op::Answer { entry, handoff: Box::new(handoff) }, now);
                        }
                        None => self.hand_over(handoff, None),
                    }
                }
                Action::DeadLetter { job, record, push } => {
                    self.untrack(job);
                    self.detached.remove(&record.id);
                    let waiter = self.waiters.remove(&job).filter(|w| !w.is_canceled());
                    match (push, waiter) {
                        (false, Some(waiter)) => {
                            // The replayer holds the lease and settles it with this record.
                            let _ = waiter.send(Outcome::FailedAgain(Box::new(record)));
                        }
                        (_, waiter) => {
                            // Nobody holds a lease (or the replayer went away): store it.
                            if let Some(w) = waiter {
                                self.waiters.insert(job, w);
                            }
                            self.store_calls.push(Op::Push { job, record: Box::new(record) }, now);
                        }
                    }
                }
                Action::Event(event) => {
                    self.log.emit(&event, now);
                    #[cfg(feature = "alerts")]
                    if matches!(event, Event::Solved { .. }) {
                        let engine = &self.engine;
                        self.log.spent(|| engine.budget_used(), now);
                    }
                }
                Action::FleetSync(sync) => match &mut self.fleet {
                    Some(fleet) => fleet.start(sync, &self.backends.runtime, now),
                    // Only lanes given an account by a ledger ask; answer as a failed sync.
                    None => self.engine.fleet_synced(sync, Err("this client has no fleet ledger".into()), now),
                },
            }
        }
    }

    fn track(&mut self, job: JobId, id: String) {
        self.jobs_by_id.insert(id.clone(), job);
        self.ids.insert(job, id);
    }

    fn untrack(&mut self, job: JobId) {
        if let Some(id) = self.ids.remove(&job) {
            self.jobs_by_id.remove(&id);
        }
    }

    /// Gives an answer to its waiter, or keeps it in the journal when nobody waits.
    fn hand_over(&mut self, h: Handoff, entry: Option<Box<JournalEntry>>) {
        self.detached.remove(&h.id);
        let receipt = Receipt { id: h.id.clone(), commands: self.command_tx.clone() };
        let delivery = Delivery { id: h.id, labels: h.labels, solution: h.solution, receipt, entry };
        match self.waiters.remove(&h.job) {
            Some(waiter) => {
                if let Err(Outcome::Solved(d)) = waiter.send(Outcome::Solved(Box::new(delivery))) {
                    tracing::debug!(target: "captcha_dlq", id = %d.id, "answer kept in the journal: its caller went away");
                }
            }
            None => {
                tracing::info!(target: "captcha_dlq", id = %delivery.id, "answer kept in the journal for recover: nobody waits for it");
            }
        }
    }

    fn store_event(&mut self, event: StoreEvent) {
        let now = self.now();
        match event {
            StoreEvent::Down(e) => {
                self.engine.set_store_available(false);
                self.set_health(false, Some(e.to_string()), 0);
                self.log.emit(&Event::StoreUnavailable { error: e.to_string() }, now);
            }
            StoreEvent::Up(after) => {
                self.engine.set_store_available(true);
                self.set_health(true, None, 0);
                let after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
                self.log.emit(&Event::StoreAvailable { after_ms }, now);
            }
            StoreEvent::Finished(op, Ok(())) => match op {
                Op::Upsert { gate: Some(job), .. } => {
                    self.engine.journaled(job, now);
                }
                Op::Answer { handoff, entry } => self.hand_over(*handoff, Some(entry)),
                Op::Push { job, record } => {
                    if let Some(waiter) = self.waiters.remove(&job) {
                        let _ = waiter.send(Outcome::DeadLettered { record, stored: true });
                    }
                }
                Op::Upsert { gate: None, .. } | Op::Forget { .. } => {}
            },
            // Not a store failure: another client took the task over while this one was not
            // heard from (see `Outcome::TakenOver`). This client lets the task go; the new
            // owner polls the provider and hands the answer to its own consumer.
            StoreEvent::Finished(op, Err(e @ StoreError::Taken { .. })) => {
                tracing::warn!(target: "captcha_dlq", "{e}");
                let job = match &op {
                    Op::Upsert { gate: Some(job), .. } | Op::Push { job, .. } => Some(*job),
                    Op::Answer { handoff, .. } => Some(handoff.job),
                    Op::Upsert { entry, gate: None } => self.jobs_by_id.get(&entry.id).copied(),
                    Op::Forget { .. } => None,
                };
                if let Some(job) = job {
                    if self.engine.let_go(job) {
                        self.log.task_left(job, TaskLeft::TakenOver, now);
                    }
                    if let Some(id) = self.ids.get(&job).cloned() {
                        self.detached.remove(&id);
                    }
                    self.untrack(job);
                    if let Op::Answer { handoff, .. } = &op {
                        self.detached.remove(&handoff.id);
                    }
                    if let Some(waiter) = self.waiters.remove(&job) {
                        let _ = waiter.send(Outcome::TakenOver(e));
                    }
                }
            }
            StoreEvent::Finished(op, Err(e)) => {
                self.set_health(!self.store_calls.is_down(), Some(e.to_string()), 1);
                self.log.emit(&Event::StoreGaveUp { what: op.describe(), error: e.to_string() }, now);
                match op {
                    Op::Upsert { gate: Some(job), entry } => {
                        if self.engine.withdraw(job) {
                            self.log.task_left(job, TaskLeft::NotSubmitted, now);
                            self.untrack(job);
                            if let Some(waiter) = self.waiters.remove(&job) {
                                let why = StoreError::Backend(format!(
                                    "task {} was not submitted (nothing was paid): its journal entry could not be written: {e}",
                                    entry.id
                                ));
                                let _ = waiter.send(Outcome::NotSubmitted(why));
                            }
                        }
                    }
                    // Handing the answer over is better than losing it; the failure is counted.
                    Op::Answer { handoff, entry } => self.hand_over(*handoff, Some(entry)),
                    Op::Push { job, record } => {
                        if let Some(waiter) = self.waiters.remove(&job) {
                            let _ = waiter.send(Outcome::DeadLettered { record, stored: false });
                        }
                    }
                    Op::Upsert { gate: None, .. } | Op::Forget { .. } => {}
                }
            }
        }
    }

    fn set_health(&self, available: bool, error: Option<String>, failures: u64) {
        if let Ok(mut h) = self.health.lock() {
            h.available = available;
            h.failures += failures;
            if error.is_some() {
                h.last_error = error;
            }
        }
    }
}
