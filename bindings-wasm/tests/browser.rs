//! Browser tests in a page (headless Chromium via `test.sh`): the IndexedDB
//! and memory stores' conformance suite, filter keys, and reopening a database.
//! The client itself is tested from JS (`tests/js/site/suite.js`).
#![cfg(target_arch = "wasm32")]

mod common;

use captcha_dlq_core::dlq::testkit::{run_store_suite, CASES};
use captcha_dlq_core::dlq::DlqStore;
use captcha_dlq_core::Timestamp;
use captcha_dlq_wasm::store;
use common::fresh_db;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn indexeddb_store_passes_the_store_suite() {
    let ran = run_store_suite(|| async { store::indexeddb(&fresh_db("suite")).await.expect("database opens") }).await;
    assert_eq!(ran, CASES.len());
}

#[wasm_bindgen_test]
async fn memory_store_passes_the_store_suite() {
    let ran = run_store_suite(|| async { store::memory() }).await;
    assert_eq!(ran, CASES.len());
}

#[wasm_bindgen_test]
async fn store_filters_by_sitekey_and_page_host_as_the_core_derives_them() {
    let store = store::indexeddb(&fresh_db("keys")).await.expect("opens");
    let sample = captcha_dlq_core::dlq::testkit::sample_record;
    let mut other = sample("01JD7Z6Q8V3K9R2M4N5P6Q7R8T", 1);
    other.task = captcha_dlq_core::dlq::testkit::sample_task("other-key", "https://shop.example.org:8443/cart");
    for record in [sample("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0), other.clone()] {
        store.push(record).await.expect("push");
    }
    let now = Timestamp::from_unix_millis(js_sys::Date::now() as u64);
    let by_host = captcha_dlq_core::dlq::Filter { page_host: Some("shop.example.org".into()), ..Default::default() };
    let by_key = captcha_dlq_core::dlq::Filter { sitekey: Some("other-key".into()), ..Default::default() };
    for filter in [by_host, by_key] {
        let found = store.peek(&filter, Default::default(), now).await.expect("peek");
        assert_eq!(found.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), vec![other.id.as_str()], "{filter:?}");
    }
}

#[wasm_bindgen_test]
async fn indexeddb_store_survives_reopening() {
    let name = fresh_db("reopen");
    let store = store::indexeddb(&name).await.expect("opens");
    let record = captcha_dlq_core::dlq::testkit::sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0);
    store.push(record.clone()).await.expect("push");
    drop(store);
    let again = store::indexeddb(&name).await.expect("reopens");
    let now = Timestamp::from_unix_millis(js_sys::Date::now() as u64);
    let found = again.peek(&Default::default(), Default::default(), now).await.expect("peek");
    assert_eq!(found, vec![record]);
}
