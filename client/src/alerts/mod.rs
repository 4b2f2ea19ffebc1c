//! Webhook alerts (feature `alerts`; the browser build has none and refuses the option).
//!
//! The driver's [`EventLog`](crate::events) hands the events that matter to an [`AlertTap`]
//! on the solve path; the tap puts them on a bounded queue without ever waiting (a full queue
//! drops and counts). A worker spawned on the client's runtime takes them from there:
//! [`trigger`] turns them into alerts (new reason, dead-letter rate, account error, budget,
//! circuit, store), [`coalesce`] deduplicates and rate-limits them per (kind, subject),
//! [`body`] writes each message and [`signature`] signs it (and checks it, for receivers), and [`deliver`] sends it to every webhook that
//! wants its kind, each in its own task with retries. None of it can slow or stop a solve.
//!
//! Closing the client sends what the worker holds (a message still gathering, for `gather_ms`,
//! goes at once) and waits for every delivery under way, at most [`CLOSE_WAIT`] (5 s); what is
//! still unsent then is named in a warning (the CLI prints it on stderr). A batch that fails in
//! less than `gather_ms` and exits is the case an operator most needs to hear about (issue 44,
//! finding 12).

mod body;
mod coalesce;
mod deliver;
mod signal;
mod signature;
mod trigger;

use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::options::alerts::AlertOptions;
use captcha_dlq_core::dlq::{Filter, Page};
use captcha_dlq_core::Secret;
use futures::channel::{mpsc, oneshot};
use futures::StreamExt;

pub(crate) use signal::AlertTap;
pub use signature::{verify_webhook, verify_webhook_at, WebhookError, DEFAULT_WEBHOOK_TOLERANCE, SIGNATURE_HEADER};

use crate::ops_metrics::OpsCounters;
use crate::runtime::Backends;
use coalesce::{Coalescer, Message};
use deliver::Delivery;
use signal::Signal;
use trigger::Trigger;

/// Records read per page when the worker learns the reasons already in the DLQ.
const SEED_PAGE: usize = 1_000;

/// How long closing a client waits, at most, for its alerts to be sent: 5 seconds.
pub const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What is still to be sent: the deliveries under way (each named by its kind and the webhook's
/// origin), and whether the worker has handed over everything it held. Shared by the worker and
/// the client's `close`, which waits for it to empty.
#[derive(Clone, Default)]
pub(crate) struct Outstanding(Arc<Mutex<Pending>>);

#[derive(Default)]
struct Pending {
    deliveries: BTreeMap<u64, String>,
    next: u64,
    worker_done: bool,
    waiters: Vec<oneshot::Sender<()>>,
}

impl Pending {
    fn settled(&self) -> bool {
        self.worker_done && self.deliveries.is_empty()
    }

    fn wake_if_settled(&mut self) {
        if self.settled() {
            for waiter in self.waiters.drain(..) {
                let _ = waiter.send(());
            }
        }
    }
}

impl Outstanding {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn begin(&self, what: String) -> u64 {
        let mut p = self.lock();
        p.next += 1;
        let id = p.next;
        p.deliveries.insert(id, what);
        id
    }

    fn end(&self, id: u64) {
        let mut p = self.lock();
        p.deliveries.remove(&id);
        p.wake_if_settled();
    }

    fn worker_done(&self) {
        let mut p = self.lock();
        p.worker_done = true;
        p.wake_if_settled();
    }

    /// Waits until everything is sent or `limit` passed; what is still unsent then.
    pub(crate) async fn wait(&self, runtime: &Arc<dyn crate::runtime::Runtime>, limit: Duration) -> Vec<String> {
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self.lock();
            if p.settled() {
                return Vec::new();
            }
            p.waiters.push(tx);
        }
        let _ = futures::future::select(rx, runtime.sleep(limit)).await;
        let p = self.lock();
        let mut left: Vec<String> = p.deliveries.values().cloned().collect();
        if !p.worker_done {
            left.push("the alerts still being gathered".to_string());
        }
        left
    }
}

/// Starts the worker for `options` on the backends' runtime; the tap goes to the driver.
/// The worker ends, after sending what it holds, when the driver drops the tap; the
/// [`Outstanding`] tells the client's `close` when all of it went.
pub(crate) fn start(
    options: &AlertOptions,
    backends: &Backends,
    keys: Vec<Secret>,
    owner: String,
    store_timeout: Duration,
    counters: Arc<OpsCounters>,
) -> (AlertTap, Outstanding) {
    let outstanding = Outstanding::default();
    let (tx, rx) = mpsc::channel(options.queue);
    let worker = Worker {
        options: options.clone(),
        backends: backends.clone(),
        keys,
        owner,
        store_timeout,
        counters: counters.clone(),
        trigger: Trigger::new(options.dead_letters_per_minute),
        coalescer: Coalescer::new(Duration::from_millis(options.gather_ms), Duration::from_millis(options.coalesce_ms)),
        outstanding: outstanding.clone(),
    };
    backends.runtime.spawn(Box::pin(worker.run(rx)));
    (AlertTap::new(tx, counters, options.budget_fraction), outstanding)
}

struct Worker {
    options: AlertOptions,
    backends: Backends,
    keys: Vec<Secret>,
    owner: String,
    store_timeout: Duration,
    counters: Arc<OpsCounters>,
    trigger: Trigger,
    coalescer: Coalescer,
    outstanding: Outstanding,
}

enum Wake {
    Signal(Option<Signal>),
    Due,
}

impl Worker {
    async fn run(mut self, mut queue: mpsc::Receiver<Signal>) {
        self.seed().await;
        loop {
            let now = self.backends.runtime.now();
            for message in self.coalescer.due(now) {
                self.send(&message);
            }
            let wake = match self.coalescer.next_due() {
                Some(due) => {
                    let sleep = self.backends.runtime.sleep(due.since(now).max(Duration::from_millis(1)));
                    match futures::future::select(queue.next(), sleep).await {
                        futures::future::Either::Left((signal, _)) => Wake::Signal(signal),
                        futures::future::Either::Right(_) => Wake::Due,
                    }
                }
                None => Wake::Signal(queue.next().await),
            };
            match wake {
                Wake::Signal(Some(signal)) => self.observe(signal),
                Wake::Signal(None) => {
                    // The client closed: what is held goes now, and `close` waits for it.
                    for message in self.coalescer.flush() {
                        self.send(&message);
                    }
                    self.outstanding.worker_done();
                    return;
                }
                Wake::Due => {}
            }
        }
    }

    fn observe(&mut self, signal: Signal) {
        for candidate in self.trigger.observe(signal) {
            self.coalescer.add(candidate);
        }
    }

    /// Learns the reasons of the records in the DLQ, which are not new. A store that does
    /// not answer leaves them unknown (said in the log): reasons are then new to this client.
    async fn seed(&mut self) {
        let store = self.backends.store.clone();
        let runtime = self.backends.runtime.clone();
        let every = Filter::all();
        let mut offset = 0;
        loop {
            let page = store.peek(&every, Page { offset, limit: SEED_PAGE }, runtime.now());
            let read = match futures::future::select(page, runtime.sleep(self.store_timeout)).await {
                futures::future::Either::Left((Ok(records), _)) => records,
                futures::future::Either::Left((Err(e), _)) => {
                    tracing::warn!(target: "captcha_dlq", "alerts: could not read the DLQ's reasons ({e}); every reason counts as new");
                    return;
                }
                futures::future::Either::Right(_) => {
                    tracing::warn!(target: "captcha_dlq", "alerts: the DLQ did not answer when its reasons were read; every reason counts as new");
                    return;
                }
            };
            let n = read.len();
            offset += n;
            self.trigger.seed(read.into_iter().map(|r| r.reason));
            if n < SEED_PAGE {
                return;
            }
        }
    }

    /// Sends `message` to every webhook that wants its kind, each in its own task.
    fn send(&self, message: &Message) {
        let kind = message.latest.kind;
        for webhook in self.options.webhooks.iter().filter(|w| w.wants(kind)) {
            let body = body::body(message, webhook.format, &self.owner, &self.keys);
            let delivery = Delivery {
                transport: self.backends.transport.clone(),
                runtime: self.backends.runtime.clone(),
                counters: self.counters.clone(),
                attempts: self.options.attempts,
                timeout: Duration::from_millis(self.options.timeout_ms),
            };
            let what = format!("{} to the webhook at {}", kind.as_str(), webhook.origin());
            let id = self.outstanding.begin(what);
            let outstanding = self.outstanding.clone();
            let webhook = webhook.clone();
            self.backends.runtime.spawn(Box::pin(async move {
                delivery.send(webhook, body, kind.as_str()).await;
                outstanding.end(id);
            }));
        }
    }
}
