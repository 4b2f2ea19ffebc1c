//! Browser tests in a page (headless Chromium via `test.sh`): the store
//! conformance suite (`dlq::testkit`) on the IndexedDB store, the memory store
//! and a store object written in JS, reopening a database, and Web Locks
//! liveness. The client itself is tested from JS through the built package
//! (`tests/js`).
#![cfg(target_arch = "wasm32")]

mod common;

use core::time::Duration;

use captcha_dlq_client::core::dlq::testkit::{run_store_suite, sample_record, CASES};
use captcha_dlq_client::core::dlq::DlqStore;
use captcha_dlq_client::options::Durability;
use captcha_dlq_client::Liveness;
use captcha_dlq_wasm::liveness::WebLocksLiveness;
use captcha_dlq_wasm::runtime::now;
use captcha_dlq_wasm::store::{self, host::JsHostCall};
use common::fresh_db;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(inline_js = "
export class MapStore {
  #tables = new Map();
  #table(name) { if (!this.#tables.has(name)) this.#tables.set(name, new Map()); return this.#tables.get(name); }
  get(table, key) { return this.#table(table).get(key) ?? null; }
  async scan(table) { return [...this.#table(table).values()]; }
  write(ops) {
    for (const op of ops) {
      if (op.op === 'put') this.#table(op.table).set(op.key, structuredClone(op.row));
      else this.#table(op.table).delete(op.key);
    }
  }
}
export function mapStore() { return new MapStore(); }
export function holdLock(name) {
  return new Promise((granted) => {
    navigator.locks.request(name, () => new Promise((release) => granted(release)));
  });
}
export async function heldLocks() { return (await navigator.locks.query()).held.map((lock) => lock.name); }
")]
extern "C" {
    /// The example store of `docs/custom-store.md` (with an async `scan`, as stores may answer).
    #[wasm_bindgen(js_name = mapStore)]
    fn map_store() -> JsValue;
    /// Takes the Web Lock `name` as another tab would; resolves to the function releasing it.
    #[wasm_bindgen(js_name = holdLock)]
    async fn hold_lock(name: &str) -> JsValue;
    /// The names of the Web Locks held in this origin.
    #[wasm_bindgen(js_name = heldLocks)]
    async fn held_locks() -> JsValue;
}

async fn lock_held(name: &str) -> bool {
    let names: Vec<String> = serde_wasm_bindgen::from_value(held_locks().await).expect("lock names");
    names.iter().any(|n| n == name)
}

async fn indexed_db(name: &str) -> impl DlqStore {
    let label = format!("indexeddb:{name}");
    let table = store::indexed_db(&label, name).await.expect("the database opens");
    store::over(JsHostCall::new(table, label)).expect("the table object speaks the protocol")
}

#[wasm_bindgen_test]
async fn indexeddb_store_passes_the_store_suite() {
    let ran = run_store_suite(|| async { indexed_db(&fresh_db("suite")).await }).await;
    assert_eq!(ran, CASES.len());
}

#[wasm_bindgen_test]
async fn memory_store_passes_the_store_suite() {
    let ran = run_store_suite(|| async { store::memory() }).await;
    assert_eq!(ran, CASES.len());
}

#[wasm_bindgen_test]
async fn a_js_store_object_passes_the_store_suite() {
    let ran = run_store_suite(|| async {
        store::over(JsHostCall::new(map_store(), "the custom store")).expect("speaks the protocol")
    })
    .await;
    assert_eq!(ran, CASES.len());
}

#[wasm_bindgen_test]
async fn an_indexeddb_operation_dropped_while_waiting_for_the_lock_leaves_no_lock_behind() {
    let name = fresh_db("dropped");
    let lock = format!("captcha-dlq-store:{name}");
    let store = indexed_db(&name).await;
    let other_tab: js_sys::Function = hold_lock(&lock).await.into();
    // The client's store timeout drops an operation queued behind the other tab.
    let filter = Default::default();
    let count = store.count(&filter, now());
    let timeout = gloo_timers::future::TimeoutFuture::new(50);
    match futures::future::select(Box::pin(count), timeout).await {
        futures::future::Either::Left(_) => panic!("the count ran while another tab held the lock"),
        futures::future::Either::Right(_) => {}
    }
    other_tab.call0(&JsValue::NULL).expect("the other tab releases");
    // The dropped request is withdrawn by the store's next operation, which must not wait
    // behind it (before, it waited for ever), and nothing stays held afterwards.
    let record = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0);
    store.push(record).await.expect("push after the dropped count");
    assert_eq!(store.count(&Default::default(), now()).await.expect("count"), 1);
    assert!(!lock_held(&lock).await, "{lock} is still held");
}

#[wasm_bindgen_test]
async fn indexeddb_store_survives_reopening() {
    let name = fresh_db("reopen");
    let store = indexed_db(&name).await;
    let record = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0);
    store.push(record.clone()).await.expect("push");
    drop(store);
    let again = indexed_db(&name).await;
    let found = again.peek(&Default::default(), Default::default(), now()).await.expect("peek");
    assert_eq!(found, vec![record]);
}

#[wasm_bindgen_test]
async fn a_store_option_that_is_not_a_browser_store_is_named() {
    for (spec, expected) in [("sqlite:x", "is not a browser store"), ("indexeddb:", "needs a database name")] {
        let e = store::open(Some(spec), JsValue::UNDEFINED, Durability::Process).await.err().expect("refused");
        assert_eq!((e.code(), e.field()), ("INVALID_CONFIG", Some("dlq")), "{e}");
        assert!(e.to_string().contains(expected), "{e}");
    }
    let object = js_sys::Object::new();
    let e = store::open(None, object.into(), Durability::Process).await.err().expect("refused");
    assert!(e.to_string().contains("has no `get` method"), "{e}");
}

/// No browser store is a SQLite file: power-loss durability is refused, naming the option and
/// the store, before anything is opened.
#[wasm_bindgen_test]
async fn power_loss_durability_is_refused_for_browser_stores() {
    let object: JsValue = js_sys::Object::new().into();
    for (spec, object, named) in [
        (Some("indexeddb:durability"), JsValue::UNDEFINED, "\"indexeddb:durability\""),
        (Some("memory"), JsValue::UNDEFINED, "\"memory\""),
        (None, object, "the custom store"),
    ] {
        let e = store::open(spec, object, Durability::PowerLoss).await.err().expect("refused");
        assert_eq!((e.code(), e.field()), ("INVALID_CONFIG", Some("store.durability")), "{e}");
        assert!(e.to_string().contains(named) && e.to_string().contains("SQLite DLQ only"), "{e}");
    }
}

#[wasm_bindgen_test]
async fn an_owner_is_alive_while_its_client_holds_its_web_lock() {
    let liveness = WebLocksLiveness;
    let grace = Duration::from_secs(60);
    let owner = liveness.register();
    assert!(owner.starts_with("web/"), "{owner}");
    let lock = format!("captcha-dlq-owner:{owner}");
    // The lock request is granted on a later turn of the event loop.
    gloo_timers::future::TimeoutFuture::new(20).await;
    assert!(lock_held(&lock).await, "an open client holds {lock}");
    assert!(!liveness.is_gone(&owner, now(), now(), grace).await, "a registered owner is alive");
    liveness.release(&owner);
    gloo_timers::future::TimeoutFuture::new(20).await;
    assert!(!lock_held(&lock).await, "a closed client's lock is released");
    // No longer one of this realm's clients: judged by its lock, which nobody holds.
    assert!(liveness.is_gone(&owner, now(), now(), grace).await, "a released owner is gone");
    assert!(liveness.is_gone("web/never-registered", now(), now(), grace).await, "nobody holds its lock");
    // A native owner cannot be seen from a browser: gone only once its entry is older than the grace.
    let native = "host/42/01JD7Z6Q8V3K9R2M4N5P6Q7R8S";
    assert!(!liveness.is_gone(native, now(), now(), grace).await);
    let old = captcha_dlq_client::core::Timestamp::from_unix_millis(0);
    assert!(liveness.is_gone(native, old, now(), grace).await);
}

#[wasm_bindgen(inline_js = "
export function jsonSamples() {
  const sparse = [1, , 3];
  const dated = new Date(0);
  return [
    null, undefined, true, 0, -0, 42, -7, 2 ** 53 - 1, 2 ** 53, 0.1, -2.5e-300, NaN, Infinity, 12n, -(2n ** 63n),
    2n ** 64n - 1n, 'text', '', [], sparse, { a: 1, b: [null, { c: 'd' }], e: undefined },
    new Map([['k', 1], ['m', new Map([['n', [true]]])]]), dated, Object.create(null),
  ];
}
export function notJson() {
  const cycle = {};
  cycle.self = cycle;
  return [() => 1, Symbol('s'), new Set([1]), new Uint8Array([1, 2]), new ArrayBuffer(2), 2n ** 64n, new Map([[1, 2]]), cycle];
}
")]
extern "C" {
    /// Values JSON can hold, of every JS type the hosts may hand over.
    #[wasm_bindgen(js_name = jsonSamples)]
    fn json_samples() -> js_sys::Array;
    /// Values JSON cannot hold.
    #[wasm_bindgen(js_name = notJson)]
    fn not_json() -> js_sys::Array;
}

#[wasm_bindgen_test]
fn js_values_are_read_as_json_as_serde_wasm_bindgen_reads_them() {
    use captcha_dlq_wasm::convert::from_js;
    for sample in json_samples().iter() {
        let expected: serde_json::Value =
            serde_wasm_bindgen::from_value(sample.clone()).expect("serde-wasm-bindgen reads it");
        assert_eq!(from_js(sample.clone()), Ok(expected), "{sample:?}");
    }
    for (i, value) in not_json().iter().enumerate() {
        let problem = from_js(value.clone()).expect_err(&format!("{value:?} refused"));
        let wanted = ["Function", "Symbol", "Set", "byte array", "byte array", "BigInt", "expected a string", "nested"];
        assert!(problem.contains(wanted[i]), "{value:?}: {problem}");
    }
}
