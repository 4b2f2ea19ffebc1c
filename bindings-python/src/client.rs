//! `NativeClient`: a `captcha_dlq::Client` on the shared runtime, driven from Python.
//!
//! Sync methods block through [`crate::wait::block_on`] (GIL released, signals checked);
//! `solve_async` returns an asyncio awaitable through pyo3-async-runtimes. Values cross the
//! boundary as JSON text; the Python layer turns them into objects and exceptions.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use captcha_dlq::core::dlq::{Filter, ReplayPolicy};
use captcha_dlq::{Client, EngineConfig, Error, ReplayOptions, Solution, Task};
use captcha_dlq_core::json_read::{FieldError, Fields, FromJson};
use pyo3::prelude::*;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::errors;
use crate::pystore::PyStore;
use crate::wait::block_on;

/// The options Python passes (besides the key, which travels on its own).
#[derive(Default)]
struct Options {
    provider: Option<String>,
    base_url: Option<String>,
    /// A location (`memory`, a SQLite path, a redis:// URL); ignored when a store object is given.
    dlq: Option<String>,
    config: Value,
    replay_policy: Value,
    allow_insecure_http: bool,
    proxy: Option<String>,
}

/// Every option may be left out; unknown ones are refused.
impl FromJson for Options {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let options = Options {
            provider: f.opt("provider")?,
            base_url: f.opt("base_url")?,
            dlq: f.opt("dlq")?,
            config: f.or_default("config")?,
            replay_policy: f.or_default("replay_policy")?,
            allow_insecure_http: f.or_default("allow_insecure_http")?,
            proxy: f.opt("proxy")?,
        };
        f.finish()?;
        Ok(options)
    }
}

fn parse_section<T: FromJson + Default>(value: Value, prefix: &str) -> PyResult<T> {
    if value.is_null() {
        return Ok(T::default());
    }
    T::from_json(value).map_err(|e| {
        let problem = match e.problem.find(", expected one of") {
            Some(i) => e.problem.get(..i).unwrap_or(&e.problem).to_string(),
            None => e.problem.clone(),
        };
        errors::config(e.field_under(prefix.trim_end_matches('.')), problem)
    })
}

fn parse_task(task_json: &str) -> Result<Task, Error> {
    Task::from_json_str(task_json).map_err(Error::from)
}

/// Labels as JSON text (`{"job": "x"}`); `None` for none.
fn parse_labels(labels_json: Option<&str>) -> PyResult<BTreeMap<String, String>> {
    let Some(text) = labels_json else { return Ok(BTreeMap::new()) };
    let value: Value = serde_json::from_str(text).map_err(|e| errors::config("labels", e.to_string()))?;
    captcha_dlq_core::json_field::decode(&value).map_err(|e| errors::config(e.field_under("labels"), e.problem))
}

fn solution_json(s: &Solution) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| json!({ "text": s.text }).to_string())
}

fn result_json(r: &Result<Solution, Error>) -> Value {
    match r {
        Ok(s) => json!({ "ok": s }),
        Err(e) => {
            let code = errors::code_of(e);
            json!({ "error": { "code": code, "message": e.to_string(), "details": errors::details(e) } })
        }
    }
}

#[pyclass(module = "captcha_dlq._native", frozen)]
pub(crate) struct NativeClient {
    client: Client,
    closed: Arc<AtomicBool>,
}

impl NativeClient {
    fn live(&self) -> PyResult<Client> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(errors::closed());
        }
        Ok(self.client.clone())
    }
}

#[pymethods]
impl NativeClient {
    #[new]
    #[pyo3(signature = (api_key, options_json, store=None, events=None))]
    fn new(
        py: Python<'_>,
        api_key: String,
        options_json: &str,
        store: Option<Py<PyAny>>,
        events: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let options: Options = parse_section(
            serde_json::from_str(options_json).map_err(|e| errors::config("options", e.to_string()))?,
            "",
        )?;
        let config: EngineConfig = parse_section(options.config, "")?;
        let replay: ReplayPolicy = parse_section(options.replay_policy, "replay_policy.")?;
        let mut builder = Client::builder()
            .api_key(api_key)
            .config(config)
            .replay_policy(replay)
            .allow_insecure_http(options.allow_insecure_http);
        if let Some(p) = options.provider {
            builder = builder.provider(p);
        }
        if let Some(u) = options.base_url {
            builder = builder.base_url(u);
        }
        if let Some(p) = options.proxy {
            builder = builder.proxy(p);
        }
        builder = match (store, options.dlq) {
            (Some(obj), _) => builder.dlq_store(Arc::new(PyStore::new(obj))),
            (None, Some(loc)) => builder.dlq(loc),
            (None, None) => builder,
        };
        if let Some(cb) = events {
            let sink = crate::events::forwarder(cb)
                .map_err(|e| errors::internal(format!("could not start the event thread: {e}")))?;
            builder = builder.on_event(sink);
        }
        let client = block_on(py, async move { builder.build().await }, None)?.map_err(|e| errors::to_py(&e))?;
        Ok(NativeClient { client, closed: Arc::new(AtomicBool::new(false)) })
    }

    /// Ctrl-C leaves the job in the journal (for `recover`), as a killed process would.
    #[pyo3(signature = (task_json, labels_json=None))]
    fn solve(&self, py: Python<'_>, task_json: &str, labels_json: Option<&str>) -> PyResult<String> {
        let task = parse_task(task_json).map_err(|e| errors::to_py(&e))?;
        let labels = parse_labels(labels_json)?;
        let client = self.live()?;
        let result = block_on(py, async move { client.submit(task, labels).await?.wait().await }, None)?;
        result.map(|s| solution_json(&s)).map_err(|e| errors::to_py(&e))
    }

    /// Cancelling the awaitable (`task.cancel()`, `asyncio.wait_for`) cancels the job: it is
    /// dead-lettered as `Cancelled`.
    #[pyo3(signature = (task_json, labels_json=None))]
    fn solve_async<'py>(
        &self,
        py: Python<'py>,
        task_json: &str,
        labels_json: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let task = parse_task(task_json).map_err(|e| errors::to_py(&e))?;
        let labels = parse_labels(labels_json)?;
        let client = self.live()?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let solved = async { client.submit(task, labels).await?.wait_cancelling_on_drop().await };
            solved.await.map(|s| solution_json(&s)).map_err(|e| errors::to_py(&e))
        })
    }

    /// Returns a JSON list, one `{"ok": solution}` or `{"error": {...}}` per task, in order.
    /// `labels_json` applies to every task.
    #[pyo3(signature = (tasks_json, concurrency, progress=None, labels_json=None))]
    fn solve_many(
        &self,
        py: Python<'_>,
        tasks_json: Vec<String>,
        concurrency: usize,
        progress: Option<Py<PyAny>>,
        labels_json: Option<&str>,
    ) -> PyResult<String> {
        let labels = parse_labels(labels_json)?;
        let client = self.live()?;
        let total = tasks_json.len();
        let mut slots: Vec<Option<Result<Solution, Error>>> = Vec::with_capacity(total);
        let mut valid = Vec::new();
        let mut positions = Vec::new();
        for (i, text) in tasks_json.iter().enumerate() {
            match parse_task(text) {
                Ok(task) => {
                    valid.push((task, labels.clone()));
                    positions.push(i);
                    slots.push(None);
                }
                Err(e) => slots.push(Some(Err(e))),
            }
        }
        let invalid = total - valid.len();
        let (tx, rx) = mpsc::unbounded_channel();
        let fut = async move {
            let report = move |done: usize, _: usize| {
                let _ = tx.send((done + invalid, total));
            };
            client.solve_many(valid, concurrency, Some(&report)).await
        };
        let results = block_on(py, fut, progress.map(|p| (rx, p)))?;
        for (pos, r) in positions.into_iter().zip(results) {
            if let Some(slot) = slots.get_mut(pos) {
                *slot = Some(r);
            }
        }
        let out: Vec<Value> = slots.into_iter().map(|s| result_json(&s.unwrap_or(Err(Error::Closed)))).collect();
        Ok(Value::Array(out).to_string())
    }

    #[pyo3(signature = (filter_json=None, limit=None, explicit=false))]
    fn replay(
        &self,
        py: Python<'_>,
        filter_json: Option<&str>,
        limit: Option<usize>,
        explicit: bool,
    ) -> PyResult<String> {
        let filter: Option<Filter> = match filter_json {
            None => None,
            Some(text) => Some(parse_section(
                serde_json::from_str(text).map_err(|e| errors::config("filter", e.to_string()))?,
                "",
            )?),
        };
        let client = self.live()?;
        let options = ReplayOptions { filter, limit, explicit };
        let report = block_on(py, async move { client.replay(options).await }, None)?.map_err(|e| errors::to_py(&e))?;
        serde_json::to_string(&report).map_err(|e| errors::internal(e.to_string()))
    }

    #[pyo3(signature = (resume=true))]
    fn recover(&self, py: Python<'_>, resume: bool) -> PyResult<String> {
        let client = self.live()?;
        let report = block_on(py, async move { client.recover(resume).await }, None)?.map_err(|e| errors::to_py(&e))?;
        serde_json::to_string(&report).map_err(|e| errors::internal(e.to_string()))
    }

    fn balance(&self, py: Python<'_>) -> PyResult<f64> {
        let client = self.live()?;
        block_on(py, async move { client.balance().await }, None)?.map_err(|e| errors::to_py(&e))
    }

    fn report(&self, py: Python<'_>, provider_task_id: String, good: bool) -> PyResult<()> {
        let client = self.live()?;
        block_on(py, async move { client.report(&provider_task_id, good).await }, None)?.map_err(|e| errors::to_py(&e))
    }

    fn reset_circuit(&self) -> PyResult<()> {
        self.live()?.reset_circuit().map_err(|e| errors::to_py(&e))
    }

    /// One DLQ operation (`count`, `peek`, `stats`, ...) with JSON arguments; JSON result.
    fn dlq(&self, py: Python<'_>, op: String, args_json: &str) -> PyResult<String> {
        let args: Value = serde_json::from_str(args_json).map_err(|e| errors::config("args", e.to_string()))?;
        let store = self.client.dlq().clone();
        let provider = self.client.provider().name().to_string();
        let out = block_on(py, crate::dlq_ops::run(store, provider, op, args), None)?.map_err(|e| errors::to_py(&e))?;
        Ok(out.to_string())
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let client = self.client.clone();
        block_on(py, async move { client.close().await }, None)
    }

    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    #[getter]
    fn provider(&self) -> String {
        self.client.provider().name().to_string()
    }

    #[getter]
    fn base_url(&self) -> String {
        self.client.provider().base_url().to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "NativeClient(provider={:?}, base_url={:?})",
            self.client.provider().name(),
            self.client.provider().base_url()
        )
    }
}
