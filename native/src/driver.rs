//! The tokio driver: one task owns the engine, performs its actions (HTTP via
//! the transport, journal and DLQ writes via the store), sleeps until the
//! engine's next timeout, and feeds back responses and the time.
//!
//! Callers talk to it through [`Command`]s; each submitted job gets a oneshot
//! channel that receives its [`JobOutcome`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use captcha_dlq_core::dlq::{DeadLetterRecord, DlqStore};
use captcha_dlq_core::engine::Event;
use captcha_dlq_core::{
    Action, Engine, HttpResponse, InvalidTask, JobId, JournalEntry, JournalOp, RequestId, Solution, Task, Timestamp,
    TransportError,
};
use std::collections::BTreeMap;
use tokio::sync::{mpsc, oneshot};

use crate::transport::Transport;

/// The current wall-clock time as the engine counts it.
pub(crate) fn now() -> Timestamp {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    Timestamp::from_unix_millis(u64::try_from(ms).unwrap_or(u64::MAX))
}

/// How a job ended.
#[derive(Debug)]
pub enum JobOutcome {
    Solved {
        id: String,
        labels: BTreeMap<String, String>,
        solution: Solution,
    },
    /// `stored` is false when writing the record failed (the record is here, so it is not lost).
    DeadLettered {
        record: Box<DeadLetterRecord>,
        stored: bool,
    },
}

pub(crate) type Accepted = oneshot::Sender<Result<JobId, InvalidTask>>;
pub(crate) type Done = oneshot::Sender<JobOutcome>;

pub(crate) enum Command {
    Submit {
        task: Task,
        labels: BTreeMap<String, String>,
        accepted: Accepted,
        done: Done,
    },
    /// Replay a leased record; its outcome goes to `done` and nothing is written to the store
    /// (the replayer completes or abandons the lease).
    Replay {
        record: Box<DeadLetterRecord>,
        attempts: u32,
        accepted: Accepted,
        done: Done,
    },
    Recover {
        entry: Box<JournalEntry>,
        resume: bool,
        done: Done,
    },
    Cancel {
        job: JobId,
    },
    ResetCircuit,
    Shutdown {
        ack: oneshot::Sender<()>,
    },
}

pub(crate) type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;

pub(crate) struct Driver {
    pub(crate) engine: Engine,
    pub(crate) transport: Transport,
    pub(crate) store: Arc<dyn DlqStore>,
    pub(crate) owner: String,
    pub(crate) events: Option<EventSink>,
    waiters: HashMap<JobId, Done>,
    replays: HashSet<JobId>,
    responses_tx: mpsc::UnboundedSender<(RequestId, Result<HttpResponse, TransportError>)>,
    responses_rx: mpsc::UnboundedReceiver<(RequestId, Result<HttpResponse, TransportError>)>,
}

impl Driver {
    pub(crate) fn new(
        engine: Engine,
        transport: Transport,
        store: Arc<dyn DlqStore>,
        owner: String,
        events: Option<EventSink>,
    ) -> Driver {
        let (responses_tx, responses_rx) = mpsc::unbounded_channel();
        Driver {
            engine,
            transport,
            store,
            owner,
            events,
            waiters: HashMap::new(),
            replays: HashSet::new(),
            responses_tx,
            responses_rx,
        }
    }

    /// Runs until `Shutdown` or until every client handle is dropped. Jobs still in
    /// flight then stay in the journal, and their waiters learn the client closed.
    pub(crate) async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) {
        loop {
            self.perform_actions().await;
            let sleep = match self.engine.poll_timeout() {
                Some(at) => at.since(now()),
                None => Duration::from_secs(3600),
            };
            tokio::select! {
                biased;
                response = self.responses_rx.recv() => {
                    if let Some((rid, result)) = response {
                        self.engine.handle_response(rid, result, now());
                        // Take every answer already here before acting, so batches line up.
                        while let Ok((rid, result)) = self.responses_rx.try_recv() {
                            self.engine.handle_response(rid, result, now());
                        }
                    }
                }
                command = commands.recv() => match command {
                    Some(Command::Shutdown { ack }) => {
                        let _ = ack.send(());
                        return;
                    }
                    Some(cmd) => self.command(cmd),
                    None => return,
                },
                () = tokio::time::sleep(sleep) => {}
            }
        }
    }

    fn command(&mut self, cmd: Command) {
        let now = now();
        match cmd {
            Command::Submit { task, labels, accepted, done } => match self.engine.submit(task, labels, now) {
                Ok(job) => {
                    self.waiters.insert(job, done);
                    let _ = accepted.send(Ok(job));
                }
                Err(e) => {
                    let _ = accepted.send(Err(e));
                }
            },
            Command::Replay { record, attempts, accepted, done } => match self.engine.replay(*record, attempts, now) {
                Ok(job) => {
                    self.waiters.insert(job, done);
                    self.replays.insert(job);
                    let _ = accepted.send(Ok(job));
                }
                Err(e) => {
                    let _ = accepted.send(Err(e));
                }
            },
            Command::Recover { entry, resume, done } => {
                let job = if resume { self.engine.recover(*entry, now) } else { self.engine.interrupt(*entry, now) };
                self.waiters.insert(job, done);
            }
            Command::Cancel { job } => {
                self.engine.cancel(job, now);
            }
            Command::ResetCircuit => self.engine.reset_circuit(),
            Command::Shutdown { .. } => {}
        }
    }

    async fn perform_actions(&mut self) {
        while let Some(action) = self.engine.poll_action(now()) {
            match action {
                Action::Send { request_id, request } => {
                    let transport = self.transport.clone();
                    let tx = self.responses_tx.clone();
                    tokio::spawn(async move {
                        let result = transport.execute(request).await;
                        let _ = tx.send((request_id, result));
                    });
                }
                Action::Journal(JournalOp::Upsert(mut entry)) => {
                    entry.owner = Some(self.owner.clone());
                    if let Err(e) = self.store.journal_upsert(&entry).await {
                        // The task goes on; only its crash-safety is lost, and we say so.
                        tracing::error!(target: "captcha_dlq", id = %entry.id, "journal write failed: {e}");
                    }
                }
                Action::Journal(JournalOp::Forget { id }) => {
                    if let Err(e) = self.store.journal_forget(&id).await {
                        tracing::error!(target: "captcha_dlq", %id, "journal removal failed: {e}");
                    }
                }
                Action::Solved { job, id, labels, solution } => {
                    self.replays.remove(&job);
                    if let Some(done) = self.waiters.remove(&job) {
                        let _ = done.send(JobOutcome::Solved { id, labels, solution });
                    }
                }
                Action::DeadLetter { job, record } => {
                    let stored = if self.replays.remove(&job) {
                        false // the replayer abandons the lease with this record
                    } else {
                        match self.store.push(record.clone()).await {
                            Ok(outcome) => {
                                for evicted in outcome.evicted {
                                    tracing::warn!(target: "captcha_dlq", %evicted, "DLQ at capacity: oldest record dropped");
                                }
                                true
                            }
                            Err(e) => {
                                tracing::error!(target: "captcha_dlq", id = %record.id, "DLQ write failed: {e}");
                                false
                            }
                        }
                    };
                    if let Some(done) = self.waiters.remove(&job) {
                        let _ = done.send(JobOutcome::DeadLettered { record: Box::new(record), stored });
                    }
                }
                Action::Event(event) => {
                    log_event(&event);
                    if let Some(sink) = &self.events {
                        sink(&event);
                    }
                }
            }
        }
    }
}

fn log_event(event: &Event) {
    if event.is_warning() {
        tracing::warn!(target: "captcha_dlq", event = event.name(), "{event}");
    } else {
        tracing::debug!(target: "captcha_dlq", event = event.name(), "{event}");
    }
}
