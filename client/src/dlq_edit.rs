//! Editing dead letters before they are replayed: [`Dlq::edit`] applies one
//! [`Edit`] to every record a filter selects, or only shows what it would change
//! (`preview`). It is the one place an edit is applied (the CLI, the dashboard and
//! the bindings all call it); the core decides what an edit does to a record
//! (`dlq::edit`) and the store writes it only if no replayer holds the record and
//! it did not change since it was read ([`DlqStore::replace_edited`]).
//!
//! A replay afterwards is the ordinary replay: of the same filter, or of exactly the
//! edited records ([`EditReport::edited_filter`]).
//!
//! Feature `edit`, which the browser build leaves out: with editing its `.wasm` went over its size guard
//! (docs/decisions/0053-edit-then-replay.md); there the `edit` operation answers a clear error.

use captcha_dlq_core::dlq::{Change, DeadLetterRecord, Edit, EditWrite, Filter, Page, RecordState};
use captcha_dlq_core::{ConfigError, Timestamp};
use serde::Serialize;

use crate::audit::Action;
use crate::dlq::Dlq;
use crate::error::{Error, Result};

/// Reads of a record that another writer changed meanwhile before the edit gives up on it.
const TRIES: usize = 3;

/// What [`Dlq::edit`] did (or, with `preview`, would do).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EditReport {
    /// Nothing was written: the diffs show what applying would change.
    pub preview: bool,
    /// Records the filter selected.
    pub matched: u64,
    /// Records changed (with `preview`: that would change).
    pub changed: u64,
    /// Records the edit leaves as they are (they already hold what it sets).
    pub unchanged: u64,
    /// Records not edited, each with why: a lease, a task the edit would make invalid.
    pub refused: Vec<EditRefused>,
    /// What changed in each changed record.
    pub diffs: Vec<RecordDiff>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EditRefused {
    pub id: String,
    pub error: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecordDiff {
    pub id: String,
    pub changes: Vec<Change>,
}

impl EditReport {
    /// Exactly the records this edit changed (for "edit, then replay those"); `None` if it
    /// changed none or was a preview.
    pub fn edited_filter(&self) -> Option<Filter> {
        (!self.preview && !self.diffs.is_empty())
            .then(|| Filter { ids: self.diffs.iter().map(|d| d.id.clone()).collect(), ..Filter::default() })
    }

    fn refuse(&mut self, id: &str, error: impl Into<String>) {
        self.refused.push(EditRefused { id: id.to_string(), error: error.into() });
    }
}

impl Dlq {
    /// Applies `edit` to every record `filter` selects (with `preview`, writes nothing and
    /// reports what would change). Records under a lease or being replayed are refused and
    /// listed, as are those the edit would give an invalid task; parked and ready records
    /// are edited and keep their state, attempts, replays and deliveries.
    pub async fn edit(&self, filter: &Filter, edit: &Edit, preview: bool) -> Result<EditReport> {
        if edit.is_empty() {
            return Err(Error::Config(ConfigError::new(
                "edit",
                "the edit changes nothing: give task fields and/or labels",
            )));
        }
        let now = self.client().backends().runtime.now();
        let mut report = EditReport { preview, ..EditReport::default() };
        if preview {
            return self.edit_each(filter, edit, preview, now, &mut report).await.map(|()| report);
        }
        // The intent names the fields the edit sets, not their values (a proxy's password).
        let mut asked: Vec<String> = edit.task.keys().map(|k| format!("task.{k}")).collect();
        asked.extend(edit.labels.keys().map(|k| format!("labels.{k}")));
        let intent = self.intend(Action::Edit, filter.compact_json(), format!("edit {}", asked.join(", "))).await?;
        let outcome = self.edit_each(filter, edit, preview, now, &mut report).await;
        // The trail names the fields changed, not their values (a task's proxy holds a password).
        let mut paths: Vec<&str> =
            report.diffs.iter().flat_map(|d| d.changes.iter().map(|c| c.path.as_str())).collect();
        paths.sort_unstable();
        paths.dedup();
        let detail = format!("changed {}", if paths.is_empty() { "nothing".to_string() } else { paths.join(", ") });
        let changed = report.changed;
        self.audited(intent, Some(detail), changed, outcome).await.map(|()| report)
    }

    async fn edit_each(
        &self,
        filter: &Filter,
        edit: &Edit,
        preview: bool,
        now: Timestamp,
        report: &mut EditReport,
    ) -> Result<()> {
        for record in self.all(filter).await? {
            report.matched += 1;
            self.edit_one(record, edit, preview, now, report).await?;
        }
        Ok(())
    }

    async fn edit_one(
        &self,
        mut record: DeadLetterRecord,
        edit: &Edit,
        preview: bool,
        now: Timestamp,
        report: &mut EditReport,
    ) -> Result<()> {
        for _ in 0..TRIES {
            if record.state == RecordState::Leased {
                report.refuse(&record.id, "leased by a replayer: edit it once the lease ends");
                return Ok(());
            }
            let edited = match edit.apply(&record, now) {
                Ok(edited) => edited,
                Err(e) => {
                    report.refuse(&record.id, e.to_string());
                    return Ok(());
                }
            };
            if edited.changes.is_empty() {
                report.unchanged += 1;
                return Ok(());
            }
            let written = if preview {
                EditWrite::Written
            } else {
                self.client().store_call(self.store().replace_edited(&edited, now)).await?
            };
            match written {
                EditWrite::Written => {
                    report.changed += 1;
                    report.diffs.push(RecordDiff { id: record.id, changes: edited.changes });
                    return Ok(());
                }
                EditWrite::Leased => {
                    report.refuse(&record.id, "being replayed: edit it once the replay has settled");
                    return Ok(());
                }
                EditWrite::Gone => {
                    report.refuse(&record.id, "no longer in the DLQ (replayed or purged meanwhile)");
                    return Ok(());
                }
                EditWrite::Changed => {
                    let by_id = Filter { ids: vec![record.id.clone()], ..Filter::default() };
                    match self.peek(&by_id, Page { offset: 0, limit: 1 }).await?.pop() {
                        Some(fresh) => record = fresh,
                        None => {
                            report.refuse(&record.id, "no longer in the DLQ (replayed or purged meanwhile)");
                            return Ok(());
                        }
                    }
                }
            }
        }
        report.refuse(&record.id, "kept changing while it was edited (a replay is running on it): try again");
        Ok(())
    }
}

/// The `edit` operation of [`Dlq::op`] for the bindings.
mod host_op {
    use captcha_dlq_core::dlq::{Edit, Filter};
    use captcha_dlq_core::support::json_field::snake;
    use captcha_dlq_core::support::json_read::{current_casing, Casing, FieldError, Fields, FromJson};
    use serde_json::Value;

    use crate::dlq::Dlq;
    use crate::error::Result;

    impl Dlq {
        /// `edit` of [`Dlq::op`]: `{filter, task?, labels?, preview?}`.
        pub(crate) async fn edit_op(&self, args: Value, casing: Casing) -> Result<Value> {
            let a: EditArgs = crate::dlq::read(args, casing, "edit")?;
            let report = self.edit(&a.filter, &a.edit, a.preview).await?;
            crate::dlq::answer(&report, casing)
        }
    }

    /// The arguments of the `edit` operation. The filter must be spelled out (`{}` for every
    /// record), as for `purge`: forgetting it must not edit everything.
    struct EditArgs {
        filter: Filter,
        edit: Edit,
        preview: bool,
    }

    impl FromJson for EditArgs {
        fn from_json(value: Value) -> std::result::Result<Self, FieldError> {
            let mut f = Fields::new(value)?;
            let filter = f.req("filter")?;
            let preview = f.or("preview", false)?;
            let task: serde_json::Map<String, Value> = f.or_default("task")?;
            // A task's fields as the host spells them (`pageUrl` in JS), named as the task's JSON does.
            let task = match current_casing() {
                Casing::Snake => task,
                Casing::Camel => task.into_iter().map(|(name, value)| (snake(&name), value)).collect(),
            };
            let edit = Edit { task, labels: f.or_default("labels")? };
            f.finish()?;
            if edit.is_empty() {
                return Err(FieldError::whole("the edit changes nothing: give task fields and/or labels"));
            }
            Ok(EditArgs { filter, edit, preview })
        }
    }
}
