//! Task kinds: what the user asks to have solved, validated at construction.
//!
//! OWNED BY THE CODEC WORK (helper A): fields, validation and builders are
//! filled in there. The contract the engine and the DLQ rely on:
//! `Task` (serde-tagged by `type`, snake_case fields), `Task::kind()`,
//! `Task::sitekey()`, `Task::page_url()`, `Task::validate()`.

use serde::{Deserialize, Serialize};

use crate::error::InvalidTask;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Task {
    RecaptchaV2(RecaptchaV2),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecaptchaV2 {
    pub sitekey: String,
    pub page_url: String,
}

/// The kind of a task, for polling schedules and analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    Image,
    RecaptchaV2,
    RecaptchaV3,
    Turnstile,
    GeetestV3,
    GeetestV4,
    Funcaptcha,
    Hcaptcha,
    Raw,
}

impl Task {
    pub fn kind(&self) -> TaskKind {
        match self {
            Task::RecaptchaV2(_) => TaskKind::RecaptchaV2,
        }
    }

    pub fn sitekey(&self) -> Option<&str> {
        match self {
            Task::RecaptchaV2(t) => Some(&t.sitekey),
        }
    }

    pub fn page_url(&self) -> Option<&str> {
        match self {
            Task::RecaptchaV2(t) => Some(&t.page_url),
        }
    }

    pub fn validate(&self) -> Result<(), InvalidTask> {
        Ok(())
    }
}
