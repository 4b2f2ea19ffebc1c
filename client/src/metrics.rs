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

/// Tasks of one type with one provider.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskCount {
    pub provider: String,
    pub task_type: String,
    pub count: u64,
}

/// Dead letters of one task type and error class, by the provider that last had the task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeadLetterCount {
    pub provider: String,
    pub task_type: String,
    /// The error class (`task_terminal`, `account_terminal`…): OpenTelemetry's `error.type`.
    pub error_type: String,
    pub count: u64,
}

/// HTTP exchanges with one provider's endpoint that ended one way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HttpCount {
    pub provider: String,
    /// The URL path (`/in.php`, `/createTask`).
    pub endpoint: String,
    /// `ok` (2xx), `http_4xx`, `http_5xx`, `http_other`, or the transport failure
    /// (`connect`, `timeout`, `reset`, `transport_other`).
    pub outcome: String,
    pub count: u64,
}

/// Durations of the exchanges with one provider's endpoint.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DurationHistogram {
    pub provider: String,
    pub endpoint: String,
    /// Exchanges that took at most [`DURATION_BUCKETS`]`[i]` seconds (cumulative, as Prometheus has it).
    pub buckets: Vec<u64>,
    pub count: u64,
    pub sum_seconds: f64,
}

/// Answers a site judged (the page front ends' acceptance check), by provider, task type and page host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PageVerdictCount {
    pub provider: String,
    pub task_type: String,
    /// The host of the page that took or refused the answer: the one label with a site in it, because
    /// acceptance is a property of a site (a provider's tokens may pass at one and fail at another).
    pub host: String,
    /// `accepted` or `rejected`.
    pub verdict: String,
    pub count: u64,
}

/// One provider's circuit breaker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CircuitState {
    pub provider: String,
    /// Whether it stops submissions to this provider (open; half-open probes count as closed).
    pub open: bool,
}

/// The client's metrics at one moment. Every count names its provider: with several,
/// each is counted apart (the `provider` label of every series).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MetricsSnapshot {
    /// The providers' names, in routing order.
    pub providers: Vec<String>,
    /// Submissions a provider accepted (each attempt that got a provider task id).
    pub tasks_submitted: Vec<TaskCount>,
    pub tasks_solved: Vec<TaskCount>,
    pub tasks_dead_lettered: Vec<DeadLetterCount>,
    pub http_requests: Vec<HttpCount>,
    pub http_request_duration: Vec<DurationHistogram>,
    /// Tasks accepted and not ended.
    pub tasks_active: u64,
    /// Tasks with a provider right now.
    pub tasks_in_flight: u64,
    /// Each provider's circuit, in routing order.
    pub circuits: Vec<CircuitState>,
    /// Answers sites accepted or rejected, where a page front end checked.
    pub page_verdicts: Vec<PageVerdictCount>,
}

impl MetricsSnapshot {
    /// Whether no provider takes submissions now (every circuit open).
    pub fn all_circuits_open(&self) -> bool {
        !self.circuits.is_empty() && self.circuits.iter().all(|c| c.open)
    }
}

/// A provider's index in [`Metrics::providers`]: what the registry keys hold.
type ProviderIx = usize;

/// Counts by `(provider, name, name)`.
type Counts = BTreeMap<(ProviderIx, String, &'static str), u64>;

#[derive(Default)]
struct Registry {
    /// Each job's type and the provider that last accepted it.
    jobs: HashMap<JobId, (TaskKind, ProviderIx)>,
    // Every count has the key shape of `http`, `(provider, String, &'static str)`: each B-tree
    // shape is ~40 functions of the .wasm. Submitted and solved: `(provider, "", task type)`
    // (the empty `String` does not allocate).
    submitted: Counts,
    solved: Counts,
    /// `(provider, task type, error class)`.
    dead_lettered: Counts,
    http: Counts,
    /// `(provider, "task type\nhost", verdict)`: one more key of the same shape instead of a new one.
    page_verdicts: Counts,
    durations: BTreeMap<(ProviderIx, String), Histogram>,
    active: u64,
    in_flight: u64,
    circuit_open: Vec<bool>,
}

#[derive(Default)]
struct Histogram {
    /// Per bucket (not cumulative), plus one for `+Inf`.
    counts: [u64; DURATION_BUCKETS.len() + 1],
    sum_seconds: f64,
}

/// One provider as metrics name it and find its requests.
#[derive(Clone, Debug)]
pub(crate) struct MetricsProvider {
    pub name: String,
    pub base_url: String,
}

/// Where the driver records what happens; shared with the client handles that read it.
pub struct Metrics {
    /// In routing order; the first is the one events without a provider are about.
    providers: Vec<MetricsProvider>,
    registry: Mutex<Registry>,
}

impl core::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let names: Vec<&str> = self.providers.iter().map(|p| p.name.as_str()).collect();
        f.debug_struct("Metrics").field("providers", &names).finish_non_exhaustive()
    }
}

/// Label for a job whose type is not known any more (it ended before its event was seen).
const UNKNOWN_TYPE: &str = "unknown";

impl Metrics {
    /// Metrics of a client over `providers` (never empty: a client has at least one).
    pub(crate) fn new(providers: Vec<MetricsProvider>) -> Metrics {
        let registry = Registry { circuit_open: vec![false; providers.len()], ..Registry::default() };
        Metrics { providers, registry: Mutex::new(registry) }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Registry) -> T) -> Option<T> {
        self.registry.lock().ok().map(|mut r| f(&mut r))
    }

    /// The provider an event names; events leave it out when there is one provider.
    fn provider_named(&self, name: Option<&String>) -> ProviderIx {
        name.and_then(|n| self.providers.iter().position(|p| &p.name == n)).unwrap_or(0)
    }

    /// The provider a request went to: the longest base URL its URL starts with.
    fn provider_of_url(&self, url: &str) -> ProviderIx {
        self.providers
            .iter()
            .enumerate()
            .filter(|(_, p)| url.starts_with(&p.base_url))
            .max_by_key(|(_, p)| p.base_url.len())
            .map_or(0, |(ix, _)| ix)
    }

    fn name(&self, ix: ProviderIx) -> String {
        self.providers.get(ix).map(|p| p.name.clone()).unwrap_or_default()
    }

    /// A job started (a new task, a replay or a recovered entry): its type labels its events.
    pub(crate) fn job_started(&self, job: JobId, kind: TaskKind) {
        self.with(|r| r.jobs.insert(job, (kind, 0)));
    }

    /// A job left without an event (withdrawn before it was sent).
    pub(crate) fn job_withdrawn(&self, job: JobId) {
        self.with(|r| r.jobs.remove(&job));
    }

    /// Counts what an engine event means.
    pub(crate) fn event(&self, event: &Event) {
        let circuit = |provider: &Option<String>, open: bool| (self.provider_named(provider.as_ref()), open);
        let circuit_change = match event {
            // A hold stops submissions as an open circuit does (a zero balance holds by default).
            Event::CircuitOpened { provider, .. } | Event::AccountHold { provider, .. } => {
                Some(circuit(provider, true))
            }
            Event::CircuitHalfOpen { provider } | Event::CircuitClosed { provider } => Some(circuit(provider, false)),
            _ => None,
        };
        let submitted_to = match event {
            Event::Submitted { provider, .. } => Some(self.provider_named(provider.as_ref())),
            _ => None,
        };
        self.with(|r| {
            let job_of = |r: &Registry, job: &JobId| {
                r.jobs.get(job).map_or((UNKNOWN_TYPE, 0), |(kind, provider)| (kind.as_str(), *provider))
            };
            match event {
                Event::Submitted { job, .. } => {
                    let provider = submitted_to.unwrap_or(0);
                    let (kind, _) = job_of(r, job);
                    *r.submitted.entry((provider, String::new(), kind)).or_default() += 1;
                    if let Some(entry) = r.jobs.get_mut(job) {
                        entry.1 = provider;
                    }
                }
                Event::Solved { job, .. } => {
                    let (kind, provider) = job_of(r, job);
                    *r.solved.entry((provider, String::new(), kind)).or_default() += 1;
                    r.jobs.remove(job);
                }
                Event::DeadLettered { job, class, .. } => {
                    let (kind, provider) = job_of(r, job);
                    *r.dead_lettered.entry((provider, kind.to_string(), class.as_str())).or_default() += 1;
                    r.jobs.remove(job);
                }
                _ => {}
            }
            if let Some((provider, open)) = circuit_change {
                if let Some(slot) = r.circuit_open.get_mut(provider) {
                    *slot = open;
                }
            }
        });
    }

    /// One HTTP exchange with a provider (found by `url`) ended after `elapsed`.
    pub(crate) fn http_exchange(
        &self,
        url: &str,
        endpoint: &str,
        result: &Result<HttpResponse, TransportError>,
        elapsed: Duration,
    ) {
        let outcome = http_outcome(result);
        let provider = self.provider_of_url(url);
        self.with(|r| {
            *r.http.entry((provider, endpoint.to_string(), outcome)).or_default() += 1;
            let histogram = r.durations.entry((provider, endpoint.to_string())).or_default();
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

    /// A site's verdict on an answer of `provider` (as the solution names it) for a task of `kind`.
    pub fn page_verdict(&self, provider: Option<&String>, kind: TaskKind, host: &str, accepted: bool) {
        let ix = self.provider_named(provider);
        let verdict = if accepted { "accepted" } else { "rejected" };
        self.with(|r| *r.page_verdicts.entry((ix, format!("{}\n{host}", kind.as_str()), verdict)).or_default() += 1);
    }

    pub fn snapshot(&self) -> MetricsSnapshot {
        let providers: Vec<String> = self.providers.iter().map(|p| p.name.clone()).collect();
        let task_counts = |counts: &Counts| -> Vec<TaskCount> {
            counts
                .iter()
                .map(|((provider, _, kind), count)| TaskCount {
                    provider: self.name(*provider),
                    task_type: (*kind).to_string(),
                    count: *count,
                })
                .collect()
        };
        self.with(|r| MetricsSnapshot {
            providers: providers.clone(),
            tasks_submitted: task_counts(&r.submitted),
            tasks_solved: task_counts(&r.solved),
            tasks_dead_lettered: r
                .dead_lettered
                .iter()
                .map(|((provider, kind, class), count)| DeadLetterCount {
                    provider: self.name(*provider),
                    task_type: kind.clone(),
                    error_type: (*class).to_string(),
                    count: *count,
                })
                .collect(),
            http_requests: r
                .http
                .iter()
                .map(|((provider, endpoint, outcome), count)| HttpCount {
                    provider: self.name(*provider),
                    endpoint: endpoint.clone(),
                    outcome: (*outcome).to_string(),
                    count: *count,
                })
                .collect(),
            http_request_duration: r
                .durations
                .iter()
                .map(|((provider, endpoint), h)| {
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
                        provider: self.name(*provider),
                        endpoint: endpoint.clone(),
                        buckets,
                        count: h.counts.iter().sum(),
                        sum_seconds: h.sum_seconds,
                    }
                })
                .collect(),
            page_verdicts: r
                .page_verdicts
                .iter()
                .map(|((provider, kind_host, verdict), count)| {
                    let (kind, host) = kind_host.split_once('\n').unwrap_or((kind_host, ""));
                    PageVerdictCount {
                        provider: self.name(*provider),
                        task_type: kind.to_string(),
                        host: host.to_string(),
                        verdict: (*verdict).to_string(),
                        count: *count,
                    }
                })
                .collect(),
            tasks_active: r.active,
            tasks_in_flight: r.in_flight,
            circuits: providers
                .iter()
                .zip(&r.circuit_open)
                .map(|(provider, open)| CircuitState { provider: provider.clone(), open: *open })
                .collect(),
        })
        .unwrap_or_else(|| MetricsSnapshot { providers: providers.clone(), ..MetricsSnapshot::default() })
    }
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

    fn provider(name: &str, base_url: &str) -> MetricsProvider {
        MetricsProvider { name: name.into(), base_url: base_url.into() }
    }

    fn submitted(job: u64, attempt: u32, provider: Option<&str>) -> Event {
        Event::Submitted {
            job: JobId(job),
            attempt,
            provider_task_id: format!("{job}-{attempt}"),
            provider: provider.map(Into::into),
        }
    }

    #[test]
    fn page_verdicts_count_by_the_provider_that_solved_kind_and_host() {
        let m = Metrics::new(vec![provider("captchaai", "https://a"), provider("2captcha", "https://b")]);
        let second = "2captcha".to_string();
        m.page_verdict(Some(&second), TaskKind::Turnstile, "shop.example:8443", true);
        m.page_verdict(Some(&second), TaskKind::Turnstile, "shop.example:8443", true);
        m.page_verdict(Some(&second), TaskKind::Turnstile, "shop.example:8443", false);
        m.page_verdict(None, TaskKind::RecaptchaV2, "login.example", false);
        let verdict = |provider: &str, task_type: &str, host: &str, verdict: &str, count| PageVerdictCount {
            provider: provider.into(),
            task_type: task_type.into(),
            host: host.into(),
            verdict: verdict.into(),
            count,
        };
        assert_eq!(
            m.snapshot().page_verdicts,
            vec![
                verdict("captchaai", "recaptcha_v2", "login.example", "rejected", 1),
                verdict("2captcha", "turnstile", "shop.example:8443", "accepted", 2),
                verdict("2captcha", "turnstile", "shop.example:8443", "rejected", 1),
            ]
        );
    }

    #[test]
    fn events_count_by_the_type_their_job_started_with() {
        let m = Metrics::new(vec![provider("captchaai", "https://ocr.captchaai.com")]);
        m.job_started(JobId(1), TaskKind::RecaptchaV2);
        m.job_started(JobId(2), TaskKind::Turnstile);
        m.event(&submitted(1, 1, None));
        m.event(&submitted(1, 2, None));
        m.event(&Event::Solved { job: JobId(1), attempts: 2, elapsed_ms: 10 });
        m.event(&Event::DeadLettered {
            job: JobId(2),
            id: "x".into(),
            reason: "ERROR_CAPTCHA_UNSOLVABLE".into(),
            class: ErrorClass::TaskTerminal,
            attempts: 1,
        });
        let s = m.snapshot();
        let count =
            |task_type: &str, count| TaskCount { provider: "captchaai".into(), task_type: task_type.into(), count };
        assert_eq!(s.tasks_submitted, vec![count("recaptcha_v2", 2)]);
        assert_eq!(s.tasks_solved, vec![count("recaptcha_v2", 1)]);
        assert_eq!(
            s.tasks_dead_lettered,
            vec![DeadLetterCount {
                provider: "captchaai".into(),
                task_type: "turnstile".into(),
                error_type: "task_terminal".into(),
                count: 1
            }]
        );
        // Ended jobs are forgotten: the map does not grow with the number of tasks ever solved.
        assert!(m.with(|r| r.jobs.is_empty()).unwrap());
    }

    #[test]
    fn with_several_providers_each_task_counts_where_it_was_last_submitted() {
        let m = Metrics::new(vec![provider("a", "http://127.0.0.1:9001"), provider("b", "http://127.0.0.1:9002")]);
        m.job_started(JobId(1), TaskKind::Image);
        m.event(&submitted(1, 1, Some("a")));
        m.event(&Event::Rerouted { job: JobId(1), from: "a".into(), to: "b".into(), reason: "ERROR_NO_SLOT".into() });
        m.event(&submitted(1, 2, Some("b")));
        m.event(&Event::Solved { job: JobId(1), attempts: 2, elapsed_ms: 10 });
        m.http_exchange("http://127.0.0.1:9002/in.php", "/in.php", &Ok(HttpResponse::new(200, "OK|1")), Duration::ZERO);
        m.event(&Event::CircuitOpened { cause: "ERROR_ZERO_BALANCE".into(), until: None, provider: Some("a".into()) });
        let s = m.snapshot();
        let submitted: Vec<_> = s.tasks_submitted.iter().map(|c| (c.provider.as_str(), c.count)).collect();
        assert_eq!(submitted, [("a", 1), ("b", 1)]);
        assert_eq!(s.tasks_solved[0].provider, "b");
        assert_eq!(s.http_requests[0].provider, "b");
        let circuits: Vec<_> = s.circuits.iter().map(|c| (c.provider.as_str(), c.open)).collect();
        assert_eq!(circuits, [("a", true), ("b", false)]);
        assert!(!s.all_circuits_open());
    }

    #[test]
    fn exchanges_fill_cumulative_buckets_by_endpoint_and_outcome() {
        let m = Metrics::new(vec![provider("2captcha", "https://2captcha.com")]);
        let url = |path: &str| format!("https://2captcha.com{path}");
        m.http_exchange(&url("/in.php"), "/in.php", &Ok(HttpResponse::new(200, "OK|1")), Duration::from_millis(40));
        m.http_exchange(&url("/in.php"), "/in.php", &Ok(HttpResponse::new(503, "")), Duration::from_millis(700));
        let timeout = TransportError::new(TransportErrorKind::Timeout, "slow");
        m.http_exchange(&url("/res.php"), "/res.php", &Err(timeout), Duration::from_secs(45));
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
        let m = Metrics::new(vec![provider("captchaai", "https://ocr.captchaai.com")]);
        m.event(&Event::CircuitOpened { cause: "ERROR_ZERO_BALANCE".into(), until: None, provider: None });
        assert!(m.snapshot().all_circuits_open());
        m.event(&Event::CircuitHalfOpen { provider: None });
        assert!(!m.snapshot().all_circuits_open());
    }
}
