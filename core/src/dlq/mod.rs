//! The dead-letter queue: the record, the store contract, an in-memory store,
//! replay policy, analysis, and import/export.

pub mod record;
pub mod store;

pub use record::{DeadLetterRecord, HistoryEntry, Phase, RecordState};
pub use store::{DlqStore, Filter, LeaseToken, Leased, Page, PushOutcome, StoreError, StoreStats};
