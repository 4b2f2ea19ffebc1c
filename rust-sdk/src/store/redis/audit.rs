//! The audit trail in Redis: one list, `{dlq:<namespace>}:audit` (the namespace's hash tag, so
//! one cluster slot), one JSON entry per element, appended with `RPUSH` and never trimmed: an
//! entry's id is its position plus one, which `RPUSH`'s answer (the new length) gives. Nothing
//! caps the list: the trail is never silently shortened.

use captcha_dlq_core::dlq::audit::AuditEntry;
use captcha_dlq_core::dlq::StoreError;

use super::scripts::namespace_key;
use super::{backend, RedisStore};

impl RedisStore {
    fn audit_key(&self) -> String {
        namespace_key(self.namespace(), "audit")
    }

    pub(super) async fn append_audit(&self, entry: &AuditEntry) -> Result<u64, StoreError> {
        let json = serde_json::to_string(entry).map_err(|e| StoreError::Decode(format!("an audit entry: {e}")))?;
        let mut conn = self.conn.clone();
        redis::cmd("RPUSH")
            .arg(self.audit_key())
            .arg(json)
            .query_async(&mut conn)
            .await
            .map_err(|e| backend(&self.location, &e))
    }

    pub(super) async fn list_audit(&self, limit: usize, before: Option<u64>) -> Result<Vec<AuditEntry>, StoreError> {
        let mut conn = self.conn.clone();
        let key = self.audit_key();
        let len: u64 =
            redis::cmd("LLEN").arg(&key).query_async(&mut conn).await.map_err(|e| backend(&self.location, &e))?;
        // Ids 1..=len are positions 0..len; the newest wanted is the one before `before`.
        let newest = before.map_or(len, |b| b.saturating_sub(1).min(len));
        if newest == 0 || limit == 0 {
            return Ok(Vec::new());
        }
        let oldest = newest.saturating_sub(limit as u64 - 1).max(1);
        let values: Vec<String> = redis::cmd("LRANGE")
            .arg(&key)
            .arg(oldest - 1)
            .arg(newest - 1)
            .query_async(&mut conn)
            .await
            .map_err(|e| backend(&self.location, &e))?;
        let mut out = Vec::with_capacity(values.len());
        for (i, json) in values.into_iter().enumerate() {
            let id = oldest + i as u64;
            let mut entry: AuditEntry = serde_json::from_str(&json)
                .map_err(|e| StoreError::Decode(format!("redis {}: audit entry {id}: {e}", self.location)))?;
            entry.id = id;
            out.push(entry);
        }
        out.reverse();
        Ok(out)
    }
}
