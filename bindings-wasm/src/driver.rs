//! The browser driver: one `spawn_local` task owns the engine, performs its
//! actions (HTTP through `fetch`, journal and DLQ writes through the store),
//! sleeps on a JS timer until the engine's next timeout, and feeds back
//! responses and the time. The same loop as the native tokio driver.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;
use std::time::Duration;

use captcha_dlq_core::dlq::{DeadLetterRecord, DlqStore};
use captcha_dlq_core::engine::Event;
use captcha_dlq_core::{
    Action, Engine, HttpResponse, InvalidTask, JobId, JournalEntry, JournalOp, RequestId, Solution, Task,
    TransportError,
};
use futures::channel::{mpsc, oneshot};
use futures::{FutureExt, StreamExt};

use crate::clock::{now, sleep};
use crate::store::JsStore;
use crate::transport::Transport;

/// How a job ended.
#[derive(Debug)]
pub(crate) enum JobOutcome {
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
        task: Box<Task>,
        labels: BTreeMap<String, String>,
        accepted: Accepted,
        done: Done,
    },
    /// Replay a leased record; nothing is written to the store (the replayer settles the lease).
    Replay {
        record: Box<DeadLetterRecord>,
        attempts: u32,
        accepted: Accepted,
        done: Done,
    },
    Recover {
        entry: Box<JournalEntry>,
        done: Done,
    },
    Cancel {
        job: JobId,
    },
    /// Lets submissions flow again after an account error was fixed (commands run in order).
    ResetCircuit,
    Shutdown {
        ack: oneshot::Sender<()>,
    },
}

/// Receives every engine event (the JS `onEvent` callback).
pub(crate) type EventSink = Rc<dyn Fn(&Event)>;

type Response = (RequestId, Result<HttpResponse, TransportError>);

pub(crate) struct Driver {
    engine: Engine,
    transport: Transport,
    store: Rc<JsStore>,
    owner: String,
    events: Option<EventSink>,
    waiters: HashMap<JobId, Done>,
    replays: HashSet<JobId>,
    responses_tx: mpsc::UnboundedSender<Response>,
    responses_rx: mpsc::UnboundedReceiver<Response>,
}

impl Driver {
    pub(crate) fn new(
        engine: Engine,
        transport: Transport,
        store: Rc<JsStore>,
        owner: String,
        events: Option<EventSink>,
    ) -> Driver {
        let (responses_tx, responses_rx) = mpsc::unbounded();
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

    /// Runs until `Shutdown` or until every client handle is gone. Jobs still in
    /// flight then stay in the journal, and their waiters learn the client closed.
    pub(crate) async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) {
        loop {
            self.perform_actions().await;
            let wait = match self.engine.poll_timeout() {
                Some(at) => at.since(now()),
                None => Duration::from_secs(3600),
            };
            let mut timer = Box::pin(sleep(wait).fuse());
            futures::select_biased! {
                response = self.responses_rx.next() => {
                    if let Some((rid, result)) = response {
                        self.engine.handle_response(rid, result, now());
                        // Take every answer already here before acting, so batches line up.
                        while let Ok((rid, result)) = self.responses_rx.try_recv() {
                            self.engine.handle_response(rid, result, now());
                        }
                    }
                }
                command = commands.next() => match command {
                    Some(Command::Shutdown { ack }) => {
                        let _ = ack.send(());
                        return;
                    }
                    Some(cmd) => self.command(cmd),
                    None => return,
                },
                () = timer => {}
            }
        }
    }

    fn command(&mut self, cmd: Command) {
        let now = now();
        match cmd {
            Command::Submit { task, labels, accepted, done } => match self.engine.submit(*task, labels, now) {
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
            Command::Recover { entry, done } => {
                let job = self.engine.recover(*entry, now);
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
                    wasm_bindgen_futures::spawn_local(async move {
                        let result = transport.execute(request).await;
                        let _ = tx.unbounded_send((request_id, result));
                    });
                }
                Action::Journal(JournalOp::Upsert(mut entry)) => {
                    entry.owner = Some(self.owner.clone());
                    if let Err(e) = self.store.journal_upsert(&entry).await {
                        // The task goes on; only its crash-safety is lost, and the event says so.
                        self.warn(&format!("journal write failed for {}: {e}", entry.id));
                    }
                }
                Action::Journal(JournalOp::Forget { id }) => {
                    if let Err(e) = self.store.journal_forget(&id).await {
                        self.warn(&format!("journal removal failed for {id}: {e}"));
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
                            Ok(_) => true,
                            Err(e) => {
                                self.warn(&format!("DLQ write failed for {}: {e}", record.id));
                                false
                            }
                        }
                    };
                    if let Some(done) = self.waiters.remove(&job) {
                        let _ = done.send(JobOutcome::DeadLettered { record: Box::new(record), stored });
                    }
                }
                Action::Event(event) => {
                    if let Some(sink) = &self.events {
                        sink(&event);
                    }
                }
            }
        }
    }

    /// A store failure the engine does not know about, reported to the console.
    fn warn(&self, message: &str) {
        web_sys_console_warn(message);
    }
}

fn web_sys_console_warn(message: &str) {
    let console = js_sys::Reflect::get(&js_sys::global(), &"console".into()).ok();
    if let Some(console) = console {
        if let Ok(warn) = js_sys::Reflect::get(&console, &"warn".into()) {
            if let Some(f) = warn.dyn_ref::<js_sys::Function>() {
                let _ = f.call1(&console, &format!("captcha-dlq: {message}").into());
            }
        }
    }
}

use wasm_bindgen::JsCast;
