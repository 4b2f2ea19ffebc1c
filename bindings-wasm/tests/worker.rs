//! The seeds' batch inside a dedicated worker (no `window`), with the DLQ in IndexedDB.
#![cfg(target_arch = "wasm32")]

mod common;

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
async fn seeds_batch_in_a_dedicated_worker() {
    common::seeds_batch(&format!("indexeddb:{}", common::fresh_db("worker"))).await;
}
