//! One duration per task kind ([`KindMs`]): the polling schedule's first poll and give-up
//! point, and the providers' documented working times (the providers' `limits` module), which
//! the engine's configuration is built from. It lives with the task kinds, below both.

use core::time::Duration;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::support::json_read::{FieldError, Fields, FromJson, ReadOver};
use crate::task::TaskKind;

/// One duration in milliseconds per task kind. In JSON: an object of kinds
/// (the ones left out keep their value) or one number for every kind. Keys
/// are the kinds' names (`recaptcha_v2`) in every language; JavaScript may
/// also write them in camelCase (`recaptchaV2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindMs {
    ms: [u64; TaskKind::ALL.len()],
}

/// The first-poll table (the name the configuration had before give-up times were per kind too).
pub type FirstPoll = KindMs;

impl KindMs {
    /// Every kind the same (handy against a mock that answers at once).
    pub const fn uniform(ms: u64) -> Self {
        KindMs { ms: [ms; TaskKind::ALL.len()] }
    }

    /// This table with `kind` at `ms` (for tables written as constants).
    pub const fn with(mut self, kind: TaskKind, ms: u64) -> Self {
        self.ms[kind.index()] = ms;
        self
    }

    /// This table with every kind whose schedule is `base`'s (see
    /// [`TaskKind::schedule`]) at `ms`, `base` included.
    pub const fn with_family(mut self, base: TaskKind, ms: u64) -> Self {
        let mut i = 0;
        while i < TaskKind::ALL.len() {
            if TaskKind::ALL[i].schedule() as usize == base as usize {
                self.ms[i] = ms;
            }
            i += 1;
        }
        self
    }

    pub fn for_kind(&self, kind: TaskKind) -> Duration {
        Duration::from_millis(self.ms(kind))
    }

    pub const fn ms(&self, kind: TaskKind) -> u64 {
        self.ms[kind.index()]
    }

    pub fn set(&mut self, kind: TaskKind, ms: u64) {
        self.ms[kind.index()] = ms;
    }
}

impl Serialize for KindMs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.ms.len()))?;
        for kind in TaskKind::ALL {
            map.serialize_entry(kind.as_str(), &self.ms(kind))?;
        }
        map.end()
    }
}

/// One number for every kind, or an object of kinds over the base.
impl ReadOver for KindMs {
    fn read_over(self, value: Value) -> Result<Self, FieldError> {
        if value.is_number() {
            return u64::from_json(value).map(KindMs::uniform);
        }
        if !value.is_object() {
            return Err(FieldError::expected("a whole number or an object of task kinds", &value));
        }
        let mut table = self;
        let mut f = Fields::new(value)?;
        for kind in TaskKind::ALL {
            if let Some((spelled, value)) = f.kind_key(kind.as_str())? {
                table.set(kind, u64::from_json(value).map_err(|e| e.in_field(&spelled))?);
            }
        }
        f.finish()?;
        Ok(table)
    }
}
