//! Webhook alerts (native only; the browser build has none and refuses the option).
//!
//! The driver's [`EventLog`](crate::events) hands the events that matter to an [`AlertTap`]
//! on the solve path; the tap puts them on a bounded queue without ever waiting (a full queue
//! drops and counts). A worker spawned on the client's runtime takes them from there:
//! [`trigger`] turns them into alerts (new reason, dead-letter rate, account error, budget,
//! circuit, store), [`coalesce`] deduplicates and rate-limits them per (kind, subject),
//! [`body`] writes each message and [`signature`] signs it (and checks it, for receivers), and [`deliver`] sends it to every webhook that
//! wants its kind, each in its own task with retries. None of it can slow or stop a solve.

mod body;
mod coalesce;
mod deliver;
mod signal;
mod signature;
mod trigger;

use core::time::Duration;
use std::sync::Arc;

use captcha_dlq_core::alerts::AlertOptions;
use captcha_dlq_core::dlq::{Filter, Page};
use captcha_dlq_core::Secret;
use futures::channel::mpsc;
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

/// Starts the worker for `options` on the backends' runtime; the tap goes to the driver.
/// The worker ends, after sending what it holds, when the driver drops the tap.
pub(crate) fn start(
    options: &AlertOptions,
    backends: &Backends,
    keys: Vec<Secret>,
    owner: String,
    store_timeout: Duration,
    counters: Arc<OpsCounters>,
) -> AlertTap {
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
    };
    backends.runtime.spawn(Box::pin(worker.run(rx)));
    AlertTap::new(tx, counters, options.budget_fraction)
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
                    // The client closed: what is held goes now.
                    for message in self.coalescer.flush() {
                        self.send(&message);
                    }
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
            self.backends.runtime.spawn(Box::pin(delivery.send(webhook.clone(), body, kind.as_str())));
        }
    }
}
