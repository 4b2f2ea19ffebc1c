//! A DLQ store written in JavaScript, called through the one store protocol
//! (`docs/custom-store.md`): this module only carries `get`, `scan`, `write`
//! and the optional `lock`/`unlock` calls to the object and their answers
//! back, as [`HostCall`]; `core::dlq::host::HostTable` checks the answers and
//! `TableStore` applies the lease rules.
//!
//! Each method is called on the JS thread through a threadsafe function (so
//! the driver never blocks the event loop, nor waits on it for anything but
//! the answer). A method may answer directly or with a promise; a throw or a
//! rejection is the store failing. The functions are weak references: an
//! idle client does not keep Node alive.

use captcha_dlq_core::dlq::host::{HostCall, HostError, SHARED};
use napi::bindgen_prelude::{Either, FnArgs, Function, JsObjectValue, Object, Promise, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status, ValueType};
use serde_json::Value;
use tokio::sync::oneshot;

/// What a store method returns: a promise, or the answer itself.
type Answer = Either<Promise<Option<Value>>, Unknown<'static>>;

/// One method of the store object, bound to it, callable from any thread.
type Method<A> = ThreadsafeFunction<A, Answer, A, Status, false, true>;

/// What came back from one call, before a promise is awaited.
enum Reply {
    Now(Value),
    Later(Promise<Option<Value>>),
}

const LABEL: &str = "the custom store";

pub struct JsStore {
    get: Option<Method<FnArgs<(String, String)>>>,
    scan: Option<Method<String>>,
    write: Option<Method<Value>>,
    lock: Option<Method<()>>,
    unlock: Option<Method<()>>,
    /// Its `shared` property as JSON, read once.
    shared: Option<Value>,
}

impl std::fmt::Debug for JsStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsStore")
    }
}

fn method<A>(store: &Object, name: &str) -> napi::Result<Option<Method<A>>>
where
    A: napi::bindgen_prelude::JsValuesTupleIntoVec + 'static,
{
    let value: Unknown = store.get_named_property(name)?;
    if value.get_type()? != ValueType::Function {
        return Ok(None);
    }
    let function: Function<A, Answer> = store.get_named_property(name)?;
    let bound = function.bind(store)?;
    Ok(Some(bound.build_threadsafe_function::<A>().weak::<true>().build()?))
}

impl JsStore {
    /// Takes the store object's methods and its declaration (on the JS thread, where `open` is
    /// called).
    pub fn new(env: &Env, store: &Object) -> napi::Result<JsStore> {
        Ok(JsStore {
            get: method(store, "get")?,
            scan: method(store, "scan")?,
            write: method(store, "write")?,
            lock: method(store, "lock")?,
            unlock: method(store, "unlock")?,
            shared: declaration(env, store, SHARED)?,
        })
    }
}

/// The object's property `name` as JSON (`None` when it is undefined or null); a value that is
/// not JSON data (a function) as its type, which the core's error then shows.
fn declaration(env: &Env, store: &Object, name: &str) -> napi::Result<Option<Value>> {
    let value: Unknown = store.get_named_property(name)?;
    Ok(match value.get_type()? {
        ValueType::Undefined | ValueType::Null => None,
        ValueType::Function => Some(Value::String("a function".into())),
        kind => Some(env.from_js_value::<Value, _>(value).unwrap_or_else(|_| Value::String(format!("a {kind}")))),
    })
}

/// Calls `f` with `args` on the JS thread; the answer, once any promise it returned settled.
async fn invoke<A: napi::bindgen_prelude::JsValuesTupleIntoVec + 'static>(
    f: &Method<A>,
    args: A,
) -> Result<Value, HostError> {
    let (tx, rx) = oneshot::channel::<Result<Reply, HostError>>();
    let status = f.call_with_return_value(args, ThreadsafeFunctionCallMode::NonBlocking, move |answer, env| {
        let _ = tx.send(read_answer(&env, answer));
        Ok(())
    });
    if status != Status::Ok {
        return Err(HostError(format!("could not be called ({status}); is Node shutting down?")));
    }
    let reply = rx.await.map_err(|_| HostError("the call was dropped before it answered".into()))??;
    let answer = match reply {
        Reply::Now(value) => value,
        Reply::Later(promise) => {
            promise.await.map(|v| v.unwrap_or(Value::Null)).map_err(|e| HostError(e.reason.clone()))?
        }
    };
    Ok(safe_integers(answer))
}

/// The largest whole number a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// JS has one number type, and napi hands a whole number past 32 bits over as a float
/// (`1795255200150000.0`: the fleet ledger's times in µs), which the schema's integer fields
/// refuse. A whole number that a JS number holds exactly is an integer again.
fn safe_integers(value: Value) -> Value {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER => {
                if f < 0.0 {
                    Value::from(f as i64)
                } else {
                    Value::from(f as u64)
                }
            }
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(safe_integers).collect()),
        Value::Object(fields) => Value::Object(fields.into_iter().map(|(k, v)| (k, safe_integers(v))).collect()),
        other => other,
    }
}

fn read_answer(env: &Env, answer: napi::Result<Answer>) -> Result<Reply, HostError> {
    match answer {
        Err(e) => Err(HostError(e.reason.clone())),
        Ok(Either::A(promise)) => Ok(Reply::Later(promise)),
        Ok(Either::B(value)) => match value.get_type() {
            Ok(ValueType::Undefined | ValueType::Null) => Ok(Reply::Now(Value::Null)),
            _ => env
                .from_js_value::<Value, _>(value)
                .map(Reply::Now)
                .map_err(|e| HostError(format!("answered a value that is not plain data: {}", e.reason))),
        },
    }
}

fn arg(args: &Value, i: usize) -> String {
    args.get(i).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn missing(method: &str) -> HostError {
    HostError(format!("has no `{method}` method"))
}

#[async_trait::async_trait]
impl HostCall for JsStore {
    async fn call(&self, method: &'static str, args: Value) -> Result<Value, HostError> {
        match method {
            "get" => {
                let f = self.get.as_ref().ok_or_else(|| missing(method))?;
                invoke(f, FnArgs::from((arg(&args, 0), arg(&args, 1)))).await
            }
            "scan" => invoke(self.scan.as_ref().ok_or_else(|| missing(method))?, arg(&args, 0)).await,
            "write" => {
                let ops = args.get(0).cloned().unwrap_or(Value::Array(Vec::new()));
                invoke(self.write.as_ref().ok_or_else(|| missing(method))?, ops).await
            }
            "lock" => invoke(self.lock.as_ref().ok_or_else(|| missing(method))?, ()).await,
            "unlock" => invoke(self.unlock.as_ref().ok_or_else(|| missing(method))?, ()).await,
            other => Err(HostError(format!("no method {other} in the store protocol"))),
        }
    }

    fn provides(&self, method: &'static str) -> bool {
        match method {
            "get" => self.get.is_some(),
            "scan" => self.scan.is_some(),
            "write" => self.write.is_some(),
            "lock" => self.lock.is_some(),
            "unlock" => self.unlock.is_some(),
            _ => false,
        }
    }

    fn declared(&self, name: &'static str) -> Option<Value> {
        (name == SHARED).then(|| self.shared.clone()).flatten()
    }

    fn label(&self) -> &str {
        LABEL
    }
}
