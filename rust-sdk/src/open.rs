//! Opening a DLQ from a location string: `memory`, a Redis URL (`redis://`, `rediss://`,
//! `redis+cluster://`, `rediss+cluster://`: read by `RedisStore::open`), or a SQLite path.
//! A build without the `redis` feature names a Redis URL as such and says that this build has
//! no Redis store, rather than taking the URL for a file name.

use std::sync::Arc;

use captcha_dlq_client::options::{dlq_location_problem, Durability};
use captcha_dlq_core::dlq::memory::MemoryStore;
use captcha_dlq_core::dlq::{DlqStore, StoreError};
use captcha_dlq_core::support::quoted::Quoted;
use captcha_dlq_core::ConfigError;

#[cfg(feature = "redis")]
use crate::store::redis::shown_location;
#[cfg(feature = "redis")]
use crate::store::RedisStore;
use crate::store::SqliteStore;

/// Where the DLQ lives when no location is given: a SQLite file in the working directory.
pub const DEFAULT_DLQ: &str = "captcha-dlq.sqlite";

/// The Redis key namespace used when a URL names none (`?namespace=`).
#[cfg(feature = "redis")]
pub const DEFAULT_REDIS_NAMESPACE: &str = crate::store::redis::DEFAULT_NAMESPACE;

/// The schemes of a Redis location, as [`is_redis_location`] matches them.
const REDIS_SCHEMES: [&str; 4] = ["redis://", "rediss://", "redis+cluster://", "rediss+cluster://"];

/// Whether `location` is a Redis URL (by its scheme) rather than a SQLite path. Known with or
/// without the `redis` feature, so that a build without it never opens a file named `redis:`.
pub fn is_redis_location(location: &str) -> bool {
    let location = location.trim();
    REDIS_SCHEMES.iter().any(|scheme| location.get(..scheme.len()).is_some_and(|s| s.eq_ignore_ascii_case(scheme)))
}

/// A Redis URL as messages show it: without user, password or query.
#[cfg(feature = "redis")]
fn shown_redis(url: &str) -> String {
    shown_location(url)
}

/// Without the `redis` feature the URL is not read at all, so none of it is shown: it may carry
/// a password.
#[cfg(not(feature = "redis"))]
fn shown_redis(_url: &str) -> String {
    "(a Redis URL, not shown: it may carry a password)".to_string()
}

/// Opens a Redis store, or says that this build has none.
#[cfg(feature = "redis")]
async fn open_redis(url: &str) -> Result<Arc<dyn DlqStore>, StoreError> {
    Ok(Arc::new(RedisStore::open(url).await?))
}

#[cfg(not(feature = "redis"))]
async fn open_redis(url: &str) -> Result<Arc<dyn DlqStore>, StoreError> {
    Err(StoreError::Unusable {
        location: Quoted(&shown_redis(url)).to_string(),
        problem: "this build of captcha-dlq has no Redis store: build it with the cargo feature `redis` \
                  (on by default; the CLI's `cargo demo` leaves it out)"
            .into(),
    })
}

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
        Location::Redis(url) => Quoted(&shown_redis(url)).to_string(),
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
        Location::Redis(url) => open_redis(url).await,
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

    #[test]
    fn a_redis_url_is_known_by_its_scheme() {
        assert!(is_redis_location(" REDIS+CLUSTER://h:1") && is_redis_location("rediss://h"));
        assert!(!is_redis_location("redis.sqlite") && !is_redis_location("memory"));
    }

    #[cfg(feature = "redis")]
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

    #[cfg(not(feature = "redis"))]
    #[tokio::test]
    async fn without_the_redis_feature_a_redis_url_is_refused_by_name_without_its_password() {
        match open_store("redis://:pw-123@h:1/").await {
            Err(StoreError::Unusable { location, problem }) => {
                assert!(problem.contains("no Redis store") && problem.contains("`redis`"), "{problem}");
                assert!(!location.contains("pw-123") && !problem.contains("pw-123"), "{location}: {problem}");
            }
            other => panic!("a Redis URL is refused, got {:?}", other.map(|_| "a store")),
        }
        assert!(!std::path::Path::new("redis:").exists(), "no file was made of the URL");
    }
}
