//! A simulated solving service and a driver on a virtual clock, in the spirit
//! of quinn-proto's test pair: scenarios with hundreds of polls and minutes of
//! backoff run in microseconds, and run the same way every time.
//!
//! The service speaks the 2captcha v1 wire protocol from the requests the
//! engine builds (form bodies and query strings), so the codec is exercised
//! too. A harness runs one service ([`Harness::new`]) or several, one per
//! provider of the engine ([`Harness::multi`]), each at its own address and
//! with its own faults, outages and account. Only compiled with the `testkit`
//! feature.

use core::time::Duration;
use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};

use rustc_hash::FxHashMap;

use crate::dlq::record::DeadLetterRecord;
use crate::engine::{Action, Engine, EngineConfig, Event, JobId, KindMs, LaneSpec, RequestId, RoutingConfig};
use crate::http::{HttpRequest, HttpResponse, Secret, TransportError, TransportErrorKind};
use crate::journal::JournalEntry;
use crate::provider::Provider;
use crate::solution::Solution;
use crate::spend::Prices;
use crate::support::time::Timestamp;
use crate::task::{Task, TaskKind, ValidTask};

/// 2026-11-21T10:00:00Z, where every simulation starts.
pub const T0: Timestamp = Timestamp::from_unix_millis(1_763_719_200_000);

/// How the service treats one task, chosen by its page URL.
#[derive(Clone, Debug, PartialEq)]
pub enum Behavior {
    SolveAfter(Duration),
    /// Solved after the duration, answering `{"status":1,"request":<answer>}` (a list of points).
    AnswerAfter(Duration, serde_json::Value),
    Unsolvable {
        after: Duration,
    },
    NeverReady,
    /// Refuse at submission with this code.
    RejectSubmit(&'static str),
}

/// A fault the service injects into the next matching answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    Html502,
    TruncatedJson,
    Http503,
    Reset,
    /// Connection refused: the request never reached the service.
    Refused,
    /// No answer within the request timeout: the request may have reached the service.
    Timeout,
    /// The request reached the service and took effect (a submission is accepted), but its
    /// answer was lost: the client sees a timeout.
    AcceptThenTimeout,
    Code(&'static str),
}

/// What the service saw: one line per request.
#[derive(Clone, Debug, PartialEq)]
pub struct Seen {
    pub at: Timestamp,
    pub endpoint: String,
    /// `pageurl` of a submission, or the ids of a poll.
    pub subject: Vec<String>,
    pub answered_with_fault: bool,
}

#[derive(Debug)]
struct SimTask {
    behavior: Behavior,
    submitted_at: Timestamp,
}

/// A task the service accepted (and so may be paid for and worked on).
#[derive(Clone, Debug, PartialEq)]
pub struct Taken {
    pub page: String,
    pub id: String,
    pub at: Timestamp,
    /// How long the service works on it before its outcome shows (`None`: never).
    pub works_for: Option<Duration>,
}

/// The simulated v1 service (`in.php` / `res.php`).
pub struct FakeService {
    pub behavior: Box<dyn FnMut(&str) -> Behavior + Send>,
    /// Faults to answer the next submissions with, in order.
    pub submit_faults: VecDeque<Fault>,
    /// Faults to answer the next polls with, in order.
    pub poll_faults: VecDeque<Fault>,
    /// Answer every request with this fault while set.
    pub always: Option<Fault>,
    /// Answer batch polls (`ids=`) with garbage, as a provider without batch support might.
    pub garble_batches: bool,
    /// Answer every submission and balance check with this account error while set.
    pub account_error: Option<&'static str>,
    /// What `getbalance` answers otherwise.
    pub balance: f64,
    /// After this many accepted tasks the account runs dry: submissions and balance checks
    /// are answered with this code from then on (until `account_error_after` is cleared).
    pub account_error_after: Option<(usize, &'static str)>,
    /// While the clock is within one of these windows, every request is refused (the service
    /// is down) — an outage that ends.
    pub outages: Vec<(Timestamp, Timestamp)>,
    pub log: Vec<Seen>,
    /// Every task the service accepted, in order.
    pub taken: Vec<Taken>,
    /// Keep `log` (off in benchmarks, so only the engine's memory is measured).
    pub keep_log: bool,
    /// By the ids this service handed out (never iterated: the hasher's order does not matter).
    tasks: FxHashMap<String, SimTask>,
    next_id: u64,
}

impl core::fmt::Debug for FakeService {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FakeService").field("tasks", &self.tasks.len()).field("requests", &self.log.len()).finish()
    }
}

impl FakeService {
    pub fn new(behavior: impl FnMut(&str) -> Behavior + Send + 'static) -> Self {
        FakeService {
            behavior: Box::new(behavior),
            submit_faults: VecDeque::new(),
            poll_faults: VecDeque::new(),
            always: None,
            garble_batches: false,
            account_error: None,
            balance: 10.0,
            account_error_after: None,
            outages: Vec::new(),
            log: Vec::new(),
            taken: Vec::new(),
            keep_log: true,
            tasks: FxHashMap::default(),
            next_id: 71_823_456,
        }
    }

    /// Requests to an endpoint (`/in.php`, `/res.php`).
    pub fn count(&self, endpoint: &str) -> usize {
        self.log.iter().filter(|s| s.endpoint == endpoint).count()
    }

    pub fn handle(&mut self, req: &HttpRequest, now: Timestamp) -> Result<HttpResponse, TransportError> {
        // Query string, then body; a name given twice takes its last value.
        let query = req.url.split_once('?').map_or(&b""[..], |(_, q)| q.as_bytes());
        let params: Vec<(Cow<'_, str>, Cow<'_, str>)> = form_urlencoded::parse(query)
            .chain(form_urlencoded::parse(req.body.as_deref().unwrap_or_default()))
            .collect();
        let param = |name: &str| params.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_ref());
        let endpoint = req.endpoint();
        let is_submit = endpoint.ends_with("/in.php");
        let down = self.outages.iter().any(|(from, to)| now >= *from && now < *to);
        let fault = down.then_some(Fault::Refused).or_else(|| self.always.clone()).or_else(|| {
            if is_submit {
                self.submit_faults.pop_front()
            } else {
                self.poll_faults.pop_front()
            }
        });
        if self.keep_log {
            let subject = if is_submit {
                vec![param("pageurl").unwrap_or_default().to_string()]
            } else if let Some(ids) = param("ids") {
                ids.split(',').map(str::to_string).collect()
            } else {
                vec![param("id").unwrap_or_default().to_string()]
            };
            self.log.push(Seen {
                at: now,
                endpoint: endpoint.to_string(),
                subject,
                answered_with_fault: fault.is_some(),
            });
        }
        let accept_then_timeout = fault == Some(Fault::AcceptThenTimeout) && is_submit;
        if let Some(fault) = fault.filter(|_| !accept_then_timeout) {
            return fault_answer(&fault);
        }
        let is_balance = param("action") == Some("getbalance");
        let dry = self.account_error_after.filter(|(n, _)| self.taken.len() >= *n).map(|(_, code)| code);
        if let Some(code) = self.account_error.or(dry).filter(|_| is_submit || is_balance) {
            return Ok(json(0, code));
        }
        if is_balance {
            return Ok(HttpResponse::new(200, format!("{{\"status\":1,\"request\":\"{}\"}}", self.balance)));
        }
        if is_submit {
            let page = param("pageurl").unwrap_or_default().to_string();
            let behavior = (self.behavior)(&page);
            if let Behavior::RejectSubmit(code) = behavior {
                return Ok(json(0, code));
            }
            self.next_id += 1;
            let id = self.next_id.to_string();
            let works_for = match &behavior {
                Behavior::SolveAfter(d) | Behavior::AnswerAfter(d, _) => Some(*d),
                Behavior::Unsolvable { after } => Some(*after),
                Behavior::NeverReady | Behavior::RejectSubmit(_) => None,
            };
            self.taken.push(Taken { page, id: id.clone(), at: now, works_for });
            self.tasks.insert(id.clone(), SimTask { behavior, submitted_at: now });
            if accept_then_timeout {
                return fault_answer(&Fault::Timeout);
            }
            return Ok(json(1, &id));
        }
        if let Some(ids) = param("ids") {
            if self.garble_batches {
                return Ok(HttpResponse::new(200, "ERROR_WRONG_ID_FORMAT"));
            }
            let mut answers = String::with_capacity(ids.len() * 64);
            for (i, id) in ids.split(',').enumerate() {
                if i > 0 {
                    answers.push('|');
                }
                answers.push_str(&self.answer(id, now));
            }
            return Ok(HttpResponse::new(200, answers));
        }
        if let Some(SimTask { behavior: Behavior::AnswerAfter(d, answer), submitted_at }) =
            self.tasks.get(param("id").unwrap_or_default())
        {
            if now.since(*submitted_at) >= *d {
                return Ok(HttpResponse::new(200, serde_json::json!({"status": 1, "request": answer}).to_string()));
            }
        }
        let answer = self.answer(param("id").unwrap_or_default(), now);
        Ok(if answer == "CAPCHA_NOT_READY" || answer.starts_with("ERROR") {
            json(0, &answer)
        } else {
            json(1, &answer)
        })
    }

    fn answer(&self, id: &str, now: Timestamp) -> String {
        let Some(t) = self.tasks.get(id) else { return "ERROR_WRONG_CAPTCHA_ID".into() };
        let age = now.since(t.submitted_at);
        match &t.behavior {
            Behavior::SolveAfter(d) if age >= *d => format!("03AGdBq2{id}Tok{}", "x".repeat(40)),
            Behavior::Unsolvable { after } if age >= *after => "ERROR_CAPTCHA_UNSOLVABLE".into(),
            _ => "CAPCHA_NOT_READY".into(),
        }
    }
}

fn json(status: u8, request: &str) -> HttpResponse {
    HttpResponse::new(200, format!("{{\"status\":{status},\"request\":\"{request}\"}}"))
}

fn fault_answer(fault: &Fault) -> Result<HttpResponse, TransportError> {
    match fault {
        Fault::Html502 => Ok(HttpResponse::new(
            502,
            "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
        )),
        Fault::TruncatedJson => Ok(HttpResponse::new(200, "{\"status\":1,\"requ")),
        Fault::Http503 => Ok(HttpResponse::new(503, "Service Unavailable")),
        Fault::Reset => Err(TransportError::new(TransportErrorKind::Reset, "connection reset by peer")),
        Fault::Refused => Err(TransportError::new(TransportErrorKind::Connect, "connection refused")),
        Fault::Timeout | Fault::AcceptThenTimeout => {
            Err(TransportError::new(TransportErrorKind::Timeout, "no answer within 30 s"))
        }
        Fault::Code(code) => Ok(json(0, code)),
    }
}

/// One simulated provider of a [`Harness::multi`]: a v1 preset's classification of codes
/// (`2captcha`: `ERROR_ZERO_BALANCE` is an account error; `captchaai`: a busy plan) with
/// its own settings, prices and service.
#[derive(Debug)]
pub struct SimProvider {
    pub name: &'static str,
    pub preset: &'static str,
    pub config: EngineConfig,
    pub prices: Prices,
    pub service: FakeService,
}

impl SimProvider {
    pub fn new(name: &'static str, preset: &'static str, config: EngineConfig, service: FakeService) -> Self {
        SimProvider { name, preset, config, prices: Prices::default(), service }
    }
}

/// Engine + service(s) + virtual clock, with everything the driver saw.
#[derive(Debug)]
pub struct Harness {
    pub engine: Engine,
    /// The service of the first provider (the only one of [`Harness::new`]).
    pub service: FakeService,
    /// The services of the other providers of [`Harness::multi`], in order.
    pub others: Vec<FakeService>,
    /// Base URL of each provider's service, and how long each works on a kind at most.
    lanes: Vec<(String, KindMs)>,
    pub now: Timestamp,
    /// Round-trip time of every simulated request.
    pub latency: Duration,
    pub solved: Vec<(JobId, String, Solution, Timestamp)>,
    pub dead: Vec<(JobId, DeadLetterRecord)>,
    pub journal: BTreeMap<String, JournalEntry>,
    pub events: Vec<(Timestamp, Event)>,
    /// (time, request) of every send, for checks on what went out.
    pub sent: Vec<(Timestamp, HttpRequest)>,
    in_transit: Vec<(Timestamp, RequestId, Result<HttpResponse, TransportError>)>,
    /// Stop once this many steps ran (guards tests against a livelock).
    pub max_steps: u64,
    /// Keep `sent`, `events` and `journal` (off in benchmarks); outcomes are always kept.
    pub keep_logs: bool,
    /// Requests sent, counted even when `keep_logs` is off.
    pub requests: usize,
}

pub const KEY: &str = "sim-key-0123456789abcdef0123456789";

/// The address of the `i`-th simulated provider.
fn sim_url(i: usize) -> String {
    if i == 0 {
        "https://sim.invalid".to_string()
    } else {
        format!("https://sim{i}.invalid")
    }
}

impl Harness {
    pub fn new(config: EngineConfig, service: FakeService) -> Self {
        let provider =
            Provider::preset("captchaai").expect("preset exists").with_base_url(&sim_url(0)).expect("valid url");
        let working = config.polling.give_up_ms;
        Harness::with_engine(
            Engine::new(provider, Secret::new(KEY), config),
            vec![service],
            vec![(sim_url(0), working)],
        )
    }

    /// An engine over several simulated providers, each answered by its own service.
    pub fn multi(providers: Vec<SimProvider>, routing: RoutingConfig) -> Self {
        let mut specs = Vec::new();
        let mut services = Vec::new();
        let mut lanes = Vec::new();
        for (i, p) in providers.into_iter().enumerate() {
            let provider =
                Provider::preset(p.preset).expect("a v1 preset").with_base_url(&sim_url(i)).expect("valid url");
            lanes.push((sim_url(i), p.config.polling.give_up_ms));
            let key = Secret::new(format!("{KEY}-{i}"));
            specs.push(LaneSpec {
                name: p.name.to_string(),
                provider,
                key,
                config: p.config,
                prices: p.prices,
                soft_id: None,
                fleet: None,
            });
            services.push(p.service);
        }
        let engine = Engine::with_lanes(specs, routing).expect("valid providers");
        Harness::with_engine(engine, services, lanes)
    }

    fn with_engine(engine: Engine, mut services: Vec<FakeService>, lanes: Vec<(String, KindMs)>) -> Self {
        let service = services.remove(0);
        Harness {
            engine,
            service,
            others: services,
            lanes,
            now: T0,
            latency: Duration::from_millis(50),
            solved: Vec::new(),
            dead: Vec::new(),
            journal: BTreeMap::new(),
            events: Vec::new(),
            sent: Vec::new(),
            in_transit: Vec::new(),
            max_steps: 10_000_000,
            keep_logs: true,
            requests: 0,
        }
    }

    /// The service of provider `i` (0 is [`Harness::service`]).
    pub fn service_of(&self, i: usize) -> &FakeService {
        if i == 0 {
            &self.service
        } else {
            &self.others[i - 1]
        }
    }

    fn service_for(&mut self, url: &str) -> &mut FakeService {
        let i = self.lanes.iter().position(|(base, _)| url.starts_with(&format!("{base}/"))).unwrap_or(0);
        if i == 0 {
            &mut self.service
        } else {
            &mut self.others[i - 1]
        }
    }

    /// Tasks (by page) that two providers had at the same time: a provider has a task from
    /// its acceptance until its outcome shows or its working time for the kind is over,
    /// whichever is first. Empty when nothing was ever paid for twice at once.
    pub fn concurrent_submissions(&self, kind: TaskKind) -> Vec<String> {
        let mut windows: Vec<(usize, &Taken, Timestamp)> = Vec::new();
        for (i, (_, working)) in self.lanes.iter().enumerate() {
            for t in &self.service_of(i).taken {
                let works = t.works_for.map_or(working.for_kind(kind), |w| w.min(working.for_kind(kind)));
                windows.push((i, t, t.at.add(works)));
            }
        }
        let mut clashes = Vec::new();
        for (a, (la, ta, end_a)) in windows.iter().enumerate() {
            for (lb, tb, end_b) in &windows[a + 1..] {
                if la != lb && ta.page == tb.page && ta.at < *end_b && tb.at < *end_a {
                    clashes.push(format!("{} at providers {la} ({:?}) and {lb} ({:?})", ta.page, ta.at, tb.at));
                }
            }
        }
        clashes
    }

    pub fn submit(&mut self, task: ValidTask, labels: &[(&str, &str)]) -> JobId {
        let labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        self.engine.submit(task, labels, None, self.now).expect("valid task")
    }

    /// Runs until nothing is left to do, or until `until`.
    pub fn run_until(&mut self, until: Option<Timestamp>) {
        let mut steps = 0u64;
        loop {
            steps += 1;
            assert!(steps < self.max_steps, "simulation did not settle after {steps} steps");
            self.drain_actions();
            let next_response = self.in_transit.iter().map(|(t, _, _)| *t).min();
            let next = match (self.engine.poll_timeout(), next_response) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => return,
                },
            };
            if until.is_some_and(|u| next > u) {
                self.now = until.unwrap_or(self.now);
                self.drain_actions();
                return;
            }
            self.now = self.now.max(next);
            let now = self.now;
            let (due, later): (Vec<_>, Vec<_>) = self.in_transit.drain(..).partition(|(t, _, _)| *t <= now);
            self.in_transit = later;
            for (_, rid, result) in due {
                self.engine.handle_response(rid, result, now);
            }
        }
    }

    pub fn run(&mut self) {
        self.run_until(None);
    }

    fn drain_actions(&mut self) {
        while let Some(action) = self.engine.poll_action(self.now) {
            match action {
                Action::Send { request_id, request } => {
                    let now = self.now;
                    let result = self.service_for(&request.url).handle(&request, now);
                    self.requests += 1;
                    if self.keep_logs {
                        self.sent.push((self.now, request));
                    }
                    self.in_transit.push((self.now.add(self.latency), request_id, result));
                }
                // The simulated store writes at once and the answer is handed over at once,
                // so the entry (with its solution) is forgotten straight away.
                Action::Solved { job, id, solution, .. } => {
                    self.journal.remove(&id);
                    self.solved.push((job, id, solution, self.now));
                }
                Action::DeadLetter { job, record, .. } => {
                    self.journal.remove(&record.id);
                    self.dead.push((job, record));
                }
                Action::Journal { entry, gates } => {
                    if self.keep_logs {
                        self.journal.insert(entry.id.clone(), entry);
                    }
                    if let Some(job) = gates {
                        self.engine.journaled(job, self.now);
                    }
                }
                Action::Event(e) => {
                    if self.keep_logs {
                        self.events.push((self.now, e));
                    }
                }
                // The simulated clients share no store: their lanes have no fleet account.
                Action::FleetSync(sync) => {
                    self.engine.fleet_synced(sync, Err("the simulation has no fleet ledger".into()), self.now);
                }
            }
        }
    }

    /// Sends of an endpoint, with their times.
    pub fn sends_to(&self, endpoint: &str) -> Vec<&(Timestamp, HttpRequest)> {
        self.sent.iter().filter(|(_, r)| r.endpoint() == endpoint).collect()
    }
}

/// A reCAPTCHA v2 task for `https://example.com/page/{n}`, as in the seeds.
pub fn seed_task(n: usize) -> ValidTask {
    Task::from_json_value(serde_json::json!({
        "type": "recaptcha_v2",
        "sitekey": "6Le-SITEKEY",
        "page_url": format!("https://example.com/page/{n}"),
    }))
    .expect("seed task is valid")
}
