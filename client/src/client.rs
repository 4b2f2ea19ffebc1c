//! The client every front end exposes: `solve`, `solve_stream`/`solve_many`,
//! `replay`, `recover`, the DLQ operations, `balance`, `report`, `spend`. It talks to
//! the driver through commands and to the store directly (with timeouts) for
//! what is not the engine's business (leasing records, reading the journal,
//! inspecting the DLQ). With several providers, `balance` and `report` take the
//! provider's name (a solution names the one that solved it).

use core::future::Future;
use core::time::Duration;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::options::{BudgetScope, ClientOptions, ProviderOptions};
use captcha_dlq_core::engine::LaneFleet;
use captcha_dlq_core::spend::SpendReport;
use captcha_dlq_core::support::quoted::Quoted;
use captcha_dlq_core::{ConfigError, Engine, Failure, HttpRequest, JobId, Provider, Solution, ValidTask};
use futures::channel::{mpsc, oneshot};

use crate::adopt::Adopter;
use crate::adopted::{AdoptedHook, AdoptionStats, SharedStats};
use crate::driver::{Command, Delivery, Driver, DriverStatus, Outcome, SharedHealth, StoreHealth};
use crate::error::{Error, Result};
use crate::events::{EventLog, EventSink};
use crate::fleet_calls::FleetCalls;
use crate::fleet_status::FleetStatus;
pub use crate::inner::Client;
use crate::inner::{ledger_of, Inner};
use crate::metrics::{Metrics, MetricsProvider, MetricsSnapshot};
use crate::prometheus::{self, DlqGauges, FleetGauges};
use crate::runtime::Backends;
use crate::store_calls::StoreCalls;

/// Where a client's tracer is passed to its driver: nothing at all without feature `traces` (see [`crate::traces`]),
/// and no bytes to spare.
#[cfg(feature = "traces")]
type TracerSlot = Option<Box<dyn crate::traces::TaskTracer>>;
#[cfg(not(feature = "traces"))]
type TracerSlot = ();

/// Where a client's retention archive is passed (see [`crate::archive::Archive`]); none when
/// the build has no retention.
#[cfg(feature = "retention")]
type ArchiveSlot = Option<Arc<dyn crate::archive::Archive>>;
#[cfg(not(feature = "retention"))]
type ArchiveSlot = ();

impl Client {
    /// Starts a client over the backends a front end plugs in: the driver is spawned on
    /// `backends.runtime` and runs until [`close`](Self::close) or until every clone is gone.
    pub fn start(options: ClientOptions, backends: Backends, events: Option<EventSink>) -> Result<Client> {
        Client::start_with(options, backends, events, None)
    }

    /// [`start`](Self::start), with a hook for the answers this client adopts from dead fleet
    /// members (see [`crate::adopt`]); without one they are released for `recover`.
    pub fn start_with(
        options: ClientOptions,
        backends: Backends,
        events: Option<EventSink>,
        on_adopted: Option<AdoptedHook>,
    ) -> Result<Client> {
        // `()` without feature `traces` (see `TracerSlot`).
        #[allow(clippy::unit_arg)]
        Client::launch(options, backends, events, on_adopted, TracerSlot::default(), ArchiveSlot::default())
    }

    /// [`start`](Self::start), handing the records `dlq_retention` evicts to `archive` rather
    /// than to the options' `archive` file: a front end without files (the browser) gives the
    /// caller's function.
    #[cfg(feature = "retention")]
    pub fn start_archiving(
        options: ClientOptions,
        backends: Backends,
        events: Option<EventSink>,
        archive: Arc<dyn crate::archive::Archive>,
    ) -> Result<Client> {
        #[allow(clippy::unit_arg)]
        Client::launch(options, backends, events, None, TracerSlot::default(), Some(archive))
    }

    /// [`start_with`](Self::start_with), reporting every task to `tracer` (see
    /// [`crate::traces`]). Options asking for `traces` without one get the client's OTLP/HTTP JSON
    /// exporter over `backends.transport` (the browser's case). Feature `traces`.
    #[cfg(feature = "traces")]
    pub fn start_traced(
        options: ClientOptions,
        backends: Backends,
        events: Option<EventSink>,
        on_adopted: Option<AdoptedHook>,
        tracer: Option<Box<dyn crate::traces::TaskTracer>>,
    ) -> Result<Client> {
        #[allow(clippy::unit_arg)]
        Client::launch(options, backends, events, on_adopted, tracer, ArchiveSlot::default())
    }

    fn launch(
        options: ClientOptions,
        backends: Backends,
        events: Option<EventSink>,
        on_adopted: Option<AdoptedHook>,
        tracer: TracerSlot,
        archive: ArchiveSlot,
    ) -> Result<Client> {
        // A front end that brings no exporter (the browser) gets the client's OTLP/HTTP JSON one, over its transport.
        #[cfg(feature = "traces")]
        let tracer = match (&options.traces, tracer) {
            (Some(traces), None) => Some(crate::traces::otlp_json::OtlpJsonTracer::from_options(
                traces,
                options.primary().name.clone(),
                &backends,
            )?),
            (_, given) => given,
        };
        #[cfg(feature = "retention")]
        if let (Some(retention), None) = (&options.dlq_retention, &archive) {
            crate::archive::file_archive(retention)?;
        }
        let mut lanes = options.lane_specs();
        if let Some(first) = lanes.first_mut().filter(|l| l.config.seed == 0) {
            first.config.seed = backends.runtime.random_seed();
        }
        let ledger = if options.fleet.enabled { ledger_of(&backends) } else { None };
        // This client's account at each provider, by name: adoption takes only the entries of
        // providers whose account it shares with their dead owner.
        let mut accounts: HashMap<String, String> = HashMap::new();
        if let Some(ledger) = &ledger {
            for (lane, provider) in lanes.iter_mut().zip(options.providers()) {
                let account = ledger.account_id(provider.provider.base_url(), &provider.api_key);
                accounts.insert(lane.name.clone(), account.clone());
                lane.fleet = Some(LaneFleet { account, shares_budget: options.fleet.budget == BudgetScope::Fleet });
            }
        }
        // Decided on the ledger itself, so that a build without one (the browser) has no adopter.
        let adopting = ledger.is_some() && options.fleet.adopt && !accounts.is_empty();
        let engine = Engine::with_lanes(lanes, options.routing.clone())?.with_submit_options(options.submit.clone());
        let owner = backends.liveness.register();
        let (tx, rx) = mpsc::unbounded();
        let health: SharedHealth = Arc::new(Mutex::new(StoreHealth { available: true, ..StoreHealth::default() }));
        let store_calls = StoreCalls::new(backends.store.clone(), backends.runtime.clone(), options.store.clone());
        let metrics = Arc::new(Metrics::new(
            options
                .providers()
                .iter()
                .map(|p| MetricsProvider { name: p.name.clone(), base_url: p.provider.base_url().to_string() })
                .collect(),
        ));
        let fleet =
            ledger.map(|ledger| FleetCalls::new(ledger, &owner, backends.runtime.now(), options.store.timeout()));
        let log = EventLog::new(events, metrics.clone());
        #[cfg(any(feature = "alerts", feature = "retention"))]
        let ops = Arc::new(crate::ops_metrics::OpsCounters::default());
        #[cfg(feature = "alerts")]
        let (tap, alerts) = match options.alerts.as_ref() {
            Some(alerts) => {
                let keys = options.secrets();
                let (tap, outstanding) =
                    crate::alerts::start(alerts, &backends, keys, owner.clone(), options.store.timeout(), ops.clone());
                (Some(tap), Some(outstanding))
            }
            None => (None, None),
        };
        #[cfg(feature = "alerts")]
        let log = log.with_alerts(tap);
        #[cfg(feature = "traces")]
        let log = log.with_tracer(tracer);
        #[cfg(not(feature = "traces"))]
        let () = tracer;
        let driver =
            Driver::new(engine, backends.clone(), store_calls, owner.clone(), log, health.clone(), (rx, tx.clone()))
                .with_fleet(fleet);
        backends.runtime.spawn(Box::pin(driver.run()));
        let adoption: SharedStats =
            Arc::new(Mutex::new(AdoptionStats { enabled: adopting, ..AdoptionStats::default() }));
        // In the browser (wasm32, one thread) the backends hold JS values, which are not `Send`.
        #[cfg_attr(not(feature = "send"), allow(clippy::arc_with_non_send_sync))]
        let inner = Arc::new(Inner {
            commands: tx,
            backends,
            options,
            owner,
            health,
            metrics,
            adoption,
            #[cfg(any(feature = "alerts", feature = "retention"))]
            ops,
            #[cfg(feature = "alerts")]
            alerts,
            #[cfg(feature = "retention")]
            archive,
        });
        #[cfg(not(feature = "retention"))]
        let () = archive;
        #[cfg(feature = "retention")]
        if let Some(retention) = inner.options.dlq_retention.clone() {
            let run = crate::retention::run_periodically(Arc::downgrade(&inner), retention);
            inner.backends.runtime.spawn(Box::pin(run));
        }
        if adopting {
            let adopter = Adopter {
                client: Arc::downgrade(&inner),
                runtime: inner.backends.runtime.clone(),
                accounts,
                hook: on_adopted,
                stats: inner.adoption.clone(),
            };
            inner.backends.runtime.spawn(Box::pin(adopter.run()));
        }
        Ok(Client { inner })
    }

    /// The first provider (the only one in the simple form).
    pub fn provider(&self) -> &Provider {
        self.inner.options.provider()
    }

    pub fn options(&self) -> &ClientOptions {
        &self.inner.options
    }

    /// Waits until every store write asked for so far has ended: journal entries, dead
    /// letters and the removals acknowledged receipts asked for (each written, or given up
    /// after its retries, which [`store_health`](Self::store_health) counts). A read of the
    /// store after it sees what was acknowledged before it.
    pub async fn flush(&self) -> Result<()> {
        self.flush_requested().await.map_err(|_| Error::Closed)
    }

    /// [`flush`](Self::flush) asked for now; the receiver answers when it is done, or is
    /// cancelled at once if the client is closed.
    pub(crate) fn flush_requested(&self) -> oneshot::Receiver<()> {
        let (done, written) = oneshot::channel();
        let _ = self.send(Command::Flush { done });
        written
    }

    /// What this client's adoption of dead fleet members' entries did so far (see
    /// [`crate::adopt`]).
    pub fn adoption_stats(&self) -> AdoptionStats {
        self.inner.adoption.lock().map(|s| *s).unwrap_or_default()
    }

    /// Alerts sent, dropped and failed, and records evicted by retention, so far.
    #[cfg(any(feature = "alerts", feature = "retention"))]
    pub fn ops_metrics(&self) -> crate::ops_metrics::OpsSnapshot {
        self.inner.ops.snapshot()
    }

    /// The store's health as the driver last saw it; `failures` counts writes given up.
    pub fn store_health(&self) -> StoreHealth {
        self.inner.health.lock().map(|h| h.clone()).unwrap_or_default()
    }

    /// Where the client counts; the page outcomes (crate::page) add to it.
    pub(crate) fn metrics_handle(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// This client's counters and gauges (tasks, HTTP exchanges, circuit) right now.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.inner.metrics.snapshot()
    }

    /// [`metrics`](Self::metrics), the DLQ's gauges (records by state, oldest age, journal
    /// size), the fleet ledger's (clients live and gone; per account the tasks in flight, the
    /// window, the pause, the account error) and this client's spend, in the Prometheus text
    /// format ([`prometheus::CONTENT_TYPE`]). A store that does not answer is reported as
    /// `captcha_dlq_dlq_up 0` (and `captcha_dlq_fleet_up 0`), not as an error; a store that
    /// keeps no ledger (memory) has no fleet families.
    pub async fn prometheus_text(&self) -> String {
        let dlq = self.dlq();
        let (stats, fleet, spend) = futures::join!(dlq.stats(), self.fleet_view(), self.spend());
        let gauges =
            DlqGauges { stats: stats.ok(), health: self.store_health(), now: self.inner.backends.runtime.now() };
        let fleet = match fleet {
            Ok(None) => FleetGauges::NoLedger,
            Ok(Some(view)) => FleetGauges::Read { status: FleetStatus::of(&view), own_accounts: self.fleet_accounts() },
            Err(_) => FleetGauges::Unavailable,
        };
        let mut text = prometheus::render(&self.metrics(), &gauges);
        text.push_str(&prometheus::render_fleet(&fleet));
        // A closed client has no spend to report; its other families are still read.
        if let Ok(spend) = spend {
            text.push_str(&prometheus::render_spend(&spend));
        }
        #[cfg(any(feature = "alerts", feature = "retention"))]
        text.push_str(&self.inner.ops.render());
        text
    }

    /// Each provider's name and the account id the store's fleet ledger knows it by (a keyed
    /// hash of the key and the provider's base URL, never the key), when the store keeps a
    /// ledger; empty otherwise. Joins this client's providers to the fleet view's accounts.
    pub fn fleet_accounts(&self) -> Vec<(String, String)> {
        let Some(ledger) = ledger_of(&self.inner.backends) else { return Vec::new() };
        self.inner
            .options
            .providers()
            .iter()
            .map(|p| (p.name.clone(), ledger.account_id(p.provider.base_url(), &p.api_key)))
            .collect()
    }

    /// What the driver is doing right now.
    pub async fn status(&self) -> Result<DriverStatus> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Status { reply })?;
        rx.await.map_err(|_| Error::Closed)
    }

    /// Submits a task with labels (copied into its DLQ record if it fails) and an optional
    /// key, the caller's stable name for it: when the task ends the store remembers the
    /// key as settled (see [`Dlq::settled`](crate::Dlq::settled)).
    pub async fn submit(
        &self,
        task: ValidTask,
        labels: BTreeMap<String, String>,
        key: Option<String>,
    ) -> Result<SolveHandle> {
        self.submit_wanted(task, labels, key, None).await
    }

    /// [`submit`](Self::submit) for a caller that wants the task only for `ttl_ms` (a task's
    /// `ttl_ms`): past it, a task not solved is dead-lettered as `TTLExpired` and nothing more
    /// is paid for it (`Engine::submit_wanted`).
    pub async fn submit_wanted(
        &self,
        task: ValidTask,
        labels: BTreeMap<String, String>,
        key: Option<String>,
        ttl_ms: Option<u64>,
    ) -> Result<SolveHandle> {
        // The client's `task_defaults` (a proxy, a user agent) go into every task whose kind takes them.
        let task = match &self.inner.options.task_defaults {
            Some(defaults) => defaults.apply(task).map_err(Error::InvalidTask)?,
            None => task,
        };
        let (accepted, accepted_rx) = oneshot::channel();
        let (done, done_rx) = oneshot::channel();
        let ttl = ttl_ms.map(Duration::from_millis);
        self.send(Command::Submit { task, labels, key, ttl, accepted, done })?;
        let mut accepting = Accepting { reply: Some(accepted_rx), client: self.clone() };
        let Some(reply) = accepting.reply.as_mut() else { return Err(Error::Closed) };
        let accepted = reply.await;
        accepting.reply = None;
        let (job, id) = accepted.map_err(|_| Error::Closed)??;
        Ok(SolveHandle { job, id, done: Some(done_rx), client: self.clone(), armed: true })
    }

    /// Solves one task. A failure returns [`Error::SolveFailed`] with the DLQ record.
    pub async fn solve(&self, task: ValidTask) -> Result<Solution> {
        self.solve_labelled(task, BTreeMap::new()).await
    }

    pub async fn solve_labelled(&self, task: ValidTask, labels: BTreeMap<String, String>) -> Result<Solution> {
        self.submit(task, labels, None).await?.wait().await
    }

    /// Raises the in-flight limit to at least `limit` (a call asking for that much concurrency).
    pub fn ensure_in_flight(&self, limit: usize) -> Result<()> {
        self.send(Command::EnsureInFlight(u32::try_from(limit).unwrap_or(u32::MAX)))
    }

    /// The account balance at the first provider, as it reports it.
    pub async fn balance(&self) -> Result<f64> {
        self.balance_at(self.inner.options.primary()).await
    }

    /// The balance at the provider named `provider` (its `name` in the options).
    pub async fn balance_of(&self, provider: &str) -> Result<f64> {
        self.balance_at(self.named(provider)?).await
    }

    /// Every provider's balance (or why it could not be read), in configuration order.
    pub async fn balances(&self) -> Vec<(String, Result<f64>)> {
        let mut out = Vec::new();
        for p in self.inner.options.providers() {
            out.push((p.name.clone(), self.balance_at(p).await));
        }
        out
    }

    async fn balance_at(&self, p: &ProviderOptions) -> Result<f64> {
        let response = self.exchange(p, p.provider.balance_request(&p.api_key)).await?;
        p.provider.parse_balance(&response).map_err(Error::Provider)
    }

    /// Tells the first provider whether an answer was right (refunds, solver quality).
    pub async fn report(&self, provider_task_id: &str, good: bool) -> Result<()> {
        self.report_at(self.inner.options.primary(), provider_task_id, good).await
    }

    /// Tells the provider that solved `solution` (the one it names; the first provider for an
    /// answer that names none) whether it was right.
    pub async fn report_solution(&self, solution: &Solution, good: bool) -> Result<()> {
        let Some(id) = solution.provider_task_id.as_deref() else {
            return Err(ConfigError::new("solution", "names no provider task to report").into());
        };
        let provider = match solution.provider.as_deref() {
            Some(name) => self.named(name)?,
            None => self.inner.options.primary(),
        };
        self.report_at(provider, id, good).await
    }

    /// Tells the provider named `provider` whether the answer to its task was right.
    pub async fn report_to(&self, provider: &str, provider_task_id: &str, good: bool) -> Result<()> {
        self.report_at(self.named(provider)?, provider_task_id, good).await
    }

    async fn report_at(&self, p: &ProviderOptions, provider_task_id: &str, good: bool) -> Result<()> {
        let Some(request) = p.provider.report_request(&p.api_key, provider_task_id, good) else {
            let verdict = if good { "good" } else { "bad" };
            return Err(
                ConfigError::new("report", format!("{} has no report endpoint for {verdict} answers", p.name)).into()
            );
        };
        let response = self.exchange(p, request).await?;
        p.provider.parse_report(&response).map_err(Error::Provider)
    }

    fn named(&self, name: &str) -> Result<&ProviderOptions> {
        self.inner.options.provider_named(name).ok_or_else(|| {
            let known: Vec<&str> = self.inner.options.providers().iter().map(|p| p.name.as_str()).collect();
            Error::Config(ConfigError::new(
                "provider",
                format!("{} is not a provider of this client ({})", Quoted(name), known.join(", ")),
            ))
        })
    }

    async fn exchange(&self, p: &ProviderOptions, mut request: HttpRequest) -> Result<captcha_dlq_core::HttpResponse> {
        request.timeout = Duration::from_millis(self.inner.options.engine().retry.request_timeout_ms);
        self.inner.backends.transport.send(request).await.map_err(|e| {
            Error::Provider(Failure::new(
                captcha_dlq_core::class::reason::NETWORK,
                captcha_dlq_core::ErrorClass::Transient,
                format!("no answer from {}: {}", p.provider.base_url(), e.message),
            ))
        })
    }

    /// What this client spent on solved tasks since it started, by provider, task kind and
    /// label (costs as the providers report them, else the configured prices), with its
    /// budget if it has one.
    pub async fn spend(&self) -> Result<SpendReport> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Spend { reply })?;
        rx.await.map_err(|_| Error::Closed)
    }

    /// Lets submissions flow again after an account error was fixed (new key, top-up).
    pub fn reset_circuit(&self) -> Result<()> {
        self.send(Command::ResetCircuit)
    }

    /// Ends the account hold of the provider named `provider` (or of every provider) at once, on
    /// `operator`'s word that the account works again (a top-up), and records it in the audit
    /// trail. The fleet hears it with this client's next sync (or its last, when it closes), so
    /// every client holding for the account resumes without waiting for the balance probe.
    /// Answers the providers that were held; an unknown provider is an error naming the
    /// configured ones.
    #[cfg(feature = "fleet")]
    pub async fn resume_accounts(&self, provider: Option<&str>, operator: &crate::Operator) -> Result<Vec<String>> {
        let filter = serde_json::json!({ "provider": provider });
        let action = captcha_dlq_core::dlq::audit::AuditAction::ResumeAccounts;
        let what = format!("end the account hold of {}", provider.unwrap_or("every provider"));
        // The intent first: a resume the trail cannot record is not done.
        let intent = crate::audit::intend(self, operator, action, filter, what).await?;
        let (reply, rx) = oneshot::channel();
        let resumed = match self.send(Command::ResumeAccounts { provider: provider.map(str::to_string), reply }) {
            Ok(()) => rx.await.map_err(|_| Error::Closed).and_then(|r| r.map_err(Error::Config)),
            Err(e) => Err(e),
        };
        let count = resumed.as_ref().map_or(0, |r| r.len() as u64);
        let detail = match &resumed {
            Ok(held) if held.is_empty() => Some("no provider was holding; the fleet is told the account works".into()),
            Ok(held) => Some(format!("held providers resumed: {}", held.join(", "))),
            Err(_) => None,
        };
        crate::audit::record(self, operator, intent, detail, count, resumed).await
    }

    /// Stops the driver once the writes it has queued are done. Tasks in flight stay in
    /// the journal for `recover`. With `alerts`, what they hold is sent now (a message still
    /// gathering goes at once) and `close` waits for the deliveries, at most
    /// [`alerts::CLOSE_WAIT`](crate::alerts::CLOSE_WAIT) (5 s); what is still unsent then is named
    /// in a warning (target `captcha_dlq`; the CLI prints it on stderr).
    pub async fn close(&self) {
        let (ack, rx) = oneshot::channel();
        if self.send(Command::Shutdown { ack }).is_ok() {
            let _ = rx.await;
        }
        #[cfg(feature = "alerts")]
        if let Some(alerts) = &self.inner.alerts {
            let wait = crate::alerts::CLOSE_WAIT;
            let left = alerts.wait(&self.inner.backends.runtime, wait).await;
            if !left.is_empty() {
                tracing::warn!(
                    target: "captcha_dlq",
                    "alerts not sent within {} s of closing the client: {}",
                    wait.as_secs(),
                    left.join("; ")
                );
            }
        }
    }
}

type AcceptReply = oneshot::Receiver<Result<(JobId, String), captcha_dlq_core::InvalidTask>>;

/// A submission whose acceptance has not been read yet. Dropped with the acceptance
/// already in its channel (the caller's future cancelled in that instant), it cancels the
/// job as a dropped [`SolveHandle`] would; the driver does the same when the caller is
/// gone before it answers.
struct Accepting {
    reply: Option<AcceptReply>,
    client: Client,
}

impl Drop for Accepting {
    fn drop(&mut self) {
        if let Some(mut reply) = self.reply.take() {
            // Closed first, so the driver either sent before (read here) or cannot send at all.
            reply.close();
            if let Ok(Some(Ok((job, _)))) = reply.try_recv() {
                let _ = self.client.send(Command::Cancel { job });
            }
        }
    }
}

/// A submitted task, to await or cancel. Dropping it before its outcome cancels the task
/// (a host cancelling its future, as asyncio does): not sent yet, it is dead-lettered as
/// `Cancelled`; already with the provider, it runs on and its answer waits in the journal.
#[derive(Debug)]
pub struct SolveHandle {
    job: JobId,
    id: String,
    done: Option<oneshot::Receiver<Outcome>>,
    client: Client,
    armed: bool,
}

impl SolveHandle {
    pub fn job(&self) -> JobId {
        self.job
    }

    /// The task's record id (its journal entry and, if it fails, its DLQ record).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Cancels the task (see the type's documentation); its outcome still arrives.
    pub fn cancel(&self) {
        let _ = self.client.send(Command::Cancel { job: self.job });
    }

    /// The outcome as the driver reports it, with the answer's receipt to acknowledge.
    pub async fn outcome(mut self) -> Result<Outcome> {
        let Some(done) = self.done.take() else { return Err(Error::Closed) };
        let outcome = done.await;
        self.armed = false;
        let outcome = outcome.map_err(|_| Error::Closed)?;
        Ok(self.client.good_or_expired(outcome).await)
    }

    /// The solution, handed over (its journal entry goes), or the error.
    pub async fn wait(self) -> Result<Solution> {
        self.outcome().await.and_then(Outcome::into_solution)
    }

    /// [`wait`](Self::wait), cancelling the task if `cancel` completes first (a host's abort
    /// signal); the cancellation's error is returned then.
    pub async fn wait_or_cancel(self, cancel: impl Future<Output = ()>) -> Result<Solution> {
        self.outcome_or_cancel(cancel).await.and_then(Outcome::into_solution)
    }

    /// [`outcome`](Self::outcome), cancelling the task if `cancel` completes first: for a host
    /// that acknowledges the answer's receipt itself, once the answer is in its caller's hands.
    pub async fn outcome_or_cancel(mut self, cancel: impl Future<Output = ()>) -> Result<Outcome> {
        let Some(mut done) = self.done.take() else { return Err(Error::Closed) };
        futures::pin_mut!(cancel);
        let outcome = match futures::future::select(&mut done, cancel).await {
            futures::future::Either::Left((outcome, _)) => outcome,
            futures::future::Either::Right(((), _)) => {
                self.cancel();
                done.await
            }
        };
        self.armed = false;
        let outcome = outcome.map_err(|_| Error::Closed)?;
        Ok(self.client.good_or_expired(outcome).await)
    }
}

impl Client {
    /// The outcome as it may be handed over now: an answer past its life (its consumer took
    /// it too late: a stream read slowly, a caller that came back after minutes) is never
    /// handed over as good. Its journal entry goes back to the engine, which dead-letters it
    /// as `TTLExpired` keeping the answer and its cost (the one decision, `Engine::recover`);
    /// the outcome is that dead letter. Other outcomes pass unchanged.
    pub(crate) async fn good_or_expired(&self, outcome: Outcome) -> Outcome {
        let now = self.backends().runtime.now();
        let (delivery, mut entry) = match outcome {
            Outcome::Solved(mut d) if d.solution.expired(now) => match d.entry.take() {
                Some(entry) => (d, entry),
                // A recovered answer: the engine checked it when it took the entry.
                None => return Outcome::Solved(d),
            },
            other => return other,
        };
        let Delivery { id, solution, receipt, .. } = *delivery;
        entry.solution = Some(solution);
        let (done, done_rx) = oneshot::channel();
        let (accepted, accepted_rx) = oneshot::channel();
        let expired = captcha_dlq_core::engine::Expired::DeadLetter;
        let asked = self.send(Command::Recover { entry, resume: true, expired, done, accepted });
        let outcome = match (asked, accepted_rx.await) {
            (Ok(()), Ok(crate::driver::Claim::Taken)) => done_rx.await.ok(),
            _ => None,
        };
        // Not acknowledged: the entry keeps the answer until its dead letter is stored.
        drop(receipt);
        outcome.unwrap_or_else(|| {
            // The client closed first: the entry keeps the answer for `recover`, which
            // dead-letters it; this caller gets the store's word that it was not handed over.
            let why = captcha_dlq_core::dlq::StoreError::Backend(format!(
                "the answer of task {id} expired before it was handed over; it stays in the journal \
                 for recover, which dead-letters it as TTLExpired"
            ));
            Outcome::NotSubmitted(why)
        })
    }
}

impl Drop for SolveHandle {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.client.send(Command::Cancel { job: self.job });
        }
    }
}

impl Outcome {
    /// The solution (acknowledging its delivery) or the error this outcome means.
    pub fn into_solution(self) -> Result<Solution> {
        let Delivery { solution, receipt, .. } = self.into_delivery()?;
        receipt.ack();
        Ok(solution)
    }

    /// The delivery, not yet acknowledged, or the error this outcome means.
    pub fn into_delivery(self) -> Result<Delivery> {
        match self {
            Outcome::Solved(delivery) => Ok(*delivery),
            Outcome::DeadLettered { record, stored } => Err(Error::SolveFailed { record, stored }),
            Outcome::FailedAgain(record) => Err(Error::SolveFailed { record, stored: false }),
            Outcome::NotSubmitted(e) | Outcome::TakenOver(e) => Err(Error::Store(e)),
            Outcome::RunsOn { id } => Err(Error::Cancelled { id, runs_on: true }),
        }
    }
}
