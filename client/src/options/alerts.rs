//! The `alerts` client option, read and checked: which webhooks are told of what, and the
//! thresholds that make an event worth an alert. Sending them is the native client's
//! (`captcha-dlq-client`'s `alerts` module). Feature `alerts`: the browser build has no alerts, and its
//! options refuse the section (see [`crate::options`]).
//!
//! ```json
//! {"alerts": {"webhooks": [{"url": "https://hooks.example/x", "secret": "…", "events": ["new_reason"], "format": "slack"}],
//!             "dead_letters_per_minute": 100, "budget_fraction": 0.8, "gather_ms": 500, "coalesce_ms": 60000}}
//! ```

use serde_json::Value;

use captcha_dlq_core::http::Secret;
use captcha_dlq_core::support::json_read::{spelled, unit_variant, FieldError, Fields, FromJson};

/// What an alert reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    /// More dead letters in the last minute than `dead_letters_per_minute`.
    DeadLetterRate,
    /// A dead letter's reason this client had not seen (nor found in the DLQ when it started).
    NewReason,
    /// An account error stopped submissions at a provider (held, or its circuit opened for it).
    AccountError,
    /// The spend reached `budget_fraction` of the budget.
    Budget,
    /// A provider's circuit opened (failures or an unreachable provider; not an account error).
    CircuitOpen,
    /// A DLQ store write was given up after its retries.
    StoreGaveUp,
}

impl AlertKind {
    pub const ALL: [AlertKind; 6] = [
        AlertKind::DeadLetterRate,
        AlertKind::NewReason,
        AlertKind::AccountError,
        AlertKind::Budget,
        AlertKind::CircuitOpen,
        AlertKind::StoreGaveUp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::DeadLetterRate => "dead_letter_rate",
            AlertKind::NewReason => "new_reason",
            AlertKind::AccountError => "account_error",
            AlertKind::Budget => "budget",
            AlertKind::CircuitOpen => "circuit_open",
            AlertKind::StoreGaveUp => "store_gave_up",
        }
    }
}

impl FromJson for AlertKind {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        unit_variant(value, &AlertKind::ALL, AlertKind::as_str)
    }
}

/// How a webhook's body is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlertFormat {
    /// `{"event", "subject", "count", "first_at", "last_at", "summary", "client", "details"}`.
    #[default]
    Json,
    /// `{"text": "…"}`, which Slack's (and Mattermost's, Discord's `/slack`) incoming webhooks take.
    Slack,
}

impl AlertFormat {
    pub const ALL: [AlertFormat; 2] = [AlertFormat::Json, AlertFormat::Slack];

    pub fn as_str(self) -> &'static str {
        match self {
            AlertFormat::Json => "json",
            AlertFormat::Slack => "slack",
        }
    }
}

impl FromJson for AlertFormat {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        unit_variant(value, &AlertFormat::ALL, AlertFormat::as_str)
    }
}

/// One receiver of alerts. Its `Debug` shows the URL's origin only: a webhook's path is often
/// its credential (Slack's are).
#[derive(Clone)]
pub struct Webhook {
    /// An `https://` URL (`http://` to this machine only, unless `allow_insecure_http`).
    pub url: String,
    /// Signs each request when given: `X-Captcha-Dlq-Signature: t=<unix seconds>,v1=<hex>`,
    /// the HMAC-SHA256 of `<t>.<body>` (the client's `alerts::verify_webhook` checks it).
    pub secret: Option<Secret>,
    /// The kinds it is sent; empty: every kind.
    pub events: Vec<AlertKind>,
    pub format: AlertFormat,
}

impl core::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Webhook")
            .field("url", &format!("{}/…", self.origin()))
            .field("secret", &self.secret)
            .field("events", &self.events)
            .field("format", &self.format)
            .finish()
    }
}

impl Webhook {
    /// `scheme://host[:port]` of the URL, for messages and logs: its path is often its
    /// credential.
    pub fn origin(&self) -> String {
        captcha_dlq_core::support::weburl::parse(&self.url).map_or_else(
            |_| String::from("?"),
            |u| format!("{}://{}{}", u.scheme, u.host, u.port.map_or_else(String::new, |p| format!(":{p}"))),
        )
    }

    pub fn wants(&self, kind: AlertKind) -> bool {
        self.events.is_empty() || self.events.contains(&kind)
    }
}

impl FromJson for Webhook {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let url: String = f.req("url")?;
        let secret: Option<String> = f.opt("secret")?;
        let w = Webhook {
            url: url.trim().to_string(),
            secret: secret.map(Secret::new),
            events: f.or_default("events")?,
            format: f.or_default("format")?,
        };
        f.finish()?;
        if w.secret.as_ref().is_some_and(|s| s.expose().is_empty()) {
            return Err(FieldError::new(spelled("secret"), "is empty: leave it out for unsigned webhooks"));
        }
        // The URL itself is not repeated: a webhook's path is often its credential (Slack's are).
        captcha_dlq_core::support::weburl::parse(&w.url)
            .map_err(|e| FieldError::new(spelled("url"), format!("is not an http(s) URL: {e}")))?;
        Ok(w)
    }
}

/// The `alerts` option, checked.
#[derive(Clone, Debug)]
pub struct AlertOptions {
    pub webhooks: Vec<Webhook>,
    /// Dead letters in one minute above which `dead_letter_rate` is sent.
    pub dead_letters_per_minute: u64,
    /// The fraction of `budget` whose spending sends `budget` (once per client).
    pub budget_fraction: f64,
    /// A (kind, subject) quiet until now is sent this long after its first event, with every
    /// event of it meanwhile counted in that one message.
    pub gather_ms: u64,
    /// After a message for a (kind, subject), its further events within this time are sent
    /// together, as one message with their count, when it ends.
    pub coalesce_ms: u64,
    /// Attempts per message (a failure, a 5xx or a timeout is tried again with backoff).
    pub attempts: u32,
    /// How long one delivery attempt may take.
    pub timeout_ms: u64,
    /// Alerts waiting to be processed; beyond it an alert is dropped and counted, never waited for.
    pub queue: usize,
}

impl AlertOptions {
    pub const DEFAULT_DEAD_LETTERS_PER_MINUTE: u64 = 100;
    pub const DEFAULT_BUDGET_FRACTION: f64 = 0.8;
    pub const DEFAULT_GATHER_MS: u64 = 500;
    pub const DEFAULT_COALESCE_MS: u64 = 60_000;
    pub const DEFAULT_ATTEMPTS: u32 = 5;
    pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;
    pub const DEFAULT_QUEUE: usize = 1_024;

    /// Plain `http://` webhooks must be on this machine unless the client allows insecure
    /// http (the same rule as a provider's base URL): an alert names the client's failures.
    pub fn check_transport(&self, allow_insecure_http: bool) -> Result<(), FieldError> {
        for (i, w) in self.webhooks.iter().enumerate() {
            super::endpoint::secure_endpoint(&w.url, allow_insecure_http).map_err(|problem| {
                FieldError::new(format!("{}[{i}].{}", spelled("webhooks"), spelled("url")), problem)
            })?;
        }
        Ok(())
    }
}

impl FromJson for AlertOptions {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let o = AlertOptions {
            webhooks: f.req("webhooks")?,
            dead_letters_per_minute: f.or("dead_letters_per_minute", Self::DEFAULT_DEAD_LETTERS_PER_MINUTE)?,
            budget_fraction: f.or("budget_fraction", Self::DEFAULT_BUDGET_FRACTION)?,
            gather_ms: f.or("gather_ms", Self::DEFAULT_GATHER_MS)?,
            coalesce_ms: f.or("coalesce_ms", Self::DEFAULT_COALESCE_MS)?,
            attempts: f.or("attempts", Self::DEFAULT_ATTEMPTS)?,
            timeout_ms: f.or("timeout_ms", Self::DEFAULT_TIMEOUT_MS)?,
            queue: f.or("queue", Self::DEFAULT_QUEUE)?,
        };
        f.finish()?;
        if o.webhooks.is_empty() {
            return Err(FieldError::new(spelled("webhooks"), "is empty: give at least one {\"url\": …}"));
        }
        if !(o.budget_fraction > 0.0 && o.budget_fraction <= 1.0) {
            return Err(FieldError::new(spelled("budget_fraction"), "must be above 0 and at most 1"));
        }
        for (name, value) in [
            ("dead_letters_per_minute", o.dead_letters_per_minute),
            ("attempts", u64::from(o.attempts)),
            ("timeout_ms", o.timeout_ms),
            ("queue", o.queue as u64),
        ] {
            if value == 0 {
                return Err(FieldError::new(spelled(name), "must be at least 1"));
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use captcha_dlq_core::support::json_read::{read_cased, Casing};
    use serde_json::json;

    fn read(v: Value) -> Result<AlertOptions, FieldError> {
        read_cased(v, Casing::Snake)
    }

    #[test]
    fn defaults_and_a_full_webhook() {
        let o = read(json!({"webhooks": [{"url": "https://hooks.example/a"}]})).unwrap();
        assert_eq!(o.webhooks[0].format, AlertFormat::Json);
        assert!(o.webhooks[0].wants(AlertKind::Budget) && o.webhooks[0].secret.is_none());
        assert_eq!((o.gather_ms, o.coalesce_ms, o.attempts), (500, 60_000, 5));
        let o = read(json!({"webhooks": [{"url": "http://127.0.0.1:9/x", "secret": "s", "events": ["new_reason"], "format": "slack"}],
                            "dead_letters_per_minute": 5}))
        .unwrap();
        let w = &o.webhooks[0];
        assert_eq!(
            (w.format, w.events.as_slice(), o.dead_letters_per_minute),
            (AlertFormat::Slack, &[AlertKind::NewReason][..], 5)
        );
        assert!(w.wants(AlertKind::NewReason) && !w.wants(AlertKind::Budget));
        let shown = format!("{o:?}");
        assert!(
            shown.contains("Secret(***)") && !shown.contains("\"s\""),
            "the signing secret is not printed: {shown}"
        );
        assert!(shown.contains("http://127.0.0.1:9/…") && !shown.contains("/x"), "nor the webhook's path: {shown}");
        assert!(o.check_transport(false).is_ok());
    }

    #[test]
    fn mistakes_name_their_field() {
        for (bad, field) in [
            (json!({}), "webhooks"),
            (json!({"webhooks": []}), "webhooks"),
            (json!({"webhooks": [{"url": "ftp://x"}]}), "webhooks[0].url"),
            (json!({"webhooks": [{"url": "https://x", "evnts": []}]}), "webhooks[0].evnts"),
            (json!({"webhooks": [{"url": "https://x", "events": ["everything"]}]}), "webhooks[0].events[0]"),
            (json!({"webhooks": [{"url": "https://x", "format": "teams"}]}), "webhooks[0].format"),
            (json!({"webhooks": [{"url": "https://x", "secret": ""}]}), "webhooks[0].secret"),
            (json!({"webhooks": [{"url": "https://x"}], "budget_fraction": 1.5}), "budget_fraction"),
            (json!({"webhooks": [{"url": "https://x"}], "attempts": 0}), "attempts"),
            (json!({"webhooks": [{"url": "https://x"}], "rate": 1}), "rate"),
        ] {
            assert_eq!(read(bad.clone()).unwrap_err().field, field, "{bad}");
        }
        let camel =
            read_cased::<AlertOptions>(json!({"webhooks": [{"url": "https://x"}], "gatherMs": -1}), Casing::Camel);
        assert_eq!(camel.unwrap_err().field, "gatherMs");
    }

    #[test]
    fn plain_http_only_to_this_machine_unless_allowed() {
        let o = read(json!({"webhooks": [{"url": "https://a.example"}, {"url": "http://hooks.example/x"}]})).unwrap();
        assert_eq!(o.check_transport(false).unwrap_err().field, "webhooks[1].url");
        assert!(o.check_transport(true).is_ok());
    }
}
