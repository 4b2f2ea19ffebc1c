//! The client's API in host values: what every binding passes in and gets back, read and
//! written here once, in the host's casing.
//!
//! A binding turns its host's objects into `serde_json::Value` (Python through JSON text,
//! Node through napi's serde support, the browser through serde-wasm-bindgen), calls these
//! functions, and turns the answers back. Every rule about those values — which option keys
//! exist, what a task in a batch may look like, how a result, an error or a replay outcome
//! is shaped — is decided here, so the three bindings cannot drift apart.

use std::collections::BTreeMap;

use crate::options::spelled_as;
use captcha_dlq_core::dlq::Filter;
use captcha_dlq_core::support::cased;
use captcha_dlq_core::support::json_read::{read_cased, spelled, Casing, FieldError, Fields, FromJson};
use captcha_dlq_core::{ConfigError, InvalidTask, Solution, Task, ValidTask};
use serde_json::{json, Map, Value};

use crate::adopted::AdoptedAnswer;
use crate::answer::Answer;
use crate::driver::Delivery;
use crate::error::Error;
use crate::recover::{RecoverItem, RecoverOptions, RecoverResult};
use crate::replay::{ReplayItem, ReplayOptions, ReplayOutcome, ReplayResult};
use crate::solve_stream::{SolveInput, SolveResult};

/// Options of one call: unknown keys are errors naming the key as written.
fn call_options<T: FromJson>(value: Value, casing: Casing, call: &str) -> Result<T, Error> {
    let value = if value.is_null() { Value::Object(Map::new()) } else { value };
    read_cased(value, casing).map_err(|e| Error::Config(ConfigError::new(e.field_under(call), e.problem)))
}

/// One positional argument of a call (a provider task id, a provider's name, a file path,
/// `good`), read as `T`; `field` names it as the host's API does.
pub fn argument<T: FromJson>(value: Value, field: &str) -> Result<T, Error> {
    T::from_json(value).map_err(|e| Error::Config(ConfigError::new(e.field_under(field), e.problem)))
}

/// A task as a host gives it (a task object), checked by the core.
pub fn task(value: Value) -> Result<ValidTask, Error> {
    Task::from_json_value(value).map_err(Error::InvalidTask)
}

/// Labels: an object of strings, or nothing.
pub fn labels(value: Value, field: &str) -> Result<BTreeMap<String, String>, Error> {
    match value {
        Value::Null => Ok(BTreeMap::new()),
        other => BTreeMap::<String, String>::from_json(other)
            .map_err(|e| Error::InvalidTask(InvalidTask::new(e.field_under(field), e.problem))),
    }
}

/// The options of `solve`: `labels`, `ttl_ms` (how long the caller still wants the task;
/// past it a task not solved is a dead letter `TTLExpired` and nothing more is paid) and, in
/// each binding, what only the host holds, such as an abort signal, taken out before this is
/// called.
#[derive(Debug, Default)]
pub struct SolveOptions {
    pub labels: BTreeMap<String, String>,
    pub ttl_ms: Option<u64>,
}

impl FromJson for SolveOptions {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let o = SolveOptions { labels: f.or_default("labels")?, ttl_ms: f.opt("ttl_ms")? };
        f.finish()?;
        if o.ttl_ms == Some(0) {
            return Err(FieldError::new(spelled("ttl_ms"), "must be at least 1 (milliseconds)"));
        }
        Ok(o)
    }
}

pub fn solve_options(value: Value, casing: Casing) -> Result<SolveOptions, Error> {
    call_options(value, casing, "options")
}

/// The options of `solve_many` / `solve_stream`.
#[derive(Debug, Default)]
pub struct BatchOptions {
    pub concurrency: Option<usize>,
    /// Labels added to every task (a task's own labels win).
    pub labels: BTreeMap<String, String>,
}

impl FromJson for BatchOptions {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let o = BatchOptions { concurrency: f.opt("concurrency")?, labels: f.or_default("labels")? };
        f.finish()?;
        if o.concurrency == Some(0) {
            return Err(FieldError::new(spelled("concurrency"), "must be at least 1"));
        }
        Ok(o)
    }
}

pub fn batch_options(value: Value, casing: Casing) -> Result<BatchOptions, Error> {
    call_options(value, casing, "options")
}

/// The tasks of a batch: an array whose items are tasks, or `{task, labels, key, ttl_ms}` objects.
/// An item that cannot be read is an error in its own slot (`tasks[3].sitekey: …`), not a
/// failure of the batch.
pub fn batch(tasks: Value, options: &BatchOptions, casing: Casing) -> Result<Vec<SolveInput>, Error> {
    batch_checked(tasks, Vec::new(), options, casing)
}

/// [`batch`] where some tasks were read and checked already (a host's task objects hold their
/// [`ValidTask`]): `checked[i]`, when given, is item `i`'s task (the item itself, or its `task`
/// when it is `{task, labels, key}`), and what the array holds in that place is not read.
pub fn batch_checked(
    tasks: Value,
    checked: Vec<Option<ValidTask>>,
    options: &BatchOptions,
    casing: Casing,
) -> Result<Vec<SolveInput>, Error> {
    let Value::Array(items) = tasks else {
        return Err(Error::InvalidTask(InvalidTask::new("tasks", "expected an array of tasks")));
    };
    let mut checked = checked.into_iter();
    Ok(items
        .into_iter()
        .enumerate()
        .map(|(i, item)| batch_item(i, item, checked.next().flatten(), options, casing))
        .collect())
}

fn batch_item(
    index: usize,
    item: Value,
    checked: Option<ValidTask>,
    options: &BatchOptions,
    casing: Casing,
) -> SolveInput {
    let prefix = format!("tasks[{index}]");
    let mut labels = options.labels.clone();
    let (wrapped, task_value, own_labels, key, ttl) = match item {
        Value::Object(mut m) if m.contains_key("task") => {
            let task = m.remove("task").unwrap_or(Value::Null);
            let own = m.remove("labels").unwrap_or(Value::Null);
            let key = m.remove("key");
            let ttl = m.remove(&spelled_as(casing, "ttl_ms"));
            if let Some(extra) = m.keys().next() {
                let e = InvalidTask::new(
                    format!("{prefix}.{extra}"),
                    format!(
                        "unknown field; an item is a task, or {{task, labels, key, {}}}",
                        spelled_as(casing, "ttl_ms")
                    ),
                );
                return SolveInput { task: Err(Error::InvalidTask(e)), labels, key: None, ttl_ms: None };
            }
            (true, task, own, key, ttl)
        }
        other => (false, other, Value::Null, None, None),
    };
    let ttl_ms = match ttl {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some_and(|ms| ms >= 1) => n.as_u64(),
        Some(_) => {
            let field = format!("{prefix}.{}", spelled_as(casing, "ttl_ms"));
            let e = InvalidTask::new(field, "expected a whole number of milliseconds, at least 1");
            return SolveInput { task: Err(Error::InvalidTask(e)), labels, key: None, ttl_ms: None };
        }
    };
    let key = match key {
        None | Some(Value::Null) => None,
        Some(Value::String(k)) => Some(k),
        Some(_) => {
            let e = InvalidTask::new(format!("{prefix}.key"), "expected a string");
            return SolveInput { task: Err(Error::InvalidTask(e)), labels, key: None, ttl_ms: None };
        }
    };
    match self::labels(own_labels, &format!("{prefix}.labels")) {
        Ok(own) => labels.extend(own),
        Err(e) => return SolveInput { task: Err(e), labels, key, ttl_ms },
    }
    let task = match checked {
        Some(task) => Ok(task),
        None => task(task_value).map_err(|e| e.in_field(&format!("{prefix}{}", if wrapped { ".task." } else { "." }))),
    };
    SolveInput { task, labels, key, ttl_ms }
}

/// An error as hosts see it: `{code, message, field?, record?, stored?, runsOn?}`, and for a
/// failed direct request (balance, report) the provider's `reason` code and its `class`.
pub fn error(e: &Error, casing: Casing) -> Value {
    let mut v = json!({ "code": e.code(), "message": e.to_string() });
    if let Some(field) = e.field() {
        v["field"] = json!(field);
    }
    match e {
        Error::SolveFailed { record, stored } => {
            v["record"] = cased::to_value(record, casing).unwrap_or(Value::Null);
            v["stored"] = json!(stored);
        }
        Error::Cancelled { id, runs_on } => {
            v["id"] = json!(id);
            v[spelled_as(casing, "runs_on")] = json!(runs_on);
        }
        Error::Provider(failure) => {
            v["reason"] = json!(failure.code);
            v["class"] = json!(failure.class.as_str());
        }
        _ => {}
    }
    v
}

/// A solution as hosts see it: always `{text, fields, provider_task_id}` (`providerTaskId` in
/// JavaScript; `fields` empty and the id null when the provider gave none), so a host can rely
/// on its shape.
pub fn solution(s: &Solution, casing: Casing) -> Value {
    let mut v = json!({ "text": s.text, "fields": s.fields });
    v[spelled_as(casing, "provider_task_id")] = json!(s.provider_task_id);
    // The provider that solved it (where `report_solution` goes) and what it cost, when known.
    if let Some(provider) = &s.provider {
        v["provider"] = json!(provider);
    }
    if let Some(cost) = s.cost {
        v["cost"] = json!(cost);
    }
    // When it was solved and when it stops being good (Unix ms; null: it does not expire).
    v[spelled_as(casing, "solved_at")] = json!(s.solved_at);
    v[spelled_as(casing, "expires_at")] = json!(s.expires_at);
    // The values its kind declares, named as the host spells names (`user_agent` / `userAgent`).
    if !s.answer.is_empty() {
        let mut answer = serde_json::Map::new();
        for (name, value) in &s.answer {
            answer.insert(spelled_as(casing, name), value.clone());
        }
        v["answer"] = Value::Object(answer);
    }
    // What the page added that the provider had no place for (docs/decisions/0077).
    if !s.left_out.is_empty() {
        v[spelled_as(casing, "left_out")] = json!(s.left_out.iter().map(|f| spelled_as(casing, f)).collect::<Vec<_>>());
    }
    v
}

/// One finished task of a batch: `{index, id, key, labels, ok: true, solution}` or
/// `{index, id, key, labels, ok: false, error}`.
pub fn solve_result(r: &SolveResult, casing: Casing) -> Value {
    let mut v = json!({ "index": r.index, "id": r.id, "key": r.key, "labels": r.labels });
    match &r.outcome {
        Ok(s) => {
            v["ok"] = json!(true);
            v["solution"] = solution(s, casing);
        }
        Err(e) => {
            v["ok"] = json!(false);
            v["error"] = error(e, casing);
        }
    }
    v
}

/// The options of `replay`: which records (`reasons`, `ids`, `filter`), how many (`limit`),
/// how fast (`per_second`), who asks (`operator`, for the audit trail). Naming records (reasons, ids, a filter) is an operator's
/// explicit request: review classes are replayed too.
struct RawReplay {
    reasons: Vec<String>,
    ids: Vec<String>,
    filter: Option<Filter>,
    limit: Option<usize>,
    per_second: Option<f64>,
    operator: Option<String>,
}

impl FromJson for RawReplay {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let o = RawReplay {
            reasons: f.or_default("reasons")?,
            ids: f.or_default("ids")?,
            filter: f.opt("filter")?,
            limit: f.opt("limit")?,
            per_second: f.opt("per_second")?,
            operator: f.opt("operator")?,
        };
        f.finish()?;
        if o.limit == Some(0) {
            return Err(FieldError::new(spelled("limit"), "must be at least 1"));
        }
        if let Err(e) = crate::replay::start_interval(o.per_second) {
            return Err(FieldError::new(spelled("per_second"), e.problem));
        }
        Ok(o)
    }
}

pub fn replay_options(value: Value, casing: Casing) -> Result<ReplayOptions, Error> {
    let raw: RawReplay = call_options(value, casing, "options")?;
    let explicit = !raw.reasons.is_empty() || !raw.ids.is_empty() || raw.filter.is_some();
    let filter = explicit.then(|| {
        let mut f = raw.filter.unwrap_or_default();
        f.reasons.extend(raw.reasons);
        f.ids.extend(raw.ids);
        f
    });
    // Without feature `audit` (the browser build) there is no trail: the name is taken (the JS API is one) and unused.
    #[cfg(feature = "audit")]
    let operator = raw.operator.as_deref().map(crate::audit::Operator::new).transpose()?;
    #[cfg(not(feature = "audit"))]
    let _ = raw.operator;
    Ok(ReplayOptions {
        filter,
        limit: raw.limit,
        explicit,
        per_second: raw.per_second,
        #[cfg(feature = "audit")]
        operator,
    })
}

/// One replayed record: `{id, labels, outcome, solution?, record?, parked?, reason?, why?, error?}`
/// with `outcome` one of `recovered`, `failed_again`, `parked`, `skipped`, `error`.
pub fn replay_item<A: Answered>(item: &ReplayItem<A>, casing: Casing) -> Value {
    let mut v = json!({ "id": item.id, "labels": item.labels });
    let key = |name: &str| spelled_as(casing, name);
    match &item.outcome {
        ReplayOutcome::Recovered(d) => {
            v["outcome"] = json!("recovered");
            v["solution"] = solution(d.solution(), casing);
        }
        ReplayOutcome::FailedAgain { record, parked } => {
            v["outcome"] = json!("failed_again");
            v["record"] = cased::to_value(record, casing).unwrap_or(Value::Null);
            v["parked"] = json!(parked);
        }
        ReplayOutcome::Parked { reason } => {
            v["outcome"] = json!("parked");
            v["reason"] = json!(reason);
        }
        ReplayOutcome::Skipped { why } => {
            v["outcome"] = json!("skipped");
            v["why"] = json!(why);
        }
        ReplayOutcome::Error(e) => {
            v["outcome"] = json!("error");
            v[key("error")] = error(e, casing);
        }
    }
    v
}

/// The options of `recover`: `resume` (default true), `resolve_expired` (default false: an
/// answer past its life is a dead letter `TTLExpired`; true: the task is solved again).
struct RawRecover {
    resume: bool,
    resolve_expired: bool,
}

impl FromJson for RawRecover {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let o = RawRecover { resume: f.or("resume", true)?, resolve_expired: f.or("resolve_expired", false)? };
        f.finish()?;
        Ok(o)
    }
}

pub fn recover_options(value: Value, casing: Casing) -> Result<RecoverOptions, Error> {
    let raw: RawRecover = call_options(value, casing, "options")?;
    Ok(RecoverOptions { resume: raw.resume, key_prefix: None, owner: None, resolve_expired: raw.resolve_expired })
}

/// One recovered task: `{id, key, labels, ok: true, solution}` or `{…, ok: false, error}`.
pub fn recover_item<A: Answered>(item: &RecoverItem<A>, casing: Casing) -> Value {
    let mut v = json!({ "id": item.id, "key": item.key, "labels": item.labels });
    match &item.outcome {
        Ok(d) => {
            v["ok"] = json!(true);
            v["solution"] = solution(d.solution(), casing);
        }
        Err(e) => {
            v["ok"] = json!(false);
            v["error"] = error(e, casing);
        }
    }
    v
}

/// An answer a collect-all call handed over: `{id, key, labels, solution}`.
pub fn answer(a: &Answer, casing: Casing) -> Value {
    json!({ "id": a.id, "key": a.key, "labels": a.labels, "solution": solution(&a.solution, casing) })
}

/// What `replay()` returns in every language: `{report, solved: [answer], items: [replay_item]}`.
pub fn replay_result(r: &ReplayResult, casing: Casing) -> Value {
    json!({
        "report": value(&r.report, casing),
        "solved": r.solved.iter().map(|a| answer(a, casing)).collect::<Vec<_>>(),
        "items": r.items.iter().map(|i| replay_item(i, casing)).collect::<Vec<_>>(),
    })
}

/// What `recover()` returns in every language: `{report, solved: [answer], failed: [recover_item]}`.
pub fn recover_result(r: &RecoverResult, casing: Casing) -> Value {
    json!({
        "report": value(&r.report, casing),
        "solved": r.solved.iter().map(|a| answer(a, casing)).collect::<Vec<_>>(),
        "failed": r.failed.iter().map(|i| recover_item(i, casing)).collect::<Vec<_>>(),
    })
}

/// The answer an item carries: a delivery (with its receipt) while the stream hands it out,
/// or the bare solution once it is handed over.
pub trait Answered {
    fn solution(&self) -> &Solution;
}

impl Answered for Delivery {
    fn solution(&self) -> &Solution {
        &self.solution
    }
}

impl Answered for Solution {
    fn solution(&self) -> &Solution {
        self
    }
}

/// An answer adopted from a dead fleet member, as the host's `on_adopted` hook gets it: the
/// shape of a solved [`recover_item`] (`{id, key, labels, ok: true, solution}`), so a host
/// builds the very object its `recover` yields.
pub fn adopted(answer: &AdoptedAnswer, casing: Casing) -> Value {
    json!({
        "id": answer.id,
        "key": answer.key,
        "labels": answer.labels,
        "ok": true,
        "solution": solution(&answer.solution, casing),
    })
}

/// Any answer (a report, stats, a status) in the host's casing.
pub fn value<T: serde::Serialize>(v: &T, casing: Casing) -> Value {
    cased::to_value(v, casing).unwrap_or(Value::Null)
}

/// What `report_solution` needs of a solution a host hands back: the provider that solved
/// it and its task id there. The rest of a solution object (`text`, `fields`, `cost`, `answer`,
/// `solved_at`, `expires_at`) may come along and is not used; anything else is an error naming it.
pub fn solution_ref(value: Value, casing: Casing) -> Result<Solution, Error> {
    let raw: SolutionRef =
        read_cased(value, casing).map_err(|e| Error::Config(ConfigError::new(e.field_under("solution"), e.problem)))?;
    let mut solution = Solution::text(raw.text.unwrap_or_default());
    solution.provider = raw.provider;
    solution.provider_task_id = raw.provider_task_id;
    Ok(solution)
}

struct SolutionRef {
    text: Option<String>,
    provider: Option<String>,
    provider_task_id: Option<String>,
}

impl FromJson for SolutionRef {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let r = SolutionRef {
            text: f.opt("text")?,
            provider: f.opt("provider")?,
            provider_task_id: f.opt("provider_task_id")?,
        };
        let _: Option<Value> = f.opt("fields")?;
        let _: Option<f64> = f.opt("cost")?;
        let _: Option<Value> = f.opt("answer")?;
        // Not used, so not checked: a JS number comes back from napi as a float.
        let _: Option<Value> = f.opt("solved_at")?;
        let _: Option<Value> = f.opt("expires_at")?;
        let _: Option<Value> = f.opt("left_out")?;
        f.finish()?;
        Ok(r)
    }
}

/// Every provider's balance: `[{provider, balance} | {provider, error}]`, in configuration order.
pub fn balances(all: &[(String, Result<f64, Error>)], casing: Casing) -> Value {
    Value::Array(
        all.iter()
            .map(|(provider, result)| match result {
                Ok(balance) => json!({ "provider": provider, "balance": balance }),
                Err(e) => json!({ "provider": provider, "error": error(e, casing) }),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adopted_answer_has_the_shape_of_a_recovered_one_in_the_hosts_casing() {
        let mut solution = Solution::text("03AG-token");
        solution.provider_task_id = Some("7182".into());
        let answer = AdoptedAnswer {
            id: "01J-ID".into(),
            key: Some("batch:f/id:t1".into()),
            labels: BTreeMap::from([("job_id".to_string(), "j".to_string())]),
            solution,
        };
        let camel = adopted(&answer, Casing::Camel);
        assert_eq!(camel["ok"], true);
        assert_eq!((camel["id"].as_str(), camel["key"].as_str()), (Some("01J-ID"), Some("batch:f/id:t1")));
        assert_eq!(camel["solution"]["providerTaskId"], "7182");
        assert_eq!(camel["labels"]["job_id"], "j", "label keys are data");
        assert_eq!(adopted(&answer, Casing::Snake)["solution"]["provider_task_id"], "7182");
    }

    #[test]
    fn batch_items_are_tasks_or_wrapped_tasks_and_bad_ones_name_their_place() {
        let options = batch_options(json!({"concurrency": 5, "labels": {"job": "j"}}), Casing::Camel).unwrap();
        let items = batch(
            json!([
                {"type": "recaptcha_v2", "sitekey": "6Le-K", "pageUrl": "https://a.test/"},
                {"task": {"type": "recaptcha_v2", "sitekey": "", "pageUrl": "https://a.test/"}, "labels": {"jobId": "x"}},
                {"task": {"type": "recaptcha_v2", "sitekey": "6Le-K", "pageUrl": "https://a.test/"}, "lables": {}},
                7
            ]),
            &options,
            Casing::Camel,
        )
        .unwrap();
        assert!(items[0].task.is_ok());
        assert_eq!(items[0].labels.get("job").map(String::as_str), Some("j"));
        let e = items[1].task.as_ref().unwrap_err();
        assert_eq!(e.field(), Some("tasks[1].task.sitekey"), "{e}");
        assert_eq!(items[1].labels.get("jobId").map(String::as_str), Some("x"), "label keys are data");
        assert_eq!(items[2].task.as_ref().unwrap_err().field(), Some("tasks[2].lables"));
        assert!(items[3].task.as_ref().unwrap_err().field().is_some_and(|f| f.starts_with("tasks[3]")));
    }

    #[test]
    fn call_options_refuse_unknown_keys_as_written() {
        let e = replay_options(json!({"reasons": ["Timeout"], "limt": 1}), Casing::Camel).unwrap_err();
        assert_eq!(e.field(), Some("options.limt"), "{e}");
        let e = solve_options(json!({"signl": 1}), Casing::Camel).unwrap_err();
        assert_eq!(e.field(), Some("options.signl"));
        let e = replay_options(json!({"perSecond": 0}), Casing::Camel).unwrap_err();
        assert_eq!(e.field(), Some("options.perSecond"));
        // Issue 44, finding 3: a rate so small its interval overflows is refused here too.
        let e = replay_options(json!({"per_second": 1e-300}), Casing::Snake).unwrap_err();
        assert_eq!(e.field(), Some("options.per_second"), "{e}");
        let r = replay_options(json!({"filter": {"labels": {"jobId": "x"}}, "perSecond": 2}), Casing::Camel).unwrap();
        assert!(r.explicit);
        assert_eq!(r.filter.unwrap().labels.get("jobId").map(String::as_str), Some("x"), "camelCase label keys match");
        let e = batch_options(json!({"concurrency": 0}), Casing::Snake).unwrap_err();
        assert_eq!(e.field(), Some("options.concurrency"));
    }

    #[test]
    fn errors_carry_code_field_and_record_in_the_hosts_casing() {
        let mut record = captcha_dlq_core::dlq::testkit::sample_record("r", 0);
        record.labels.insert("jobId".into(), "x".into());
        let e = Error::SolveFailed { record: Box::new(record), stored: true };
        let v = error(&e, Casing::Camel);
        assert_eq!(v["code"], "SOLVE_FAILED");
        assert!(v["record"]["deadLetteredAt"].is_string());
        assert_eq!(v["record"]["labels"]["jobId"], "x");
        let c = error(&Error::Cancelled { id: "i".into(), runs_on: true }, Casing::Camel);
        assert_eq!(c["runsOn"], true);
        let c = error(&Error::Cancelled { id: "i".into(), runs_on: true }, Casing::Snake);
        assert_eq!(c["runs_on"], true);
    }

    #[test]
    fn a_solution_always_has_its_five_fields() {
        let v = solution(&Solution::text("t"), Casing::Camel);
        let none = json!({"text": "t", "fields": {}, "providerTaskId": null, "solvedAt": null, "expiresAt": null});
        assert_eq!(v, none);
        let mut s = Solution::text("t");
        s.provider_task_id = Some("71823460".into());
        s.fields.insert("userAgent".into(), json!("UA"));
        s.stamp(captcha_dlq_core::Timestamp::from_unix_millis(1_000), Some(120_000));
        let v = solution(&s, Casing::Snake);
        let want = json!({"text": "t", "fields": {"userAgent": "UA"}, "provider_task_id": "71823460",
                          "solved_at": 1_000, "expires_at": 121_000});
        assert_eq!(v, want, "when it was solved and when it expires, in Unix ms");
    }

    #[test]
    fn a_solution_as_hosts_get_it_is_taken_back_by_report_solution() {
        let mut s = Solution::text("t");
        s.provider = Some("2captcha".into());
        s.provider_task_id = Some("7".into());
        s.stamp(captcha_dlq_core::Timestamp::from_unix_millis(1_000), Some(120_000));
        for casing in [Casing::Camel, Casing::Snake] {
            let back = solution_ref(solution(&s, casing), casing).expect("the host's own solution object");
            assert_eq!((back.provider, back.provider_task_id), (s.provider.clone(), s.provider_task_id.clone()));
        }
    }

    #[test]
    fn a_batch_items_ttl_ms_is_read_and_a_bad_one_is_its_own_error() {
        let options = BatchOptions::default();
        let task = json!({"type": "image", "body": "aGVsbG8gd29ybGQ="});
        let items = json!([{"task": task, "ttlMs": 30_000}, {"task": task, "ttlMs": 0}, {"task": task, "ttl": 5}]);
        let inputs = batch(items, &options, Casing::Camel).unwrap();
        assert_eq!(inputs[0].ttl_ms, Some(30_000));
        assert!(inputs[0].task.is_ok());
        let zero = inputs[1].task.as_ref().unwrap_err().to_string();
        assert!(zero.contains("tasks[1].ttlMs"), "{zero}");
        let unknown = inputs[2].task.as_ref().unwrap_err().to_string();
        assert!(unknown.contains("tasks[2].ttl") && unknown.contains("ttlMs"), "{unknown}");
        let solve = solve_options(json!({"ttl_ms": 0}), Casing::Snake).unwrap_err().to_string();
        assert!(solve.contains("ttl_ms"), "{solve}");
        let recover = recover_options(json!({"resolveExpired": true}), Casing::Camel).unwrap();
        assert!(recover.resolve_expired);
        assert!(recover_options(json!({"resolve_expired": true}), Casing::Camel).is_err(), "spelled as the host does");
    }
}

#[cfg(test)]
mod result_shapes {
    use std::collections::BTreeSet;

    use captcha_dlq_core::support::json_read::Casing;
    use serde_json::Value;

    use captcha_dlq_core::dlq::replay::ReplayReport;

    use super::*;
    use crate::api_values;
    use crate::recover::{RecoverCollector, RecoverSummary};
    use crate::replay::ReplayCollector;

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
    }

    fn shape(name: &str) -> BTreeSet<String> {
        let shapes: Value = serde_json::from_str(include_str!("../../tests/shapes/results.json")).unwrap();
        shapes[name].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_string()).collect()
    }

    #[test]
    fn results_have_the_shapes_every_language_returns() {
        let answer = Answer { id: "r1".into(), key: None, labels: BTreeMap::new(), solution: Solution::text("t") };
        let mut replay = ReplayCollector::default();
        replay.push(ReplayItem {
            id: "r1".into(),
            labels: BTreeMap::new(),
            outcome: ReplayOutcome::Recovered(Solution::text("t")),
        });
        let replayed = api_values::replay_result(&replay.finish(ReplayReport::default()), Casing::Snake);
        assert_eq!(keys(&replayed), shape("replay"));
        assert_eq!(keys(&replayed["report"]), shape("replay_report"));
        assert_eq!(keys(&replayed["solved"][0]), shape("answer"));
        assert_eq!(replayed["solved"][0]["id"], "r1");

        let mut recover = RecoverCollector::default();
        recover.push(RecoverItem {
            id: "e1".into(),
            key: Some("k".into()),
            labels: BTreeMap::new(),
            outcome: Ok(Solution::text("t")),
        });
        let recovered = api_values::recover_result(&recover.finish(RecoverSummary::default()), Casing::Snake);
        assert_eq!(keys(&recovered), shape("recover"));
        assert_eq!(keys(&recovered["report"]), shape("recover_report"));
        assert_eq!(keys(&recovered["solved"][0]), shape("answer"));
        assert_eq!(
            (recovered["report"]["solved"].as_u64(), recovered["solved"][0]["key"].as_str()),
            (Some(1), Some("k"))
        );
        assert_eq!(keys(&api_values::answer(&answer, Casing::Snake)), shape("answer"));
    }
}
