//! The client's counters and gauges, fed by its driver: every engine event
//! (submitted, solved, dead-lettered, circuit changes) and every HTTP exchange
//! (outcome and duration, timed with the runtime's clock so the same code runs
//! in the browser). [`Client::metrics`](crate::Client::metrics) returns a
//! [`MetricsSnapshot`] any binding can hand to its host; [`crate::prometheus`]
//! writes one in the Prometheus text format.
//!
//! Labels stay low-cardinality: the provider, the task type, the error class,
//! the request's endpoint path and its outcome — never a sitekey, a URL or an
//! id. Names follow OpenTelemetry's messaging conventions where they fit: a
//! submission is a message sent to the provider, a solved task a message
//! settled, a dead letter a message settled with an `error_type` (the class).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use captcha_dlq_core::{Event, HttpResponse, JobId, TaskKind, TransportError, TransportErrorKind};
use core::time::Duration;
use serde::Serialize;

/// Upper bounds (seconds) of the request duration histogram's buckets; `+Inf` is implied.
pub const DURATION_BUCKETS: [f64; 11] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// Tasks of one type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskCount {
    pub task_type: String,
    pub count: u64,
}

/// Dead letters of one task type and error class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeadLetterCount {
    pub task_type: String,
    /// The error class (`task_terminal`, `account_terminal`…): OpenTelemetry's `error.type`.
    pub error_type: String,
    pub count: u64,
}

/// HTTP exchanges with the provider of one endpoint and outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HttpCount {
    /// The URL path (`/in.php`, `/createTask`).
    pub endpoint: String,
    /// `ok` (2xx), `http_4xx`, `http_5xx`, `http_other`, or the transport failure
    /// (`connect`, `timeout`, `reset`, `transport_other`).
    pub outcome: String,
    pub count: u64,
}

/// Durations of the exchanges with one endpoint.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DurationHistogram {
    pub endpoint: String,
    /// Exchanges that took at most [`DURATION_BUCKETS`]`[i]` seconds (cumulative, as Prometheus has it).
    pub buckets: Vec<u64>,
    pub count: u64,
    pub sum_seconds: f64,
}

/// The client's metrics at one moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MetricsSnapshot {
    /// The provider's name, the `provider` label of every series.
    pub provider: String,
    /// Submissions the provider accepted (each attempt that got a provider task id).
    pub tasks_submitted: Vec<TaskCount>,
    pub tasks_solved: Vec<TaskCount>,
    pub tasks_dead_lettered: Vec<DeadLetterCount>,
    pub http_requests: Vec<HttpCount>,
    pub http_request_duration: Vec<DurationHistogram>,
    /// Tasks accepted and not ended.
    pub tasks_active: u64,
    /// Tasks with the provider right now.
    pub tasks_in_flight: u64,
    /// Whether the circuit breaker stops submissions (open; half-open probes count as closed).
    pub circuit_open: bool,
}

#[derive(Default)]
struct Registry {
    job_types: HashMap<JobId, TaskKind>,
    submitted: BTreeMap<&'static str, u64>,
    solved: BTreeMap<&'static str, u64>,
    dead_lettered: BTreeMap<(&'static str, &'static str), u64>,
    http: BTreeMap<(String, &'static str), u64>,
    durations: BTreeMap<String, Histogram>,
    active: u64,
    in_flight: u64,
    circuit_open: bool,
}

#[derive(Default)]
struct Histogram {
    /// Per bucket (not cumulative), plus one for `+Inf`.
    counts: [u64; DURATION_BUCKETS.len() + 1],
    sum_seconds: f64,
}

/// Where the driver records what happens; shared with the client handles that read it.
pub struct Metrics {
    provider: String,
    registry: Mutex<Registry>,
}

impl core::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Metrics").field("provider", &self.provider).finish_non_exhaustive()
    }
}

/// Label for a job whose type is not known any more (it ended before its event was seen).
const UNKNOWN_TYPE: &str = "unknown";

impl Metrics {
    pub(crate) fn new(provider: &str) -> Metrics {
        Metrics { provider: provider.to_string(), registry: Mutex::new(Registry::default()) }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Registry) -> T) -> Option<T> {
        self.registry.lock().ok().map(|mut r| f(&mut r))
    }

    /// A job started (a new task, a replay or a recovered entry): its type labels its events.
    pub(crate) fn job_started(&self, job: JobId, kind: TaskKind) {
        self.with(|r| r.job_types.insert(job, kind));
    }

    /// A job left without an event (withdrawn before it was sent).
    pub(crate) fn job_withdrawn(&self, job: JobId) {
        self.with(|r| r.job_types.remove(&job));
    }

    /// Counts what an engine event means.
    pub(crate) fn event(&self, event: &Event) {
        self.with(|r| {
            let kind_of = |r: &Registry, job: &JobId| r.job_types.get(job).map_or(UNKNOWN_TYPE, |k| k.as_str());
            match event {
                Event::Submitted { job, .. } => {
                    let kind = kind_of(r, job);
                    *r.submitted.entry(kind).or_default() += 1;
                }
                Event::Solved { job, .. } => {
                    let kind = kind_of(r, job);
                    *r.solved.entry(kind).or_default() += 1;
                    r.job_types.remove(job);
                }
                Event::DeadLettered { job, class, .. } => {
                    let kind = kind_of(r, job);
                    *r.dead_lettered.entry((kind, class.as_str())).or_default() += 1;
                    r.job_types.remove(job);
                }
                Event::CircuitOpened { .. } => r.circuit_open = true,
                Event::CircuitHalfOpen | Event::CircuitClosed => r.circuit_open = false,
                _ => {}
            }
        });
    }

    /// One HTTP exchange with the provider ended after `elapsed`.
    pub(crate) fn http_exchange(
        &self,
        endpoint: &str,
        result: &Result<HttpResponse, TransportError>,
        elapsed: Duration,
    ) {
        let outcome = http_outcome(result);
        self.with(|r| {
            *r.http.entry((endpoint.to_string(), outcome)).or_default() += 1;
            let histogram = r.durations.entry(endpoint.to_string()).or_default();
            let seconds = elapsed.as_secs_f64();
            let bucket = DURATION_BUCKETS.iter().position(|bound| seconds <= *bound).unwrap_or(DURATION_BUCKETS.len());
            if let Some(slot) = histogram.counts.get_mut(bucket) {
                *slot += 1;
            }
            histogram.sum_seconds += seconds;
        });
    }

    /// The driver's job counts after a turn.
    pub(crate) fn set_jobs(&self, active: usize, in_flight: usize) {
        self.with(|r| {
            r.active = active as u64;
            r.in_flight = in_flight as u64;
        });
    }

    pub fn snapshot(&self) -> MetricsSnapshot {
        self.with(|r| MetricsSnapshot {
            provider: self.provider.clone(),
            tasks_submitted: task_counts(&r.submitted),
            tasks_solved: task_counts(&r.solved),
            tasks_dead_lettered: r
                .dead_lettered
                .iter()
                .map(|((kind, class), count)| DeadLetterCount {
                    task_type: (*kind).to_string(),
                    error_type: (*class).to_string(),
                    count: *count,
                })
                .collect(),
            http_requests: r
                .http
                .iter()
                .map(|((endpoint, outcome), count)| HttpCount {
                    endpoint: endpoint.clone(),
                    outcome: (*outcome).to_string(),
                    count: *count,
                })
                .collect(),
            http_request_duration: r
                .durations
                .iter()
                .map(|(endpoint, h)| {
                    let buckets = h
                        .counts
                        .iter()
                        .take(DURATION_BUCKETS.len())
                        .scan(0u64, |total, n| {
                            *total += n;
                            Some(*total)
                        })
                        .collect();
                    DurationHistogram {
                        endpoint: endpoint.clone(),
                        buckets,
                        count: h.counts.iter().sum(),
                        sum_seconds: h.sum_seconds,
                    }
                })
                .collect(),
            tasks_active: r.active,
            tasks_in_flight: r.in_flight,
            circuit_open: r.circuit_open,
        })
        .unwrap_or_else(|| MetricsSnapshot { provider: self.provider.clone(), ..MetricsSnapshot::default() })
    }
}

fn task_counts(counts: &BTreeMap<&'static str, u64>) -> Vec<TaskCount> {
    counts.iter().map(|(kind, count)| TaskCount { task_type: (*kind).to_string(), count: *count }).collect()
}

fn http_outcome(result: &Result<HttpResponse, TransportError>) -> &'static str {
    match result {
        Ok(r) if (200..300).contains(&r.status) => "ok",
        Ok(r) if (400..500).contains(&r.status) => "http_4xx",
        Ok(r) if (500..600).contains(&r.status) => "http_5xx",
        Ok(_) => "http_other",
        Err(e) => match e.kind {
            TransportErrorKind::Connect => "connect",
            TransportErrorKind::Timeout => "timeout",
            TransportErrorKind::Reset => "reset",
            TransportErrorKind::Other => "transport_other",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use captcha_dlq_core::ErrorClass;

    #[test]
    fn events_count_by_the_type_their_job_started_with() {
        let m = Metrics::new("captchaai");
        m.job_started(JobId(1), TaskKind::RecaptchaV2);
        m.job_started(JobId(2), TaskKind::Turnstile);
        m.event(&Event::Submitted { job: JobId(1), attempt: 1, provider_task_id: "7".into() });
        m.event(&Event::Submitted { job: JobId(1), attempt: 2, provider_task_id: "8".into() });
        m.event(&Event::Solved { job: JobId(1), attempts: 2, elapsed_ms: 10 });
        m.event(&Event::DeadLettered {
            job: JobId(2),
            id: "x".into(),
            reason: "ERROR_CAPTCHA_UNSOLVABLE".into(),
            class: ErrorClass::TaskTerminal,
            attempts: 1,
        });
        let s = m.snapshot();
        assert_eq!(s.tasks_submitted, vec![TaskCount { task_type: "recaptcha_v2".into(), count: 2 }]);
        assert_eq!(s.tasks_solved, vec![TaskCount { task_type: "recaptcha_v2".into(), count: 1 }]);
        assert_eq!(
            s.tasks_dead_lettered,
            vec![DeadLetterCount { task_type: "turnstile".into(), error_type: "task_terminal".into(), count: 1 }]
        );
        // Ended jobs are forgotten: the map does not grow with the number of tasks ever solved.
        assert!(m.with(|r| r.job_types.is_empty()).unwrap());
    }

    #[test]
    fn exchanges_fill_cumulative_buckets_by_endpoint_and_outcome() {
        let m = Metrics::new("2captcha");
        m.http_exchange("/in.php", &Ok(HttpResponse::new(200, "OK|1")), Duration::from_millis(40));
        m.http_exchange("/in.php", &Ok(HttpResponse::new(503, "")), Duration::from_millis(700));
        let timeout = TransportError::new(TransportErrorKind::Timeout, "slow");
        m.http_exchange("/res.php", &Err(timeout), Duration::from_secs(45));
        let s = m.snapshot();
        let outcomes: Vec<_> = s.http_requests.iter().map(|c| (c.endpoint.as_str(), c.outcome.as_str())).collect();
        assert_eq!(outcomes, [("/in.php", "http_5xx"), ("/in.php", "ok"), ("/res.php", "timeout")]);
        let in_php = &s.http_request_duration[0];
        assert_eq!(in_php.endpoint, "/in.php");
        assert_eq!(in_php.count, 2);
        // 0.04 s falls in the 0.05 bucket (index 2); 0.7 s in the 1 s bucket (index 6).
        assert_eq!(in_php.buckets, [0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
        assert!((in_php.sum_seconds - 0.74).abs() < 1e-9);
        // 45 s is beyond the last bound: only the total (+Inf) counts it.
        let res_php = &s.http_request_duration[1];
        assert_eq!((res_php.buckets[10], res_php.count), (0, 1));
    }

    #[test]
    fn the_circuit_gauge_follows_its_events() {
        let m = Metrics::new("captchaai");
        m.event(&Event::CircuitOpened { cause: "ERROR_ZERO_BALANCE".into(), until: None });
        assert!(m.snapshot().circuit_open);
        m.event(&Event::CircuitHalfOpen);
        assert!(!m.snapshot().circuit_open);
    }
}
