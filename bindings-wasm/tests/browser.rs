//! Browser tests in a page (headless Chromium via `test.sh`): the IndexedDB
//! and memory stores' conformance suite, the seeds' batch against
//! the mock solver, recovery of a closed client's journal, a host JS store,
//! and bad input.
#![cfg(target_arch = "wasm32")]

mod common;

use captcha_dlq_core::dlq::testkit::{run_store_suite, CASES};
use captcha_dlq_core::dlq::DlqStore;
use captcha_dlq_core::Timestamp;
use captcha_dlq_wasm::store;
use captcha_dlq_wasm::WasmClient;
use common::*;
use serde_json::{json, Value};
use wasm_bindgen::JsValue;
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

#[wasm_bindgen_test]
async fn seeds_batch_in_a_page_with_indexeddb() {
    seeds_batch(&format!("indexeddb:{}", fresh_db("batch"))).await;
}

#[wasm_bindgen_test]
async fn seeds_batch_in_a_page_with_memory() {
    seeds_batch("memory").await;
}

/// Fast polling that waits long enough for a task the mock answers after a few hundred ms.
fn patient_options(dlq: &str) -> Value {
    let mut o = fast_options(dlq);
    o["polling"]["maxPolls"] = json!(200);
    o
}

#[wasm_bindgen_test]
async fn a_closed_clients_tasks_are_recovered_from_the_journal() {
    let dlq = format!("indexeddb:{}", fresh_db("recover"));
    script(json!({"default": {"solve_after_ms": 400}})).await;
    let first = WasmClient::create(js(&patient_options(&dlq))).await.expect("client opens");
    // Submitted, journaled, then the client goes away (a reload) before the answer.
    let pending = first.solve(js(&page_task(7)), JsValue::UNDEFINED);
    let mut waited = 0;
    loop {
        let stats = json(&wait(first.stats()).await.expect("stats"));
        if stats["in_flight"] == 1 {
            break;
        }
        waited += 1;
        assert!(waited < 200, "the task never reached the journal: {stats}");
        gloo_timers::future::TimeoutFuture::new(10).await;
    }
    wait(first.close()).await.expect("close");
    let closed = prop_str(&error_of(wait(pending).await), "code");
    assert_eq!(closed, "CLOSED");

    let second = WasmClient::create(js(&patient_options(&dlq))).await.expect("client reopens");
    let report = json(&wait(second.recover()).await.expect("recover resolves"));
    assert_eq!(report["found"], 1, "{report}");
    assert_eq!(report["dead_lettered"], 0, "{report}");
    let solved = &report["solved"][0];
    assert!(solved["solution"]["text"].as_str().unwrap_or("").starts_with("03AGdBq2"), "{report}");
    let stats = json(&wait(second.stats()).await.expect("stats"));
    assert_eq!((stats["in_flight"].clone(), stats["total"].clone()), (json!(0), json!(0)), "{stats}");
    wait(second.close()).await.expect("close");
}

#[wasm_bindgen_test]
async fn a_live_clients_journal_is_left_alone() {
    let dlq = format!("indexeddb:{}", fresh_db("live"));
    script(json!({"default": {"solve_after_ms": 300}})).await;
    let owner = WasmClient::create(js(&patient_options(&dlq))).await.expect("client opens");
    let pending = owner.solve(js(&page_task(8)), JsValue::UNDEFINED);
    let neighbour = WasmClient::create(js(&patient_options(&dlq))).await.expect("neighbour opens");
    let mut report = json!({});
    for _ in 0..200 {
        report = json(&wait(neighbour.recover()).await.expect("recover"));
        if report["skipped_live"] == 1 {
            break;
        }
        gloo_timers::future::TimeoutFuture::new(10).await;
    }
    assert_eq!((report["skipped_live"].clone(), report["found"].clone()), (json!(1), json!(0)), "{report}");
    let solution = wait(pending).await.expect("the owner still solves it");
    assert!(prop_str(&solution, "text").starts_with("03AGdBq2"));
    wait(owner.close()).await.expect("close");
    wait(neighbour.close()).await.expect("close");
}

/// A host store written in JS keeping records and journal entries in plain maps.
fn js_store() -> JsValue {
    let make = js_sys::Function::new_no_args(
        r#"
        const records = new Map(), journal = new Map(), log = [];
        return {
          log, records, journal,
          push(r) { log.push('push'); journal.delete(r.id); const replaced = records.has(r.id); records.set(r.id, r); return { replaced, evicted: [] }; },
          receive() { return []; },
          complete() {}, abandon() { return 'ready'; },
          park() { return false; }, unpark() { return false; },
          peek() { return [...records.values()]; },
          count() { return records.size; },
          purge() { const n = records.size; records.clear(); return n; },
          async stats() { return { total: records.size, ready: records.size, leased: 0, parked: 0, dropped: 0,
                                   completed: 0, abandoned: 0, oldest_dead_lettered_at: null, in_flight: journal.size }; },
          journalUpsert(e) { log.push('upsert'); journal.set(e.id, e); },
          journalForget(id) { log.push('forget'); journal.delete(id); },
          journalEntries() { return [...journal.values()]; },
        };"#,
    );
    make.call0(&JsValue::UNDEFINED).expect("store object")
}

#[wasm_bindgen_test]
async fn a_host_js_store_receives_records_and_journal() {
    script(json!({"rules": [{"match": {"page_url_contains": "/page/2"}, "behavior": {"outcome": "unsolvable"}}]}))
        .await;
    let store = js_store();
    let mut options = fast_options("memory");
    options["dlq"] = Value::Null;
    let options = js(&options);
    js_sys::Reflect::set(&options, &"dlq".into(), &store).expect("set");
    let client = WasmClient::create(options).await.expect("client opens");
    let solved = wait(client.solve(js(&page_task(1)), JsValue::UNDEFINED)).await.expect("solved");
    assert!(prop_str(&solved, "text").starts_with("03AGdBq2"));
    let failed = error_of(wait(client.solve(js(&page_task(2)), JsValue::UNDEFINED)).await);
    assert_eq!(prop_str(&failed, "code"), "SOLVE_FAILED");
    let stored = json(
        &js_sys::Array::from(&wait(client.peek(JsValue::UNDEFINED, JsValue::UNDEFINED)).await.expect("peek")).get(0),
    );
    assert_eq!(stored["schema"], 1);
    assert_eq!(stored["reason"], "ERROR_CAPTCHA_UNSOLVABLE");
    assert_eq!(stored["task"]["page_url"], "https://example.com/page/2");
    let log: Vec<String> = js_sys::Array::from(&prop(&store, "log")).iter().filter_map(|v| v.as_string()).collect();
    assert!(log.contains(&"upsert".to_string()) && log.contains(&"forget".to_string()), "{log:?}");
    assert_eq!(log.last().map(String::as_str), Some("push"), "{log:?}");
    assert_eq!(prop(&prop(&store, "journal"), "size").as_f64(), Some(0.0));
    wait(client.close()).await.expect("close");
}

#[wasm_bindgen_test]
async fn a_store_object_missing_a_method_is_named() {
    let store = js_store();
    js_sys::Reflect::delete_property(store.unchecked_ref::<js_sys::Object>(), &"journalForget".into()).expect("delete");
    let options = js(&fast_options("memory"));
    js_sys::Reflect::set(&options, &"dlq".into(), &store).expect("set");
    let e = WasmClient::create(options).await.expect_err("refused");
    assert_eq!(prop_str(&e, "code"), "INVALID_CONFIG");
    assert_eq!(prop_str(&e, "field"), "dlq.journalForget");
}

use wasm_bindgen::JsCast;

#[wasm_bindgen_test]
async fn bad_input_names_the_field() {
    let bad_options = [
        (json!({"provider": "captchaai"}), "apiKey"),
        (json!({"apiKey": "k", "dlq": "memory", "polling": {"intervalMs": "fast"}}), "polling.interval_ms"),
        (json!({"apiKey": "k", "dlq": "memory", "retry": {"maxAttempts": 0}}), "retry.max_attempts"),
        (json!({"apiKey": "k", "dlq": "memory", "provider": "nope"}), "provider"),
        (json!({"apiKey": "k", "dlq": "sqlite:x"}), "dlq"),
        (json!({"apiKey": "k", "dlq": "memory", "colour": 1}), "colour"),
        (json!({"apiKey": "k", "dlq": "memory", "baseUrl": "http://solver.example.com"}), "baseUrl"),
    ];
    for (options, field) in bad_options {
        let e = WasmClient::create(js(&options)).await.err().unwrap_or_else(|| panic!("{options} was accepted"));
        assert_eq!(prop_str(&e, "code"), "INVALID_CONFIG", "{options}");
        assert_eq!(prop_str(&e, "field"), field, "{options}: {}", prop_str(&e, "message"));
        assert!(!prop_str(&e, "message").contains("test-key"));
    }
    let client = WasmClient::create(js(&fast_options("memory"))).await.expect("opens");
    let bad_tasks = [
        (json!({"type": "recaptcha_v2", "pageUrl": "https://example.com/"}), "sitekey"),
        (json!({"sitekey": "x"}), "type"),
        // Named as the caller spelled it.
        (json!({"type": "recaptcha_v2", "sitekey": "x", "pageUrl": 5}), "pageUrl"),
        (json!({"type": "recaptcha_v2", "sitekey": "x", "page_url": "ftp://x"}), "page_url"),
        (json!("not a task"), "task"),
    ];
    for (task, field) in bad_tasks {
        let e = error_of(wait(client.solve(js(&task), JsValue::UNDEFINED)).await);
        assert_eq!(prop_str(&e, "code"), "INVALID_TASK", "{task}");
        assert_eq!(prop_str(&e, "field"), field, "{task}: {}", prop_str(&e, "message"));
    }
    let e = error_of(wait(client.solve(js(&page_task(1)), js(&json!({"labels": {"n": 1}})))).await);
    assert_eq!((prop_str(&e, "code"), prop_str(&e, "field")), ("INVALID_CONFIG".into(), "labels".into()));
    let e = error_of(wait(client.import_json("{\"nope\"".into())).await);
    assert_eq!(prop_str(&e, "code"), "INVALID_CONFIG");
    wait(client.close()).await.expect("close");
    let e = error_of(wait(client.solve(js(&page_task(1)), JsValue::UNDEFINED)).await);
    assert_eq!(prop_str(&e, "code"), "CLOSED");
}

#[wasm_bindgen_test]
async fn an_abort_signal_cancels_the_task() {
    script(json!({"default": {"outcome": "never_ready"}})).await;
    let client = WasmClient::create(js(&fast_options("memory"))).await.expect("opens");
    let controller = web_sys::AbortController::new().expect("controller");
    let options = js_sys::Object::new();
    js_sys::Reflect::set(&options, &"signal".into(), &controller.signal()).expect("set");
    let pending = client.solve(js(&page_task(1)), options.into());
    gloo_timers::future::TimeoutFuture::new(30).await;
    controller.abort();
    let e = error_of(wait(pending).await);
    assert_eq!(prop_str(&e, "code"), "ABORTED");
    let records = json(&wait(client.peek(JsValue::UNDEFINED, JsValue::UNDEFINED)).await.expect("peek"));
    assert_eq!(records[0]["reason"], "Cancelled", "{records}");
    wait(client.close()).await.expect("close");
}

#[wasm_bindgen_test]
async fn balance_and_reports_reach_the_mock() {
    script(json!({"balance": 12.5})).await;
    let client = WasmClient::create(js(&fast_options("memory"))).await.expect("opens");
    let before = counters().await;
    let balance = wait(client.balance()).await.expect("balance resolves");
    assert_eq!(balance.as_f64(), Some(12.5));

    let solution = wait(client.solve(js(&page_task(1)), JsValue::UNDEFINED)).await.expect("solved");
    let id = prop_str(&solution, "provider_task_id");
    assert!(!id.is_empty(), "the solution names its provider task: {}", json(&solution));
    let good = wait(client.report(id.clone().into(), true.into())).await.expect("good report resolves");
    assert!(good.is_undefined());
    wait(client.report(id.into(), false.into())).await.expect("bad report resolves");
    let after = counters().await;
    let delta = |name: &str| after[name].as_u64().unwrap_or(0) - before[name].as_u64().unwrap_or(0);
    assert_eq!((delta("balance_checks"), delta("reports_good"), delta("reports_bad")), (1, 1, 1), "{after}");

    // The mock refuses a report on a task it never saw: the provider's code and class come through.
    let e = error_of(wait(client.report("999999999".into(), false.into())).await);
    assert_eq!(prop_str(&e, "code"), "PROVIDER_ERROR", "{}", prop_str(&e, "message"));
    assert_eq!((prop_str(&e, "reason"), prop_str(&e, "class")), ("ERROR_WRONG_CAPTCHA_ID".into(), "fix_input".into()));
    let e = error_of(wait(client.report(JsValue::from_f64(5.0), true.into())).await);
    assert_eq!((prop_str(&e, "code"), prop_str(&e, "field")), ("INVALID_CONFIG".into(), "providerTaskId".into()));
    let e = error_of(wait(client.report("1".into(), JsValue::from_str("yes"))).await);
    assert_eq!((prop_str(&e, "code"), prop_str(&e, "field")), ("INVALID_CONFIG".into(), "good".into()));
    wait(client.close()).await.expect("close");
}

#[wasm_bindgen_test]
async fn a_report_the_provider_does_not_take_names_report() {
    script(json!({})).await;
    // CapMonster takes reports of wrong answers only.
    let mut options = fast_options("memory");
    options["provider"] = json!("capmonster");
    let client = WasmClient::create(js(&options)).await.expect("opens");
    let before = counters().await;
    let e = error_of(wait(client.report("1".into(), true.into())).await);
    assert_eq!((prop_str(&e, "code"), prop_str(&e, "field")), ("INVALID_CONFIG".into(), "report".into()));
    assert!(prop_str(&e, "message").contains("capmonster"), "{}", prop_str(&e, "message"));
    assert_eq!(counters().await["requests"], before["requests"], "nothing was sent");
    wait(client.close()).await.expect("close");
}

#[wasm_bindgen_test]
async fn account_and_network_failures_of_direct_requests() {
    let mut options = fast_options("memory");
    options["apiKey"] = json!("secret-key-123");
    script(json!({"account_errors": {"secret-key-123": "ERROR_KEY_DOES_NOT_EXIST"}})).await;
    let client = WasmClient::create(js(&options)).await.expect("opens");
    let e = error_of(wait(client.balance()).await);
    assert_eq!(prop_str(&e, "code"), "ACCOUNT_ERROR");
    assert_eq!(
        (prop_str(&e, "reason"), prop_str(&e, "class")),
        ("ERROR_KEY_DOES_NOT_EXIST".into(), "account_terminal".into())
    );
    assert!(!prop_str(&e, "message").contains("secret-key-123"), "{}", prop_str(&e, "message"));
    wait(client.close()).await.expect("close");

    // Nothing listens there: a transient network failure, without the key (it is in the URL).
    options["baseUrl"] = json!("http://127.0.0.1:1");
    let client = WasmClient::create(js(&options)).await.expect("opens");
    let e = error_of(wait(client.balance()).await);
    assert_eq!(prop_str(&e, "code"), "PROVIDER_ERROR", "{}", prop_str(&e, "message"));
    assert_eq!((prop_str(&e, "reason"), prop_str(&e, "class")), ("Network".into(), "transient".into()));
    assert!(!prop_str(&e, "message").contains("secret-key-123"), "{}", prop_str(&e, "message"));
    wait(client.close()).await.expect("close");
}

#[wasm_bindgen_test]
async fn reset_circuit_lets_submissions_flow_again() {
    script(json!({"account_errors": {"test-key": "ERROR_KEY_DOES_NOT_EXIST"}})).await;
    let client = WasmClient::create(js(&fast_options("memory"))).await.expect("opens");
    let e = error_of(wait(client.solve(js(&page_task(1)), JsValue::UNDEFINED)).await);
    assert_eq!(prop_str(&e, "code"), "ACCOUNT_ERROR");
    // The key is fixed, but the open circuit keeps refusing until it is reset.
    script(json!({})).await;
    let e = error_of(wait(client.solve(js(&page_task(2)), JsValue::UNDEFINED)).await);
    assert_eq!(json(&prop(&e, "record"))["reason"], "CircuitOpen");
    let reset = wait(client.reset_circuit()).await.expect("resetCircuit resolves");
    assert!(reset.is_undefined());
    let solution = wait(client.solve(js(&page_task(3)), JsValue::UNDEFINED)).await.expect("solved after the reset");
    assert!(prop_str(&solution, "text").starts_with("03AGdBq2"));
    wait(client.close()).await.expect("close");
    let e = error_of(wait(client.reset_circuit()).await);
    assert_eq!(prop_str(&e, "code"), "CLOSED");
}
