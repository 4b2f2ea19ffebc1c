//! A store around another, for tests that make a real store misbehave: fail or hang on some
//! calls, or lose its fleet ledger. [`Interposed`] forwards every [`DlqStore`] call to the store
//! it wraps after asking its [`Interpose`] hooks first, so a test writes only what differs
//! (one `before`, one `ledger`) instead of forwarding twenty methods by hand.

use std::sync::Arc;

#[cfg(feature = "audit")]
use crate::dlq::audit::AuditEntry;
use crate::dlq::record::{DeadLetterRecord, RecordState};
#[cfg(feature = "edit")]
use crate::dlq::store::EditWrite;
use crate::dlq::store::{
    Claimed, DlqStore, Filter, LeaseToken, Leased, MaybeSendSync, Page, PushOutcome, ReadyAsk, SettledKey, StoreError,
    StoreStats,
};
#[cfg(feature = "edit")]
use crate::dlq::Edited;
use crate::fleet::FleetLedger;
use crate::journal::JournalEntry;
use crate::support::time::Timestamp;

/// Which store call is about to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Push,
    Receive,
    Complete,
    Abandon,
    Park,
    Unpark,
    Peek,
    Count,
    Purge,
    PurgeUnchanged,
    Stats,
    ReplaceEdited,
    JournalUpsert,
    JournalUpdate,
    JournalForget,
    JournalEntries,
    JournalClaim,
    Settled,
    ClearSettled,
    AuditAppend,
    AuditList,
}

impl Call {
    /// Whether the call only reads (a store that fails writes often still answers these).
    pub fn reads_only(self) -> bool {
        matches!(self, Call::Peek | Call::Count | Call::Stats | Call::JournalEntries | Call::Settled | Call::AuditList)
    }
}

/// What a test changes about the store it wraps.
#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
pub trait Interpose: MaybeSendSync {
    /// Runs before `call`; an error is the call's answer (the wrapped store is not asked).
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        let _ = call;
        Ok(())
    }

    /// The fleet ledger the wrapped store offers (`inner`), as this store offers it.
    fn ledger(&self, inner: Option<Arc<dyn FleetLedger>>) -> Option<Arc<dyn FleetLedger>> {
        inner
    }
}

/// `store`, with `hooks` asked before each call.
pub struct Interposed<I> {
    pub store: Arc<dyn DlqStore>,
    pub hooks: I,
}

impl<I> core::fmt::Debug for Interposed<I> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Interposed").finish_non_exhaustive()
    }
}

#[cfg_attr(feature = "send", async_trait::async_trait)]
#[cfg_attr(not(feature = "send"), async_trait::async_trait(?Send))]
impl<I: Interpose> DlqStore for Interposed<I> {
    async fn push(&self, record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        self.hooks.before(Call::Push).await?;
        self.store.push(record).await
    }
    async fn receive_ready(&self, ask: ReadyAsk) -> Result<Vec<Leased>, StoreError> {
        self.hooks.before(Call::Receive).await?;
        self.store.receive_ready(ask).await
    }
    async fn complete(&self, token: &LeaseToken, now: Timestamp) -> Result<(), StoreError> {
        self.hooks.before(Call::Complete).await?;
        self.store.complete(token, now).await
    }
    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        self.hooks.before(Call::Abandon).await?;
        self.store.abandon(token, update, now).await
    }
    async fn purge_unchanged(&self, records: &[DeadLetterRecord], now: Timestamp) -> Result<u64, StoreError> {
        self.hooks.before(Call::PurgeUnchanged).await?;
        self.store.purge_unchanged(records, now).await
    }
    async fn park(&self, id: &str, reason: &str, now: Timestamp) -> Result<bool, StoreError> {
        self.hooks.before(Call::Park).await?;
        self.store.park(id, reason, now).await
    }
    async fn unpark(&self, id: &str, now: Timestamp) -> Result<bool, StoreError> {
        self.hooks.before(Call::Unpark).await?;
        self.store.unpark(id, now).await
    }
    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        self.hooks.before(Call::Peek).await?;
        self.store.peek(filter, page, now).await
    }
    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        self.hooks.before(Call::Count).await?;
        self.store.count(filter, now).await
    }
    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        self.hooks.before(Call::Purge).await?;
        self.store.purge(filter, now).await
    }
    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        self.hooks.before(Call::Stats).await?;
        self.store.stats(now).await
    }
    #[cfg(feature = "edit")]
    async fn replace_edited(&self, edit: &Edited, now: Timestamp) -> Result<EditWrite, StoreError> {
        self.hooks.before(Call::ReplaceEdited).await?;
        self.store.replace_edited(edit, now).await
    }
    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.hooks.before(Call::JournalUpsert).await?;
        self.store.journal_upsert(entry).await
    }
    async fn journal_update(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.hooks.before(Call::JournalUpdate).await?;
        self.store.journal_update(entry).await
    }
    async fn journal_forget(&self, id: &str, now: Timestamp) -> Result<(), StoreError> {
        self.hooks.before(Call::JournalForget).await?;
        self.store.journal_forget(id, now).await
    }
    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        self.hooks.before(Call::JournalEntries).await?;
        self.store.journal_entries().await
    }
    async fn journal_claim(&self, id: &str, from: Option<&str>, to: Option<&str>) -> Claimed {
        self.hooks.before(Call::JournalClaim).await?;
        self.store.journal_claim(id, from, to).await
    }
    async fn settled(&self, prefix: &str) -> Result<Vec<SettledKey>, StoreError> {
        self.hooks.before(Call::Settled).await?;
        self.store.settled(prefix).await
    }
    async fn clear_settled(&self, prefix: &str) -> Result<u64, StoreError> {
        self.hooks.before(Call::ClearSettled).await?;
        self.store.clear_settled(prefix).await
    }
    #[cfg(feature = "audit")]
    async fn audit_append(&self, entry: &AuditEntry) -> Result<u64, StoreError> {
        self.hooks.before(Call::AuditAppend).await?;
        self.store.audit_append(entry).await
    }
    #[cfg(feature = "audit")]
    async fn audit_list(&self, limit: usize, before: Option<u64>) -> Result<Vec<AuditEntry>, StoreError> {
        self.hooks.before(Call::AuditList).await?;
        self.store.audit_list(limit, before).await
    }
    fn fleet_ledger(&self) -> Option<Arc<dyn FleetLedger>> {
        self.hooks.ledger(self.store.fleet_ledger())
    }
}
