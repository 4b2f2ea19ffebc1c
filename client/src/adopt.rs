//! Adoption: a running client finishes what a dead member of its fleet left in the journal.
//!
//! Every fleet member syncs a heartbeat row into the store's fleet ledger (`core::fleet`). A
//! row that has not synced for [`OWNER_TTL_MS`] (on the ledger's clock: Redis's `TIME`, the
//! SQLite file's host) is a dead owner. Every [`ADOPT_PERIOD_MS`] a client reads the ledger's
//! view and, when a dead owner shares one of its accounts, the journal; it then claims up to
//! [`ADOPT_MAX_PER_ROUND`] of that owner's entries ([`DlqStore::journal_claim`]: a
//! compare-and-set of the entry's owner, so of two adopters, or an adopter and `recover`, one
//! gets each entry) and resumes them exactly as `recover` does: the provider is polled with
//! the entry's task id, a task is submitted again only when it has none, an answer already in
//! the entry is handed over as it is. So a paid answer is fetched while the provider still
//! holds it, without an operator running `recover`.
//!
//! Who takes an adopted answer (exactly one consumer):
//! - with an `on_adopted` hook, the hook; the entry is forgotten once the hook returns `Ok` (as
//!   a receipt's acknowledgement, settling its key). A hook that fails did not take it: the
//!   entry is released as below;
//! - without one, nobody in this process asked for it: the answer is written into the entry
//!   (as every answer is before it is handed over) and the entry is *released* (its owner
//!   cleared), so that `recover` anywhere, or the resumed `captcha-dlq batch` run (which
//!   recovers its own keys), takes it, once, through the same claim.
//!
//! Dead letters of adopted tasks go to the DLQ as any other. An entry is adopted only when the
//! dead owner's row names the account (provider and key, by the ledger's keyed hash) this client
//! has under the entry's provider name: a client with another key could neither poll the task
//! nor should it pay for it again. A client never adopts its own entries, nor those of an owner
//! whose row is alive or that has no row (a client outside the fleet: `recover` and the front
//! end's liveness decide for those).

use core::time::Duration;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Weak};

use captcha_dlq_core::dlq::DlqStore;
use captcha_dlq_core::engine::Expired;
use captcha_dlq_core::fleet::{FleetView, HEARTBEAT_MS};
use captcha_dlq_core::JournalEntry;
use futures::channel::oneshot;

use crate::adopted::{AdoptedAnswer, AdoptedHook, AdoptionStats, SharedStats};
use crate::driver::{Claim, Command, Outcome};
use crate::inner::{Client, Inner};
use crate::runtime::{BoxFuture, Runtime};

pub use captcha_dlq_core::fleet::OWNER_TTL_MS;

/// How often a client looks for dead owners: once a heartbeat period, so a dead owner's entries
/// are taken over within its TTL and one period (15 + 5 s) of its last heartbeat.
pub const ADOPT_PERIOD_MS: u64 = HEARTBEAT_MS;
/// Most entries one round claims: a fleet that lost a busy member takes its work over a few
/// rounds rather than all at once, and a round's store calls stay short.
pub const ADOPT_MAX_PER_ROUND: usize = 64;

/// The adoption loop of one client: what it needs besides the client itself, which it holds
/// weakly so that it never keeps a client alive.
pub(crate) struct Adopter {
    pub(crate) client: Weak<Inner>,
    pub(crate) runtime: Arc<dyn Runtime>,
    /// This client's account id (the ledger's keyed hash) by provider name.
    pub(crate) accounts: HashMap<String, String>,
    pub(crate) hook: Option<AdoptedHook>,
    pub(crate) stats: SharedStats,
}

/// A dead owner already searched to the end, by its last heartbeat: it writes nothing while
/// dead, so its entries cannot reappear; a row that syncs again has another heartbeat.
type Drained = BTreeSet<(String, u64)>;

impl Adopter {
    pub(crate) async fn run(self) {
        let period = Duration::from_millis(ADOPT_PERIOD_MS);
        let mut drained = Drained::new();
        loop {
            self.runtime.sleep(period).await;
            let Some(inner) = self.client.upgrade() else { return };
            let client = Client { inner };
            if !self.round(&client, &mut drained).await {
                return;
            }
        }
    }

    fn count(&self, f: impl FnOnce(&mut AdoptionStats)) {
        if let Ok(mut stats) = self.stats.lock() {
            f(&mut stats);
        }
    }

    /// One round; `false` once the client is closed.
    async fn round(&self, client: &Client, drained: &mut Drained) -> bool {
        self.count(|s| s.rounds += 1);
        let view = match client.fleet_view().await {
            Ok(Some(view)) => view,
            Ok(None) => return false,
            Err(crate::Error::Closed) => return false,
            Err(e) => {
                tracing::debug!(target: "captcha_dlq", error = %e, "fleet ledger not read; adoption tries again next round");
                return true;
            }
        };
        let dead = self.dead_owners(client.owner(), &view);
        // Owners gone from the view (their rows forgotten) or alive again are not kept.
        drained.retain(|(owner, heartbeat)| dead.get(owner).is_some_and(|row| row.heartbeat == *heartbeat));
        if dead.iter().all(|(owner, row)| drained.contains(&(owner.clone(), row.heartbeat))) {
            return true;
        }
        let store = client.backends().store.clone();
        let entries = match client.store_call(store.journal_entries()).await {
            Ok(entries) => entries,
            Err(e) => {
                tracing::debug!(target: "captcha_dlq", error = %e, "journal not read; adoption tries again next round");
                return true;
            }
        };
        let mut left: HashMap<&str, usize> = HashMap::new();
        let mut candidates = Vec::new();
        for entry in entries {
            let Some(owner) = entry.owner.as_deref() else { continue };
            let Some(row) = dead.get(owner) else { continue };
            // Only an entry of a provider whose account this client shares with the dead owner.
            if !self.accounts.get(&entry.provider).is_some_and(|account| row.accounts.contains(account)) {
                continue;
            }
            *left.entry(row.owner.as_str()).or_default() += 1;
            candidates.push(entry);
        }
        // Entries settled this round (claimed, or found taken by another), per owner.
        let mut settled: HashMap<String, usize> = HashMap::new();
        for entry in candidates.into_iter().take(ADOPT_MAX_PER_ROUND) {
            let owner = entry.owner.clone().unwrap_or_default();
            match self.adopt(client, &store, entry, &owner).await {
                Step::Settled => *settled.entry(owner).or_default() += 1,
                Step::Again => {}
                Step::Closed => return false,
            }
        }
        for (owner, row) in &dead {
            if settled.get(owner).copied().unwrap_or(0) >= left.get(owner.as_str()).copied().unwrap_or(0) {
                drained.insert((owner.clone(), row.heartbeat));
            }
        }
        true
    }

    /// The owners whose row stopped syncing (on the ledger's clock), other than this client,
    /// with the accounts they share with it.
    fn dead_owners(&self, me: &str, view: &FleetView) -> HashMap<String, DeadOwner> {
        let mine: BTreeSet<&String> = self.accounts.values().collect();
        view.owners
            .iter()
            .filter(|row| row.owner != me && !row.alive(view.now_ms))
            .filter_map(|row| {
                let accounts: BTreeSet<String> =
                    row.in_flight.keys().filter(|account| mine.contains(account)).cloned().collect();
                (!accounts.is_empty()).then(|| {
                    let dead = DeadOwner { owner: row.owner.clone(), heartbeat: row.heartbeat_ms, accounts };
                    (row.owner.clone(), dead)
                })
            })
            .collect()
    }

    /// Claims `entry` from `owner` and resumes it.
    async fn adopt(&self, client: &Client, store: &Arc<dyn DlqStore>, entry: JournalEntry, owner: &str) -> Step {
        let me = client.owner().to_string();
        let id = entry.id.clone();
        let claimed = client.store_call(store.journal_claim(&id, Some(owner), Some(&me))).await;
        let entry = match claimed {
            Ok(Some(entry)) => entry,
            Ok(None) => {
                self.count(|s| s.lost_races += 1);
                return Step::Settled;
            }
            Err(e) => {
                tracing::debug!(target: "captcha_dlq", id = %id, error = %e, "claim not answered; adoption tries again next round");
                return Step::Again;
            }
        };
        self.count(|s| s.claimed += 1);
        tracing::info!(target: "captcha_dlq", id = %id, from = %owner, "adopting a journal entry of a fleet member whose heartbeat stopped");
        let (key, labels) = (entry.key.clone(), entry.labels.to_map());
        let (done, done_rx) = oneshot::channel();
        let (accepted, accepted_rx) = oneshot::channel();
        // An answer past its life is a dead letter `TTLExpired` (the engine decides), never adopted as good.
        let expired = Expired::DeadLetter;
        let sent = client.send(Command::Recover { entry: Box::new(entry), resume: true, expired, done, accepted });
        match (sent, accepted_rx.await) {
            (Ok(()), Ok(Claim::Taken)) => {
                let deliver = Deliver {
                    id,
                    key,
                    labels,
                    me,
                    store: store.clone(),
                    client: client.clone(),
                    hook: self.hook.clone(),
                    stats: self.stats.clone(),
                };
                self.runtime.spawn(deliver.run(done_rx));
                Step::Settled
            }
            // A job of this client already works on it (its own `recover` took it meanwhile).
            (Ok(()), Ok(_)) => Step::Settled,
            _ => {
                // Closed before the driver took it: give it back for `recover`.
                release(client, store, &id, &me).await;
                Step::Closed
            }
        }
    }
}

/// How one entry of a round went.
enum Step {
    /// Claimed and resumed, or found taken by another.
    Settled,
    /// Not claimed (the store did not answer): the next round tries again.
    Again,
    Closed,
}

struct DeadOwner {
    owner: String,
    heartbeat: u64,
    /// The accounts it synced that this client has too.
    accounts: BTreeSet<String>,
}

/// Waits for one adopted task's outcome and gives its answer to exactly one consumer.
struct Deliver {
    id: String,
    key: Option<String>,
    labels: BTreeMap<String, String>,
    me: String,
    store: Arc<dyn DlqStore>,
    /// Held until the answer is taken or released (the release retries through the client).
    client: Client,
    hook: Option<AdoptedHook>,
    stats: SharedStats,
}

impl Deliver {
    fn count(&self, f: impl FnOnce(&mut AdoptionStats)) {
        if let Ok(mut stats) = self.stats.lock() {
            f(&mut stats);
        }
    }

    fn run(self, done: oneshot::Receiver<Outcome>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let outcome = match done.await {
                Ok(outcome) => Ok(self.client.good_or_expired(outcome).await),
                Err(e) => Err(e),
            };
            let delivery = match outcome {
                Ok(Outcome::Solved(delivery)) => *delivery,
                Ok(Outcome::DeadLettered { .. } | Outcome::FailedAgain(_)) => {
                    self.count(|s| s.dead_lettered += 1);
                    return;
                }
                // Taken over again (this client was not heard from): the new owner's consumer
                // gets it. Or the client closed first: the entry keeps this client as its
                // owner, and the fleet adopts it once this client's heartbeat stops.
                Ok(Outcome::NotSubmitted(_) | Outcome::RunsOn { .. } | Outcome::TakenOver(_)) | Err(_) => return,
            };
            if let Some(hook) = &self.hook {
                let answer = AdoptedAnswer {
                    id: self.id.clone(),
                    key: self.key.clone(),
                    labels: self.labels.clone(),
                    solution: delivery.solution.clone(),
                };
                match hook(answer).await {
                    Ok(()) => {
                        delivery.receipt.ack();
                        self.count(|s| s.handed_to_hook += 1);
                        return;
                    }
                    Err(why) => {
                        tracing::warn!(target: "captcha_dlq", id = %self.id, "the on_adopted hook did not take an adopted answer ({why}); it is released for recover");
                    }
                }
            }
            // Not acknowledged: the entry keeps the answer, written before it was handed over.
            drop(delivery.receipt);
            if release(&self.client, &self.store, &self.id, &self.me).await {
                self.count(|s| s.released += 1);
            }
        })
    }
}

/// Clears this client's ownership of entry `id` so that `recover` takes it; whether it did.
async fn release(client: &Client, store: &Arc<dyn DlqStore>, id: &str, me: &str) -> bool {
    match client.store_write(|| store.journal_claim(id, Some(me), None)).await {
        Ok(released) => released.is_some(),
        Err(e) => {
            tracing::warn!(target: "captcha_dlq", id = %id, error = %e, "an adopted entry could not be released; this client's recover, or the fleet once it stops, takes it");
            false
        }
    }
}
