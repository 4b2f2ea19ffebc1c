//! What a store call can fail with, and the `Send + Sync` bound that holds natively only (the
//! browser's stores hold JS values): the pieces both the store contract and the fleet ledger
//! are written against. Below both (`dlq::error` re-exports it), so that the fleet ledger does not
//! import the DLQ.

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("the lease on record {id} was lost (expired and taken by another receiver, or already settled)")]
    LeaseLost { id: String },
    #[error("no record with id {id}")]
    NotFound { id: String },
    #[error("the store at {location} is not a captcha-dlq store or is corrupt: {problem}")]
    Corrupt { location: String, problem: String },
    #[error("the store at {location} has schema version {found}; this build reads up to {supported}")]
    NewerSchema { location: String, found: u32, supported: u32 },
    #[error("a stored record could not be decoded: {0}")]
    Decode(String),
    /// The location names something that cannot hold a store (a missing directory, a
    /// directory, a malformed URL): trying again will not help; the user must change it.
    #[error("the DLQ location {location} cannot be used: {problem}")]
    Unusable { location: String, problem: String },
    #[error("store backend error: {0}")]
    Backend(String),
    /// The store did not answer in time (the driver's per-call timeout).
    #[error("the store did not answer: {0}")]
    Timeout(String),
    /// A journal write of an entry that another owner holds now, or that is gone (the fence of
    /// `journal_upsert` and `journal_update`): the writer was not heard from for the fleet's
    /// owner TTL and another client took the task over (and may have finished it).
    #[error(
        "journal entry {id} is no longer this client's: another client took the task over while this one was not \
         heard from for the fleet's owner TTL; its answer goes to that client's consumer"
    )]
    Taken { id: String },
}

impl StoreError {
    /// Whether trying the same call again later may succeed (the backend was down, locked,
    /// slow), as opposed to an answer about the data (a lost lease, a corrupt file).
    pub fn is_transient(&self) -> bool {
        matches!(self, StoreError::Backend(_) | StoreError::Timeout(_))
    }
}

#[cfg(feature = "send")]
pub trait MaybeSendSync: Send + Sync {}
#[cfg(feature = "send")]
impl<T: Send + Sync + ?Sized> MaybeSendSync for T {}
#[cfg(not(feature = "send"))]
pub trait MaybeSendSync {}
#[cfg(not(feature = "send"))]
impl<T: ?Sized> MaybeSendSync for T {}
