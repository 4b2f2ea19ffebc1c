//! The Prometheus text exposition format (version 0.0.4) of a client's
//! metrics, its DLQ's gauges, the store's fleet ledger and the client's spend:
//! `captcha_dlq_` prefix, base units (seconds), `_total` counters, one `# HELP`
//! and `# TYPE` per family.
//!
//! Written by hand: the format is a few lines per family, and the registry
//! crates bring their own metric types where this only has numbers to print.

use core::fmt::Write as _;

use captcha_dlq_core::dlq::StoreStats;
use captcha_dlq_core::spend::SpendReport;
use captcha_dlq_core::support::float_text::float_text;
use captcha_dlq_core::Timestamp;

use crate::driver::StoreHealth;
use crate::fleet_status::{AccountStatus, FleetStatus};
use crate::metrics::{MetricsSnapshot, TaskCount, DURATION_BUCKETS};

/// The `Content-Type` of [`render`]'s text.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What the DLQ store says about itself at scrape time.
#[derive(Clone, Debug)]
pub struct DlqGauges {
    /// The store's counts; `None` when the store could not be read (`captcha_dlq_dlq_up 0`).
    pub stats: Option<StoreStats>,
    pub health: StoreHealth,
    pub now: Timestamp,
}

/// The metrics as Prometheus text.
pub fn render(m: &MetricsSnapshot, dlq: &DlqGauges) -> String {
    let mut out = Text { out: String::new() };
    fn by_task(counts: &[TaskCount]) -> impl Iterator<Item = ([(&'static str, &String); 2], u64)> {
        counts.iter().map(|c| ([("provider", &c.provider), ("task_type", &c.task_type)], c.count))
    }
    out.counter(
        "captcha_dlq_tasks_submitted_total",
        "Task submissions the provider accepted (each attempt).",
        by_task(&m.tasks_submitted),
    );
    out.counter("captcha_dlq_tasks_solved_total", "Tasks solved (answers handed over).", by_task(&m.tasks_solved));
    out.counter(
        "captcha_dlq_tasks_dead_lettered_total",
        "Tasks settled into the dead-letter queue, by error class (error_type).",
        m.tasks_dead_lettered.iter().map(|c| {
            ([("provider", &c.provider), ("task_type", &c.task_type), ("error_type", &c.error_type)], c.count)
        }),
    );
    out.counter(
        "captcha_dlq_page_verdicts_total",
        "Answers a site accepted or rejected, as a page front end's acceptance check saw it, by page host.",
        m.page_verdicts.iter().map(|c| {
            let labels =
                [("provider", &c.provider), ("task_type", &c.task_type), ("host", &c.host), ("verdict", &c.verdict)];
            (labels, c.count)
        }),
    );
    out.counter(
        "captcha_dlq_http_requests_total",
        "HTTP exchanges with the provider, by endpoint and outcome.",
        m.http_requests
            .iter()
            .map(|c| ([("provider", &c.provider), ("endpoint", &c.endpoint), ("outcome", &c.outcome)], c.count)),
    );
    out.family(
        "captcha_dlq_http_request_duration_seconds",
        "histogram",
        "Duration of HTTP exchanges with the provider.",
    );
    for h in &m.http_request_duration {
        for (bound, count) in DURATION_BUCKETS.iter().zip(&h.buckets) {
            let le = float_text(*bound);
            let labels = [("provider", h.provider.as_str()), ("endpoint", h.endpoint.as_str()), ("le", le.as_str())];
            out.sample("captcha_dlq_http_request_duration_seconds_bucket", &labels, *count as f64);
        }
        let labels = [("provider", h.provider.as_str()), ("endpoint", h.endpoint.as_str()), ("le", "+Inf")];
        out.sample("captcha_dlq_http_request_duration_seconds_bucket", &labels, h.count as f64);
        let labels = [("provider", h.provider.as_str()), ("endpoint", h.endpoint.as_str())];
        out.sample("captcha_dlq_http_request_duration_seconds_sum", &labels, h.sum_seconds);
        out.sample("captcha_dlq_http_request_duration_seconds_count", &labels, h.count as f64);
    }
    out.family("captcha_dlq_tasks_active", "gauge", "Tasks accepted by this client and not ended.");
    out.sample("captcha_dlq_tasks_active", &[], m.tasks_active as f64);
    out.family("captcha_dlq_tasks_in_flight", "gauge", "Tasks of this client with the provider now.");
    out.sample("captcha_dlq_tasks_in_flight", &[], m.tasks_in_flight as f64);
    out.family("captcha_dlq_circuit_open", "gauge", "1 while a provider's circuit breaker stops submissions to it.");
    for c in &m.circuits {
        out.sample("captcha_dlq_circuit_open", &[("provider", &c.provider)], if c.open { 1.0 } else { 0.0 });
    }

    out.family("captcha_dlq_dlq_up", "gauge", "1 if the DLQ store answered this scrape.");
    out.sample("captcha_dlq_dlq_up", &[], if dlq.stats.is_some() { 1.0 } else { 0.0 });
    out.family(
        "captcha_dlq_store_write_failures_total",
        "counter",
        "Store writes given up after retrying, since the client started.",
    );
    out.sample("captcha_dlq_store_write_failures_total", &[], dlq.health.failures as f64);
    if let Some(s) = &dlq.stats {
        out.family("captcha_dlq_dlq_records", "gauge", "Records in the dead-letter queue, by state.");
        for (state, n) in [("ready", s.ready), ("leased", s.leased), ("parked", s.parked)] {
            out.sample("captcha_dlq_dlq_records", &[("state", state)], n as f64);
        }
        out.family(
            "captcha_dlq_dlq_oldest_record_age_seconds",
            "gauge",
            "Seconds since the oldest record was dead-lettered (0 when the DLQ is empty).",
        );
        let age = s.oldest_dead_lettered_at.map_or(0.0, |t| dlq.now.since(t).as_secs_f64());
        out.sample("captcha_dlq_dlq_oldest_record_age_seconds", &[], age);
        out.family(
            "captcha_dlq_journal_entries",
            "gauge",
            "Tasks in flight in the journal, of every client of the store.",
        );
        out.sample("captcha_dlq_journal_entries", &[], s.in_flight as f64);
        out.family("captcha_dlq_dlq_completed_total", "counter", "Records replayed successfully and removed, ever.");
        out.sample("captcha_dlq_dlq_completed_total", &[], s.completed as f64);
        out.family("captcha_dlq_dlq_dropped_total", "counter", "Records dropped to honour a capacity limit, ever.");
        out.sample("captcha_dlq_dlq_dropped_total", &[], s.dropped as f64);
    }
    out.out
}

/// What the store's fleet ledger says at scrape time.
#[derive(Clone, Debug)]
pub enum FleetGauges {
    /// The store keeps no ledger (memory, a binding's own store object): one process is its
    /// fleet, so there are no fleet families at all (not a `0` that would look like an outage).
    NoLedger,
    /// The ledger did not answer this scrape: `captcha_dlq_fleet_up 0`, the rest left out (as
    /// the DLQ's gauges are when its store does not answer).
    Unavailable,
    Read {
        status: FleetStatus,
        /// This client's providers and the account id each has in the ledger, to join the
        /// fleet's gauges (labelled by account) to a provider name.
        own_accounts: Vec<(String, String)>,
    },
}

/// The fleet ledger's gauges: clients live and gone, and per account (its keyed hash, never
/// the key) the tasks in flight, the window, the pause and the account error. Labels are
/// accounts and error codes only: owner ids change with every process, which would make a
/// series per restart.
pub fn render_fleet(fleet: &FleetGauges) -> String {
    let mut out = Text { out: String::new() };
    let (status, own) = match fleet {
        FleetGauges::NoLedger => return out.out,
        FleetGauges::Unavailable => (None, &[][..]),
        FleetGauges::Read { status, own_accounts } => (Some(status), &own_accounts[..]),
    };
    out.family("captcha_dlq_fleet_up", "gauge", "1 if the store's fleet ledger answered this scrape.");
    out.sample("captcha_dlq_fleet_up", &[], if status.is_some() { 1.0 } else { 0.0 });
    let Some(status) = status else { return out.out };
    out.family(
        "captcha_dlq_fleet_owners",
        "gauge",
        "Clients in the store's fleet ledger: live (a heartbeat within the TTL) or gone (row kept for a while).",
    );
    out.sample("captcha_dlq_fleet_owners", &[("state", "live")], status.live() as f64);
    out.sample("captcha_dlq_fleet_owners", &[("state", "gone")], status.gone() as f64);
    type Value = fn(&AccountStatus) -> f64;
    let per_account: [(&str, &str, Value); 4] = [
        ("captcha_dlq_fleet_in_flight", "Tasks in flight at a provider account, over the fleet's live clients.", |a| {
            a.in_flight as f64
        }),
        ("captcha_dlq_fleet_window", "The in-flight window the fleet shares at a provider account.", |a| {
            a.window as f64
        }),
        (
            "captcha_dlq_fleet_paused_seconds",
            "Seconds the fleet's submissions to a provider account stay paused (0: not paused).",
            |a| a.paused_ms as f64 / 1000.0,
        ),
        ("captcha_dlq_fleet_spent", "What the fleet's solved tasks at a provider account cost, ever.", |a| a.spent),
    ];
    for (name, help, value) in per_account {
        out.family(name, "gauge", help);
        for a in &status.accounts {
            out.sample(name, &[("account", &a.account)], value(a));
        }
    }
    out.family(
        "captcha_dlq_fleet_account_error",
        "gauge",
        "1 while an account error (wrong key, no balance) holds the fleet at a provider account, by its code.",
    );
    for a in &status.accounts {
        if let Some(e) = &a.account_error {
            out.sample("captcha_dlq_fleet_account_error", &[("account", &a.account), ("code", &e.code)], 1.0);
        }
    }
    out.family(
        "captcha_dlq_fleet_account_info",
        "gauge",
        "1 for each provider of this client with the account id the ledger knows it by.",
    );
    for (provider, account) in own {
        out.sample("captcha_dlq_fleet_account_info", &[("account", account), ("provider", provider)], 1.0);
    }
    out.out
}

/// This client's spend since it started, by provider (the fleet's, per account, is
/// `captcha_dlq_fleet_spent`).
pub fn render_spend(spend: &SpendReport) -> String {
    let mut out = Text { out: String::new() };
    out.family(
        "captcha_dlq_spend_total",
        "counter",
        "Cost of the tasks this client solved since it started, by provider, in the prices' currency.",
    );
    for row in &spend.by_provider {
        out.sample("captcha_dlq_spend_total", &[("provider", &row.key)], row.cost);
    }
    out.out
}

struct Text {
    out: String,
}

impl Text {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }

    /// A counter family and its samples, one per set of labels.
    fn counter<const N: usize, V: AsRef<str>>(
        &mut self,
        name: &str,
        help: &str,
        samples: impl IntoIterator<Item = ([(&'static str, V); N], u64)>,
    ) {
        self.family(name, "counter", help);
        for (labels, count) in samples {
            self.sample(name, &labels.each_ref().map(|(key, value)| (*key, value.as_ref())), count as f64);
        }
    }

    /// One sample; client-wide gauges have no labels (and no braces).
    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        let _ = write!(self.out, "{name}");
        for (i, (key, value)) in labels.iter().enumerate() {
            let open = if i == 0 { "{" } else { "," };
            let _ = write!(self.out, "{open}{key}=\"{}\"", escape(value));
        }
        if !labels.is_empty() {
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", number(value));
    }
}

/// A label value with `\`, `"` and newlines escaped, as the format requires.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Integers without a fraction; NaN and infinities as the format spells them. Through the core's
/// `float_text` (serde_json's formatter), not `f64`'s `Display`, which would add a second float
/// formatter to the browser build (bench/README.md).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        // Exactly an integer in i64's range: written whole, never in exponent form (`1e14`).
        (v as i64).to_string()
    } else {
        float_text(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{CircuitState, DurationHistogram, HttpCount, TaskCount};

    #[test]
    fn numbers_are_written_as_the_text_format_reads_them() {
        let cases = [
            (3.0, "3"),
            (-2.0, "-2"),
            (0.025, "0.025"),
            (12.5, "12.5"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
        ];
        for (value, text) in cases {
            assert_eq!(number(value), text, "{value}");
        }
        // Beyond exact whole numbers, the shortest text that reads back as the same float.
        for value in [1e15, 1.5e300, 1e-7] {
            assert_eq!(number(value).parse::<f64>(), Ok(value), "{}", number(value));
        }
    }

    #[test]
    fn families_have_help_type_and_escaped_labels() {
        let m = MetricsSnapshot {
            providers: vec!["a\"b".into()],
            tasks_solved: vec![TaskCount { provider: "a\"b".into(), task_type: "recaptcha_v2".into(), count: 3 }],
            http_requests: vec![HttpCount {
                provider: "a\"b".into(),
                endpoint: "/in.php".into(),
                outcome: "ok".into(),
                count: 2,
            }],
            circuits: vec![CircuitState { provider: "a\"b".into(), open: true }],
            http_request_duration: vec![DurationHistogram {
                provider: "a\"b".into(),
                endpoint: "/in.php".into(),
                buckets: vec![0, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2],
                count: 2,
                sum_seconds: 0.07,
            }],
            ..MetricsSnapshot::default()
        };
        let stats = StoreStats {
            total: 3,
            ready: 2,
            parked: 1,
            oldest_dead_lettered_at: Some(Timestamp::from_unix_millis(1_000)),
            ..StoreStats::default()
        };
        let dlq =
            DlqGauges { stats: Some(stats), health: StoreHealth::default(), now: Timestamp::from_unix_millis(61_500) };
        let text = render(&m, &dlq);
        assert!(
            text.contains("captcha_dlq_tasks_solved_total{provider=\"a\\\"b\",task_type=\"recaptcha_v2\"} 3\n"),
            "{text}"
        );
        assert!(text.contains("captcha_dlq_http_request_duration_seconds_bucket{provider=\"a\\\"b\",endpoint=\"/in.php\",le=\"0.025\"} 1\n"));
        assert!(text.contains("le=\"+Inf\"} 2\n"));
        assert!(text.contains("captcha_dlq_circuit_open{provider=\"a\\\"b\"} 1\n"));
        assert!(text.contains("captcha_dlq_dlq_records{state=\"parked\"} 1\n"));
        assert!(text.contains("captcha_dlq_dlq_oldest_record_age_seconds 60.5\n"));
        // Every sample's family was declared just before it, once.
        for line in text.lines().filter(|l| l.starts_with("# TYPE")) {
            let name = line.split(' ').nth(2).unwrap();
            assert_eq!(text.matches(&format!("# TYPE {name} ")).count(), 1, "{name}");
        }
    }

    #[test]
    fn an_unreadable_store_says_so_and_leaves_its_gauges_out() {
        let dlq = DlqGauges { stats: None, health: StoreHealth::default(), now: Timestamp::EPOCH };
        let text = render(&MetricsSnapshot::default(), &dlq);
        assert!(text.contains("captcha_dlq_dlq_up 0\n"));
        assert!(!text.contains("captcha_dlq_dlq_records"));
    }

    fn status() -> FleetStatus {
        use captcha_dlq_core::fleet::{AccountState, FleetView, OwnerRow, SharedAccountError, OWNER_TTL_MS};
        let now_ms = 2_000_000;
        let row = |owner: &str, heartbeat_ms: u64, n: u32| OwnerRow {
            owner: owner.into(),
            host: "h".into(),
            pid: 1,
            started_at: Timestamp::EPOCH,
            heartbeat_ms,
            in_flight: [("acct".to_string(), n)].into(),
            reserved_nano: Default::default(),
        };
        let state = AccountState {
            window: 8,
            paused_until_ms: now_ms + 2_500,
            pause_code: Some("MAX_USER_TURN".into()),
            account_error: Some(SharedAccountError {
                code: "ERROR_ZERO_BALANCE".into(),
                description: "d".into(),
                hold_ms: 0,
            }),
            account_error_until_ms: now_ms + 1,
            ..AccountState::default()
        };
        FleetStatus::of(&FleetView {
            now_ms,
            owners: vec![row("a", now_ms, 3), row("b", now_ms - 100, 2), row("c", now_ms - OWNER_TTL_MS, 9)],
            accounts: [("acct".to_string(), state)].into(),
        })
    }

    #[test]
    fn the_fleet_is_counted_by_account_and_never_by_owner() {
        let own = vec![("captchaai".to_string(), "acct".to_string())];
        let text = render_fleet(&FleetGauges::Read { status: status(), own_accounts: own });
        for line in [
            "captcha_dlq_fleet_up 1\n",
            "captcha_dlq_fleet_owners{state=\"live\"} 2\n",
            "captcha_dlq_fleet_owners{state=\"gone\"} 1\n",
            "captcha_dlq_fleet_in_flight{account=\"acct\"} 5\n",
            "captcha_dlq_fleet_window{account=\"acct\"} 8\n",
            "captcha_dlq_fleet_paused_seconds{account=\"acct\"} 2.5\n",
            "captcha_dlq_fleet_account_error{account=\"acct\",code=\"ERROR_ZERO_BALANCE\"} 1\n",
            "captcha_dlq_fleet_account_info{account=\"acct\",provider=\"captchaai\"} 1\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(!text.contains("owner="), "no series per process");
    }

    #[test]
    fn a_silent_ledger_is_a_zero_and_no_ledger_is_no_family() {
        let text = render_fleet(&FleetGauges::Unavailable);
        assert!(text.contains("captcha_dlq_fleet_up 0\n"), "{text}");
        assert!(!text.contains("captcha_dlq_fleet_owners"), "{text}");
        assert_eq!(render_fleet(&FleetGauges::NoLedger), "");
    }

    #[test]
    fn spend_is_a_counter_per_provider() {
        let spend = SpendReport {
            solved: 3,
            cost: 0.009,
            by_provider: vec![captcha_dlq_core::spend::SpendRow {
                key: "captchaai".into(),
                solved: 3,
                cost: 0.009,
                unpriced: 0,
                dead_lettered: 1,
            }],
            ..SpendReport::default()
        };
        let text = render_spend(&spend);
        assert!(text.contains("# TYPE captcha_dlq_spend_total counter\n"), "{text}");
        assert!(text.contains("captcha_dlq_spend_total{provider=\"captchaai\"} 0.009\n"), "{text}");
    }
}
