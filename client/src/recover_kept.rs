//! An operator's recovery of what another process left in flight (the dashboard's "Recover"):
//! the tasks are finished, or dead-lettered as interrupted, and every answer found is *kept* for
//! whoever resumes the task, never acknowledged into nothing.
//!
//! The operator is not the caller who wanted those answers: that process is gone, and whoever
//! runs it again (the `captcha-dlq batch` run, which recovers its own keys, or `recover`
//! anywhere) wants them. So each answer stays in its journal entry, which holds it, and the
//! entry loses its owner (as an adopter releases an answer nobody in its process asked for):
//! the next recovery takes it, once, through the store's claim. Tasks that fail are dead letters
//! in the DLQ as any other, where the operator sees them. The recovery is one entry of the audit
//! trail, under the operator's name, with its counts.

use captcha_dlq_core::dlq::audit::AuditAction;
use captcha_dlq_core::dlq::StoreError;
use futures::StreamExt;
use serde_json::json;

use crate::audit::{intend, record, Operator};
use crate::client::Client;
use crate::driver::Delivery;
use crate::error::{Error, Result};
use crate::recover::{RecoverOptions, RecoverSummary};

/// Where an operator's recovery stands: the recovery's own counts, and the answers kept for
/// whoever resumes their tasks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeptRecovery {
    pub summary: RecoverSummary,
    /// Answers left in their journal entries, released for the next recovery.
    pub kept: u64,
}

impl Client {
    /// Hands an answer back to the journal instead of to a caller: its entry (which holds the
    /// answer) loses its owner, so that whoever resumes the task takes it, once. The receipt is
    /// not acknowledged: the answer is never dropped. An error says the entry could not be
    /// released; it then stays this client's, and `recover` after this client closes takes it.
    pub async fn keep_for_resume(&self, delivery: Delivery) -> Result<()> {
        let Delivery { id, receipt, .. } = delivery;
        // Dropped unacknowledged on purpose: the journal entry, with its answer, stays.
        drop(receipt);
        let store = self.backends().store.clone();
        match self.store_write(|| store.journal_claim(&id, Some(self.owner()), None)).await? {
            Some(_) => Ok(()),
            None => Err(Error::Store(StoreError::Backend(format!(
                "journal entry {id} is no longer this client's: its answer stays with whoever holds it"
            )))),
        }
    }

    /// Recovers the entries `options` selects on `operator`'s behalf, keeping every answer for
    /// whoever resumes its task (see the module documentation), and records the recovery in the
    /// audit trail. `progress` sees the counts after each task. The result's error is the first
    /// one met (a store that failed, an answer that could not be kept); the recovery goes on
    /// past an answer it could not keep, which then stays in this client's journal entry.
    pub async fn recover_for_operator(
        &self,
        operator: &Operator,
        options: RecoverOptions,
        mut progress: impl FnMut(&KeptRecovery),
    ) -> (KeptRecovery, Option<Error>) {
        let filter = json!({ "owner": options.owner, "key_prefix": options.key_prefix });
        let resume = options.resume;
        let what = if resume { "finish the tasks, keeping their answers" } else { "dead-letter the tasks" };
        let intent = match intend(self, operator, AuditAction::Recover, filter, what.to_string()).await {
            Ok(intent) => intent,
            Err(e) => return (KeptRecovery::default(), Some(e)),
        };
        let mut stream = self.recover_stream(options);
        let mut kept = KeptRecovery::default();
        let mut first_error = None;
        while let Some(item) = stream.next().await {
            match item.map(|item| item.outcome) {
                Ok(Ok(delivery)) => match self.keep_for_resume(delivery).await {
                    Ok(()) => kept.kept += 1,
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                },
                // A task that failed is a dead letter in the DLQ, counted in the summary.
                Ok(Err(_)) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
            kept.summary = stream.summary();
            progress(&kept);
        }
        kept.summary = stream.summary();
        let s = kept.summary;
        let detail = if resume {
            format!(
                "finished: {} solved, their answers kept for whoever resumes ({} kept); {} dead-lettered; {} left to live owners",
                s.solved, kept.kept, s.dead_lettered, s.skipped_live
            )
        } else {
            format!(
                "into the DLQ: {} dead-lettered as interrupted; {} answers already in the journal kept for whoever resumes; {} left to live owners",
                s.dead_lettered, kept.kept, s.skipped_live
            )
        };
        let outcome = match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        };
        let recorded = record(self, operator, intent, Some(detail), s.found, outcome).await;
        progress(&kept);
        (kept, recorded.err())
    }
}
