//! A DLQ store written in Python: the one store protocol (`docs/custom-store.md`) over a
//! Python object, as a [`HostCall`]; the core's `HostTable` and `TableStore` supply every
//! rule (leases, delivery limits, the journal), so this file only calls methods.
//!
//! Each call runs on tokio's blocking pool and takes the GIL there: the store's methods
//! are plain (sync) functions running on a worker thread, never on the asyncio loop or
//! the client's driver. Arguments go in and answers come back as plain JSON data (dicts,
//! lists, strings, numbers) through the `json` module.

use std::sync::Arc;

use captcha_dlq::core::dlq::host::{HostCall, HostError, METHODS, SHARED};
use captcha_dlq::core::dlq::DlqStore;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::Value;

/// The label errors name the store by (`the custom store's write failed: …`).
const LABEL: &str = "the custom store";

pub(crate) struct PyHostCall {
    object: Arc<Py<PyAny>>,
    /// Which protocol methods the object has, read once.
    provided: Vec<&'static str>,
    /// Its `shared` attribute as JSON, read once.
    shared: Option<Value>,
}

impl std::fmt::Debug for PyHostCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyHostCall").field("provided", &self.provided).finish_non_exhaustive()
    }
}

impl PyHostCall {
    pub(crate) fn new(object: &Bound<'_, PyAny>) -> Self {
        let provided =
            METHODS.into_iter().filter(|m| object.getattr(*m).is_ok_and(|attr| attr.is_callable())).collect();
        let shared = declaration(object, SHARED);
        PyHostCall { object: Arc::new(object.clone().unbind()), provided, shared }
    }
}

/// The object's attribute `name` as JSON (`None` when it has none or it is `None`); a value that
/// is not JSON data as its `repr`, which the core's error then shows. Only an attribute the
/// object or its class defines counts (looked up with `inspect.getattr_static`): a store whose
/// `__getattr__` answers every name (a proxy) has declared nothing.
fn declaration(object: &Bound<'_, PyAny>, name: &str) -> Option<Value> {
    let py = object.py();
    let unreadable = |e: PyErr| Some(Value::String(format!("unreadable ({})", describe(py, &e))));
    let missing = PyTuple::empty(py);
    let defined = py
        .import("inspect")
        .and_then(|inspect| inspect.call_method1("getattr_static", (object, name, &missing)))
        .map(|found| !found.is(&missing));
    match defined {
        Ok(true) => {}
        Ok(false) => return None,
        Err(e) => return unreadable(e),
    }
    let value = match object.getattr(name) {
        Ok(value) => value,
        Err(e) => return unreadable(e),
    };
    if value.is_none() {
        return None;
    }
    let repr = || Some(Value::String(value.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into())));
    if value.is_callable() {
        return repr();
    }
    let text: Option<String> =
        py.import("json").and_then(|json| json.call_method1("dumps", (&value,))).and_then(|t| t.extract()).ok();
    match text.and_then(|t| serde_json::from_str(&t).ok()) {
        Some(json) => Some(json),
        None => repr(),
    }
}

/// A Python object as a DLQ store (keeping the fleet ledger if it declares `shared = True`), or
/// why it cannot be one (a missing method, a bad declaration).
pub(crate) fn store_of(object: &Bound<'_, PyAny>) -> Result<Arc<dyn DlqStore>, String> {
    captcha_dlq::store::host_store(PyHostCall::new(object)).map_err(|e| e.to_string())
}

fn describe(py: Python<'_>, e: &PyErr) -> String {
    let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
    format!("{kind}: {}", e.value(py))
}

/// Calls `method(*args)` on the object with the GIL; the answer as JSON.
fn call_method(py: Python<'_>, object: &Py<PyAny>, method: &'static str, args: &str) -> Result<Value, HostError> {
    let failed = |e: PyErr| HostError(describe(py, &e));
    let json = py.import("json").map_err(failed)?;
    let args = json.call_method1("loads", (args,)).map_err(failed)?;
    let args = PyTuple::new(py, args.try_iter().map_err(failed)?.collect::<PyResult<Vec<_>>>().map_err(failed)?)
        .map_err(failed)?;
    let answer = object.bind(py).call_method1(method, args).map_err(failed)?;
    if answer.hasattr("__await__").unwrap_or(false) {
        // Close a coroutine so that Python does not also warn that it was never awaited.
        if answer.hasattr("close").unwrap_or(false) {
            let _ = answer.call_method0("close");
        }
        return Err(HostError(format!(
            "`{method}` returned an awaitable: store methods are called on a worker thread and must be plain \
             (sync) functions, not `async def`"
        )));
    }
    if matches!(method, "write" | "lock" | "unlock") {
        return Ok(Value::Null);
    }
    let kw = pyo3::types::PyDict::new(py);
    kw.set_item("allow_nan", false).map_err(failed)?;
    let text: String = json
        .call_method("dumps", (answer,), Some(&kw))
        .and_then(|t| t.extract())
        .map_err(|e| HostError(format!("`{method}` answered something that is not JSON data: {}", describe(py, &e))))?;
    serde_json::from_str(&text).map_err(|e| HostError(format!("`{method}` answered unreadable JSON: {e}")))
}

#[async_trait::async_trait]
impl HostCall for PyHostCall {
    async fn call(&self, method: &'static str, args: Value) -> Result<Value, HostError> {
        let object = self.object.clone();
        let args = args.to_string();
        let answer = tokio::task::spawn_blocking(move || {
            Python::try_attach(|py| call_method(py, &object, method, &args))
                .unwrap_or_else(|| Err(HostError("the Python interpreter is shutting down".into())))
        })
        .await;
        answer.unwrap_or_else(|e| Err(HostError(format!("the call was interrupted: {e}"))))
    }

    fn provides(&self, method: &'static str) -> bool {
        self.provided.contains(&method)
    }

    fn declared(&self, name: &'static str) -> Option<Value> {
        (name == SHARED).then(|| self.shared.clone()).flatten()
    }

    fn label(&self) -> &str {
        LABEL
    }
}

#[cfg(test)]
mod tests {
    //! The conformance suites every store runs (`dlq::testkit`, and `fleet::testkit` for a store
    //! declared shared), over a Python dict store in an embedded interpreter, through this
    //! binding's `HostCall`.

    use super::*;
    use captcha_dlq::core::dlq::host::HostTable;
    use captcha_dlq::core::dlq::testkit::{run_store_suite, CASES};
    use captcha_dlq::core::dlq::TableStore;
    use std::ffi::CString;

    const DICT_STORE: &str = r#"
class DictStore:
    def __init__(self):
        self.tables = {}
    def get(self, table, key):
        return self.tables.get(table, {}).get(key)
    def scan(self, table):
        return list(self.tables.get(table, {}).values())
    def write(self, ops):
        for op in ops:
            rows = self.tables.setdefault(op["table"], {})
            if op["op"] == "put":
                rows[op["key"]] = op["row"]
            else:
                rows.pop(op["key"], None)

class AsyncStore(DictStore):
    async def get(self, table, key):
        return None

class SharedStore(DictStore):
    shared = True
    def lock(self):
        pass
    def unlock(self):
        pass

class VaguelySharedStore(SharedStore):
    shared = "yes"

class SharedWithoutLock(DictStore):
    shared = True

class Proxy(DictStore):
    def __getattr__(self, name):
        return lambda *args: None

class SharedByProperty(SharedStore):
    shared = property(lambda self: True)

class SharedByMethod(SharedStore):
    def shared(self):
        return True
"#;

    fn new_object(class: &str) -> Py<PyAny> {
        Python::attach(|py| {
            let code = CString::new(DICT_STORE).unwrap();
            let module = PyModule::from_code(py, &code, c"dict_store.py", c"dict_store").unwrap();
            module.getattr(class).unwrap().call0().unwrap().unbind()
        })
    }

    fn store(class: &str) -> TableStore<HostTable<PyHostCall>> {
        let object = new_object(class);
        Python::attach(|py| TableStore::over(HostTable::new(PyHostCall::new(object.bind(py))).unwrap()))
    }

    fn opened(class: &str) -> Result<Arc<dyn DlqStore>, String> {
        let object = new_object(class);
        Python::attach(|py| store_of(object.bind(py)))
    }

    #[test]
    fn a_python_store_declared_shared_passes_the_fleet_ledger_suite() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let ledger = opened("SharedStore").unwrap().fleet_ledger().expect("a shared store keeps the ledger");
        let now = captcha_dlq::core::Timestamp::from_unix_millis(1_795_255_200_000);
        assert_eq!(rt.block_on(captcha_dlq::core::fleet::testkit::run_ledger_suite(&*ledger, now, 1)), 9);
        assert!(opened("DictStore").unwrap().fleet_ledger().is_none(), "undeclared: one process's store");
    }

    #[test]
    fn a_bad_shared_declaration_is_named() {
        let e = opened("VaguelySharedStore").map(|_| ()).unwrap_err();
        assert!(e.contains("the custom store's `shared` is \"yes\""), "{e}");
        let e = opened("SharedWithoutLock").map(|_| ()).unwrap_err();
        assert!(e.contains("declared `shared` but has no `lock` method"), "{e}");
        let e = opened("SharedByMethod").map(|_| ()).unwrap_err();
        assert!(e.contains("the custom store's `shared` is \"<bound method"), "{e}");
        assert!(opened("SharedByProperty").unwrap().fleet_ledger().is_some(), "a property is read");
        assert!(
            opened("Proxy").unwrap().fleet_ledger().is_none(),
            "a __getattr__ answering everything declares nothing"
        );
    }

    #[test]
    fn a_python_dict_store_passes_the_store_conformance_suite() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let ran = rt.block_on(run_store_suite(|| async { store("DictStore") }));
        assert_eq!(ran, CASES.len());
    }

    #[test]
    fn an_async_method_and_a_missing_method_are_named() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let store = store("AsyncStore");
        let never = captcha_dlq::core::Timestamp::from_unix_millis(0);
        let e = rt.block_on(store.unpark("some-id", never)).unwrap_err().to_string();
        assert!(e.contains("the custom store's get failed") && e.contains("returned an awaitable"), "{e}");
        let missing = Python::attach(|py| {
            let object = py.eval(c"object()", None, None).unwrap();
            store_of(&object).map(|_| ()).unwrap_err()
        });
        assert!(missing.contains("the custom store has no `get` method"), "{missing}");
    }
}
