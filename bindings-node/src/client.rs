//! The native client of docs/bindings.md over `captcha_dlq::Client`: every call
//! turns its JS values into `serde_json::Value`, lets `client::api_values` (in
//! camelCase) or `Dlq::op` read them, and answers with host values. Work runs
//! on napi's tokio runtime; nothing here blocks the event loop or decides
//! anything the client does not.

use std::sync::Arc;

use captcha_dlq::{api_values, AdoptedAnswer, AdoptedHook, Client, ExportFormat};
use captcha_dlq_client::options::ClientOptions;
use captcha_dlq_core::support::json_read::Casing;
use captcha_dlq_core::Event;
use captcha_dlq_dashboard::{DashboardHandle, DashboardOptions};
use napi::bindgen_prelude::{Function, Object, Promise, PromiseRaw};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue};
use napi::{Env, Status};
use napi_derive::napi;
use serde_json::{json, Value};

use crate::error;
use crate::job::NativeJob;
use crate::store::JsStore;
use crate::streams::{NativeRecover, NativeReplay, NativeStream};

/// `onEvent(event)`: weak and never waited on, so events neither slow the driver nor keep Node alive.
type EventCallback = ThreadsafeFunction<Value, UnknownReturnValue, Value, Status, false, true>;

#[napi]
pub struct NativeClient {
    client: Client,
}

impl std::fmt::Debug for NativeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.client.fmt(f)
    }
}

/// `onAdopted(item)` as the JS wrapper hands it over: it always answers a promise of `null` (the
/// answer was taken) or of the reason it was not (the user's hook threw or rejected). Weak, as
/// `onEvent`: it never keeps Node alive.
type AdoptedCallback = ThreadsafeFunction<Value, Promise<Option<String>>, Value, Status, false, true>;

/// The client's hook over `onAdopted`: the answer (a solved recover item, camelCase) goes to the
/// JS thread; the hook's verdict comes back once its promise settles.
fn adopted_hook(callback: AdoptedCallback) -> AdoptedHook {
    let callback = Arc::new(callback);
    Arc::new(move |answer: AdoptedAnswer| {
        let callback = callback.clone();
        let item = api_values::adopted(&answer, Casing::Camel);
        Box::pin(async move {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let status =
                callback.call_with_return_value(item, ThreadsafeFunctionCallMode::NonBlocking, move |answer, _| {
                    let _ = tx.send(answer);
                    Ok(())
                });
            if status != Status::Ok {
                return Err(format!("onAdopted could not be called ({status}); is Node shutting down?"));
            }
            let promise = rx.await.map_err(|_| "onAdopted was dropped before it answered".to_string())?;
            match promise.map_err(|e| e.reason.clone())?.await {
                Ok(None) => Ok(()),
                Ok(Some(why)) => Err(why),
                Err(e) => Err(e.reason.clone()),
            }
        })
    })
}

/// Starts a client: `options` as the user wrote them (camelCase; read by the core),
/// `store` a store object (the store protocol), `onEvent` a function receiving events,
/// `onAdopted` the wrapper's function over the user's hook for adopted answers.
#[napi(ts_return_type = "Promise<NativeClient>")]
pub fn open<'env>(
    env: &'env Env,
    options: Value,
    store: Option<Object>,
    on_event: Option<Function<Value, UnknownReturnValue>>,
    on_adopted: Option<Function<Value, Promise<Option<String>>>>,
) -> napi::Result<PromiseRaw<'env, NativeClient>> {
    let store = store.as_ref().map(|object| JsStore::new(env, object)).transpose()?;
    let events: Option<EventCallback> =
        on_event.map(|f| f.build_threadsafe_function::<Value>().weak::<true>().build()).transpose()?;
    let adopted: Option<AdoptedCallback> =
        on_adopted.map(|f| f.build_threadsafe_function::<Value>().weak::<true>().build()).transpose()?;
    let work = async move {
        let options = ClientOptions::from_value(options, Casing::Camel)
            .map_err(|e| error::payload(&captcha_dlq::Error::Config(e)))?;
        let store = match store {
            None => None,
            Some(js) => {
                Some(captcha_dlq::store::host_store(js).map_err(|e| error::payload(&captcha_dlq::Error::Store(e)))?)
            }
        };
        let sink = events.map(|callback| -> captcha_dlq::EventSink {
            Arc::new(move |event: &Event| {
                let _ = callback.call(api_values::value(event, Casing::Camel), ThreadsafeFunctionCallMode::NonBlocking);
            })
        });
        let hook = adopted.map(adopted_hook);
        captcha_dlq::connect_with(options, store, sink, hook).await.map_err(|e| error::payload(&e))
    };
    error::settle(env, work, |_, client| Ok(NativeClient { client }))
}

/// A dashboard served by `serveDashboard`: `url`, and `close()` to stop it.
#[napi]
#[derive(Debug)]
pub struct NativeDashboard {
    url: String,
    handle: Arc<tokio::sync::Mutex<Option<DashboardHandle>>>,
}

#[napi]
impl NativeDashboard {
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Stops serving (requests in progress finish first). Idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let handle = self.handle.clone();
        error::promise(env, async move {
            if let Some(handle) = handle.lock().await.take() {
                handle.shutdown().await;
            }
            Ok(())
        })
    }
}

/// A client error as a rejection payload.
fn fail(e: captcha_dlq::Error) -> Value {
    error::payload(&e)
}

#[napi]
impl NativeClient {
    /// Submits one task; `options` are `solve`'s (`{labels}`; unknown keys are refused).
    #[napi(ts_return_type = "Promise<NativeJob>")]
    pub fn submit<'env>(
        &self,
        env: &'env Env,
        task: Value,
        options: Option<Value>,
    ) -> napi::Result<PromiseRaw<'env, NativeJob>> {
        let client = self.client.clone();
        let work = async move {
            let options = api_values::solve_options(options.unwrap_or(Value::Null), Casing::Camel).map_err(fail)?;
            let task = api_values::task(task).map_err(fail)?;
            client.submit_wanted(task, options.labels, None, options.ttl_ms).await.map_err(fail)
        };
        error::settle(env, work, |_, handle| Ok(NativeJob::new(handle)))
    }

    /// Many tasks (tasks, or `{task, labels, key}`), results as they end.
    #[napi]
    pub fn solve_stream(&self, env: &Env, tasks: Value, options: Option<Value>) -> napi::Result<NativeStream> {
        let options = api_values::batch_options(options.unwrap_or(Value::Null), Casing::Camel)
            .map_err(|e| error::throw(env, &e))?;
        let inputs = api_values::batch(tasks, &options, Casing::Camel).map_err(|e| error::throw(env, &e))?;
        Ok(NativeStream::new(self.client.solve_stream(inputs, options.concurrency)))
    }

    /// Replays DLQ records (`{reasons, ids, filter, limit, perSecond}`); with `collect`, the
    /// stream also keeps what `replay()` returns (`result()`).
    #[napi]
    pub fn replay_stream(
        &self,
        env: &Env,
        options: Option<Value>,
        collect: Option<bool>,
    ) -> napi::Result<NativeReplay> {
        let options = api_values::replay_options(options.unwrap_or(Value::Null), Casing::Camel)
            .map_err(|e| error::throw(env, &e))?;
        Ok(NativeReplay::new(self.client.replay_stream(options), collect.unwrap_or(false)))
    }

    /// Recovers the journal (`{resume}`); with `collect`, the stream also keeps what
    /// `recover()` returns (`result()`).
    #[napi]
    pub fn recover_stream(
        &self,
        env: &Env,
        options: Option<Value>,
        collect: Option<bool>,
    ) -> napi::Result<NativeRecover> {
        let options = api_values::recover_options(options.unwrap_or(Value::Null), Casing::Camel)
            .map_err(|e| error::throw(env, &e))?;
        Ok(NativeRecover::new(self.client.recover_stream(options), collect.unwrap_or(false)))
    }

    /// One DLQ operation by name (`count`, `peek`, `clear_settled`…) with its arguments.
    #[napi(ts_return_type = "Promise<any>")]
    pub fn dlq<'env>(&self, env: &'env Env, op: String, args: Option<Value>) -> napi::Result<PromiseRaw<'env, Value>> {
        let dlq = self.client.dlq();
        error::promise(env, async move { dlq.op(&op, args.unwrap_or(Value::Null), Casing::Camel).await.map_err(fail) })
    }

    #[napi(ts_return_type = "Promise<number>")]
    pub fn balance<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, f64>> {
        let client = self.client.clone();
        error::promise(env, async move { client.balance().await.map_err(fail) })
    }

    /// The balance at the provider named `provider` (its `name` in `providers`).
    #[napi(ts_return_type = "Promise<number>")]
    pub fn balance_of<'env>(&self, env: &'env Env, name: Value) -> napi::Result<PromiseRaw<'env, f64>> {
        let client = self.client.clone();
        error::promise(env, async move {
            let name: String = api_values::argument(name, "name").map_err(fail)?;
            client.balance_of(&name).await.map_err(fail)
        })
    }

    /// `[{provider, balance} | {provider, error}]`, in configuration order.
    #[napi(ts_return_type = "Promise<any>")]
    pub fn balances<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Value>> {
        let client = self.client.clone();
        error::promise(env, async move { Ok(api_values::balances(&client.balances().await, Casing::Camel)) })
    }

    /// Tells the provider that solved `solution` (as handed out) whether it was right.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn report_solution<'env>(
        &self,
        env: &'env Env,
        solution: Value,
        good: Value,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let client = self.client.clone();
        error::promise(env, async move {
            let solution = api_values::solution_ref(solution, Casing::Camel).map_err(fail)?;
            let good: bool = api_values::argument(good, "good").map_err(fail)?;
            client.report_solution(&solution, good).await.map_err(fail)
        })
    }

    /// What this client spent since it started (`Client::spend`).
    #[napi(ts_return_type = "Promise<any>")]
    pub fn spend<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Value>> {
        let client = self.client.clone();
        error::promise(
            env,
            async move { client.spend().await.map(|r| api_values::value(&r, Casing::Camel)).map_err(fail) },
        )
    }

    /// The client's counters and gauges now (`Client::metrics`).
    #[napi(ts_return_type = "any")]
    pub fn metrics(&self) -> Value {
        api_values::value(&self.client.metrics(), Casing::Camel)
    }

    /// Node only: the metrics and the DLQ's gauges in the Prometheus text format.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn metrics_text<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, String>> {
        let client = self.client.clone();
        error::promise(env, async move { Ok(client.prometheus_text().await) })
    }

    /// Node only: serves the dashboard over this client; `options` are read by
    /// `DashboardOptions::from_value` (`{listen, readOnly, token, tokens, liveIntervalMs}`).
    #[napi(ts_return_type = "Promise<NativeDashboard>")]
    pub fn serve_dashboard<'env>(
        &self,
        env: &'env Env,
        options: Option<Value>,
    ) -> napi::Result<PromiseRaw<'env, NativeDashboard>> {
        let client = self.client.clone();
        let work = async move {
            let config = |e: captcha_dlq_dashboard::DashboardError| {
                fail(captcha_dlq::Error::Config(captcha_dlq_core::ConfigError::new("dashboard", e.to_string())))
            };
            let options =
                DashboardOptions::from_value(options.unwrap_or(Value::Null), Casing::Camel).map_err(config)?;
            captcha_dlq_dashboard::serve(client, options).await.map_err(config)
        };
        error::settle(env, work, |_, handle| {
            Ok(NativeDashboard { url: handle.url(), handle: Arc::new(tokio::sync::Mutex::new(Some(handle))) })
        })
    }

    /// Tells the provider whether an answer was right.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn report<'env>(
        &self,
        env: &'env Env,
        provider_task_id: Value,
        good: Value,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let client = self.client.clone();
        error::promise(env, async move {
            let id: String = api_values::argument(provider_task_id, "providerTaskId").map_err(fail)?;
            let good: bool = api_values::argument(good, "good").map_err(fail)?;
            client.report(&id, good).await.map_err(fail)
        })
    }

    /// Lets submissions flow again after an account error was fixed.
    #[napi]
    pub fn reset_circuit(&self, env: &Env) -> napi::Result<()> {
        self.client.reset_circuit().map_err(|e| error::throw(env, &e))
    }

    /// What the driver is doing (`{jobs, inFlight, inFlightLimit, detached, …}`).
    #[napi(ts_return_type = "Promise<any>")]
    pub fn status<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Value>> {
        let client = self.client.clone();
        error::promise(
            env,
            async move { client.status().await.map(|s| api_values::value(&s, Casing::Camel)).map_err(fail) },
        )
    }

    /// `{available, failures, lastError}` as the driver last saw the store.
    #[napi(ts_return_type = "any")]
    pub fn store_health(&self) -> Value {
        api_values::value(&self.client.store_health(), Casing::Camel)
    }

    /// Resolves once every store write asked for so far has ended (`Client::flush`).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn flush<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let client = self.client.clone();
        error::promise(env, async move { client.flush().await.map_err(fail) })
    }

    /// Stops the driver once its queued writes are done; tasks in flight stay in the journal.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let client = self.client.clone();
        error::promise(env, async move {
            client.close().await;
            Ok(())
        })
    }

    /// `{provider, baseUrl}` — what an inspection shows; never the key.
    #[napi(ts_return_type = "any")]
    pub fn describe(&self) -> Value {
        let provider = self.client.provider();
        json!({ "provider": provider.name(), "baseUrl": provider.base_url() })
    }

    /// Node only: writes the matching records to `path` (created readable by its owner
    /// only); `args` are `export`'s (`{filter, format}`), the format by default from the
    /// file name (`.jsonl` → JSON lines). Resolves with how many records were written.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn export_file<'env>(
        &self,
        env: &'env Env,
        path: Value,
        args: Option<Value>,
    ) -> napi::Result<PromiseRaw<'env, u32>> {
        let dlq = self.client.dlq();
        error::promise(env, async move {
            let path: String = api_values::argument(path, "path").map_err(fail)?;
            let mut args = match args {
                None | Some(Value::Null) => json!({}),
                Some(other) => other,
            };
            if let Value::Object(map) = &mut args {
                if !map.contains_key("format") {
                    let format = match ExportFormat::for_path(&path) {
                        ExportFormat::Json => "json",
                        ExportFormat::Jsonl => "jsonl",
                    };
                    map.insert("format".into(), json!(format));
                }
            }
            let answer = dlq.op("export", args, Casing::Camel).await.map_err(fail)?;
            let text = answer["text"].as_str().unwrap_or_default().to_string();
            let count = answer["count"].as_u64().unwrap_or(0);
            tokio::task::spawn_blocking(move || captcha_dlq::files::write_private(std::path::Path::new(&path), &text))
                .await
                .map_err(|e| fail(captcha_dlq::Error::Io(format!("the export was interrupted: {e}"))))?
                .map_err(fail)?;
            Ok(u32::try_from(count).unwrap_or(u32::MAX))
        })
    }

    /// Node only: upserts the records of an export file (or the seeds' `captcha-dlq.json`).
    #[napi(ts_return_type = "Promise<number>")]
    pub fn import_file<'env>(
        &self,
        env: &'env Env,
        path: Value,
        operator: Option<Value>,
    ) -> napi::Result<PromiseRaw<'env, Value>> {
        let dlq = self.client.dlq();
        error::promise(env, async move {
            let path: String = api_values::argument(path, "path").map_err(fail)?;
            let read = path.clone();
            let text = tokio::task::spawn_blocking(move || std::fs::read_to_string(read))
                .await
                .map_err(|e| fail(captcha_dlq::Error::Io(format!("reading {path} was interrupted: {e}"))))?
                .map_err(|e| fail(captcha_dlq::Error::Io(format!("cannot read {path}: {e}"))))?;
            let mut args = json!({ "text": text });
            if let Some(operator) = operator.filter(|o| !o.is_null()) {
                args["operator"] = operator;
            }
            dlq.op("import", args, Casing::Camel).await.map_err(fail)
        })
    }
}
