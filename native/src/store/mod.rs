//! Dead-letter stores backed by real databases: [`SqliteStore`] (one file,
//! the default) and [`RedisStore`] (shared by a fleet of workers).

mod redis;
mod sqlite;

use captcha_dlq_core::dlq::{DeadLetterRecord, StoreError};

pub use self::redis::RedisStore;
pub use self::sqlite::{SqliteStore, SCHEMA_VERSION as SQLITE_SCHEMA_VERSION};

/// Deliveries after which a record is parked, as Service Bus's default `MaxDeliveryCount`.
pub const DEFAULT_MAX_DELIVERIES: u32 = 10;

/// A fresh lease nonce: 128 random bits, so an old token never matches a new lease.
fn new_nonce() -> String {
    format!("{:032x}", fastrand::u128(..))
}

/// A stored record body (schema-1 JSON) read back; the error names the record.
fn decode_record(id: &str, json: &str) -> Result<DeadLetterRecord, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Decode(format!("record {id}: {e}")))
}
