//! `NativeClient`: the shared client (`captcha_dlq::connect`) driven from Python.
//!
//! Values cross as JSON text in snake_case and are read and written by `client::api_values`
//! (options of each call, tasks, results, errors) and `Dlq::op`; the Python layer turns
//! them into objects and exceptions. Sync methods block through [`crate::wait`] (GIL
//! released, Ctrl-C honoured); `solve_async` and the streams' `next_async` are asyncio
//! awaitables. Nothing is decided here.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use captcha_dlq::api_values::{self, SolveOptions};
use captcha_dlq::core::support::json_read::Casing;
use captcha_dlq::options::ClientOptions;
use captcha_dlq::{AdoptedAnswer, AdoptedHook, Client, Delivery, Error, ExportFormat, Outcome, ValidTask};
use captcha_dlq_dashboard::{DashboardHandle, DashboardOptions};
use pyo3::prelude::*;
use serde_json::{json, Value};

use crate::errors::{config, parse, to_py};
use crate::handover::{hand_over, NativeItem};
use crate::pystore::store_of;
use crate::streams::{NativeRecoverStream, NativeReplayStream, NativeSolveStream};
use crate::task::{task_of, NativeTask};
use crate::wait::block_on;

const SNAKE: Casing = Casing::Snake;

/// A dashboard served by [`NativeClient::serve_dashboard`]; stops on `close()` or when dropped.
#[pyclass(module = "captcha_dlq._native", frozen)]
pub(crate) struct NativeDashboard {
    url: String,
    handle: Mutex<Option<DashboardHandle>>,
}

#[pymethods]
impl NativeDashboard {
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// Stops serving (waits for requests in progress). Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let handle = self.handle.lock().ok().and_then(|mut h| h.take());
        match handle {
            Some(handle) => block_on(py, handle.shutdown()),
            None => Ok(()),
        }
    }

    fn __repr__(&self) -> String {
        format!("NativeDashboard(url={:?})", self.url)
    }
}

/// The Python `on_adopted` callable as the client's hook: called on a blocking thread (it takes
/// the GIL, and may take its time) with the answer's JSON; returning is taking the answer, an
/// exception is not (its text is what the client logs as the reason).
fn adopted_hook(callable: Py<PyAny>) -> AdoptedHook {
    let callable = std::sync::Arc::new(callable);
    std::sync::Arc::new(move |answer: AdoptedAnswer| {
        let callable = callable.clone();
        let json = api_values::adopted(&answer, SNAKE).to_string();
        Box::pin(async move {
            let called = tokio::task::spawn_blocking(move || {
                Python::attach(|py| callable.call1(py, (json,)).map(|_| ()).map_err(|e| e.to_string()))
            });
            called.await.map_err(|e| format!("the on_adopted hook did not run: {e}"))?
        })
    })
}

#[pyclass(module = "captcha_dlq._native", frozen)]
pub(crate) struct NativeClient {
    client: Client,
    closed: AtomicBool,
}

impl NativeClient {
    fn live(&self) -> PyResult<Client> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(to_py(&Error::Closed));
        }
        Ok(self.client.clone())
    }

    /// Runs `f(client)` on the runtime, blocking; its error raised.
    fn run<T, F, Fut>(&self, py: Python<'_>, f: F) -> PyResult<T>
    where
        T: Send + 'static,
        F: FnOnce(Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, Error>> + Send + 'static,
    {
        let client = self.live()?;
        block_on(py, f(client))?.map_err(|e| to_py(&e))
    }
}

/// One task submitted and waited for until its answer is delivered: what `solve` blocks on and
/// `solve_async` awaits (they differ only in how Python waits and receives the answer).
async fn solve_one(client: Client, task: ValidTask, options: SolveOptions) -> Result<Delivery, Error> {
    client
        .submit_wanted(task, options.labels, None, options.ttl_ms)
        .await?
        .outcome()
        .await
        .and_then(Outcome::into_delivery)
}

#[pymethods]
impl NativeClient {
    /// `options_json`: the client options (`ClientOptions::from_value`, snake_case);
    /// `store`: a store object speaking the store protocol, in place of `dlq`.
    /// `on_adopted`: called with an adopted answer's JSON (a solved recover item); it returns
    /// once the answer is taken, and raises if it was not (see `adopted_hook`).
    #[new]
    #[pyo3(signature = (options_json, store=None, on_adopted=None))]
    fn new(
        py: Python<'_>,
        options_json: &str,
        store: Option<Bound<'_, PyAny>>,
        on_adopted: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let options =
            ClientOptions::from_value(parse(options_json, "options")?, SNAKE).map_err(|e| to_py(&Error::Config(e)))?;
        let store = match store {
            Some(object) => Some(store_of(&object).map_err(|problem| config("dlq", problem))?),
            None => None,
        };
        let hook = on_adopted.map(adopted_hook);
        let client = block_on(py, captcha_dlq::connect_with(options, store, None, hook))?.map_err(|e| to_py(&e))?;
        Ok(NativeClient { client, closed: AtomicBool::new(false) })
    }

    /// One task; the solution JSON. Ctrl-C cancels it: not yet sent, it is dead-lettered as
    /// `Cancelled`; already with the provider, it runs on and its answer waits in the journal.
    /// `task`: a task object's `NativeTask`, or a task's JSON text.
    fn solve(&self, py: Python<'_>, task: &Bound<'_, PyAny>, options_json: &str) -> PyResult<String> {
        let task = task_of(task)?;
        let options = api_values::solve_options(parse(options_json, "options")?, SNAKE).map_err(|e| to_py(&e))?;
        let delivery = self.run(py, move |client| solve_one(client, task, options))?;
        Ok(hand_over(api_values::solution(&delivery.solution, SNAKE).to_string(), Some(delivery.receipt)))
    }

    /// `solve` as an awaitable resolving to a `NativeItem` (its answer acknowledged when
    /// taken). Cancelling it cancels the task as Ctrl-C does for `solve`.
    fn solve_async<'py>(
        &self,
        py: Python<'py>,
        task: &Bound<'py, PyAny>,
        options_json: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let task = task_of(task)?;
        let options = api_values::solve_options(parse(options_json, "options")?, SNAKE).map_err(|e| to_py(&e))?;
        let client = self.live()?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let delivery = solve_one(client, task, options).await.map_err(|e| to_py(&e))?;
            Ok(NativeItem::new(api_values::solution(&delivery.solution, SNAKE).to_string(), Some(delivery.receipt)))
        })
    }

    /// Many tasks (`tasks_json`: a JSON array of tasks or `{task, labels, key}` items),
    /// results in completion order. `keep`: remember every result (`taken()`), for
    /// `solve_many` and the answers an interrupt must not lose.
    /// `checked[i]`: item `i`'s task object's `NativeTask`, handed over instead of reading the
    /// item's task from the JSON.
    #[pyo3(signature = (tasks_json, options_json, keep, checked=Vec::new()))]
    fn solve_stream(
        &self,
        tasks_json: &str,
        options_json: &str,
        keep: bool,
        checked: Vec<Option<Py<NativeTask>>>,
    ) -> PyResult<NativeSolveStream> {
        let options = api_values::batch_options(parse(options_json, "options")?, SNAKE).map_err(|e| to_py(&e))?;
        let checked = checked.iter().map(|t| t.as_ref().map(|t| t.get().task().clone())).collect();
        let inputs =
            api_values::batch_checked(parse(tasks_json, "tasks")?, checked, &options, SNAKE).map_err(|e| to_py(&e))?;
        let client = self.live()?;
        let _guard = crate::wait::runtime().enter();
        Ok(NativeSolveStream::new(client.solve_stream(inputs, options.concurrency), keep))
    }

    #[pyo3(signature = (options_json, collect=false))]
    fn replay_stream(&self, options_json: &str, collect: bool) -> PyResult<NativeReplayStream> {
        let options = api_values::replay_options(parse(options_json, "options")?, SNAKE).map_err(|e| to_py(&e))?;
        let client = self.live()?;
        let _guard = crate::wait::runtime().enter();
        Ok(NativeReplayStream::new(client.replay_stream(options), collect))
    }

    #[pyo3(signature = (options_json, collect=false))]
    fn recover_stream(&self, options_json: &str, collect: bool) -> PyResult<NativeRecoverStream> {
        let options = api_values::recover_options(parse(options_json, "options")?, SNAKE).map_err(|e| to_py(&e))?;
        let client = self.live()?;
        let _guard = crate::wait::runtime().enter();
        Ok(NativeRecoverStream::new(client.recover_stream(options), collect))
    }

    /// One DLQ operation by name (`Dlq::op`), its arguments and answer as JSON.
    fn dlq(&self, py: Python<'_>, op: String, args_json: &str) -> PyResult<String> {
        let args = parse(args_json, "args")?;
        self.run(py, move |client| async move { client.dlq().op(&op, args, SNAKE).await.map(|v| v.to_string()) })
    }

    /// Writes the selected records to `path` (created 0600; JSON or, for `.jsonl`, JSONL
    /// unless `format` says); returns how many.
    fn export(&self, py: Python<'_>, path: PathBuf, args_json: &str) -> PyResult<usize> {
        let mut args = parse(args_json, "args")?;
        if let Value::Object(map) = &mut args {
            if !map.contains_key("format") {
                let format = match ExportFormat::for_path(&path.to_string_lossy()) {
                    ExportFormat::Json => "json",
                    ExportFormat::Jsonl => "jsonl",
                };
                map.insert("format".into(), json!(format));
            }
        }
        self.run(py, move |client| async move {
            let answer = client.dlq().op("export", args, SNAKE).await?;
            let text = answer["text"].as_str().unwrap_or_default().to_string();
            let count = answer["count"].as_u64().unwrap_or_default();
            tokio::task::spawn_blocking(move || captcha_dlq::files::write_private(&path, &text))
                .await
                .map_err(|e| Error::Io(format!("the export was interrupted: {e}")))??;
            Ok(usize::try_from(count).unwrap_or(usize::MAX))
        })
    }

    /// Adds the records of an export file (ours or the seeds' `captcha-dlq.json`).
    #[pyo3(signature = (path, operator = None))]
    fn import_file(&self, py: Python<'_>, path: PathBuf, operator: Option<String>) -> PyResult<usize> {
        self.run(py, move |client| async move {
            let shown = path.display().to_string();
            let text = tokio::task::spawn_blocking(move || std::fs::read_to_string(&path))
                .await
                .map_err(|e| Error::Io(format!("reading {shown} was interrupted: {e}")))?
                .map_err(|e| Error::Io(format!("cannot read {shown}: {e}")))?;
            let mut args = json!({ "text": text });
            if let Some(operator) = operator {
                args["operator"] = json!(operator);
            }
            let answer = client.dlq().op("import", args, SNAKE).await?;
            Ok(usize::try_from(answer.as_u64().unwrap_or_default()).unwrap_or(usize::MAX))
        })
    }

    fn balance(&self, py: Python<'_>) -> PyResult<f64> {
        self.run(py, |client| async move { client.balance().await })
    }

    fn balance_of(&self, py: Python<'_>, provider: String) -> PyResult<f64> {
        self.run(py, move |client| async move { client.balance_of(&provider).await })
    }

    /// `[{provider, balance} | {provider, error}]` as JSON.
    fn balances(&self, py: Python<'_>) -> PyResult<String> {
        self.run(py, |client| async move { Ok(api_values::balances(&client.balances().await, SNAKE).to_string()) })
    }

    fn report(&self, py: Python<'_>, provider_task_id: String, good: bool) -> PyResult<()> {
        self.run(py, move |client| async move { client.report(&provider_task_id, good).await })
    }

    /// `solution_json`: a solution as handed out (its `provider` and `provider_task_id` are used).
    fn report_solution(&self, py: Python<'_>, solution_json: &str, good: bool) -> PyResult<()> {
        let solution = api_values::solution_ref(parse(solution_json, "solution")?, SNAKE).map_err(|e| to_py(&e))?;
        self.run(py, move |client| async move { client.report_solution(&solution, good).await })
    }

    fn spend(&self, py: Python<'_>) -> PyResult<String> {
        self.run(py, |client| async move { client.spend().await.map(|r| api_values::value(&r, SNAKE).to_string()) })
    }

    fn metrics(&self) -> PyResult<String> {
        Ok(api_values::value(&self.live()?.metrics(), SNAKE).to_string())
    }

    fn metrics_text(&self, py: Python<'_>) -> PyResult<String> {
        self.run(py, |client| async move { Ok(client.prometheus_text().await) })
    }

    /// Starts the dashboard over this client (`captcha_dlq_dashboard::serve`); `options_json`
    /// is read by `DashboardOptions::from_value`.
    fn serve_dashboard(&self, py: Python<'_>, options_json: &str) -> PyResult<NativeDashboard> {
        let options = DashboardOptions::from_value(parse(options_json, "options")?, SNAKE)
            .map_err(|e| config("dashboard", e.to_string()))?;
        let client = self.live()?;
        let handle = block_on(py, async move { captcha_dlq_dashboard::serve(client, options).await })?
            .map_err(|e| config("dashboard", e.to_string()))?;
        Ok(NativeDashboard { url: handle.url(), handle: Mutex::new(Some(handle)) })
    }

    fn reset_circuit(&self) -> PyResult<()> {
        self.live()?.reset_circuit().map_err(|e| to_py(&e))
    }

    /// What the driver is doing (`in_flight`, `in_flight_limit`, `jobs`, …) as JSON.
    fn status(&self, py: Python<'_>) -> PyResult<String> {
        self.run(py, |client| async move { client.status().await.map(|s| api_values::value(&s, SNAKE).to_string()) })
    }

    /// Returns once every store write asked for so far has ended (`Client::flush`).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |client| async move { client.flush().await })
    }

    fn store_health(&self) -> PyResult<String> {
        Ok(api_values::value(&self.live()?.store_health(), SNAKE).to_string())
    }

    /// Stops the client once its queued writes are done; tasks in flight stay in the
    /// journal for `recover()`. Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let client = self.client.clone();
        block_on(py, async move { client.close().await })
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
        format!("NativeClient(provider={:?}, base_url={:?})", self.provider(), self.base_url())
    }
}
