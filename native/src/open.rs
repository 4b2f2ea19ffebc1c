//! Opening a DLQ from a location string: `memory`, a `redis://` URL, or a SQLite path.

use std::sync::Arc;

use captcha_dlq_core::dlq::memory::MemoryStore;
use captcha_dlq_core::dlq::{DlqStore, StoreError};
use captcha_dlq_core::options::{dlq_location_problem, Durability};
use captcha_dlq_core::quoted::Quoted;
use captcha_dlq_core::ConfigError;

use crate::store::RedisStore;
use crate::store::SqliteStore;

/// Where the DLQ lives when no location is given: a SQLite file in the working directory.
pub const DEFAULT_DLQ: &str = "captcha-dlq.sqlite";

/// The Redis key namespace used when a URL is given without one.
pub const DEFAULT_REDIS_NAMESPACE: &str = "captcha-dlq";

/// Opens the DLQ at `location` with the default durability.
pub async fn open_store(location: &str) -> Result<Arc<dyn DlqStore>, StoreError> {
    open_store_with(location, Durability::Process).await
}

/// What a location string names.
enum Location<'a> {
    Memory,
    Redis(&'a str),
    Sqlite(&'a str),
}

fn classify(location: &str) -> Location<'_> {
    let location = location.trim();
    if location == "memory" || location == ":memory:" {
        Location::Memory
    } else if location.starts_with("redis://") || location.starts_with("rediss://") {
        Location::Redis(location)
    } else {
        Location::Sqlite(location)
    }
}

/// Whether the DLQ at `location` can be given `durability`: power-loss durability is applied
/// to a SQLite file only (not `memory`, not a Redis URL); the error names the location.
pub fn check_durability(location: &str, durability: Durability) -> Result<(), ConfigError> {
    let sqlite = matches!(classify(location), Location::Sqlite(_));
    durability.check_store(sqlite, &Quoted(location.trim()).to_string())
}

/// Opens the DLQ at `location`; `durability` applies to a SQLite file (check it first with
/// [`check_durability`]: other stores keep their own).
pub async fn open_store_with(location: &str, durability: Durability) -> Result<Arc<dyn DlqStore>, StoreError> {
    // The core's rule, as the options reader applies it: this is reached without options too.
    if let Some(problem) = dlq_location_problem(location) {
        return Err(StoreError::Unusable { location: Quoted(location).to_string(), problem: problem.into() });
    }
    match classify(location) {
        Location::Memory => Ok(Arc::new(MemoryStore::new())),
        Location::Redis(url) => Ok(Arc::new(RedisStore::connect(url, DEFAULT_REDIS_NAMESPACE).await?)),
        Location::Sqlite(path) => {
            let path = path.to_string();
            let store = tokio::task::spawn_blocking(move || SqliteStore::open(path)?.with_durability(durability))
                .await
                .map_err(|e| StoreError::Backend(format!("opening the SQLite store was interrupted: {e}")))??;
            Ok(Arc::new(store))
        }
    }
}
