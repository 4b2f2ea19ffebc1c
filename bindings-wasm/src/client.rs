//! The exported client: `WasmClient.create(options)`, `solve`, `solveMany`,
//! `replay`, `recover`, the DLQ operations, `balance`, `report`,
//! `resetCircuit` and `close`. Every method returns a promise of plain objects
//! (records in their schema-1 JSON shape) and rejects with the errors of
//! `error.rs`; nothing panics on input.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use captcha_dlq_core::class::reason;
use captcha_dlq_core::dlq::analysis::Analysis;
use captcha_dlq_core::dlq::export::{export_json, import};
use captcha_dlq_core::dlq::replay::{ReplayDecision, ReplayPolicy, ReplayReport};
use captcha_dlq_core::dlq::{DlqStore, Filter, Page, RecordState};
use captcha_dlq_core::json_read::FromJson;
use captcha_dlq_core::provider::SubmitOptions;
use captcha_dlq_core::{ConfigError, Engine, InvalidTask, JobId, Provider, Solution, Task};
use futures::channel::{mpsc, oneshot};
use futures::StreamExt;
use js_sys::{Function, Promise, Reflect};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use crate::clock::now;
use crate::convert::{to_js, to_json};
use crate::driver::{Command, Driver, EventSink, JobOutcome};
use crate::error::{Error, Result};
use crate::options::{decode, parse, snake};
use crate::owner::{live_owners, Owner};
use crate::store::{open_store, JsStore};
use crate::transport::Transport;

struct Inner {
    commands: mpsc::UnboundedSender<Command>,
    store: Rc<JsStore>,
    provider: Provider,
    /// For `balance` and `report`, which do not go through the engine.
    transport: Transport,
    request_timeout: Duration,
    replay: ReplayPolicy,
    owner: Owner,
}

/// A solving client bound to one provider, key and DLQ.
#[wasm_bindgen]
pub struct WasmClient {
    inner: Rc<Inner>,
}

impl std::fmt::Debug for WasmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmClient").field("provider", &self.inner.provider.name()).field("api_key", &"***").finish()
    }
}

/// Checks client options without opening anything (for a synchronous constructor).
#[wasm_bindgen(js_name = validateOptions)]
pub fn validate_options(options: JsValue) -> Result<(), JsValue> {
    let o = parse(&options).map_err(Error::from)?;
    provider(&o.provider, o.base_url.as_deref(), o.allow_insecure_http).map_err(Error::from)?;
    Ok(())
}

fn provider(spec: &str, base_url: Option<&str>, allow_insecure: bool) -> Result<Provider, ConfigError> {
    let mut provider = Provider::from_spec(spec).map_err(|e| ConfigError::new("provider", e.problem))?;
    if let Some(url) = base_url {
        provider = provider.with_base_url(url).map_err(|e| ConfigError::new("baseUrl", e.problem))?;
    }
    if provider.base_url().starts_with("http://") && !provider.is_loopback() && !allow_insecure {
        return Err(ConfigError::new(
            "baseUrl",
            format!(
                "{} is plain http: the API key would travel unencrypted; use https or set allowInsecureHttp",
                provider.base_url()
            ),
        ));
    }
    Ok(provider)
}

/// The options of one `solve`.
struct SolveOptions {
    labels: BTreeMap<String, String>,
    signal: Option<web_sys::AbortSignal>,
}

fn get(object: &JsValue, name: &str) -> JsValue {
    if !object.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(object, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

fn labels(value: &JsValue) -> Result<BTreeMap<String, String>> {
    if absent(value) {
        return Ok(BTreeMap::new());
    }
    let json = to_json(value).map_err(|e| ConfigError::new("labels", e))?;
    BTreeMap::from_json(json)
        .map_err(|e| ConfigError::new("labels", format!("expected an object of strings: {e}")).into())
}

fn solve_options(options: &JsValue) -> Result<SolveOptions> {
    let signal = match get(options, "signal") {
        v if absent(&v) => None,
        v => Some(
            v.dyn_into::<web_sys::AbortSignal>().map_err(|_| ConfigError::new("signal", "expected an AbortSignal"))?,
        ),
    };
    Ok(SolveOptions { labels: labels(&get(options, "labels"))?, signal })
}

fn task(value: &JsValue) -> Result<Task> {
    let json = to_json(value).map_err(|e| InvalidTask::new("task", e))?;
    Ok(Task::from_json_value(json)?)
}

/// A filter from JS: top-level keys may be camelCase; label keys are kept as given.
fn filter(value: &JsValue) -> Result<Filter> {
    if absent(value) {
        return Ok(Filter::all());
    }
    let json = to_json(value).map_err(|e| ConfigError::new("filter", e))?;
    let Value::Object(map) = json else {
        return Err(ConfigError::new("filter", "expected an object").into());
    };
    let map = map.into_iter().map(|(k, v)| (snake(&k), v)).collect();
    Filter::from_json(Value::Object(map)).map_err(|e| ConfigError::new(e.field_under("filter"), e.problem).into())
}

fn js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    to_js(value).map_err(|e| JsValue::from(js_sys::Error::new(&e)))
}

fn solution_js(solution: &Solution) -> Result<JsValue, JsValue> {
    js(solution)
}

/// Boxed so that every method shares one `future_to_promise` instantiation (module size).
fn promise(future: impl std::future::Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let boxed: std::pin::Pin<Box<dyn std::future::Future<Output = Result<JsValue, JsValue>>>> = Box::pin(future);
    future_to_promise(boxed)
}

#[wasm_bindgen]
impl WasmClient {
    /// Opens the DLQ and starts the driver. Options: see the package README.
    pub async fn create(options: JsValue) -> Result<WasmClient, JsValue> {
        let o = parse(&options).map_err(Error::from)?;
        let provider = provider(&o.provider, o.base_url.as_deref(), o.allow_insecure_http).map_err(Error::from)?;
        let store = Rc::new(open_store(&o.dlq).await?);
        let key = o.api_key;
        let mut config = o.config;
        let request_timeout = Duration::from_millis(config.retry.request_timeout_ms);
        if config.seed == 0 {
            config.seed = (js_sys::Math::random() * 9.0e15) as u64 ^ (js_sys::Date::now() as u64);
        }
        // v1 services answer browsers only when asked for CORS headers.
        let submit = SubmitOptions { header_acao: true, ..SubmitOptions::default() };
        let engine = Engine::new(provider.clone(), key.clone(), config).with_submit_options(submit);
        let events: Option<EventSink> = o.on_event.map(|f| {
            let sink: EventSink = Rc::new(move |event| {
                if let Ok(value) = to_js(&EventView {
                    name: event.name(),
                    warning: event.is_warning(),
                    detail: event,
                    message: event.to_string(),
                }) {
                    // A throwing callback must not stop the driver.
                    let _ = f.call1(&JsValue::UNDEFINED, &value);
                }
            });
            sink
        });
        let owner = Owner::register();
        let transport = Transport::new(key);
        let driver = Driver::new(engine, transport.clone(), store.clone(), owner.id().to_string(), events);
        let (tx, rx) = mpsc::unbounded();
        wasm_bindgen_futures::spawn_local(driver.run(rx));
        Ok(WasmClient {
            inner: Rc::new(Inner {
                commands: tx,
                store,
                provider,
                transport,
                request_timeout,
                replay: o.replay,
                owner,
            }),
        })
    }

    /// Solves one task; rejects with SOLVE_FAILED (and the record), INVALID_TASK or ABORTED.
    pub fn solve(&self, task_value: JsValue, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let parsed = task(&task_value).and_then(|t| Ok((t, solve_options(&options)?)));
            let (task, opts) = parsed?;
            let solution = inner.solve(task, opts).await?;
            solution_js(&solution)
        })
    }

    /// Solves many tasks, at most `concurrency` at once; resolves to one
    /// `{status: 'fulfilled', value}` or `{status: 'rejected', reason}` per task, in order.
    #[wasm_bindgen(js_name = solveMany)]
    pub fn solve_many(&self, tasks: JsValue, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            if !js_sys::Array::is_array(&tasks) {
                return Err(Error::from(InvalidTask::new("tasks", "expected an array of tasks")).into());
            }
            let concurrency = match get(&options, "concurrency") {
                v if absent(&v) => 16,
                v => match v.as_f64() {
                    Some(n) if n >= 1.0 && n.fract() == 0.0 => n as usize,
                    _ => {
                        return Err(Error::from(ConfigError::new(
                            "concurrency",
                            "expected a whole number of at least 1",
                        ))
                        .into())
                    }
                },
            };
            let progress = get(&options, "onProgress").dyn_into::<Function>().ok();
            let labels = labels(&get(&options, "labels"))?;
            let list: Vec<JsValue> = js_sys::Array::from(&tasks).iter().collect();
            let total = list.len();
            let mut results: Vec<JsValue> = vec![JsValue::UNDEFINED; total];
            let mut finished = 0usize;
            let mut stream = futures::stream::iter(list.into_iter().enumerate())
                .map(|(i, value)| {
                    let inner = inner.clone();
                    let labels = labels.clone();
                    async move {
                        let outcome = match task(&value).map_err(|e| match e {
                            Error::InvalidTask(t) => {
                                Error::InvalidTask(InvalidTask::new(format!("tasks[{i}].{}", t.field), t.problem))
                            }
                            other => other,
                        }) {
                            Ok(task) => inner.solve(task, SolveOptions { labels, signal: None }).await,
                            Err(e) => Err(e),
                        };
                        (i, outcome)
                    }
                })
                .buffer_unordered(concurrency);
            while let Some((i, outcome)) = stream.next().await {
                let entry = js_sys::Object::new();
                let (status, key, value) = match outcome {
                    Ok(solution) => ("fulfilled", "value", solution_js(&solution)?),
                    Err(e) => ("rejected", "reason", e.into_js()),
                };
                let _ = Reflect::set(&entry, &"status".into(), &status.into());
                let _ = Reflect::set(&entry, &key.into(), &value);
                if let Some(slot) = results.get_mut(i) {
                    *slot = entry.into();
                }
                finished += 1;
                if let Some(p) = &progress {
                    let _ = p.call2(
                        &JsValue::UNDEFINED,
                        &JsValue::from_f64(finished as f64),
                        &JsValue::from_f64(total as f64),
                    );
                }
            }
            Ok(results.into_iter().collect::<js_sys::Array>().into())
        })
    }

    /// Leases records out of the DLQ and tries them again (`{reasons, ids, classes, limit, explicit}`).
    pub fn replay(&self, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let report = inner.replay(&options).await?;
            js(&report)
        })
    }

    /// Resumes the tasks that a dead client (a reloaded page, a restarted worker) left in flight.
    pub fn recover(&self) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let report = inner.recover().await?;
            js(&report)
        })
    }

    pub fn count(&self, filter_value: JsValue) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let n = inner.store.count(&filter(&filter_value)?, now()).await.map_err(Error::from)?;
            Ok(JsValue::from_f64(n as f64))
        })
    }

    /// Records oldest first; `page` is `{offset, limit}` (default 0, 100).
    pub fn peek(&self, filter_value: JsValue, page: JsValue) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let page: Page = if absent(&page) {
                Page::default()
            } else {
                let json = to_json(&page).map_err(|e| Error::from(ConfigError::new("page", e)))?;
                let mut p = Page::default();
                let fields = match json {
                    Value::Object(fields) => fields,
                    _ => serde_json::Map::new(),
                };
                for (k, v) in fields {
                    let n = v
                        .as_u64()
                        .ok_or_else(|| Error::from(ConfigError::new(format!("page.{k}"), "expected a whole number")))?;
                    match k.as_str() {
                        "offset" => p.offset = n as usize,
                        "limit" => p.limit = n as usize,
                        other => {
                            return Err(Error::from(ConfigError::new(
                                format!("page.{other}"),
                                "unknown; use offset and limit",
                            ))
                            .into())
                        }
                    }
                }
                p
            };
            let records = inner.store.peek(&filter(&filter_value)?, page, now()).await.map_err(Error::from)?;
            js(&records)
        })
    }

    pub fn stats(&self) -> Promise {
        let inner = self.inner.clone();
        promise(async move { js(&inner.store.stats(now()).await.map_err(Error::from)?) })
    }

    /// Counts by reason, class, sitekey, page host, hour; oldest age; replay throughput.
    pub fn analysis(&self) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let t = now();
            let stats = inner.store.stats(t).await.map_err(Error::from)?;
            let page = Page { offset: 0, limit: usize::MAX };
            let records = inner.store.peek(&Filter::all(), page, t).await.map_err(Error::from)?;
            js(&Analysis::compute(&records, &stats, t))
        })
    }

    /// The matching records as a JSON array (no API key is ever in a record).
    #[wasm_bindgen(js_name = exportJson)]
    pub fn export_json(&self, filter_value: JsValue) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let page = Page { offset: 0, limit: usize::MAX };
            let records = inner.store.peek(&filter(&filter_value)?, page, now()).await.map_err(Error::from)?;
            Ok(JsValue::from_str(&export_json(&records)))
        })
    }

    /// Imports our JSON/JSONL export or the seeds' `captcha-dlq.json`; resolves to the count.
    #[wasm_bindgen(js_name = importJson)]
    pub fn import_json(&self, text: JsValue) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let text = text.as_string().ok_or_else(|| Error::from(ConfigError::new("text", "expected a string")))?;
            let records = import(&text, inner.provider.name(), now()).map_err(|e| {
                let field = e.field.clone().map_or_else(|| e.location.to_string(), |f| format!("{}.{f}", e.location));
                Error::from(ConfigError::new(field, e.to_string()))
            })?;
            let n = records.len();
            for record in records {
                inner.store.push(record).await.map_err(Error::from)?;
            }
            Ok(JsValue::from_f64(n as f64))
        })
    }

    /// Removes matching records not under a live lease; resolves to how many.
    pub fn purge(&self, filter_value: JsValue) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let n = inner.store.purge(&filter(&filter_value)?, now()).await.map_err(Error::from)?;
            Ok(JsValue::from_f64(n as f64))
        })
    }

    pub fn park(&self, id: String, reason_text: Option<String>) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let why = reason_text.unwrap_or_else(|| "ParkedByOperator".to_string());
            Ok(JsValue::from_bool(inner.store.park(&id, &why, now()).await.map_err(Error::from)?))
        })
    }

    pub fn unpark(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        promise(async move { Ok(JsValue::from_bool(inner.store.unpark(&id, now()).await.map_err(Error::from)?)) })
    }

    /// The account balance, as the provider reports it; rejects with PROVIDER_ERROR or ACCOUNT_ERROR.
    pub fn balance(&self) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let req = inner.provider.balance_request(inner.transport.key());
            let resp = inner.transport.direct(req, inner.request_timeout).await.map_err(Error::Provider)?;
            Ok(JsValue::from_f64(inner.provider.parse_balance(&resp).map_err(Error::Provider)?))
        })
    }

    /// Tells the provider whether an answer (its `provider_task_id`) was right; INVALID_CONFIG
    /// (`field: 'report'`) when the provider has no such report.
    pub fn report(&self, provider_task_id: JsValue, good: JsValue) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let id = provider_task_id
                .as_string()
                .ok_or_else(|| Error::from(ConfigError::new("providerTaskId", "expected a string")))?;
            let good = good.as_bool().ok_or_else(|| Error::from(ConfigError::new("good", "expected a boolean")))?;
            let provider = &inner.provider;
            let req = provider.report_request(inner.transport.key(), &id, good).ok_or_else(|| {
                let what = if good { "good" } else { "bad" };
                Error::from(ConfigError::new(
                    "report",
                    format!("{} has no report endpoint for {what} answers", provider.name()),
                ))
            })?;
            let resp = inner.transport.direct(req, inner.request_timeout).await.map_err(Error::Provider)?;
            provider.parse_report(&resp).map_err(Error::Provider)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Lets submissions flow again after an account error was fixed (new key, top-up).
    #[wasm_bindgen(js_name = resetCircuit)]
    pub fn reset_circuit(&self) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            inner.send(Command::ResetCircuit)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Stops the driver; tasks in flight stay in the journal for `recover()`.
    pub fn close(&self) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let (ack, rx) = oneshot::channel();
            if inner.commands.unbounded_send(Command::Shutdown { ack }).is_ok() {
                let _ = rx.await;
            }
            inner.owner.release();
            Ok(JsValue::UNDEFINED)
        })
    }
}

/// What `onEvent` receives.
#[derive(Serialize)]
struct EventView<'a> {
    name: &'static str,
    warning: bool,
    message: String,
    detail: &'a captcha_dlq_core::Event,
}

/// What `recover()` resolves to.
#[derive(Debug, Default, Serialize)]
struct RecoverReport {
    found: u64,
    skipped_live: u64,
    solved: Vec<Value>,
    dead_lettered: u64,
}

impl Inner {
    fn send(&self, cmd: Command) -> Result<()> {
        self.commands.unbounded_send(cmd).map_err(|_| Error::Closed)
    }

    async fn submit(
        &self,
        task: Task,
        labels: BTreeMap<String, String>,
    ) -> Result<(JobId, oneshot::Receiver<JobOutcome>)> {
        let (accepted, accepted_rx) = oneshot::channel();
        let (done, done_rx) = oneshot::channel();
        self.send(Command::Submit { task: Box::new(task), labels, accepted, done })?;
        let job = accepted_rx.await.map_err(|_| Error::Closed)??;
        Ok((job, done_rx))
    }

    async fn solve(self: &Rc<Self>, task: Task, options: SolveOptions) -> Result<Solution> {
        if options.signal.as_ref().is_some_and(web_sys::AbortSignal::aborted) {
            return Err(Error::Aborted);
        }
        let (job, done) = self.submit(task, options.labels).await?;
        // Aborting cancels the job: it ends as a `Cancelled` dead letter.
        let listener = options.signal.as_ref().map(|signal| {
            let commands = self.commands.clone();
            let closure = Closure::<dyn FnMut()>::new(move || {
                let _ = commands.unbounded_send(Command::Cancel { job });
            });
            let _ = signal.add_event_listener_with_callback("abort", closure.as_ref().unchecked_ref());
            (signal.clone(), closure)
        });
        let outcome = done.await;
        if let Some((signal, closure)) = listener {
            let _ = signal.remove_event_listener_with_callback("abort", closure.as_ref().unchecked_ref());
        }
        match outcome {
            Ok(JobOutcome::Solved { solution, .. }) => Ok(solution),
            Ok(JobOutcome::DeadLettered { record, .. })
                if record.reason == reason::CANCELLED
                    && options.signal.as_ref().is_some_and(web_sys::AbortSignal::aborted) =>
            {
                Err(Error::Aborted)
            }
            Ok(JobOutcome::DeadLettered { record, stored }) => Err(Error::SolveFailed { record, stored }),
            Err(_) => Err(Error::Closed),
        }
    }

    async fn replay(&self, options: &JsValue) -> Result<ReplayReport> {
        let policy = &self.replay;
        let mut report = ReplayReport::default();
        let mut picked = Filter::all();
        let mut named = false;
        for (key, field) in [("reasons", "reasons"), ("ids", "ids"), ("classes", "classes")] {
            let v = get(options, key);
            if !absent(&v) {
                let json = to_json(&v).map_err(|e| ConfigError::new(field, e))?;
                let one: Filter = decode("", serde_json::json!({ field: json }))?;
                match key {
                    "reasons" => picked.reasons = one.reasons,
                    "ids" => picked.ids = one.ids,
                    _ => picked.classes = one.classes,
                }
                named = true;
            }
        }
        let explicit = get(options, "explicit").as_bool().unwrap_or(!picked.ids.is_empty());
        let filter = if named {
            picked
        } else {
            match policy.auto_filter() {
                Some(f) => f,
                None => return Ok(report),
            }
        };
        let limit = match get(options, "limit") {
            v if absent(&v) => 100,
            v => match v.as_f64() {
                Some(n) if n >= 1.0 && n.fract() == 0.0 => n as usize,
                _ => return Err(ConfigError::new("limit", "expected a whole number of at least 1").into()),
            },
        };
        let leased = self.store.receive(&filter, limit, policy.lease(), now()).await?;
        report.received = leased.len() as u64;
        let mut running = Vec::new();
        for lease in leased {
            let decision = policy.decide(&lease.record, explicit);
            report.count_decision(&decision);
            match decision {
                ReplayDecision::Replay { attempts_allowed } => {
                    let (accepted, accepted_rx) = oneshot::channel();
                    let (done, done_rx) = oneshot::channel();
                    let record = Box::new(lease.record.clone());
                    self.send(Command::Replay { record, attempts: attempts_allowed, accepted, done })?;
                    match accepted_rx.await.map_err(|_| Error::Closed)? {
                        Ok(_) => running.push((lease, done_rx)),
                        Err(e) => {
                            // Invalid under this version's rules: needs a human, not retries.
                            report.retried -= 1;
                            report.parked += 1;
                            self.store.park(&lease.record.id, &e.to_string(), now()).await?;
                        }
                    }
                }
                ReplayDecision::Park { reason } => {
                    self.store.park(&lease.record.id, &reason, now()).await?;
                }
                ReplayDecision::Skip { .. } => {
                    self.store.abandon(&lease.token, None, now()).await?;
                }
            }
        }
        let outcomes =
            futures::future::join_all(running.into_iter().map(|(lease, rx)| async move { (lease, rx.await) })).await;
        for (lease, outcome) in outcomes {
            match outcome {
                Ok(JobOutcome::Solved { .. }) => {
                    self.store.complete(&lease.token, now()).await?;
                    report.recovered += 1;
                }
                Ok(JobOutcome::DeadLettered { mut record, .. }) => {
                    record.deliveries = lease.record.deliveries;
                    if record.attempts >= policy.park_after_attempts {
                        record.state = RecordState::Parked;
                        record.parked_reason = Some(reason::MAX_DELIVERY_COUNT_EXCEEDED.into());
                    }
                    match self.store.abandon(&lease.token, Some(*record), now()).await? {
                        RecordState::Parked => report.parked += 1,
                        _ => report.failed_again += 1,
                    }
                }
                // Closed mid-replay: the lease expires and the record is delivered again.
                Err(_) => return Err(Error::Closed),
            }
        }
        Ok(report)
    }

    async fn recover(&self) -> Result<RecoverReport> {
        let entries = self.store.journal_entries().await?;
        let live = live_owners().await;
        let mut report = RecoverReport::default();
        let mut waiting = Vec::new();
        for entry in entries {
            if entry.owner.as_deref().is_some_and(|o| live.contains(o)) {
                report.skipped_live += 1;
                continue;
            }
            report.found += 1;
            let (done, rx) = oneshot::channel();
            self.send(Command::Recover { entry: Box::new(entry), done })?;
            waiting.push(rx);
        }
        for rx in waiting {
            match rx.await {
                Ok(JobOutcome::Solved { id, labels, solution }) => {
                    report.solved.push(serde_json::json!({ "id": id, "labels": labels, "solution": solution }))
                }
                Ok(JobOutcome::DeadLettered { .. }) => report.dead_lettered += 1,
                Err(_) => return Err(Error::Closed),
            }
        }
        Ok(report)
    }
}
