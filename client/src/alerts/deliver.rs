//! Sending one message to one webhook, in the background: a POST through the client's
//! transport, following no redirect (a 3xx is a failed delivery), tried again with exponential backoff after a failure, a timeout, a 5xx, a 408
//! or a 429, at most `attempts` times; then counted as failed and logged. Logs name the
//! webhook's origin only: a webhook URL's path often is its credential (Slack's are).

use core::time::Duration;
use std::sync::Arc;

use crate::options::alerts::Webhook;
use captcha_dlq_core::{HttpRequest, Method, Secret};

use super::signature::{sign, SIGNATURE_HEADER};
use crate::ops_metrics::OpsCounters;
use crate::runtime::{Runtime, Transport};

/// The first retry's delay; each next one doubles, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

pub(crate) struct Delivery {
    pub transport: Arc<dyn Transport>,
    pub runtime: Arc<dyn Runtime>,
    pub counters: Arc<OpsCounters>,
    pub attempts: u32,
    pub timeout: Duration,
}

impl Delivery {
    pub(crate) async fn send(self, webhook: Webhook, body: Vec<u8>, kind: &'static str) {
        // The request hides this secret in its `Debug`; the body never holds an API key.
        let hidden = webhook.secret.clone().unwrap_or_else(|| Secret::new(""));
        let mut request = HttpRequest::new(Method::Post, webhook.url.clone(), &hidden)
            .with_header("content-type", "application/json")
            .with_header("user-agent", concat!("captcha-dlq/", env!("CARGO_PKG_VERSION")));
        request = request.with_body(body);
        request.timeout = self.timeout;
        let origin = request.origin();
        let mut delay = FIRST_BACKOFF;
        let mut last = String::new();
        for attempt in 1..=self.attempts {
            // Signed at each attempt: the signed time is when it was sent, which a receiver's
            // tolerance is measured from.
            let attempt_request = match &webhook.secret {
                Some(secret) => {
                    let at = self.runtime.now().as_unix_millis() / 1000;
                    let signed = sign(secret, at, request.body.as_deref().unwrap_or_default());
                    request.clone().with_header(SIGNATURE_HEADER, &signed)
                }
                None => request.clone(),
            };
            match self.transport.send_without_redirects(attempt_request).await {
                Ok(r) if (200..300).contains(&r.status) => {
                    self.counters.alert_sent();
                    return;
                }
                Ok(r) if r.status >= 500 || r.status == 408 || r.status == 429 => last = format!("HTTP {}", r.status),
                Ok(r) if (300..400).contains(&r.status) => {
                    last = format!("HTTP {}, a redirect (not followed, not tried again)", r.status);
                    break;
                }
                Ok(r) => {
                    last = format!("HTTP {} (not tried again)", r.status);
                    break;
                }
                Err(e) => last = e.to_string(),
            }
            if attempt < self.attempts {
                self.runtime.sleep(delay).await;
                delay = (delay * 2).min(MAX_BACKOFF);
            }
        }
        self.counters.alert_failed();
        tracing::warn!(target: "captcha_dlq", "alert {kind} not delivered to the webhook at {origin}: {last}");
    }
}
