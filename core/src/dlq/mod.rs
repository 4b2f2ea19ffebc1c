//! The dead-letter queue: the record, the store contract, an in-memory store,
//! replay policy, analysis, and import/export.

pub mod analysis;
#[cfg(feature = "audit")]
pub mod audit;
pub mod edit;
// What a store call fails with, shared with the fleet ledger (`crate::store_error`).
pub use crate::store_error as error;
pub mod export;
pub mod host;
#[cfg(any(test, feature = "testkit"))]
pub mod interpose;
pub mod limits;
pub mod memory;
pub mod record;
pub mod redact;
pub mod replay;
pub mod retention;
#[cfg(any(test, feature = "testkit"))]
pub mod rule_cases;
pub mod rules;
pub mod store;
pub mod table;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;

pub use analysis::{Analysis, Bucket};
#[cfg(feature = "audit")]
pub use audit::{AuditAction, AuditEntry, AuditStage};
pub use edit::{Change, Edit, Edited};
pub use export::{export_json, export_json_redacted, export_jsonl, export_jsonl_redacted, import, ImportError};
pub use limits::{LimitedStore, StoreLimits};
pub use memory::MemoryStore;
pub use record::{DeadLetterRecord, HistoryEntry, Phase, RecordState};
pub use replay::{ReplayDecision, ReplayPolicy, ReplayReport};
pub use store::{
    Claimed, DlqStore, EditWrite, Filter, LeaseToken, Leased, Page, PushOutcome, ReadyAsk, SettledKey, Settlement,
    StoreError, StoreStats,
};
pub use table::{TableBackend, TableStore};
