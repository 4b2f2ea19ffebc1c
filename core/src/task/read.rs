//! Reading a task from a JSON object field by field.
//!
//! Written by hand rather than derived because every error must name the
//! field (`proxy.port`, `data.blob`) and a derived deserializer can only do
//! that through a path-tracking wrapper, which doubled the deserialization
//! code of every task kind (the largest part of the browser build).
//!
//! Values are converted by the shared [`FromJson`] readers (the same wording
//! as every other error about JSON input); what is particular to tasks stays
//! here: camelCase aliases, errors naming the field as the user spelled it,
//! and `null` counting as absent.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Proxy, Raw};
use crate::error::InvalidTask;
pub(super) use crate::support::json_field::json_type;
use crate::support::json_read::FromJson;

/// The fields of one JSON object, taken out one by one; what is left at
/// [`Fields::finish`] is an unknown field.
pub(super) struct Fields {
    obj: Map<String, Value>,
    /// `""` at the top level, `"proxy."` inside the proxy object.
    prefix: &'static str,
}

impl Fields {
    pub(super) fn new(obj: Map<String, Value>, prefix: &'static str) -> Self {
        Fields { obj, prefix }
    }

    fn error(&self, name: &str, problem: impl Into<String>) -> InvalidTask {
        InvalidTask::new(format!("{}{name}", self.prefix), problem)
    }

    /// The value under `name`; JSON `null` counts as absent, as JS callers pass
    /// `{ proxy: undefined }`.
    fn take(&mut self, name: &str) -> Option<Value> {
        self.obj.remove(name).filter(|v| !v.is_null())
    }

    /// The value under `name`, read as a `T`.
    pub(super) fn read<T: FromJson>(&mut self, name: &str) -> Result<Option<T>, InvalidTask> {
        self.read_spelled(name, &[])
    }

    /// The value under `name` or one of its other `spellings` (its camelCase, `caseSensitive`),
    /// read as a `T`; errors name the field as the user spelled it, and two spellings at once
    /// are an error.
    pub(super) fn read_spelled<T: FromJson>(
        &mut self,
        name: &str,
        spellings: &[&str],
    ) -> Result<Option<T>, InvalidTask> {
        let mut found = self.take(name).map(|v| (name, v));
        for &spelling in spellings {
            if let Some(value) = self.take(spelling) {
                if let Some((first, _)) = found {
                    return Err(self.error(name, format!("given twice, as `{first}` and `{spelling}`")));
                }
                found = Some((spelling, value));
            }
        }
        match found {
            None => Ok(None),
            Some((spelled, v)) => T::from_json(v).map(Some).map_err(|e| self.error(&e.field_under(spelled), e.problem)),
        }
    }

    fn required(&mut self, name: &str) -> Result<String, InvalidTask> {
        self.read(name)?.ok_or_else(|| self.error(name, "missing field"))
    }

    pub(super) fn object(&mut self, name: &str) -> Result<Option<Map<String, Value>>, InvalidTask> {
        self.read(name)
    }

    /// An object whose values are all strings (`params`, FunCaptcha `data`).
    pub(super) fn string_map(&mut self, name: &str) -> Result<BTreeMap<String, String>, InvalidTask> {
        Ok(self.read(name)?.unwrap_or_default())
    }

    pub(super) fn proxy(&mut self) -> Result<Option<Proxy>, InvalidTask> {
        let Some(obj) = self.object("proxy")? else { return Ok(None) };
        let mut f = Fields::new(obj, "proxy.");
        let proxy = Proxy {
            kind: f.required("type")?,
            host: f.required("host")?,
            port: f.read("port")?.ok_or_else(|| f.error("port", "missing field"))?,
            login: f.read("login")?,
            password: f.read("password")?,
        };
        f.finish()?;
        Ok(Some(proxy))
    }

    pub(super) fn finish(self) -> Result<(), InvalidTask> {
        match self.obj.keys().next() {
            Some(k) => Err(self.error(k, format!("unknown field `{k}` (not a field of this task type)"))),
            None => Ok(()),
        }
    }

    pub(super) fn raw(&mut self) -> Result<Raw, InvalidTask> {
        Ok(Raw { method: self.read("method")?, params: self.string_map("params")?, task: self.object("task")? })
    }
}
