//! Opening a DLQ from a location string: `memory`, a Redis URL (`redis://`, `rediss://`,
//! `redis+cluster://`, `rediss+cluster://`: read by [`RedisStore::open`]), or a SQLite path.

use std::sync::Arc;

use captcha_dlq_core::dlq::memory::MemoryStore;
use captcha_dlq_core::dlq::{DlqStore, StoreError};
use captcha_dlq_core::options::{dlq_location_problem, Durability};
use captcha_dlq_core::support::quoted::Quoted;
use captcha_dlq_core::ConfigError;

use crate::store::redis::{is_redis_location, shown_location};
use crate::store::RedisStore;
use crate::store::SqliteStore;

/// Where the DLQ lives when no location is given: a SQLite file in the working directory.
pub const DEFAULT_DLQ: &str = "captcha-dlq.sqlite";

/// The Redis key namespace used when a URL names none (`?namespace=`).
pub const DEFAULT_REDIS_NAMESPACE: &str = crate::store::redis::DEFAULT_NAMESPACE;

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
    } else if is_redis_location(location) {
        Location::Redis(location)
    } else {
        Location::Sqlite(location)
    }
}

/// Whether the DLQ at `location` can be given `durability`: power-loss durability is applied
/// to a SQLite file only (not `memory`, not a Redis URL); the error names the location.
pub fn check_durability(location: &str, durability: Durability) -> Result<(), ConfigError> {
    let sqlite = matches!(classify(location), Location::Sqlite(_));
    durability.check_store(sqlite, &shown(location.trim()))
}

/// `location` quoted for a message; a Redis URL without its user and password.
fn shown(location: &str) -> String {
    match classify(location) {
        Location::Redis(url) => Quoted(&shown_location(url)).to_string(),
        _ => Quoted(location).to_string(),
    }
}

/// Opens the DLQ at `location`; `durability` applies to a SQLite file (check it first with
/// [`check_durability`]: other stores keep their own).
pub async fn open_store_with(location: &str, durability: Durability) -> Result<Arc<dyn DlqStore>, StoreError> {
    // The core's rule, as the options reader applies it: this is reached without options too.
    if let Some(problem) = dlq_location_problem(location) {
        return Err(StoreError::Unusable { location: shown(location), problem: problem.into() });
    }
    match classify(location) {
        Location::Memory => Ok(Arc::new(MemoryStore::new())),
        Location::Redis(url) => Ok(Arc::new(RedisStore::open(url).await?)),
        Location::Sqlite(path) => {
            let path = path.to_string();
            let store = tokio::task::spawn_blocking(move || SqliteStore::open(path)?.with_durability(durability))
                .await
                .map_err(|e| StoreError::Backend(format!("opening the SQLite store was interrupted: {e}")))??;
            Ok(Arc::new(store))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_show_a_redis_url_without_its_password() {
        let e = check_durability(" redis://alice:pw-123@h:1/?namespace=n ", Durability::PowerLoss).unwrap_err();
        assert!(e.problem.contains("\"redis://h:1/\"") && !e.problem.contains("pw-123"), "{}", e.problem);
        let e = check_durability("rediss+cluster://:pw-123@h:1,h:2", Durability::PowerLoss).unwrap_err();
        assert!(e.problem.contains("\"rediss+cluster://h:1,h:2\"") && !e.problem.contains("pw-123"), "{}", e.problem);
        assert!(check_durability("dlq.sqlite", Durability::PowerLoss).is_ok());
        match open_store("redis://:pw-123@h:1/\0").await {
            Err(StoreError::Unusable { location, problem }) => {
                assert!(problem.contains("NUL") && !location.contains("pw-123"), "{location}: {problem}");
            }
            other => panic!("a NUL is refused, got {:?}", other.map(|_| "a store")),
        }
    }
}
