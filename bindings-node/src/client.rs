//! The addon's client: a thin napi class over [`captcha_dlq::Client`]. Every
//! method that touches the network or a store is an async fn run on napi's
//! tokio runtime, so the Node event loop is never blocked. Values cross as
//! JSON text that `lib/client.js` parses; errors cross as coded payloads
//! (see [`crate::error`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use captcha_dlq::{Client, ReplayOptions};
use captcha_dlq_core::dlq::Filter;
use captcha_dlq_core::json_read::{FieldError, Fields, FromJson};
use captcha_dlq_core::{Event, Task};
use napi::bindgen_prelude::Unknown;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error;
use crate::job::NativeJob;
use crate::js_store::{Dispatch, JsStore};
use crate::options::{snake_keys, typed, Options};

/// `(json) => void`, weak and non-blocking: events never wait on JS nor keep Node alive.
pub type Callback = ThreadsafeFunction<String, Unknown<'static>, String, napi::Status, false, true>;

#[napi]
pub struct NativeClient {
    pub(crate) client: Client,
    pub(crate) key: String,
}

impl std::fmt::Debug for NativeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.client.fmt(f)
    }
}

/// Checks the options without I/O; throws the coded error of the first problem.
#[napi]
pub fn check_options(options: String) -> napi::Result<()> {
    Options::parse(&options).map(|_| ())
}

/// Opens the store and starts the client. `store` is the dispatcher of a JS store object.
#[napi]
pub async fn open_client(
    options: String,
    on_event: Option<Callback>,
    store: Option<Dispatch>,
) -> napi::Result<NativeClient> {
    let options = Options::parse(&options)?;
    let mut builder = options.builder();
    if let Some(dispatch) = store {
        builder = builder.dlq_store(Arc::new(JsStore::new(dispatch)));
    } else if options.dlq.is_none() {
        return Err(error::config("dlq", "missing: give a SQLite path, 'memory', a redis:// URL or a store object"));
    }
    if let Some(callback) = on_event {
        builder = builder.on_event(move |event: &Event| {
            if let Ok(text) = serde_json::to_string(event) {
                let _ = callback.call(text, ThreadsafeFunctionCallMode::NonBlocking);
            }
        });
    }
    let key = options.api_key.clone();
    let client = builder.build().await.map_err(|e| error::from_native(&e, Some(&key)))?;
    Ok(NativeClient { client, key })
}

/// Parses a task (camelCase or snake_case fields) and its labels.
pub(crate) fn task_and_labels(task: &str, labels: Option<&str>) -> napi::Result<(Task, BTreeMap<String, String>)> {
    let task = Task::from_json_str(task).map_err(|e| error::invalid_task(&e))?;
    let labels = match labels {
        None => BTreeMap::new(),
        Some(text) => serde_json::from_str::<Option<BTreeMap<String, String>>>(text)
            .map_err(|e| {
                error::invalid_task(&captcha_dlq_core::InvalidTask::new(
                    "labels",
                    format!("must map strings to strings: {e}"),
                ))
            })?
            .unwrap_or_default(),
    };
    Ok((task, labels))
}

#[derive(Default)]
struct JsReplay {
    reasons: Vec<String>,
    ids: Vec<String>,
    limit: Option<usize>,
    filter: Option<Value>,
}

/// Every field may be left out; unknown ones are refused.
impl FromJson for JsReplay {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let replay = JsReplay {
            reasons: f.or_default("reasons")?,
            ids: f.or_default("ids")?,
            limit: f.opt("limit")?,
            filter: f.opt("filter")?,
        };
        f.finish()?;
        Ok(replay)
    }
}

pub(crate) fn filter(json: Option<String>) -> napi::Result<Filter> {
    match json {
        None => Ok(Filter::all()),
        Some(text) => {
            let value: Value =
                serde_json::from_str(&text).map_err(|e| error::config("filter", format!("not valid JSON: {e}")))?;
            if value.is_null() {
                return Ok(Filter::all());
            }
            typed("filter", snake_keys(value))
        }
    }
}

#[napi]
impl NativeClient {
    fn fail(&self, e: &captcha_dlq::Error) -> napi::Error {
        error::from_native(e, Some(&self.key))
    }

    /// Submits a task; the job's `wait` gives the solution.
    #[napi]
    pub async fn submit(&self, task: String, labels: Option<String>) -> napi::Result<NativeJob> {
        let (task, labels) = task_and_labels(&task, labels.as_deref())?;
        let handle = self.client.submit(task, labels).await.map_err(|e| self.fail(&e))?;
        Ok(NativeJob::new(handle, self.key.clone()))
    }

    /// Solves many tasks (`[{task, labels}]`); JSON array, in input order, of `{ok}` or `{error}`.
    #[napi]
    pub async fn solve_many(
        &self,
        tasks: String,
        concurrency: u32,
        progress: Option<Callback>,
    ) -> napi::Result<String> {
        #[derive(Deserialize)]
        struct Item {
            task: Value,
            #[serde(default)]
            labels: Option<BTreeMap<String, String>>,
        }
        let items: Vec<Item> = serde_json::from_str(&tasks)
            .map_err(|e| error::invalid_task(&captcha_dlq_core::InvalidTask::new("tasks", e.to_string())))?;
        // A bad task is reported in its own slot, as a rejection, like a failed solve.
        let mut slots: Vec<Option<Value>> = Vec::with_capacity(items.len());
        let mut valid = Vec::new();
        let mut positions = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            match Task::from_json_value(item.task) {
                Ok(task) => {
                    slots.push(None);
                    positions.push(i);
                    valid.push((task, item.labels.unwrap_or_default()));
                }
                Err(e) => {
                    let p = error::native_payload(&captcha_dlq::Error::InvalidTask(e), Some(&self.key));
                    slots.push(Some(json!({ "error": p })));
                }
            }
        }
        let report = |done: usize, total: usize| {
            if let Some(cb) = &progress {
                let _ = cb.call(format!("[{done},{total}]"), ThreadsafeFunctionCallMode::NonBlocking);
            }
        };
        let results = self.client.solve_many(valid, concurrency.max(1) as usize, Some(&report)).await;
        for (pos, result) in positions.into_iter().zip(results) {
            let value = match result {
                Ok(solution) => json!({ "ok": solution }),
                Err(e) => json!({ "error": error::native_payload(&e, Some(&self.key)) }),
            };
            if let Some(slot) = slots.get_mut(pos) {
                *slot = Some(value);
            }
        }
        let out: Vec<Value> = slots.into_iter().map(|s| s.unwrap_or(Value::Null)).collect();
        Ok(Value::Array(out).to_string())
    }

    /// Replays records: `{reasons, ids, limit, filter}`; the report as JSON.
    #[napi]
    pub async fn replay(&self, options: Option<String>) -> napi::Result<String> {
        let opts: JsReplay = match options {
            None => JsReplay::default(),
            Some(text) => {
                let value: Value =
                    serde_json::from_str(&text).map_err(|e| error::config("replay", format!("not valid JSON: {e}")))?;
                typed("replay", snake_keys(value))?
            }
        };
        let explicit = !opts.reasons.is_empty() || !opts.ids.is_empty() || opts.filter.is_some();
        let filter = if explicit {
            let mut f = match opts.filter {
                Some(v) => typed::<Filter>("replay.filter", snake_keys(v))?,
                None => Filter::all(),
            };
            f.reasons.extend(opts.reasons);
            f.ids.extend(opts.ids);
            Some(f)
        } else {
            None
        };
        let report = self
            .client
            .replay(ReplayOptions { filter, limit: opts.limit, explicit })
            .await
            .map_err(|e| self.fail(&e))?;
        Ok(serde_json::to_string(&report).unwrap_or_default())
    }

    /// Resumes (or dead-letters, with `resume: false`) what a dead process left in flight.
    #[napi]
    pub async fn recover(&self, resume: bool) -> napi::Result<String> {
        let report = self.client.recover(resume).await.map_err(|e| self.fail(&e))?;
        Ok(serde_json::to_string(&report).unwrap_or_default())
    }

    #[napi]
    pub async fn balance(&self) -> napi::Result<f64> {
        self.client.balance().await.map_err(|e| self.fail(&e))
    }

    #[napi]
    pub async fn report(&self, provider_task_id: String, good: bool) -> napi::Result<()> {
        self.client.report(&provider_task_id, good).await.map_err(|e| self.fail(&e))
    }

    /// Lets submissions flow again after an account problem was fixed.
    #[napi]
    pub fn reset_circuit(&self) -> napi::Result<()> {
        self.client.reset_circuit().map_err(|e| self.fail(&e))
    }

    #[napi]
    pub async fn close(&self) {
        self.client.close().await;
    }

    /// `{provider, baseUrl}`: what `util.inspect` shows (never the key).
    #[napi]
    pub fn describe(&self) -> String {
        json!({ "provider": self.client.provider().name(), "baseUrl": self.client.provider().base_url() }).to_string()
    }
}
