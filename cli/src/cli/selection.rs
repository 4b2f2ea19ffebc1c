//! Which records a `captcha-dlq dlq …` command acts on: the filter flags they share, read
//! into the core's `Filter` at the command's clock.

use captcha_dlq::core::dlq::{Filter, RecordState};
use captcha_dlq::core::{ErrorClass, Timestamp};
use clap::Args as ClapArgs;

#[derive(Debug, ClapArgs, Default)]
pub struct FilterArgs {
    /// Only records with this reason (repeatable).
    #[arg(long = "reason")]
    pub reasons: Vec<String>,
    /// Only records with this id (repeatable).
    #[arg(long = "id")]
    pub ids: Vec<String>,
    /// Only this class: transient, retry_after, task_terminal, fix_input, account_terminal, cancelled, application.
    #[arg(long = "class", value_parser = parse_class)]
    pub classes: Vec<ErrorClass>,
    /// Only this state: ready, leased, parked.
    #[arg(long = "state", value_parser = parse_state)]
    pub states: Vec<RecordState>,
    #[arg(long)]
    pub sitekey: Option<String>,
    #[arg(long)]
    pub page_host: Option<String>,
    /// Only records dead-lettered more than this many hours ago.
    #[arg(long)]
    pub older_than_hours: Option<u64>,
}

fn parse_class(s: &str) -> Result<ErrorClass, String> {
    ErrorClass::parse(s).ok_or_else(|| format!("unknown class {s:?}"))
}

fn parse_state(s: &str) -> Result<RecordState, String> {
    match s {
        "ready" => Ok(RecordState::Ready),
        "leased" => Ok(RecordState::Leased),
        "parked" => Ok(RecordState::Parked),
        _ => Err(format!("unknown state {s:?} (ready, leased, parked)")),
    }
}

impl FilterArgs {
    pub(super) fn is_empty(&self) -> bool {
        self.reasons.is_empty()
            && self.ids.is_empty()
            && self.classes.is_empty()
            && self.states.is_empty()
            && self.sitekey.is_none()
            && self.page_host.is_none()
            && self.older_than_hours.is_none()
    }

    pub(super) fn to_filter(&self, now: Timestamp) -> Filter {
        Filter {
            ids: self.ids.clone(),
            reasons: self.reasons.clone(),
            classes: self.classes.clone(),
            states: self.states.clone(),
            sitekey: self.sitekey.clone(),
            page_host: self.page_host.clone(),
            dead_lettered_before: self
                .older_than_hours
                .map(|h| Timestamp::from_unix_millis(now.as_unix_millis().saturating_sub(h.saturating_mul(3_600_000)))),
            ..Filter::default()
        }
    }
}

pub(crate) fn now() -> Timestamp {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    Timestamp::from_unix_millis(u64::try_from(ms).unwrap_or(0))
}
