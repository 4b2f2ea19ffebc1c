//! The IndexedDB dead-letter store: works in pages, workers and Manifest V3
//! service workers. One database holds three object stores: `records` (one
//! value per record id: the schema-1 record plus its lease as fields),
//! `journal` (in-flight tasks) and `meta` (counters and the schema version).
//!
//! Every operation is one transaction, so two tabs or a page and a service
//! worker sharing the database never interleave inside an operation; `push`
//! writes the record and deletes its journal entry in the same transaction.
//! Lease rules are those of the core's `MemoryStore` (see its documentation),
//! checked by the same conformance suite.

use core::time::Duration;

use captcha_dlq_core::class::reason;
use captcha_dlq_core::dlq::memory::{DEFAULT_MAX_DELIVERIES, PARKED_BY_REPLAYER};
use captcha_dlq_core::dlq::{
    DeadLetterRecord, DlqStore, Filter, LeaseToken, Leased, Page, PushOutcome, RecordState, StoreError, StoreStats,
};
use captcha_dlq_core::json_read::{FieldError, Fields, FromJson};
use captcha_dlq_core::{JournalEntry, Timestamp};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::JsValue;
use web_sys::{IdbDatabase, IdbObjectStore, IdbTransaction, IdbTransactionMode};

use super::idb_io::{backend, committed, open, wait, JOURNAL, META, RECORDS};
use crate::convert::{from_js, to_js};

/// The layout version this build writes and reads.
const STORE_SCHEMA: u32 = 1;
const COUNTERS_KEY: &str = "counters";

/// A dead-letter store in the IndexedDB database of a given name.
#[derive(Debug)]
pub struct IdbStore {
    db: IdbDatabase,
    name: String,
    max_deliveries: u32,
}

#[derive(Clone, Debug, Serialize)]
struct Slot {
    /// Stored state is `ready` or `parked`; `leased` is derived from the lease.
    record: DeadLetterRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease_nonce: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease_until: Option<Timestamp>,
}

impl FromJson for Slot {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(Slot { record: f.req("record")?, lease_nonce: f.opt("lease_nonce")?, lease_until: f.opt("lease_until")? })
    }
}

impl Slot {
    fn state(&self, now: Timestamp) -> RecordState {
        if self.record.state == RecordState::Parked {
            RecordState::Parked
        } else if self.live_lease(now) {
            RecordState::Leased
        } else {
            RecordState::Ready
        }
    }

    fn live_lease(&self, now: Timestamp) -> bool {
        self.lease_until.is_some_and(|until| now < until)
    }

    fn holds(&self, token: &LeaseToken) -> bool {
        self.record.state != RecordState::Parked && self.lease_nonce.as_deref() == Some(token.nonce.as_str())
    }

    fn view(&self, now: Timestamp) -> DeadLetterRecord {
        let mut record = self.record.clone();
        record.state = self.state(now);
        record
    }

    fn clear_lease(&mut self) {
        self.lease_nonce = None;
        self.lease_until = None;
    }

    fn park(&mut self, why: &str) {
        self.record.state = RecordState::Parked;
        self.record.parked_reason = Some(why.to_string());
        self.clear_lease();
    }
}

#[derive(Clone, Debug, Default, Serialize)]
struct Counters {
    schema: u32,
    dropped: u64,
    completed: u64,
    abandoned: u64,
    /// Deliveries handed out, ever: keeps every lease nonce unique.
    sequence: u64,
}

/// Every counter may be left out (a database written before it existed).
impl FromJson for Counters {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        Ok(Counters {
            schema: f.or_default("schema")?,
            dropped: f.or_default("dropped")?,
            completed: f.or_default("completed")?,
            abandoned: f.or_default("abandoned")?,
            sequence: f.or_default("sequence")?,
        })
    }
}

/// One operation's transaction and the promise of its commit.
struct Tx {
    tx: IdbTransaction,
    done: wasm_bindgen_futures::JsFuture,
}

impl Tx {
    fn store(&self, name: &str) -> Result<IdbObjectStore, StoreError> {
        self.tx.object_store(name).map_err(|e| backend(name, &e))
    }

    async fn commit(self) -> Result<(), StoreError> {
        self.done.await.map(|_| ()).map_err(|e| backend("commit", &e))
    }
}

fn oldest_first(slots: &mut [Slot]) {
    slots.sort_by(|a, b| (a.record.dead_lettered_at, &a.record.id).cmp(&(b.record.dead_lettered_at, &b.record.id)));
}

impl IdbStore {
    /// Opens (or creates) the database `name`; refuses one written by a newer layout.
    pub async fn open(name: &str) -> Result<IdbStore, StoreError> {
        if name.is_empty() {
            return Err(StoreError::Backend("an IndexedDB store needs a database name".into()));
        }
        let db = open(name).await?;
        let store = IdbStore { db, name: name.to_string(), max_deliveries: DEFAULT_MAX_DELIVERIES };
        let tx = store.begin(&[META], true)?;
        let meta = tx.store(META)?;
        let mut counters = store.counters(&meta).await?;
        if counters.schema > STORE_SCHEMA {
            return Err(StoreError::NewerSchema {
                location: format!("indexeddb:{name}"),
                found: counters.schema,
                supported: STORE_SCHEMA,
            });
        }
        if counters.schema == 0 {
            counters.schema = STORE_SCHEMA;
            store.put_counters(&meta, &counters)?;
        }
        tx.commit().await?;
        Ok(store)
    }

    /// Closes the connection (another open of the same name, or a delete, may then proceed).
    pub fn close(&self) {
        self.db.close();
    }

    fn begin(&self, stores: &[&str], write: bool) -> Result<Tx, StoreError> {
        let names = js_sys::Array::new();
        for s in stores {
            names.push(&JsValue::from_str(s));
        }
        let mode = if write { IdbTransactionMode::Readwrite } else { IdbTransactionMode::Readonly };
        let tx =
            self.db.transaction_with_str_sequence_and_mode(&names, mode).map_err(|e| backend("transaction", &e))?;
        let done = committed(&tx);
        Ok(Tx { tx, done })
    }

    fn decode<T: FromJson>(&self, what: &str, value: &JsValue) -> Result<T, StoreError> {
        from_js(value).map_err(|e| StoreError::Decode(format!("{what} in indexeddb:{}: {e}", self.name)))
    }

    async fn slot(&self, records: &IdbObjectStore, id: &str) -> Result<Option<Slot>, StoreError> {
        let req = records.get(&JsValue::from_str(id)).map_err(|e| backend("get", &e))?;
        let value = wait(&req).await.map_err(|e| backend("get", &e))?;
        if value.is_undefined() {
            return Ok(None);
        }
        self.decode(&format!("record {id}"), &value).map(Some)
    }

    async fn all_slots(&self, records: &IdbObjectStore) -> Result<Vec<Slot>, StoreError> {
        let req = records.get_all().map_err(|e| backend("getAll", &e))?;
        let values = wait(&req).await.map_err(|e| backend("getAll", &e))?;
        let mut slots = js_sys::Array::from(&values)
            .iter()
            .map(|v| self.decode::<Slot>("a record", &v))
            .collect::<Result<Vec<_>, _>>()?;
        oldest_first(&mut slots);
        Ok(slots)
    }

    fn put_slot(&self, records: &IdbObjectStore, slot: &Slot) -> Result<(), StoreError> {
        let value = to_js(slot).map_err(StoreError::Backend)?;
        records.put_with_key(&value, &JsValue::from_str(&slot.record.id)).map_err(|e| backend("put", &e))?;
        Ok(())
    }

    fn delete(&self, store: &IdbObjectStore, id: &str) -> Result<(), StoreError> {
        store.delete(&JsValue::from_str(id)).map_err(|e| backend("delete", &e))?;
        Ok(())
    }

    async fn counters(&self, meta: &IdbObjectStore) -> Result<Counters, StoreError> {
        let req = meta.get(&JsValue::from_str(COUNTERS_KEY)).map_err(|e| backend("get", &e))?;
        let value = wait(&req).await.map_err(|e| backend("get", &e))?;
        if value.is_undefined() {
            return Ok(Counters::default());
        }
        self.decode("the counters", &value)
    }

    fn put_counters(&self, meta: &IdbObjectStore, counters: &Counters) -> Result<(), StoreError> {
        let value = to_js(counters).map_err(StoreError::Backend)?;
        meta.put_with_key(&value, &JsValue::from_str(COUNTERS_KEY)).map_err(|e| backend("put", &e))?;
        Ok(())
    }

    async fn matching(&self, filter: &Filter, now: Timestamp) -> Result<Vec<Slot>, StoreError> {
        let tx = self.begin(&[RECORDS], false)?;
        let slots = self.all_slots(&tx.store(RECORDS)?).await?;
        tx.commit().await?;
        Ok(slots.into_iter().filter(|s| filter.matches(&s.record, s.state(now))).collect())
    }
}

#[async_trait::async_trait(?Send)]
impl DlqStore for IdbStore {
    async fn push(&self, mut record: DeadLetterRecord) -> Result<PushOutcome, StoreError> {
        let tx = self.begin(&[RECORDS, JOURNAL], true)?;
        let (records, journal) = (tx.store(RECORDS)?, tx.store(JOURNAL)?);
        self.delete(&journal, &record.id)?;
        if record.state == RecordState::Leased {
            record.state = RecordState::Ready; // a lease is the store's bookkeeping
        }
        if record.state != RecordState::Parked {
            record.parked_reason = None;
        }
        let old = self.slot(&records, &record.id).await?;
        let replaced = old.is_some();
        let mut slot = Slot { record, lease_nonce: None, lease_until: None };
        // Keep the lease of a replaced record so that it is not handed out twice;
        // pushing a parked record cancels it.
        if let Some(old) = old.filter(|_| slot.record.state != RecordState::Parked) {
            slot.lease_nonce = old.lease_nonce;
            slot.lease_until = old.lease_until;
        }
        self.put_slot(&records, &slot)?;
        tx.commit().await?;
        Ok(PushOutcome { replaced, evicted: Vec::new() })
    }

    async fn receive(
        &self,
        filter: &Filter,
        max: usize,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Vec<Leased>, StoreError> {
        let tx = self.begin(&[RECORDS, META], true)?;
        let (records, meta) = (tx.store(RECORDS)?, tx.store(META)?);
        let mut counters = self.counters(&meta).await?;
        let filter = Filter { states: Vec::new(), ..filter.clone() };
        let mut out = Vec::new();
        for mut slot in self.all_slots(&records).await? {
            if out.len() >= max {
                break;
            }
            if slot.record.state == RecordState::Parked
                || slot.live_lease(now)
                || !filter.matches(&slot.record, RecordState::Ready)
            {
                continue;
            }
            counters.sequence += 1;
            let expired = slot.lease_nonce.is_some();
            slot.clear_lease();
            if slot.record.deliveries >= self.max_deliveries {
                slot.park(reason::MAX_DELIVERY_COUNT_EXCEEDED);
            } else {
                slot.record.deliveries += 1;
                let nonce = format!("{}.{}", slot.record.deliveries, counters.sequence);
                let until = now.add(lease);
                slot.lease_nonce = Some(nonce.clone());
                slot.lease_until = Some(until);
                let mut record = slot.record.clone();
                record.state = RecordState::Leased;
                out.push(Leased {
                    token: LeaseToken { id: slot.record.id.clone(), nonce },
                    record,
                    lease_until: until,
                });
            }
            if expired {
                counters.abandoned += 1;
            }
            self.put_slot(&records, &slot)?;
        }
        self.put_counters(&meta, &counters)?;
        tx.commit().await?;
        Ok(out)
    }

    async fn complete(&self, token: &LeaseToken, _now: Timestamp) -> Result<(), StoreError> {
        let tx = self.begin(&[RECORDS, META], true)?;
        let (records, meta) = (tx.store(RECORDS)?, tx.store(META)?);
        match self.slot(&records, &token.id).await? {
            Some(slot) if slot.holds(token) => {
                let mut counters = self.counters(&meta).await?;
                counters.completed += 1;
                self.delete(&records, &token.id)?;
                self.put_counters(&meta, &counters)?;
                tx.commit().await
            }
            _ => Err(StoreError::LeaseLost { id: token.id.clone() }),
        }
    }

    async fn abandon(
        &self,
        token: &LeaseToken,
        update: Option<DeadLetterRecord>,
        _now: Timestamp,
    ) -> Result<RecordState, StoreError> {
        let tx = self.begin(&[RECORDS, META], true)?;
        let (records, meta) = (tx.store(RECORDS)?, tx.store(META)?);
        let Some(mut slot) = self.slot(&records, &token.id).await?.filter(|s| s.holds(token)) else {
            return Err(StoreError::LeaseLost { id: token.id.clone() });
        };
        slot.clear_lease();
        let mut park_why = None;
        if let Some(mut update) = update {
            // The token names the record; the store owns the delivery count.
            update.id = token.id.clone();
            update.deliveries = slot.record.deliveries;
            if update.state == RecordState::Parked {
                park_why = Some(update.parked_reason.clone().unwrap_or_else(|| PARKED_BY_REPLAYER.to_string()));
            }
            update.state = RecordState::Ready;
            update.parked_reason = None;
            slot.record = update;
        }
        if park_why.is_none() && slot.record.deliveries >= self.max_deliveries {
            park_why = Some(reason::MAX_DELIVERY_COUNT_EXCEEDED.to_string());
        }
        let state = match park_why {
            Some(why) => {
                slot.park(&why);
                RecordState::Parked
            }
            None => RecordState::Ready,
        };
        let mut counters = self.counters(&meta).await?;
        counters.abandoned += 1;
        self.put_slot(&records, &slot)?;
        self.put_counters(&meta, &counters)?;
        tx.commit().await?;
        Ok(state)
    }

    async fn park(&self, id: &str, reason: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let tx = self.begin(&[RECORDS], true)?;
        let records = tx.store(RECORDS)?;
        let Some(mut slot) = self.slot(&records, id).await? else { return Ok(false) };
        slot.park(reason);
        self.put_slot(&records, &slot)?;
        tx.commit().await?;
        Ok(true)
    }

    async fn unpark(&self, id: &str, _now: Timestamp) -> Result<bool, StoreError> {
        let tx = self.begin(&[RECORDS], true)?;
        let records = tx.store(RECORDS)?;
        let Some(mut slot) = self.slot(&records, id).await?.filter(|s| s.record.state == RecordState::Parked) else {
            return Ok(false);
        };
        slot.record.state = RecordState::Ready;
        slot.record.parked_reason = None;
        slot.record.deliveries = 0;
        self.put_slot(&records, &slot)?;
        tx.commit().await?;
        Ok(true)
    }

    async fn peek(&self, filter: &Filter, page: Page, now: Timestamp) -> Result<Vec<DeadLetterRecord>, StoreError> {
        let slots = self.matching(filter, now).await?;
        Ok(slots.iter().skip(page.offset).take(page.limit).map(|s| s.view(now)).collect())
    }

    async fn count(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        Ok(self.matching(filter, now).await?.len() as u64)
    }

    async fn purge(&self, filter: &Filter, now: Timestamp) -> Result<u64, StoreError> {
        let tx = self.begin(&[RECORDS], true)?;
        let records = tx.store(RECORDS)?;
        let mut removed = 0;
        for slot in self.all_slots(&records).await? {
            if filter.matches(&slot.record, slot.state(now)) && !slot.live_lease(now) {
                self.delete(&records, &slot.record.id)?;
                removed += 1;
            }
        }
        tx.commit().await?;
        Ok(removed)
    }

    async fn stats(&self, now: Timestamp) -> Result<StoreStats, StoreError> {
        let tx = self.begin(&[RECORDS, JOURNAL, META], false)?;
        let slots = self.all_slots(&tx.store(RECORDS)?).await?;
        let counters = self.counters(&tx.store(META)?).await?;
        let req = tx.store(JOURNAL)?.count().map_err(|e| backend("count", &e))?;
        let in_flight = wait(&req).await.map_err(|e| backend("count", &e))?.as_f64().unwrap_or(0.0) as u64;
        tx.commit().await?;
        let mut stats = StoreStats {
            total: slots.len() as u64,
            dropped: counters.dropped,
            completed: counters.completed,
            abandoned: counters.abandoned,
            oldest_dead_lettered_at: slots.iter().map(|s| s.record.dead_lettered_at).min(),
            in_flight,
            ..StoreStats::default()
        };
        for slot in &slots {
            match slot.state(now) {
                RecordState::Ready => stats.ready += 1,
                RecordState::Leased => stats.leased += 1,
                RecordState::Parked => stats.parked += 1,
            }
        }
        Ok(stats)
    }

    async fn journal_upsert(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        let tx = self.begin(&[JOURNAL], true)?;
        let value = to_js(entry).map_err(StoreError::Backend)?;
        tx.store(JOURNAL)?.put_with_key(&value, &JsValue::from_str(&entry.id)).map_err(|e| backend("put", &e))?;
        tx.commit().await
    }

    async fn journal_forget(&self, id: &str) -> Result<(), StoreError> {
        let tx = self.begin(&[JOURNAL], true)?;
        self.delete(&tx.store(JOURNAL)?, id)?;
        tx.commit().await
    }

    async fn journal_entries(&self) -> Result<Vec<JournalEntry>, StoreError> {
        let tx = self.begin(&[JOURNAL], false)?;
        let req = tx.store(JOURNAL)?.get_all().map_err(|e| backend("getAll", &e))?;
        let values = wait(&req).await.map_err(|e| backend("getAll", &e))?;
        tx.commit().await?;
        js_sys::Array::from(&values).iter().map(|v| self.decode("a journal entry", &v)).collect()
    }
}
