//! An operator's edit of a record (`DlqStore::replace_edited`) in Redis: the record is read
//! and checked here, and written by a script that compares the stored body with the body read
//! (as `journal_claim` does for journal entries), so the body is never re-encoded in Lua and
//! a record leased, being replayed or changed in between is not written.

use captcha_dlq_core::dlq::{EditWrite, Edited, StoreError};
use captcha_dlq_core::Timestamp;
use redis::Script;

use super::{encode, RedisStore};
use crate::store::decode_record;

/// KEYS: the namespace's keys in [`KEY_NAMES`] order. ARGV: id, now (ms), the body as read,
/// the edited body. Returns `written`, `gone`, `leased` (a live lease or a journal entry: a
/// replay in flight) or `changed` (the body is not the one read).
const REPLACE_EDITED: &str = r#"
local BODY, NONCE, UNTIL, JOURNAL = KEYS[1], KEYS[3], KEYS[4], KEYS[8]
local id, now = ARGV[1], tonumber(ARGV[2])
local body = redis.call('HGET', BODY, id)
if not body then return 'gone' end
local u = tonumber(redis.call('ZSCORE', UNTIL, id))
if (u and u > now and redis.call('HEXISTS', NONCE, id) == 1) or redis.call('HEXISTS', JOURNAL, id) == 1 then
  return 'leased'
end
if body ~= ARGV[3] then return 'changed' end
redis.call('HSET', BODY, id, ARGV[4])
return 'written'
"#;

static SCRIPT: std::sync::LazyLock<Script> = std::sync::LazyLock::new(|| Script::new(REPLACE_EDITED));

impl RedisStore {
    pub(super) async fn replace_edited_record(&self, edit: &Edited, now: Timestamp) -> Result<EditWrite, StoreError> {
        let (before, edited) = (&edit.before, &edit.record);
        const TRIES: usize = 16;
        let id = &edited.id;
        for _ in 0..TRIES {
            let Some(body) = self.hget("body", id).await? else { return Ok(EditWrite::Gone) };
            let mut stored = decode_record(id, &body)?;
            if (&stored.task, &stored.labels, &stored.history) != (&before.task, &before.labels, &before.history) {
                return Ok(EditWrite::Changed);
            }
            stored.task = edited.task.clone();
            stored.labels = edited.labels.clone();
            stored.history = edited.history.clone();
            let new_body = encode(&stored)?;
            let outcome: String = self
                .invoke(&SCRIPT, |inv| {
                    inv.arg(id).arg(now.as_unix_millis()).arg(&body).arg(&new_body);
                })
                .await?;
            match outcome.as_str() {
                "written" => return Ok(EditWrite::Written),
                "gone" => return Ok(EditWrite::Gone),
                "leased" => return Ok(EditWrite::Leased),
                // Rewritten between the read and the script: read it again.
                _ => {}
            }
        }
        Ok(EditWrite::Changed)
    }
}

#[cfg(test)]
mod tests {
    use super::super::scripts::KEY_NAMES;

    #[test]
    fn the_script_names_the_keys_it_uses_in_their_places() {
        assert_eq!((KEY_NAMES[0], KEY_NAMES[2], KEY_NAMES[3], KEY_NAMES[7]), ("body", "nonce", "until", "journal"));
    }
}
