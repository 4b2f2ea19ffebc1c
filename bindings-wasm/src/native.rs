//! The native surface of `docs/bindings.md`, exported to JS: `open()` and the
//! objects it leads to (`NativeClient`, `NativeJob`, `NativeStream`,
//! `NativeReplay`, `NativeRecover`). The Node addon exports the same, so one
//! JS wrapper (the package's public API) serves both packages.
//!
//! Each call turns its JS arguments into `serde_json::Value`, lets
//! `captcha_dlq_client::api_values` (or `Dlq::op`) read them in camelCase, calls the
//! client, and hands the answer back as a plain JS object. Rejections are the
//! `Error`s of [`crate::error`]. Nothing is decided here.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use captcha_dlq_client::core::support::json_read::{Casing, FromJson};
use captcha_dlq_client::core::{Event, InvalidTask};
use captcha_dlq_client::options::ClientOptions;
use captcha_dlq_client::{api_values, Backends, Client, Error, EventSink, Outcome, SolveHandle, SolveStream};
use captcha_dlq_client::{CollectAll, RecoverCollector, ReplayCollector};
use futures::channel::oneshot;
use js_sys::{Function, Promise};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use crate::convert::{absent, from_js, json_to_js};
use crate::error::{config, to_js_error, IntoJs};
use crate::liveness::WebLocksLiveness;
use crate::runtime::BrowserRuntime;
use crate::store;
use crate::streams::Shared;
use crate::transport::FetchTransport;

const CAMEL: Casing = Casing::Camel;

/// A JS promise of what `future` resolves to. Every async method goes through here with its future boxed, so
/// the `.wasm` holds one copy of wasm-bindgen-futures' promise glue instead of one per method (~14 KB raw).
fn promise(future: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let boxed: Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>> = Box::pin(future);
    future_to_promise(boxed)
}

/// A JS argument as JSON, or a configuration error naming it.
fn arg(value: JsValue, field: &str) -> Result<Value, JsValue> {
    from_js(value).map_err(|e| config(field, e))
}

/// A positional JS argument read as `T` by the core's rules (`api_values::argument`), named `field`.
fn positional<T: FromJson>(value: JsValue, field: &str) -> Result<T, JsValue> {
    api_values::argument(arg(value, field)?, field).js()
}

/// Starts a client: `options` without `onEvent` (and without `dlq` when that is a store
/// object, passed as `store`, and without `dlqRetention.archive`, passed as `archive`);
/// `onEvent(event)` receives camelCase event objects, `archive(jsonl, count)` what retention
/// evicts ([`crate::archive`]). Resolves to a [`NativeClient`]. (A plain function returning
/// [`promise`]: an `async fn` export would bring its own copy of the promise glue.)
#[wasm_bindgen]
pub fn open(options: JsValue, store: JsValue, on_event: JsValue, archive: JsValue) -> Promise {
    promise(async move { Ok(start(options, store, on_event, archive).await?.into()) })
}

async fn start(options: JsValue, store: JsValue, on_event: JsValue, archive: JsValue) -> Result<NativeClient, JsValue> {
    let mut options = ClientOptions::from_value(arg(options, "options")?, CAMEL).map_err(Error::Config).js()?;
    if options.proxy.is_some() {
        return Err(config(
            "proxy",
            "is not available in the browser: requests go through the browser's own proxy settings",
        ));
    }
    // No file to append to: the archive is a function, passed beside the options (`archive`).
    #[cfg(feature = "retention")]
    if options.dlq_retention.as_ref().is_some_and(|r| r.archive.is_some()) {
        return Err(config(
            "dlqRetention.archive",
            "a browser has no files: give a function, archive(jsonl, count), that keeps the evicted records",
        ));
    }
    // v1 services send CORS headers only when asked; createTask services always do.
    options.submit.header_acao = true;
    let events = event_sink(on_event)?;
    let store = store::open(options.dlq.as_deref(), store, options.store.durability).await.js()?;
    #[allow(clippy::arc_with_non_send_sync)] // wasm32 has one thread; the backends hold JS values
    let backends = Backends {
        runtime: Arc::new(BrowserRuntime),
        transport: Arc::new(FetchTransport::new(options.secrets())),
        liveness: Arc::new(WebLocksLiveness),
        store,
    };
    #[cfg(feature = "retention")]
    if let Some(archive) = crate::archive::CallbackArchive::from_js(archive)? {
        #[allow(clippy::arc_with_non_send_sync)] // wasm32 has one thread; the archive holds a JS function
        let archive = Arc::new(archive);
        return Ok(NativeClient { client: Client::start_archiving(options, backends, events, archive).js()? });
    }
    #[cfg(not(feature = "retention"))]
    if !absent(&archive) {
        return Err(config("dlqRetention.archive", "retention is not in this build of the package"));
    }
    Ok(NativeClient { client: Client::start(options, backends, events).js()? })
}

fn event_sink(on_event: JsValue) -> Result<Option<EventSink>, JsValue> {
    if absent(&on_event) {
        return Ok(None);
    }
    let callback: Function = on_event.dyn_into().map_err(|_| config("onEvent", "expected a function"))?;
    #[allow(clippy::arc_with_non_send_sync)] // wasm32 has one thread; the sink holds a JS function
    let sink: EventSink = Arc::new(move |event: &Event| {
        // What the callback throws is the application's: it must not stop the driver.
        let _ = callback.call1(&JsValue::NULL, &json_to_js(&api_values::value(event, CAMEL)));
    });
    Ok(Some(sink))
}

/// A running client (see `docs/bindings.md`).
#[wasm_bindgen]
#[derive(Debug)]
pub struct NativeClient {
    client: Client,
}

#[wasm_bindgen]
impl NativeClient {
    /// Submits one task; resolves to a [`NativeJob`] once the driver accepted it. `options`
    /// are `solve`'s without its signal (`{labels}`), read by `api_values::solve_options`.
    pub fn submit(&self, task: JsValue, options: JsValue) -> Promise {
        let client = self.client.clone();
        promise(async move {
            let options = api_values::solve_options(arg(options, "options")?, CAMEL).js()?;
            let task = api_values::task(from_js(task).map_err(|e| invalid_task("task", e))?).js()?;
            let handle = client.submit_wanted(task, options.labels, None, options.ttl_ms).await.js()?;
            Ok(NativeJob {
                id: handle.id().to_string(),
                handle: RefCell::new(Some(handle)),
                cancel: RefCell::new(None),
            }
            .into())
        })
    }

    /// Many tasks, results in completion order; `options` as `api_values::batch_options` reads them.
    #[wasm_bindgen(js_name = solveStream)]
    pub fn solve_stream(&self, tasks: JsValue, options: JsValue) -> Result<NativeStream, JsValue> {
        let options = api_values::batch_options(arg(options, "options")?, CAMEL).js()?;
        let tasks = from_js(tasks).map_err(|e| invalid_task("tasks", e))?;
        let inputs = api_values::batch(tasks, &options, CAMEL).js()?;
        Ok(NativeStream { stream: Shared::new(self.client.solve_stream(inputs, options.concurrency)) })
    }

    /// Replays DLQ records; `options` as `api_values::replay_options` reads them.
    #[wasm_bindgen(js_name = replayStream)]
    /// With `collect`, the stream also keeps what `replay()` returns (`result()`).
    pub fn replay_stream(&self, options: JsValue, collect: Option<bool>) -> Result<NativeReplay, JsValue> {
        let options = api_values::replay_options(arg(options, "options")?, CAMEL).js()?;
        let stream = self.client.replay_stream(options);
        let canceller = stream.canceller();
        Ok(NativeReplay { inner: Collecting::new(stream, collect.unwrap_or(false)), canceller })
    }

    /// Recovers the journal; `options` as `api_values::recover_options` reads them.
    #[wasm_bindgen(js_name = recoverStream)]
    /// With `collect`, the stream also keeps what `recover()` returns (`result()`).
    pub fn recover_stream(&self, options: JsValue, collect: Option<bool>) -> Result<NativeRecover, JsValue> {
        let options = api_values::recover_options(arg(options, "options")?, CAMEL).js()?;
        Ok(NativeRecover { inner: Collecting::new(self.client.recover_stream(options), collect.unwrap_or(false)) })
    }

    /// One DLQ operation by name (`Dlq::op`), its arguments an object.
    pub fn dlq(&self, op: String, args: JsValue) -> Promise {
        let dlq = self.client.dlq();
        promise(async move {
            let args = arg(args, &op)?;
            Ok(json_to_js(&dlq.op(&op, args, CAMEL).await.js()?))
        })
    }

    /// The account balance.
    pub fn balance(&self) -> Promise {
        let client = self.client.clone();
        promise(async move { Ok(JsValue::from_f64(client.balance().await.js()?)) })
    }

    /// Tells the provider whether the answer of `providerTaskId` was right.
    pub fn report(&self, provider_task_id: JsValue, good: JsValue) -> Promise {
        let client = self.client.clone();
        promise(async move {
            let id: String = positional(provider_task_id, "providerTaskId")?;
            let good: bool = positional(good, "good")?;
            client.report(&id, good).await.js()?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// The balance at the provider named `name` (its `name` in `providers`).
    #[wasm_bindgen(js_name = balanceOf)]
    pub fn balance_of(&self, name: JsValue) -> Promise {
        let client = self.client.clone();
        promise(async move {
            let name: String = positional(name, "name")?;
            Ok(JsValue::from_f64(client.balance_of(&name).await.js()?))
        })
    }

    /// `[{provider, balance} | {provider, error}]`, in configuration order.
    pub fn balances(&self) -> Promise {
        let client = self.client.clone();
        promise(async move { Ok(json_to_js(&api_values::balances(&client.balances().await, CAMEL))) })
    }

    /// Tells the provider that solved `solution` (as handed out) whether it was right.
    #[wasm_bindgen(js_name = reportSolution)]
    pub fn report_solution(&self, solution: JsValue, good: JsValue) -> Promise {
        let client = self.client.clone();
        promise(async move {
            let solution = api_values::solution_ref(arg(solution, "solution")?, CAMEL).js()?;
            let good: bool = positional(good, "good")?;
            client.report_solution(&solution, good).await.js()?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// What this client spent since it started (`Client::spend`).
    pub fn spend(&self) -> Promise {
        let client = self.client.clone();
        promise(async move { Ok(json_to_js(&api_values::value(&client.spend().await.js()?, CAMEL))) })
    }

    /// The client's counters and gauges now (`Client::metrics`).
    pub fn metrics(&self) -> JsValue {
        json_to_js(&api_values::value(&self.client.metrics(), CAMEL))
    }

    /// The client's metrics in Prometheus' text format (`Client::prometheus_text`): the counters of
    /// `metrics()` and of what happens off the solve path (alerts sent, records retention evicted).
    #[wasm_bindgen(js_name = metricsText)]
    pub fn metrics_text(&self) -> Promise {
        let client = self.client.clone();
        promise(async move { Ok(JsValue::from_str(&client.prometheus_text().await)) })
    }

    /// Lets submissions flow again after an account error was fixed.
    #[wasm_bindgen(js_name = resetCircuit)]
    pub fn reset_circuit(&self) -> Result<(), JsValue> {
        self.client.reset_circuit().js()
    }

    /// What the driver is doing right now.
    pub fn status(&self) -> Promise {
        let client = self.client.clone();
        promise(async move { Ok(json_to_js(&api_values::value(&client.status().await.js()?, CAMEL))) })
    }

    /// The store's health as the driver last saw it.
    #[wasm_bindgen(js_name = storeHealth)]
    pub fn store_health(&self) -> JsValue {
        json_to_js(&api_values::value(&self.client.store_health(), CAMEL))
    }

    /// Resolves once every store write asked for so far has ended (`Client::flush`).
    pub fn flush(&self) -> Promise {
        let client = self.client.clone();
        promise(async move {
            client.flush().await.js()?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Stops the driver once its queued writes are done; tasks in flight stay in the journal.
    pub fn close(&self) -> Promise {
        let client = self.client.clone();
        promise(async move {
            client.close().await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// `{provider, baseUrl}` (never the key).
    pub fn describe(&self) -> JsValue {
        let provider = self.client.provider();
        json_to_js(&json!({ "provider": provider.name(), "baseUrl": provider.base_url() }))
    }
}

fn invalid_task(field: &str, problem: impl Into<String>) -> JsValue {
    to_js_error(&Error::InvalidTask(InvalidTask::new(field, problem)))
}

/// One submitted task.
#[wasm_bindgen]
#[derive(Debug)]
pub struct NativeJob {
    id: String,
    /// Until `wait()` takes it.
    handle: RefCell<Option<SolveHandle>>,
    /// Cancels a `wait()` under way.
    cancel: RefCell<Option<oneshot::Sender<()>>>,
}

#[wasm_bindgen]
impl NativeJob {
    /// The task's record id (its journal entry and, if it fails, its DLQ record).
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// Resolves to the solution or rejects. The answer's journal entry goes (its receipt is
    /// acknowledged) once the solution has become a JS value.
    pub fn wait(&self) -> Promise {
        let Some(handle) = self.handle.borrow_mut().take() else {
            return Promise::reject(&config("wait", "wait() was already called on this job"));
        };
        let (cancel, cancelled) = oneshot::channel();
        *self.cancel.borrow_mut() = Some(cancel);
        promise(async move {
            // A job object freed without cancelling leaves the task running.
            let cancelled = async move {
                if cancelled.await.is_err() {
                    futures::future::pending::<()>().await;
                }
            };
            let delivery = handle.outcome_or_cancel(cancelled).await.and_then(Outcome::into_delivery).js()?;
            let solution = json_to_js(&api_values::solution(&delivery.solution, CAMEL));
            delivery.receipt.ack();
            Ok(solution)
        })
    }

    /// Cancels the task: not sent yet, it is dead-lettered as `Cancelled`; already with the
    /// provider, it runs on and its answer waits in the journal for `recover`.
    pub fn cancel(&self) {
        if let Some(handle) = self.handle.borrow().as_ref() {
            handle.cancel();
        } else if let Some(cancel) = self.cancel.borrow_mut().take() {
            let _ = cancel.send(());
        }
    }
}

/// Results of a batch in completion order.
#[wasm_bindgen]
#[derive(Debug)]
pub struct NativeStream {
    stream: Shared<SolveStream>,
}

#[wasm_bindgen]
impl NativeStream {
    /// The next result (`{index, id, key, labels, ok, solution | error}`), or `null` at the end.
    pub fn next(&self) -> Promise {
        let stream = self.stream.clone();
        promise(async move {
            Ok(match stream.next().await {
                Some(result) => json_to_js(&api_values::solve_result(&result, CAMEL)),
                None => JsValue::NULL,
            })
        })
    }

    /// Stops the batch: tasks not sent are dead-lettered as `Cancelled`, those the provider
    /// has run on (their answers wait in the journal for `recover`).
    pub fn close(&self) {
        self.stream.close();
    }
}

/// A replay's or a recovery's stream and (when the caller collects) what `replay()` /
/// `recover()` return: what [`NativeReplay`] and [`NativeRecover`] share.
#[derive(Debug)]
struct Collecting<C: CollectAll> {
    stream: Shared<C::Stream>,
    collected: Option<Rc<RefCell<C>>>,
}

impl<C: CollectAll> Collecting<C> {
    fn new(stream: C::Stream, collect: bool) -> Self {
        Collecting { stream: Shared::new(stream), collected: collect.then(Rc::default) }
    }

    fn next(&self) -> Promise {
        let (stream, collected) = (self.stream.clone(), self.collected.clone());
        promise(async move {
            match stream.next().await {
                None => Ok(JsValue::NULL),
                Some(Err(e)) => Err(to_js_error(&e)),
                Some(Ok(item)) => {
                    let mut keep = collected.as_ref().map(|c| c.borrow_mut());
                    let (value, receipt) = C::hand_over(item, CAMEL, keep.as_deref_mut());
                    let value = json_to_js(&value);
                    // The answer is in the caller's hands: its record and journal entry may go.
                    if let Some(receipt) = receipt {
                        receipt.ack();
                    }
                    Ok(value)
                }
            }
        })
    }

    fn counts(&self) -> JsValue {
        self.stream.with(|s| json_to_js(&api_values::value(&C::counts(s), CAMEL))).unwrap_or(JsValue::NULL)
    }

    fn result(&self) -> JsValue {
        let Some(collected) = &self.collected else { return JsValue::NULL };
        let counts = self.stream.with(C::counts).unwrap_or_default();
        json_to_js(&collected.take().result(counts, CAMEL))
    }
}

/// Replay outcomes as they come.
#[wasm_bindgen]
#[derive(Debug)]
pub struct NativeReplay {
    inner: Collecting<ReplayCollector>,
    canceller: Arc<AtomicBool>,
}

#[wasm_bindgen]
impl NativeReplay {
    /// The next replayed record (`api_values::replay_item`), or `null` at the end.
    pub fn next(&self) -> Promise {
        self.inner.next()
    }

    /// What `replay()` returns (`api_values::replay_result`), once `next()` gave `null`; `null` when
    /// the stream was not opened to collect.
    pub fn result(&self) -> JsValue {
        self.inner.result()
    }

    /// The counts so far (final once `next()` gave `null`).
    pub fn report(&self) -> JsValue {
        self.inner.counts()
    }

    /// Stops starting records; those already started finish and are reported.
    pub fn cancel(&self) {
        self.canceller.store(true, Ordering::SeqCst);
    }
}

/// Recovered tasks as they end.
#[wasm_bindgen]
#[derive(Debug)]
pub struct NativeRecover {
    inner: Collecting<RecoverCollector>,
}

#[wasm_bindgen]
impl NativeRecover {
    /// The next recovered task (`api_values::recover_item`), or `null` at the end.
    pub fn next(&self) -> Promise {
        self.inner.next()
    }

    /// What `recover()` returns (`api_values::recover_result`), once `next()` gave `null`; `null`
    /// when the stream was not opened to collect.
    pub fn result(&self) -> JsValue {
        self.inner.result()
    }

    /// What the recovery found so far (final once `next()` gave `null`).
    pub fn summary(&self) -> JsValue {
        self.inner.counts()
    }
}
