//! Counters of the operator features that run beside the solving (features `alerts`, `retention`): webhook alerts
//! sent, dropped (the alert queue was full) and failed (every attempt failed), and DLQ records
//! evicted by retention, by limit. [`OpsCounters::render`] writes them in the Prometheus text
//! format after the client's other families.

use core::sync::atomic::{AtomicU64, Ordering};

use captcha_dlq_core::dlq::retention::EvictionReason;
use serde::Serialize;

/// The counters, shared by the client, its alert worker and its retention loop.
#[derive(Debug, Default)]
pub struct OpsCounters {
    alerts_sent: AtomicU64,
    alerts_dropped: AtomicU64,
    alerts_failed: AtomicU64,
    evicted_max_age: AtomicU64,
    evicted_max_count: AtomicU64,
}

/// The counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpsSnapshot {
    /// Alert messages a webhook took (a 2xx answer).
    pub alerts_sent: u64,
    /// Alerts not processed because the alert queue was full.
    pub alerts_dropped: u64,
    /// Alert messages given up after every attempt failed.
    pub alerts_failed: u64,
    pub evicted_max_age: u64,
    pub evicted_max_count: u64,
}

impl OpsCounters {
    #[cfg(feature = "alerts")]
    pub(crate) fn alert_sent(&self) {
        self.alerts_sent.fetch_add(1, Ordering::Relaxed);
    }

    #[cfg(feature = "alerts")]
    pub(crate) fn alert_dropped(&self) {
        self.alerts_dropped.fetch_add(1, Ordering::Relaxed);
    }

    #[cfg(feature = "alerts")]
    pub(crate) fn alert_failed(&self) {
        self.alerts_failed.fetch_add(1, Ordering::Relaxed);
    }

    #[cfg(feature = "retention")]
    pub(crate) fn evicted(&self, reason: EvictionReason, n: u64) {
        let counter = match reason {
            EvictionReason::MaxAge => &self.evicted_max_age,
            EvictionReason::MaxCount => &self.evicted_max_count,
        };
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> OpsSnapshot {
        OpsSnapshot {
            alerts_sent: self.alerts_sent.load(Ordering::Relaxed),
            alerts_dropped: self.alerts_dropped.load(Ordering::Relaxed),
            alerts_failed: self.alerts_failed.load(Ordering::Relaxed),
            evicted_max_age: self.evicted_max_age.load(Ordering::Relaxed),
            evicted_max_count: self.evicted_max_count.load(Ordering::Relaxed),
        }
    }

    /// The Prometheus families of these counters.
    pub fn render(&self) -> String {
        let s = self.snapshot();
        let mut out = String::new();
        for (name, help, value) in [
            ("captcha_dlq_alerts_sent_total", "Alert messages a webhook took.", s.alerts_sent),
            ("captcha_dlq_alerts_dropped_total", "Alerts dropped because the alert queue was full.", s.alerts_dropped),
            ("captcha_dlq_alerts_failed_total", "Alert messages given up after every attempt failed.", s.alerts_failed),
        ] {
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}\n"));
        }
        let name = "captcha_dlq_dlq_evicted_total";
        out.push_str(&format!(
            "# HELP {name} Records retention removed from the DLQ (archived first when an archive is set).\n# TYPE {name} counter\n"
        ));
        for (reason, value) in
            [(EvictionReason::MaxAge, s.evicted_max_age), (EvictionReason::MaxCount, s.evicted_max_count)]
        {
            out.push_str(&format!("{name}{{reason=\"{}\"}} {value}\n", reason.as_str()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_render_as_prometheus_families() {
        let c = OpsCounters::default();
        c.alert_sent();
        c.alert_dropped();
        c.evicted(EvictionReason::MaxCount, 3);
        let text = c.render();
        assert!(
            text.contains("# TYPE captcha_dlq_alerts_sent_total counter\ncaptcha_dlq_alerts_sent_total 1\n"),
            "{text}"
        );
        assert!(
            text.contains("captcha_dlq_alerts_dropped_total 1\n")
                && text.contains("captcha_dlq_alerts_failed_total 0\n")
        );
        assert!(text.contains("captcha_dlq_dlq_evicted_total{reason=\"max_count\"} 3\n"), "{text}");
        assert!(text.contains("captcha_dlq_dlq_evicted_total{reason=\"max_age\"} 0\n"), "{text}");
    }
}
