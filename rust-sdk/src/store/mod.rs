//! Dead-letter stores backed by real databases: [`SqliteStore`] (one file,
//! the default) and `RedisStore` (shared by a fleet of workers; the `redis` feature); and
//! [`host_store`], a store object written in a binding's language.

#[cfg(feature = "redis")]
pub(crate) mod redis;
mod sqlite;

use std::sync::Arc;

use captcha_dlq_core::dlq::host::{HostCall, HostTable};
use captcha_dlq_core::dlq::{DeadLetterRecord, DlqStore, StoreError, TableStore};

#[cfg(feature = "redis")]
pub use self::redis::{BatchStats as RedisBatchStats, RedisStore};
pub use self::sqlite::{
    GroupCommitStats, SqliteStore, DEFAULT_BUSY_TIMEOUT as SQLITE_DEFAULT_BUSY_TIMEOUT,
    SCHEMA_VERSION as SQLITE_SCHEMA_VERSION,
};

/// What a committed write survives ([`SqliteStore::with_durability`]).
pub use captcha_dlq_client::options::Durability;
/// Deliveries after which a record is parked (the core's default, which every store uses).
pub use captcha_dlq_core::dlq::limits::DEFAULT_MAX_DELIVERIES;
/// A store's limits, and the builder methods every store has (`with_max_deliveries`, `with_capacity`).
pub use captcha_dlq_core::dlq::{LimitedStore, StoreLimits};

/// How the native stores name a provider account in their fleet ledger: the first 128 bits of
/// an HMAC-SHA256 keyed by the API key over the provider's base URL, in hex. The store never
/// sees the key, and the id cannot be turned back into it; the same key at another provider
/// is another account.
pub fn fleet_account_id(base_url: &str, key: &captcha_dlq_core::Secret) -> String {
    let hmac = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key.expose().as_bytes());
    let tag = ring::hmac::sign(&hmac, format!("captcha-dlq fleet account\n{base_url}").as_bytes());
    tag.as_ref().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// A store object written in Python or JavaScript (the protocol of `docs/custom-store.md`) as a
/// DLQ store: the core's table store over it, keeping the fleet ledger in it (named as the
/// native stores name accounts) when the object declares `shared: true`. The bindings' one way
/// in, so that they decide nothing.
pub fn host_store<C: HostCall + 'static>(host: C) -> Result<Arc<dyn DlqStore>, StoreError> {
    let table = HostTable::new(host)?;
    let shared = table.shared();
    let store = TableStore::over(table);
    Ok(if shared { store.keeping_fleet_ledger(fleet_account_id) } else { Arc::new(store) })
}

/// A fresh lease nonce: 128 random bits, so an old token never matches a new lease.
fn new_nonce() -> String {
    format!("{:032x}", fastrand::u128(..))
}

/// A stored record body (schema-1 JSON) read back; the error names the record.
fn decode_record(id: &str, json: &str) -> Result<DeadLetterRecord, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Decode(format!("record {id}: {e}")))
}

/// The smallest string above every string that starts with `prefix` (`None`: no bound, as for
/// `""`). UTF-8 orders bytes as it orders code points, so `prefix <= key < prefix_end(prefix)`
/// selects exactly the keys starting with `prefix`, in SQLite's and Redis's byte order alike.
fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let mut next = u32::from(last) + 1;
        if (0xD800..=0xDFFF).contains(&next) {
            next = 0xE000; // past the surrogates, which are not chars
        }
        if let Some(next) = char::from_u32(next) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_end_bounds_exactly_the_keys_with_the_prefix() {
        assert_eq!(prefix_end(""), None);
        assert_eq!(prefix_end("b/").as_deref(), Some("b0"));
        assert_eq!(prefix_end("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
        assert_eq!(prefix_end("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_end("\u{10FFFF}"), None);
        let end = prefix_end("line-").unwrap_or_default();
        for (key, inside) in
            [("line-", true), ("line-9", true), ("line-\u{10FFFF}x", true), ("line.", false), ("linf", false)]
        {
            assert_eq!("line-" <= key && key < end.as_str(), inside, "{key:?}");
        }
    }
}
