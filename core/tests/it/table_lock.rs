//! The table store's cross-process lock when an operation is dropped half-way
//! (the client's per-call store timeout drops the store's future): the lock it
//! held, or was waiting for, is released by the store's next operation, so
//! other processes (tabs, workers) are not locked out for good.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::task::Context;

use captcha_dlq_core::dlq::table::{MemoryTable, Row, Table, Write};
use captcha_dlq_core::dlq::testkit::{at, sample_record};
use captcha_dlq_core::dlq::{DlqStore, StoreError, TableBackend, TableStore};
use futures_lite::future::{block_on, pending};

/// Rows in memory; records every `lock`/`unlock` and can be told to never finish
/// a `lock` or a `write`, as a Web Lock queued behind another tab or a stuck
/// database would.
#[derive(Default)]
struct Recording {
    rows: MemoryTable,
    calls: Mutex<Vec<&'static str>>,
    lock_hangs: AtomicBool,
    write_hangs: AtomicBool,
}

impl Recording {
    fn calls(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

#[async_trait::async_trait]
impl TableBackend for Recording {
    async fn get(&self, table: Table, key: &str) -> Result<Option<Row>, StoreError> {
        self.rows.get(table, key).await
    }

    async fn scan(
        &self,
        table: Table,
        keep: &(dyn for<'r> Fn(&'r Row) -> bool + Sync),
    ) -> Result<Vec<Row>, StoreError> {
        self.rows.scan(table, keep).await
    }

    async fn write(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        if self.write_hangs.load(Ordering::Relaxed) {
            pending::<()>().await;
        }
        self.rows.write(writes).await
    }

    async fn lock(&self) -> Result<(), StoreError> {
        self.calls.lock().unwrap().push("lock");
        if self.lock_hangs.load(Ordering::Relaxed) {
            pending::<()>().await;
        }
        Ok(())
    }

    async fn unlock(&self) -> Result<(), StoreError> {
        self.calls.lock().unwrap().push("unlock");
        Ok(())
    }
}

/// Polls `future` once, asserts it is still waiting, and drops it: what a timeout does.
fn poll_once_then_drop<F: Future>(future: F) {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(future.as_mut().poll(&mut cx).is_pending(), "the operation was meant to be stuck");
}

#[test]
fn an_operation_dropped_while_holding_the_lock_has_it_released_by_the_next_one() {
    let store = TableStore::over(Recording::default());
    store.backend().write_hangs.store(true, Ordering::Relaxed);
    poll_once_then_drop(store.push(sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0)));
    assert_eq!(store.backend().calls(), ["lock"], "the dropped push held the lock");

    store.backend().write_hangs.store(false, Ordering::Relaxed);
    let count = block_on(store.count(&Default::default(), at(0))).expect("count");
    assert_eq!(count, 0, "the dropped push wrote nothing");
    assert_eq!(store.backend().calls(), ["unlock", "lock", "unlock"]);

    block_on(store.count(&Default::default(), at(0))).expect("count");
    assert_eq!(store.backend().calls(), ["lock", "unlock"], "released once, then back to normal");
}

#[test]
fn an_operation_dropped_while_waiting_for_the_lock_has_its_request_cancelled_by_the_next_one() {
    let store = TableStore::over(Recording::default());
    store.backend().lock_hangs.store(true, Ordering::Relaxed);
    poll_once_then_drop(store.count(&Default::default(), at(0)));
    assert_eq!(store.backend().calls(), ["lock"]);

    store.backend().lock_hangs.store(false, Ordering::Relaxed);
    let pushed = block_on(store.push(sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0)));
    assert!(pushed.is_ok(), "{pushed:?}");
    assert_eq!(store.backend().calls(), ["unlock", "lock", "unlock"]);
}
