//! One duration per task kind ([`KindMs`]): the polling schedule's first poll and give-up
//! point, and the providers' documented working times (`crate::provider::limits`), which the
//! engine's configuration is built from.

use core::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::json_read::{FieldError, Fields, FromJson, ReadOver};
use crate::task::TaskKind;

/// One duration in milliseconds per task kind. In JSON: an object of kinds
/// (the ones left out keep their value) or one number for every kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KindMs {
    pub image: u64,
    pub text: u64,
    pub recaptcha_v2: u64,
    pub recaptcha_v3: u64,
    pub turnstile: u64,
    pub geetest_v3: u64,
    pub geetest_v4: u64,
    pub funcaptcha: u64,
    pub hcaptcha: u64,
    pub raw: u64,
}

/// The first-poll table (the name the configuration had before give-up times were per kind too).
pub type FirstPoll = KindMs;

impl KindMs {
    /// Every kind the same (handy against a mock that answers at once).
    pub const fn uniform(ms: u64) -> Self {
        KindMs {
            image: ms,
            text: ms,
            recaptcha_v2: ms,
            recaptcha_v3: ms,
            turnstile: ms,
            geetest_v3: ms,
            geetest_v4: ms,
            funcaptcha: ms,
            hcaptcha: ms,
            raw: ms,
        }
    }

    pub fn for_kind(&self, kind: TaskKind) -> Duration {
        Duration::from_millis(self.ms(kind))
    }

    pub fn ms(&self, kind: TaskKind) -> u64 {
        *self.slot(kind)
    }

    pub fn set(&mut self, kind: TaskKind, ms: u64) {
        *self.slot_mut(kind) = ms;
    }

    fn slot(&self, kind: TaskKind) -> &u64 {
        match kind {
            TaskKind::Image => &self.image,
            TaskKind::Text => &self.text,
            TaskKind::RecaptchaV2 => &self.recaptcha_v2,
            TaskKind::RecaptchaV3 => &self.recaptcha_v3,
            TaskKind::Turnstile => &self.turnstile,
            TaskKind::GeetestV3 => &self.geetest_v3,
            TaskKind::GeetestV4 => &self.geetest_v4,
            TaskKind::Funcaptcha => &self.funcaptcha,
            TaskKind::Hcaptcha => &self.hcaptcha,
            TaskKind::Raw => &self.raw,
        }
    }

    fn slot_mut(&mut self, kind: TaskKind) -> &mut u64 {
        match kind {
            TaskKind::Image => &mut self.image,
            TaskKind::Text => &mut self.text,
            TaskKind::RecaptchaV2 => &mut self.recaptcha_v2,
            TaskKind::RecaptchaV3 => &mut self.recaptcha_v3,
            TaskKind::Turnstile => &mut self.turnstile,
            TaskKind::GeetestV3 => &mut self.geetest_v3,
            TaskKind::GeetestV4 => &mut self.geetest_v4,
            TaskKind::Funcaptcha => &mut self.funcaptcha,
            TaskKind::Hcaptcha => &mut self.hcaptcha,
            TaskKind::Raw => &mut self.raw,
        }
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
            let ms = f.or(kind.as_str(), table.ms(kind))?;
            table.set(kind, ms);
        }
        f.finish()?;
        Ok(table)
    }
}
