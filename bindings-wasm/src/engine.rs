//! The engine for the JS driver (`js/driver.js`): the core's sans-IO state
//! machine behind synchronous calls, as in quinn-proto. JS feeds it commands
//! (`submit`, `replay`, `recover`, `cancel`, `resetCircuit`), answers
//! (`handleResponse`, `handleFailure`) and the time (`now`, Unix milliseconds),
//! drains `pollAction()` after every input, and sleeps until `pollTimeout()`.
//! No Rust future, timer or channel is compiled into the module: fetch, timers
//! and stores stay in JS, where they cost nothing in size.
//!
//! The same object answers the client's questions that need the provider or
//! the key: direct requests (`balanceRequest`, `reportRequest` and their
//! parsers) and the replay policy (`replayPlan`, `replayDecide`, `replaySettle`).

use core::time::Duration;
use std::collections::BTreeMap;

use captcha_dlq_core::class::reason;
use captcha_dlq_core::dlq::replay::{ReplayDecision, ReplayPolicy};
use captcha_dlq_core::dlq::{DeadLetterRecord, Filter, RecordState};
use captcha_dlq_core::json_read::FromJson;
use captcha_dlq_core::provider::SubmitOptions;
use captcha_dlq_core::{
    Action, ConfigError, Engine, ErrorClass, Event, Failure, HttpRequest, HttpResponse, InvalidTask, JobId,
    JournalEntry, JournalOp, Method, Provider, RequestId, Secret, Solution, Task, Timestamp, TransportError,
    TransportErrorKind,
};
use js_sys::Reflect;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::convert::{absent, from_js, get, js, to_json};
use crate::error::{Error, Result};
use crate::options::{decode, parse, Options};

/// One client's engine, provider, key and replay policy.
#[wasm_bindgen]
pub struct WasmEngine {
    engine: Engine,
    provider: Provider,
    key: Secret,
    replay: ReplayPolicy,
    request_timeout: Duration,
}

impl std::fmt::Debug for WasmEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmEngine").field("provider", &self.provider.name()).field("api_key", &"***").finish()
    }
}

/// The time JS passes (`Date.now()`); anything odd counts as the epoch.
pub(crate) fn at(now: f64) -> Timestamp {
    Timestamp::from_unix_millis(if now.is_finite() && now > 0.0 { now as u64 } else { 0 })
}

fn provider(o: &Options) -> Result<Provider, ConfigError> {
    let mut provider = Provider::from_spec(&o.provider).map_err(|e| ConfigError::new("provider", e.problem))?;
    if let Some(url) = &o.base_url {
        provider = provider.with_base_url(url).map_err(|e| ConfigError::new("baseUrl", e.problem))?;
    }
    if provider.base_url().starts_with("http://") && !provider.is_loopback() && !o.allow_insecure_http {
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

/// Checks client options without building anything (for a synchronous constructor).
#[wasm_bindgen(js_name = validateOptions)]
pub fn validate_options(options: JsValue) -> Result<(), JsValue> {
    let o = parse(&options).map_err(Error::from)?;
    provider(&o).map_err(Error::from)?;
    Ok(())
}

/// Checks `labels` (an object of strings, or nothing) once for a whole `solveMany`.
#[wasm_bindgen(js_name = readLabels)]
pub fn read_labels(value: JsValue) -> Result<(), JsValue> {
    labels(&value)?;
    Ok(())
}

fn labels(value: &JsValue) -> Result<BTreeMap<String, String>> {
    if absent(value) {
        return Ok(BTreeMap::new());
    }
    let json = to_json(value).map_err(|e| ConfigError::new("labels", e))?;
    BTreeMap::from_json(json)
        .map_err(|e| ConfigError::new("labels", format!("expected an object of strings: {e}")).into())
}

/// A stored value the engine needs (a leased record, a journal entry); a bad one is the store's fault.
fn stored<T: FromJson>(value: &JsValue, what: &str) -> Result<T> {
    from_js(value).map_err(|e| captcha_dlq_core::dlq::StoreError::Decode(format!("{what}: {e}")).into())
}

/// What `pollAction` returns, tagged by `kind`.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum ActionView<'a> {
    Send { request: u64, method: &'static str, url: &'a str, headers: &'a [(String, String)], timeout_ms: u64 },
    Solved { job: u64, id: &'a str, labels: &'a BTreeMap<String, String>, solution: &'a Solution },
    DeadLetter { job: u64, record: &'a DeadLetterRecord },
    JournalUpsert { entry: &'a JournalEntry },
    JournalForget { id: &'a str },
    Event { name: &'static str, warning: bool, message: String, detail: &'a Event },
}

/// A request JS sends with `fetch`: `{method, url, headers, timeout_ms, body?: Uint8Array}`.
fn request_js(id: u64, request: &HttpRequest) -> Result<JsValue, JsValue> {
    let method = match request.method {
        Method::Get => "GET",
        Method::Post => "POST",
    };
    let view = ActionView::Send {
        request: id,
        method,
        url: &request.url,
        headers: &request.headers,
        timeout_ms: request.timeout.as_millis() as u64,
    };
    let value = js(&view)?;
    if let Some(body) = &request.body {
        let _ = Reflect::set(&value, &"body".into(), &js_sys::Uint8Array::from(body.as_slice()));
    }
    Ok(value)
}

#[wasm_bindgen]
impl WasmEngine {
    /// Validates the client options (all but `dlq` and `onEvent`, which JS uses) and builds the engine.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<WasmEngine, JsValue> {
        let o = parse(&options).map_err(Error::from)?;
        let provider = provider(&o).map_err(Error::from)?;
        let mut config = o.config;
        let request_timeout = Duration::from_millis(config.retry.request_timeout_ms);
        if config.seed == 0 {
            config.seed = (js_sys::Math::random() * 9.0e15) as u64 ^ (js_sys::Date::now() as u64);
        }
        // v1 services answer browsers only when asked for CORS headers.
        let submit = SubmitOptions { header_acao: true, ..SubmitOptions::default() };
        let engine = Engine::new(provider.clone(), o.api_key.clone(), config).with_submit_options(submit);
        Ok(WasmEngine { engine, provider, key: o.api_key, replay: o.replay, request_timeout })
    }

    /// Accepts a task; returns its job number. Throws INVALID_TASK (or INVALID_CONFIG for `labels`);
    /// `field_prefix` goes before the field an INVALID_TASK names (`tasks[3].`).
    pub fn submit(
        &mut self,
        task: JsValue,
        labels_value: JsValue,
        field_prefix: &str,
        now: f64,
    ) -> Result<f64, JsValue> {
        let named = |e: InvalidTask| Error::from(InvalidTask::new(format!("{field_prefix}{}", e.field), e.problem));
        let json = to_json(&task).map_err(|e| named(InvalidTask::new("task", e)))?;
        let task = Task::from_json_value(json).map_err(named)?;
        let labels = labels(&labels_value)?;
        Ok(self.engine.submit(task, labels, at(now)).map_err(Error::from)?.0 as f64)
    }

    /// Replays a leased record with at most `attempts` provider attempts (nothing is written to the
    /// store for it: the replayer settles the lease). Throws INVALID_TASK when its task is no longer valid.
    pub fn replay(&mut self, record: JsValue, attempts: u32, now: f64) -> Result<f64, JsValue> {
        let record: DeadLetterRecord = stored(&record, "a received record")?;
        Ok(self.engine.replay(record, attempts, at(now)).map_err(Error::from)?.0 as f64)
    }

    /// Resumes a journal entry left by a client that is gone.
    pub fn recover(&mut self, entry: JsValue, now: f64) -> Result<f64, JsValue> {
        let entry: JournalEntry = stored(&entry, "a journal entry")?;
        Ok(self.engine.recover(entry, at(now)).0 as f64)
    }

    /// Ends the job as a `Cancelled` dead letter; false when it had already ended.
    pub fn cancel(&mut self, job: f64, now: f64) -> bool {
        self.engine.cancel(JobId(job as u64), at(now))
    }

    /// Lets submissions flow again after an account error was fixed.
    #[wasm_bindgen(js_name = resetCircuit)]
    pub fn reset_circuit(&mut self) {
        self.engine.reset_circuit();
    }

    /// The answer to the `send` action numbered `request`.
    #[wasm_bindgen(js_name = handleResponse)]
    pub fn handle_response(&mut self, request: f64, status: u16, body: Vec<u8>, now: f64) {
        self.engine.handle_response(RequestId(request as u64), Ok(HttpResponse::new(status, body)), at(now));
    }

    /// The `send` action numbered `request` got no answer: `kind` is `connect`, `timeout`,
    /// `reset` or anything else. The message is redacted (a fetch error may quote the URL).
    #[wasm_bindgen(js_name = handleFailure)]
    pub fn handle_failure(&mut self, request: f64, kind: &str, message: &str, now: f64) {
        let kind = match kind {
            "connect" => TransportErrorKind::Connect,
            "timeout" => TransportErrorKind::Timeout,
            "reset" => TransportErrorKind::Reset,
            _ => TransportErrorKind::Other,
        };
        let error = TransportError::new(kind, self.key.redact(message));
        self.engine.handle_response(RequestId(request as u64), Err(error), at(now));
    }

    /// The next thing to do (`{kind: 'send' | 'solved' | 'dead_letter' | 'journal_upsert' |
    /// 'journal_forget' | 'event', ...}`), or `undefined` until the next input or timeout.
    #[wasm_bindgen(js_name = pollAction)]
    pub fn poll_action(&mut self, now: f64) -> Result<JsValue, JsValue> {
        let Some(action) = self.engine.poll_action(at(now)) else { return Ok(JsValue::UNDEFINED) };
        let view = match &action {
            Action::Send { request_id, request } => return request_js(request_id.0, request),
            Action::Solved { job, id, labels, solution } => ActionView::Solved { job: job.0, id, labels, solution },
            Action::DeadLetter { job, record } => ActionView::DeadLetter { job: job.0, record },
            Action::Journal(JournalOp::Upsert(entry)) => ActionView::JournalUpsert { entry },
            Action::Journal(JournalOp::Forget { id }) => ActionView::JournalForget { id },
            Action::Event(event) => ActionView::Event {
                name: event.name(),
                warning: event.is_warning(),
                message: event.to_string(),
                detail: event,
            },
        };
        js(&view)
    }

    /// When (Unix ms) to call `pollAction` again if nothing else happens first.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&self) -> Option<f64> {
        self.engine.poll_timeout().map(|t| t.as_unix_millis() as f64)
    }

    /// The balance request, as a `send` action without a number.
    #[wasm_bindgen(js_name = balanceRequest)]
    pub fn balance_request(&self) -> Result<JsValue, JsValue> {
        request_js(0, &self.direct(self.provider.balance_request(&self.key)))
    }

    /// The balance in a provider's answer; throws ACCOUNT_ERROR or PROVIDER_ERROR.
    #[wasm_bindgen(js_name = parseBalance)]
    pub fn parse_balance(&self, status: u16, body: Vec<u8>) -> Result<f64, JsValue> {
        Ok(self.provider.parse_balance(&HttpResponse::new(status, body)).map_err(Error::Provider)?)
    }

    /// The report request for `providerTaskId`; throws INVALID_CONFIG (`report`) when the provider takes none.
    #[wasm_bindgen(js_name = reportRequest)]
    pub fn report_request(&self, provider_task_id: JsValue, good: JsValue) -> Result<JsValue, JsValue> {
        let id = provider_task_id.as_string().ok_or_else(|| ConfigError::new("providerTaskId", "expected a string"));
        let id = id.map_err(Error::from)?;
        let good = good.as_bool().ok_or_else(|| Error::from(ConfigError::new("good", "expected a boolean")))?;
        let request = self.provider.report_request(&self.key, &id, good).ok_or_else(|| {
            let what = if good { "good" } else { "bad" };
            Error::from(ConfigError::new(
                "report",
                format!("{} has no report endpoint for {what} answers", self.provider.name()),
            ))
        })?;
        request_js(0, &self.direct(request))
    }

    /// Checks a provider's answer to a report; throws ACCOUNT_ERROR or PROVIDER_ERROR.
    #[wasm_bindgen(js_name = parseReport)]
    pub fn parse_report(&self, status: u16, body: Vec<u8>) -> Result<(), JsValue> {
        Ok(self.provider.parse_report(&HttpResponse::new(status, body)).map_err(Error::Provider)?)
    }

    /// The error for a direct request that got no answer: a transient `Network` failure (redacted).
    #[wasm_bindgen(js_name = directFailure)]
    pub fn direct_failure(&self, message: &str) -> JsValue {
        Error::Provider(Failure::new(reason::NETWORK, ErrorClass::Transient, self.key.redact(message))).into_js()
    }

    /// What `replay(options)` leases: `{filter, limit, explicit, lease_ms}`, or null when the options
    /// name nothing and the policy replays nothing on its own. Throws INVALID_CONFIG naming the option.
    #[wasm_bindgen(js_name = replayPlan)]
    pub fn replay_plan(&self, options: JsValue) -> Result<JsValue, JsValue> {
        let mut picked = Filter::all();
        let mut named = false;
        for key in ["reasons", "ids", "classes"] {
            let v = get(&options, key);
            if !absent(&v) {
                let json = to_json(&v).map_err(|e| Error::from(ConfigError::new(key, e)))?;
                let one: Filter = decode("", serde_json::json!({ key: json })).map_err(Error::from)?;
                match key {
                    "reasons" => picked.reasons = one.reasons,
                    "ids" => picked.ids = one.ids,
                    _ => picked.classes = one.classes,
                }
                named = true;
            }
        }
        let explicit = match get(&options, "explicit") {
            v if absent(&v) => !picked.ids.is_empty(),
            v => v.as_bool().ok_or_else(|| Error::from(ConfigError::new("explicit", "expected a boolean")))?,
        };
        let filter = match (named, self.replay.auto_filter()) {
            (true, _) => picked,
            (false, Some(auto)) => auto,
            (false, None) => return Ok(JsValue::NULL),
        };
        let limit = match get(&options, "limit") {
            v if absent(&v) => 100,
            v => match v.as_f64() {
                Some(n) if n >= 1.0 && n.fract() == 0.0 => n as u64,
                _ => return Err(Error::from(ConfigError::new("limit", "expected a whole number of at least 1")).into()),
            },
        };
        let plan = serde_json::json!({
            "filter": filter,
            "limit": limit,
            "explicit": explicit,
            "lease_ms": self.replay.lease().as_millis() as u64,
        });
        js(&plan)
    }

    /// The policy's decision for a received record: `{decision: 'replay', attempts_allowed} |
    /// {decision: 'park', reason} | {decision: 'skip', why}`.
    #[wasm_bindgen(js_name = replayDecide)]
    pub fn replay_decide(&self, record: JsValue, explicit: bool) -> Result<JsValue, JsValue> {
        let record: DeadLetterRecord = stored(&record, "a received record")?;
        let decision: ReplayDecision = self.replay.decide(&record, explicit);
        js(&decision)
    }

    /// The record a failed replay abandons its lease with: the new failure, the lease's delivery
    /// count, and parked once the task has had `park_after_attempts` provider attempts.
    #[wasm_bindgen(js_name = replaySettle)]
    pub fn replay_settle(&self, leased: JsValue, failed: JsValue) -> Result<JsValue, JsValue> {
        let leased: DeadLetterRecord = stored(&leased, "a received record")?;
        let mut record: DeadLetterRecord = stored(&failed, "a replayed record")?;
        record.deliveries = leased.deliveries;
        if record.attempts >= self.replay.park_after_attempts {
            record.state = RecordState::Parked;
            record.parked_reason = Some(reason::MAX_DELIVERY_COUNT_EXCEEDED.into());
        }
        js(&record)
    }

    /// Our JSON/JSONL export or the seeds' `captcha-dlq.json`, as records to push.
    #[wasm_bindgen(js_name = importRecords)]
    pub fn import_records(&self, text: JsValue, now: f64) -> Result<JsValue, JsValue> {
        let text = text.as_string().ok_or_else(|| Error::from(ConfigError::new("text", "expected a string")))?;
        let records = captcha_dlq_core::dlq::export::import(&text, self.provider.name(), at(now)).map_err(|e| {
            let field = e.field.clone().map_or_else(|| e.location.to_string(), |f| format!("{}.{f}", e.location));
            Error::from(ConfigError::new(field, e.to_string()))
        })?;
        js(&records)
    }
}

impl WasmEngine {
    fn direct(&self, mut request: HttpRequest) -> HttpRequest {
        request.timeout = self.request_timeout;
        request
    }
}
