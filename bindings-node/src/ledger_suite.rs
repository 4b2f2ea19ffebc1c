//! A Node-only test hook, as `evaluateVector`: the fleet ledger suite (`fleet::testkit`) over a
//! JS store object declared `shared`, through the same path a client takes (`host_store`), so the
//! JS tests check a JS store against the rules that SQLite and Redis are checked against.

use core::panic::AssertUnwindSafe;

use captcha_dlq_core::fleet::testkit::run_ledger_suite;
use captcha_dlq_core::Timestamp;
use futures::FutureExt;
use napi::bindgen_prelude::{Object, PromiseRaw};
use napi::Env;
use napi_derive::napi;
use serde_json::json;

use crate::error;
use crate::store::JsStore;

/// The suite's clock: the table store runs on the caller's, and the cases never need it to move.
const NOW: Timestamp = Timestamp::from_unix_millis(1_795_255_200_000);

/// Runs every case of the ledger suite over `store`; resolves to how many ran, or rejects with
/// the first case's failure (its assertion message).
#[napi(ts_return_type = "Promise<number>")]
pub fn run_ledger_suite_on<'env>(env: &'env Env, store: Object, nonce: u32) -> napi::Result<PromiseRaw<'env, u32>> {
    let js = JsStore::new(env, &store)?;
    let work = async move {
        let store = captcha_dlq::store::host_store(js).map_err(|e| error::payload(&captcha_dlq::Error::Store(e)))?;
        let Some(ledger) = store.fleet_ledger() else {
            return Err(
                json!({"code": "INVALID_CONFIG", "field": "store", "message": "the store is not declared shared"}),
            );
        };
        let ran = AssertUnwindSafe(run_ledger_suite(&*ledger, NOW, u64::from(nonce))).catch_unwind().await;
        ran.map(|cases| cases as u32).map_err(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a case failed".into());
            json!({"code": "LEDGER_SUITE_FAILED", "message": message})
        })
    };
    error::promise(env, work)
}
