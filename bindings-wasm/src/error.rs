//! The binding's errors and their one mapping to JS: every error crosses as an
//! `Error` carrying a stable `code` (plus `field`, `record`, or `reason` and
//! `class`, where they apply); `js/errors.js` turns it into the matching
//! `Error` subclass.

use captcha_dlq_core::dlq::{DeadLetterRecord, StoreError};
use captcha_dlq_core::{ConfigError, ErrorClass, Failure, InvalidTask};
use wasm_bindgen::JsValue;

use crate::convert::to_js;

#[derive(Debug)]
pub enum Error {
    /// The task failed for good; `record` is its dead-letter record (stored unless `stored` is false).
    SolveFailed {
        record: Box<DeadLetterRecord>,
        stored: bool,
    },
    InvalidTask(InvalidTask),
    Config(ConfigError),
    Store(StoreError),
    /// A direct request (balance, report) failed; `reason` and `class` say how.
    Provider(Failure),
    Closed,
    Aborted,
}

impl From<InvalidTask> for Error {
    fn from(e: InvalidTask) -> Self {
        Error::InvalidTask(e)
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Config(e)
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Store(e)
    }
}

impl Error {
    /// The stable code, shared with the Python and Node bindings.
    pub fn code(&self) -> &'static str {
        match self {
            Error::SolveFailed { record, .. } if record.class == ErrorClass::AccountTerminal => "ACCOUNT_ERROR",
            Error::SolveFailed { .. } => "SOLVE_FAILED",
            Error::InvalidTask(_) => "INVALID_TASK",
            Error::Config(_) => "INVALID_CONFIG",
            Error::Store(_) => "STORE_ERROR",
            Error::Provider(f) if f.class == ErrorClass::AccountTerminal => "ACCOUNT_ERROR",
            Error::Provider(_) => "PROVIDER_ERROR",
            Error::Closed => "CLOSED",
            Error::Aborted => "ABORTED",
        }
    }

    pub fn message(&self) -> String {
        match self {
            Error::SolveFailed { record, stored } => format!(
                "task {} dead-lettered: {}: {}{}",
                record.id,
                record.reason,
                record.description,
                if *stored { "" } else { " (the record could not be stored; it is on this error)" }
            ),
            Error::InvalidTask(e) => e.to_string(),
            Error::Config(e) => e.to_string(),
            Error::Store(e) => e.to_string(),
            Error::Provider(f) => format!("{}: {} ({})", f.code, f.description, f.class.as_str()),
            Error::Closed => {
                "the client is closed; tasks still in flight are in the journal and `recover()` resumes them".into()
            }
            Error::Aborted => "aborted by the caller's signal; the task is dead-lettered as Cancelled".into(),
        }
    }

    /// The JS value to throw.
    pub fn into_js(self) -> JsValue {
        let e = js_sys::Error::new(&self.message());
        set(&e, "code", &JsValue::from_str(self.code()));
        match &self {
            Error::SolveFailed { record, stored } => {
                set(&e, "record", &to_js(record.as_ref()).unwrap_or(JsValue::NULL));
                set(&e, "stored", &JsValue::from_bool(*stored));
            }
            Error::InvalidTask(t) => set(&e, "field", &JsValue::from_str(&t.field)),
            Error::Config(c) => set(&e, "field", &JsValue::from_str(&c.field)),
            Error::Provider(f) => {
                set(&e, "reason", &JsValue::from_str(&f.code));
                set(&e, "class", &JsValue::from_str(f.class.as_str()));
            }
            _ => {}
        }
        e.into()
    }
}

impl From<Error> for JsValue {
    fn from(e: Error) -> Self {
        e.into_js()
    }
}

fn set(target: &js_sys::Error, name: &str, value: &JsValue) {
    // Setting a property on a fresh Error cannot fail; nothing to do if it did.
    let _ = js_sys::Reflect::set(target, &JsValue::from_str(name), value);
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
