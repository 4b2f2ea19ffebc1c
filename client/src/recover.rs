//! Recovering the journal: what a dead client (or a cancelled caller) left
//! in flight is finished and handed over, one answer at a time.
//!
//! An entry is taken over when its owner is gone (another process that
//! died, a client of this process that closed, a fleet member whose heartbeat
//! stopped), when it has none (an adopter released it with its answer, see
//! `adopt`), or when it belongs to a job of this client that runs without a
//! waiter (its caller cancelled after the provider had it). Another owner's
//! entry is taken through the store's claim (`DlqStore::journal_claim`), so a
//! recovery and an adopter, or two recoveries, never both take one. An entry that already holds an answer is handed over at
//! once (again, recognisably: same record id and provider task id); one with
//! a provider task id is polled; one without is submitted. Each answer goes
//! out as it comes, and its entry goes only once the caller acknowledges it.

use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use captcha_dlq_core::class::reason;
use captcha_dlq_core::engine::Expired;
use captcha_dlq_core::{JournalEntry, Solution};
use futures::channel::{mpsc, oneshot};
use futures::stream::{FuturesUnordered, Stream, StreamExt};
use serde::Serialize;

use crate::answer::Answer;
use crate::client::Client;
use crate::driver::{Claim, Command, Delivery, Outcome, Receipt};
use crate::error::{Error, Result};
use crate::runtime::BoxFuture;
use crate::stream_end::StreamEnd;

/// One recovered task: its answer (acknowledge the receipt once it is handed over) or why
/// it failed (`Error::SolveFailed` with its DLQ record).
///
/// `A` is the answer: a [`Delivery`] as the stream yields it, or the bare [`Solution`] once
/// it is handed over ([`RecoverItem::handed_over`]).
#[derive(Debug)]
pub struct RecoverItem<A = Delivery> {
    pub id: String,
    pub key: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub outcome: Result<A>,
}

impl RecoverItem {
    /// The item as a caller keeps it after taking its answer, and the answer's receipt (to
    /// acknowledge once the answer is safe with the caller).
    pub fn handed_over(self) -> (RecoverItem<Solution>, Option<Receipt>) {
        let (outcome, receipt) = match self.outcome {
            Ok(d) => (Ok(d.solution), Some(d.receipt)),
            Err(e) => (Err(e), None),
        };
        (RecoverItem { id: self.id, key: self.key, labels: self.labels, outcome }, receipt)
    }
}

/// Which journal entries a recovery takes, and what it does with them.
#[derive(Clone, Debug)]
pub struct RecoverOptions {
    /// Finish the tasks (poll, resubmit, hand answers over); `false`: dead-letter them as
    /// `Interrupted` (answers already in the journal are still handed over).
    pub resume: bool,
    /// Only entries whose key starts with this (a batch's own tasks).
    pub key_prefix: Option<String>,
    /// Only entries of this owner (a dashboard's "recover" on one dead client).
    pub owner: Option<String>,
    /// Solve again (a new, paid submission) each task whose answer in the journal is past its
    /// life, instead of dead-lettering it as `TTLExpired` with the answer and its cost kept
    /// (`captcha-dlq recover --resolve-expired`).
    pub resolve_expired: bool,
}

impl Default for RecoverOptions {
    fn default() -> Self {
        RecoverOptions { resume: true, key_prefix: None, owner: None, resolve_expired: false }
    }
}

/// What a recovery found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RecoverSummary {
    /// Entries taken over.
    pub found: u64,
    /// Entries left to owners that are alive.
    pub skipped_live: u64,
    pub solved: u64,
    pub dead_lettered: u64,
    /// Of `dead_lettered`: answers past their life, kept in their `TTLExpired` dead letter.
    pub expired: u64,
}

/// Recovered tasks as they end; the summary is complete once the stream has ended.
#[must_use = "a stream does nothing unless polled"]
pub struct RecoverStream {
    items: mpsc::UnboundedReceiver<Result<RecoverItem>>,
    summary: Arc<Mutex<RecoverSummary>>,
    end: StreamEnd,
}

impl core::fmt::Debug for RecoverStream {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RecoverStream").field("summary", &self.summary()).finish_non_exhaustive()
    }
}

impl RecoverStream {
    pub fn summary(&self) -> RecoverSummary {
        self.summary.lock().map(|s| *s).unwrap_or_default()
    }
}

impl Stream for RecoverStream {
    type Item = Result<RecoverItem>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = futures::ready!(self.items.poll_next_unpin(cx));
        self.end.poll_after(next, cx)
    }
}

impl Client {
    /// Recovers the journal; see the module documentation.
    pub fn recover_stream(&self, options: RecoverOptions) -> RecoverStream {
        let (tx, rx) = mpsc::unbounded();
        let summary = Arc::new(Mutex::new(RecoverSummary::default()));
        let run = Recoverer { client: self.clone(), tx, summary: summary.clone() };
        self.backends().runtime.spawn(Box::pin(run.run(options)));
        RecoverStream { items: rx, summary, end: StreamEnd::new(self.clone()) }
    }

    /// Recovers the journal and returns the counts, every answer and every failure (the
    /// shape every language's `recover` returns); each answer is acknowledged.
    pub async fn recover(&self, options: RecoverOptions) -> Result<RecoverResult> {
        let mut stream = self.recover_stream(options);
        let mut collected = RecoverCollector::default();
        while let Some(item) = stream.next().await {
            let (item, receipt) = item?.handed_over();
            if let Some(receipt) = receipt {
                receipt.ack();
            }
            collected.push(item);
        }
        // The stream ended after their journal entries were gone (a second recover finds none).
        Ok(collected.finish(stream.summary()))
    }
}

struct Recoverer {
    client: Client,
    tx: mpsc::UnboundedSender<Result<RecoverItem>>,
    summary: Arc<Mutex<RecoverSummary>>,
}

type Waiting = BoxFuture<'static, (JournalEntry, Result<Outcome>)>;

impl Recoverer {
    fn count(&self, f: impl FnOnce(&mut RecoverSummary)) {
        if let Ok(mut s) = self.summary.lock() {
            f(&mut s);
        }
    }

    async fn run(self, options: RecoverOptions) {
        let resume = options.resume;
        let expired = if options.resolve_expired { Expired::Resolve } else { Expired::DeadLetter };
        let client = self.client.clone();
        let store = client.backends().store.clone();
        // Retried while the store is slow or locked (for `store.retry_for`), like the batch's
        // other start-up reads: a store that answers late is a pause, not a failed recover.
        let entries = match client.store_write(|| store.journal_entries()).await {
            Ok(entries) => entries,
            Err(e) => {
                let _ = self.tx.unbounded_send(Err(e));
                return;
            }
        };
        let runtime = client.backends().runtime.clone();
        let liveness = client.backends().liveness.clone();
        let grace = Duration::from_millis(client.options().engine().retry.task_deadline_ms);
        // The fleet ledger's heartbeat rows (read once, on the ledger's clock): an owner whose
        // row stopped syncing is gone whatever its host, within the owners' TTL instead of the
        // task deadline. Without a row (no ledger, the fleet off, a row long forgotten) the
        // front end's liveness decides alone.
        let heartbeats = client.fleet_view().await.ok().flatten();
        let silent = |owner: &str| {
            heartbeats
                .as_ref()
                .is_some_and(|view| view.owners.iter().any(|row| row.owner == owner && !row.alive(view.now_ms)))
        };
        let mut waiting: FuturesUnordered<Waiting> = FuturesUnordered::new();
        let wanted = |entry: &JournalEntry| {
            let key_wanted = match &options.key_prefix {
                None => true,
                Some(prefix) => entry.key.as_deref().is_some_and(|k| k.starts_with(prefix.as_str())),
            };
            key_wanted && options.owner.as_ref().is_none_or(|owner| entry.owner.as_ref() == Some(owner))
        };
        for entry in entries.into_iter().filter(wanted) {
            let now = runtime.now();
            let mine = entry.owner.as_deref() == Some(client.owner());
            let claim = if mine {
                match self.ask(|done, adopted| Command::Adopt { id: entry.id.clone(), done, adopted }).await {
                    Some((Claim::Unknown, _)) => self.take_over(&entry, resume, expired).await,
                    other => other,
                }
            } else {
                let gone = match entry.owner.as_deref() {
                    None => true,
                    Some(owner) => silent(owner) || liveness.is_gone(owner, entry.updated_at, now, grace).await,
                };
                if gone {
                    // Taken through the store's claim: of this recovery, another one and the
                    // fleet's adopters, exactly one gets the entry (the others find its owner
                    // changed and leave it).
                    let claimed = client
                        .store_write(|| store.journal_claim(&entry.id, entry.owner.as_deref(), Some(client.owner())))
                        .await;
                    match claimed {
                        Ok(Some(claimed)) => self.take_over(&claimed, resume, expired).await,
                        Ok(None) => Some((Claim::Busy, None)),
                        Err(e) => {
                            let _ = self.tx.unbounded_send(Err(e));
                            return;
                        }
                    }
                } else {
                    Some((Claim::Busy, None))
                }
            };
            match claim {
                Some((Claim::Taken, Some(done))) => {
                    self.count(|s| s.found += 1);
                    waiting.push(Box::pin(async move { (entry, done.await.map_err(|_| Error::Closed)) }));
                }
                Some(_) => self.count(|s| s.skipped_live += 1),
                None => {
                    let _ = self.tx.unbounded_send(Err(Error::Closed));
                    return;
                }
            }
        }
        while let Some((entry, outcome)) = waiting.next().await {
            let outcome = match outcome {
                Ok(outcome) => self.client.good_or_expired(outcome).await.into_delivery(),
                Err(e) => Err(e),
            };
            match &outcome {
                Ok(_) => self.count(|s| s.solved += 1),
                Err(Error::SolveFailed { record, .. }) => {
                    let expired = record.solution.is_some() && record.reason == reason::TTL_EXPIRED;
                    self.count(|s| {
                        s.dead_lettered += 1;
                        s.expired += u64::from(expired);
                    })
                }
                Err(_) => {}
            }
            let item = RecoverItem { id: entry.id, key: entry.key, labels: entry.labels.to_map(), outcome };
            let _ = self.tx.unbounded_send(Ok(item));
        }
    }

    async fn take_over(
        &self,
        entry: &JournalEntry,
        resume: bool,
        expired: Expired,
    ) -> Option<(Claim, Option<oneshot::Receiver<Outcome>>)> {
        let entry = Box::new(entry.clone());
        self.ask(move |done, accepted| Command::Recover { entry, resume, expired, done, accepted }).await
    }

    /// Sends a claiming command; `None` if the client closed.
    async fn ask(
        &self,
        command: impl FnOnce(oneshot::Sender<Outcome>, oneshot::Sender<Claim>) -> Command,
    ) -> Option<(Claim, Option<oneshot::Receiver<Outcome>>)> {
        let (done, done_rx) = oneshot::channel();
        let (claimed, claimed_rx) = oneshot::channel();
        self.client.send(command(done, claimed)).ok()?;
        let claim = claimed_rx.await.ok()?;
        Some((claim, (claim == Claim::Taken).then_some(done_rx)))
    }
}

/// What `recover` returns: the counts, each answer, and each task that failed (with its
/// error: `SolveFailed` with its DLQ record).
#[derive(Debug)]
pub struct RecoverResult {
    pub report: RecoverSummary,
    pub solved: Vec<Answer>,
    pub failed: Vec<RecoverItem<Solution>>,
}

/// A recovery's items as they are handed over, into a [`RecoverResult`].
#[derive(Debug, Default)]
pub struct RecoverCollector {
    solved: Vec<Answer>,
    failed: Vec<RecoverItem<Solution>>,
}

impl RecoverCollector {
    pub fn push(&mut self, item: RecoverItem<Solution>) {
        match item.outcome {
            Ok(solution) => self.solved.push(Answer { id: item.id, key: item.key, labels: item.labels, solution }),
            Err(_) => self.failed.push(item),
        }
    }

    /// The result, with the stream's final summary; `solved` counts the answers handed over.
    pub fn finish(self, mut report: RecoverSummary) -> RecoverResult {
        report.solved = self.solved.len() as u64;
        RecoverResult { report, solved: self.solved, failed: self.failed }
    }
}
