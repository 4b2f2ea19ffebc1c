//! The errors the module throws and their one mapping to JS: every error
//! crosses as an `Error` carrying a stable `code` (plus `field`, or `reason`
//! and `class`, where they apply); `js/errors.js` turns it into the matching
//! `Error` subclass. The client's own errors (a dead-lettered task, a closed
//! client, an abort) are made in JS, where they happen.

use captcha_dlq_core::dlq::StoreError;
use captcha_dlq_core::{ConfigError, ErrorClass, Failure, InvalidTask};
use wasm_bindgen::JsValue;

#[derive(Debug)]
pub enum Error {
    InvalidTask(InvalidTask),
    Config(ConfigError),
    Store(StoreError),
    /// A direct request (balance, report) failed; `reason` and `class` say how.
    Provider(Failure),
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
            Error::InvalidTask(_) => "INVALID_TASK",
            Error::Config(_) => "INVALID_CONFIG",
            Error::Store(_) => "STORE_ERROR",
            Error::Provider(f) if f.class == ErrorClass::AccountTerminal => "ACCOUNT_ERROR",
            Error::Provider(_) => "PROVIDER_ERROR",
        }
    }

    pub fn message(&self) -> String {
        match self {
            Error::InvalidTask(e) => e.to_string(),
            Error::Config(e) => e.to_string(),
            Error::Store(e) => e.to_string(),
            Error::Provider(f) => format!("{}: {} ({})", f.code, f.description, f.class.as_str()),
        }
    }

    /// The JS value to throw.
    pub fn into_js(self) -> JsValue {
        let e = js_sys::Error::new(&self.message());
        set(&e, "code", &JsValue::from_str(self.code()));
        match &self {
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
