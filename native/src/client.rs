//! The Rust API: build a [`Client`], then `solve`, `solve_many`, `replay`,
//! `recover`, `balance`, `report`, and reach the DLQ through `dlq()`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use captcha_dlq_core::dlq::replay::{ReplayDecision, ReplayPolicy, ReplayReport};
use captcha_dlq_core::dlq::{DlqStore, Filter, RecordState};
use captcha_dlq_core::engine::Event;
use captcha_dlq_core::provider::SubmitOptions;
use captcha_dlq_core::{ConfigError, Engine, EngineConfig, JobId, Provider, Secret, Solution, Task};
use futures::stream::{self, StreamExt};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::driver::{now, Command, Driver, EventSink, JobOutcome};
use crate::error::{Error, Result};
use crate::open::open_store;
use crate::owner::{is_orphaned, Owner};
use crate::transport::Transport;

/// How to build a [`Client`]. Only the key is required.
#[derive(Clone)]
pub struct ClientBuilder {
    api_key: Option<String>,
    provider: String,
    base_url: Option<String>,
    dlq: DlqSpec,
    config: EngineConfig,
    replay: ReplayPolicy,
    allow_insecure_http: bool,
    proxy: Option<String>,
    submit_options: SubmitOptions,
    events: Option<EventSink>,
}

/// Where the dead-letter queue and journal live.
#[derive(Clone)]
#[allow(missing_debug_implementations)] // a host store need not be Debug
pub enum DlqSpec {
    /// `"memory"`, a SQLite file path, or a `redis://` URL.
    Location(String),
    Store(Arc<dyn DlqStore>),
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            api_key: None,
            provider: "captchaai".into(),
            base_url: None,
            dlq: DlqSpec::Location("captcha-dlq.sqlite".into()),
            config: EngineConfig::default(),
            replay: ReplayPolicy::default(),
            allow_insecure_http: false,
            proxy: None,
            submit_options: SubmitOptions::default(),
            events: None,
        }
    }
}

impl ClientBuilder {
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }
    /// A preset name (`captchaai`, `2captcha`, `anti-captcha`…) or a v1 base URL.
    pub fn provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }
    /// Send the provider's protocol to another host (a proxy of yours, a mock).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }
    pub fn dlq(mut self, location: impl Into<String>) -> Self {
        self.dlq = DlqSpec::Location(location.into());
        self
    }
    pub fn dlq_store(mut self, store: Arc<dyn DlqStore>) -> Self {
        self.dlq = DlqSpec::Store(store);
        self
    }
    pub fn config(mut self, config: EngineConfig) -> Self {
        self.config = config;
        self
    }
    pub fn replay_policy(mut self, policy: ReplayPolicy) -> Self {
        self.replay = policy;
        self
    }
    /// Allow `http://` to a non-loopback host (the key then travels in clear text).
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_insecure_http = allow;
        self
    }
    /// An HTTP or SOCKS5 proxy for the client's own traffic (`socks5://host:port`).
    pub fn proxy(mut self, proxy: impl Into<String>) -> Self {
        self.proxy = Some(proxy.into());
        self
    }
    pub fn submit_options(mut self, options: SubmitOptions) -> Self {
        self.submit_options = options;
        self
    }
    pub fn on_event(mut self, sink: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.events = Some(Arc::new(sink));
        self
    }

    /// Opens the store and starts the driver on the current tokio runtime.
    pub async fn build(self) -> Result<Client> {
        let key = self.api_key.filter(|k| !k.trim().is_empty()).ok_or_else(|| {
            ConfigError::new("api_key", "missing: pass an API key (CLI: --api-key or CAPTCHA_DLQ_API_KEY)")
        })?;
        let key = Secret::new(key.trim());
        let mut provider = Provider::from_spec(&self.provider)?;
        if let Some(url) = &self.base_url {
            provider = provider.with_base_url(url)?;
        }
        if provider.base_url().starts_with("http://") && !provider.is_loopback() && !self.allow_insecure_http {
            return Err(ConfigError::new(
                "base_url",
                format!("{} is plain http: the API key would travel unencrypted; use https, or allow insecure http explicitly", provider.base_url()),
            )
            .into());
        }
        self.config.validate()?;
        self.replay.validate()?;
        let store = match self.dlq {
            DlqSpec::Location(loc) => open_store(&loc).await?,
            DlqSpec::Store(s) => s,
        };
        let transport = Transport::new(key.clone(), self.proxy.as_deref())?;
        let owner = Owner::register();
        let mut config = self.config.clone();
        if config.seed == 0 {
            config.seed = fastrand::u64(..);
        }
        let engine = Engine::new(provider.clone(), key.clone(), config).with_submit_options(self.submit_options);
        let driver = Driver::new(engine, transport.clone(), store.clone(), owner.id().to_string(), self.events);
        let (tx, rx) = mpsc::unbounded_channel();
        let handle = tokio::spawn(driver.run(rx));
        Ok(Client {
            inner: Arc::new(Inner {
                commands: tx,
                store,
                provider,
                key,
                transport,
                replay: self.replay,
                config: self.config,
                owner,
                driver: Mutex::new(Some(handle)),
            }),
        })
    }
}

struct Inner {
    commands: mpsc::UnboundedSender<Command>,
    store: Arc<dyn DlqStore>,
    provider: Provider,
    key: Secret,
    transport: Transport,
    replay: ReplayPolicy,
    config: EngineConfig,
    owner: Owner,
    driver: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// A solving client. Cheap to clone; all clones share one engine and store.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("provider", &self.inner.provider.name())
            .field("base_url", &self.inner.provider.base_url())
            .field("api_key", &"***")
            .finish()
    }
}

/// What `recover` did with the journal entries it found.
#[derive(Debug, Default, Serialize)]
pub struct RecoverReport {
    /// Entries of processes that are gone, taken over.
    pub found: u64,
    /// Entries left alone because their owner is alive.
    pub skipped_live: u64,
    pub solved: Vec<RecoveredSolution>,
    pub dead_lettered: u64,
}

#[derive(Debug, Serialize)]
pub struct RecoveredSolution {
    pub id: String,
    pub labels: BTreeMap<String, String>,
    pub solution: Solution,
}

/// Which records a replay takes and how many.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    /// `None`: the classes the policy replays automatically.
    pub filter: Option<Filter>,
    /// At most this many records (default 100).
    pub limit: Option<usize>,
    /// An operator asked for these records: review classes are replayed too.
    pub explicit: bool,
}

/// A submitted job, to await or cancel.
#[derive(Debug)]
pub struct SolveHandle {
    job: JobId,
    done: oneshot::Receiver<JobOutcome>,
    client: Client,
}

impl SolveHandle {
    pub fn job(&self) -> JobId {
        self.job
    }

    /// Stops the job; it is dead-lettered with reason `Cancelled`.
    pub fn cancel(&self) {
        let _ = self.client.inner.commands.send(Command::Cancel { job: self.job });
    }

    pub async fn wait(self) -> Result<Solution> {
        match self.wait_outcome().await? {
            JobOutcome::Solved { solution, .. } => Ok(solution),
            JobOutcome::DeadLettered { record, stored } => Err(Error::SolveFailed { record, stored }),
        }
    }

    /// The outcome with the task's id and labels (`Error::Closed` if the client closed first).
    pub async fn wait_outcome(self) -> Result<JobOutcome> {
        self.done.await.map_err(|_| Error::Closed)
    }

    /// [`SolveHandle::wait`] that cancels the job if this future is dropped before the job ends
    /// (a host cancelling its task, as asyncio does): the job is then dead-lettered as
    /// `Cancelled` instead of running on with nobody waiting for its answer.
    pub async fn wait_cancelling_on_drop(self) -> Result<Solution> {
        struct CancelOnDrop {
            client: Client,
            job: JobId,
            armed: bool,
        }
        impl Drop for CancelOnDrop {
            fn drop(&mut self) {
                if self.armed {
                    let _ = self.client.inner.commands.send(Command::Cancel { job: self.job });
                }
            }
        }
        let mut guard = CancelOnDrop { client: self.client.clone(), job: self.job, armed: true };
        let result = self.wait().await;
        guard.armed = false;
        result
    }

    /// [`SolveHandle::wait`], cancelling the job if `cancel` completes first (a host's
    /// abort signal): it is then dead-lettered as `Cancelled` and that failure is returned.
    pub async fn wait_or_cancel(mut self, cancel: impl std::future::Future<Output = ()>) -> Result<Solution> {
        tokio::select! {
            outcome = &mut self.done => return match outcome {
                Ok(JobOutcome::Solved { solution, .. }) => Ok(solution),
                Ok(JobOutcome::DeadLettered { record, stored }) => Err(Error::SolveFailed { record, stored }),
                Err(_) => Err(Error::Closed),
            },
            () = cancel => self.cancel(),
        }
        self.wait().await
    }
}

impl Client {
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    pub fn provider(&self) -> &Provider {
        &self.inner.provider
    }

    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// The dead-letter store (and journal).
    pub fn dlq(&self) -> &Arc<dyn DlqStore> {
        &self.inner.store
    }

    /// Submits a task with labels (copied into its DLQ record if it fails).
    pub async fn submit(&self, task: Task, labels: BTreeMap<String, String>) -> Result<SolveHandle> {
        let (accepted, accepted_rx) = oneshot::channel();
        let (done, done_rx) = oneshot::channel();
        self.send(Command::Submit { task, labels, accepted, done })?;
        let job = accepted_rx.await.map_err(|_| Error::Closed)??;
        Ok(SolveHandle { job, done: done_rx, client: self.clone() })
    }

    /// Solves one task. A failure returns `Error::SolveFailed` with the DLQ record.
    pub async fn solve(&self, task: Task) -> Result<Solution> {
        self.submit(task, BTreeMap::new()).await?.wait().await
    }

    /// Solves many tasks with at most `concurrency` at once; one result per task, in input order.
    /// `progress(done, total)` is called after each task ends.
    pub async fn solve_many(
        &self,
        tasks: Vec<(Task, BTreeMap<String, String>)>,
        concurrency: usize,
        progress: Option<&(dyn Fn(usize, usize) + Sync)>,
    ) -> Vec<Result<Solution>> {
        let total = tasks.len();
        let mut results: Vec<Option<Result<Solution>>> = (0..total).map(|_| None).collect();
        let mut finished = 0usize;
        let mut stream = stream::iter(tasks.into_iter().enumerate())
            .map(|(i, (task, labels))| async move {
                let r = match self.submit(task, labels).await {
                    Ok(handle) => handle.wait().await,
                    Err(e) => Err(e),
                };
                (i, r)
            })
            .buffer_unordered(concurrency.max(1));
        while let Some((i, r)) = stream.next().await {
            results[i] = Some(r);
            finished += 1;
            if let Some(p) = progress {
                p(finished, total);
            }
        }
        results.into_iter().map(|r| r.unwrap_or(Err(Error::Closed))).collect()
    }

    /// Takes records out of the DLQ under a lease and tries them again: solved ones are
    /// completed, failed ones go back with their new attempts, worn-out ones are parked.
    pub async fn replay(&self, options: ReplayOptions) -> Result<ReplayReport> {
        let policy = &self.inner.replay;
        let mut report = ReplayReport::default();
        let filter = match options.filter.or_else(|| policy.auto_filter()) {
            Some(f) => f,
            None => return Ok(report),
        };
        let limit = options.limit.unwrap_or(100).max(1);
        let leased = self.inner.store.receive(&filter, limit, policy.lease(), now()).await?;
        report.received = leased.len() as u64;
        let mut running = Vec::new();
        for lease in leased {
            let decision = policy.decide(&lease.record, options.explicit);
            report.count_decision(&decision);
            match decision {
                ReplayDecision::Replay { attempts_allowed } => {
                    let (accepted, accepted_rx) = oneshot::channel();
                    let (done, done_rx) = oneshot::channel();
                    let record = Box::new(lease.record.clone());
                    self.send(Command::Replay { record, attempts: attempts_allowed, accepted, done })?;
                    match accepted_rx.await.map_err(|_| Error::Closed)? {
                        Ok(_) => running.push((lease, done_rx)),
                        Err(e) => {
                            // Invalid under this version's rules: needs a human, not retries.
                            report.retried -= 1;
                            report.parked += 1;
                            self.inner.store.park(&lease.record.id, &e.to_string(), now()).await?;
                        }
                    }
                }
                ReplayDecision::Park { reason } => {
                    self.inner.store.park(&lease.record.id, &reason, now()).await?;
                }
                ReplayDecision::Skip { .. } => {
                    self.inner.store.abandon(&lease.token, None, now()).await?;
                }
            }
        }
        let outcomes =
            futures::future::join_all(running.into_iter().map(|(lease, rx)| async move { (lease, rx.await) })).await;
        for (lease, outcome) in outcomes {
            match outcome {
                Ok(JobOutcome::Solved { .. }) => {
                    self.inner.store.complete(&lease.token, now()).await?;
                    report.recovered += 1;
                }
                Ok(JobOutcome::DeadLettered { mut record, .. }) => {
                    record.deliveries = lease.record.deliveries;
                    if record.attempts >= policy.park_after_attempts {
                        record.state = RecordState::Parked;
                        record.parked_reason =
                            Some(captcha_dlq_core::class::reason::MAX_DELIVERY_COUNT_EXCEEDED.into());
                    }
                    match self.inner.store.abandon(&lease.token, Some(*record), now()).await? {
                        RecordState::Parked => report.parked += 1,
                        _ => report.failed_again += 1,
                    }
                }
                // Closed mid-replay: the lease expires and the record is delivered again.
                Err(_) => return Err(Error::Closed),
            }
        }
        Ok(report)
    }

    /// Resumes the tasks that a dead process left in the journal (polling the provider task
    /// if it had one, else submitting again) and waits for them. With `resume: false` they
    /// are dead-lettered as `Interrupted` instead.
    pub async fn recover(&self, resume: bool) -> Result<RecoverReport> {
        let entries = self.inner.store.journal_entries().await?;
        let now = now();
        let grace = Duration::from_millis(self.inner.config.retry.task_deadline_ms);
        let mut report = RecoverReport::default();
        let mut waiting = Vec::new();
        for entry in entries {
            if entry.owner.as_deref() == Some(self.inner.owner.id()) || !is_orphaned(&entry, now, grace) {
                report.skipped_live += 1;
                continue;
            }
            report.found += 1;
            let (done, rx) = oneshot::channel();
            self.send(Command::Recover { entry: Box::new(entry), resume, done })?;
            waiting.push(rx);
        }
        for rx in waiting {
            match rx.await {
                Ok(JobOutcome::Solved { id, labels, solution }) => {
                    report.solved.push(RecoveredSolution { id, labels, solution })
                }
                Ok(JobOutcome::DeadLettered { .. }) => report.dead_lettered += 1,
                Err(_) => return Err(Error::Closed),
            }
        }
        Ok(report)
    }

    /// The account balance, as the provider reports it.
    pub async fn balance(&self) -> Result<f64> {
        let mut req = self.inner.provider.balance_request(&self.inner.key);
        req.timeout = Duration::from_millis(self.inner.config.retry.request_timeout_ms);
        let resp = self.inner.transport.execute(req).await.map_err(|e| {
            Error::Provider(captcha_dlq_core::Failure::new(
                captcha_dlq_core::class::reason::NETWORK,
                captcha_dlq_core::ErrorClass::Transient,
                e.message,
            ))
        })?;
        self.inner.provider.parse_balance(&resp).map_err(Error::Provider)
    }

    /// Tells the provider whether an answer was right (refunds, solver quality).
    pub async fn report(&self, provider_task_id: &str, good: bool) -> Result<()> {
        let Some(mut req) = self.inner.provider.report_request(&self.inner.key, provider_task_id, good) else {
            return Err(ConfigError::new(
                "report",
                format!(
                    "{} has no report endpoint for {} answers",
                    self.inner.provider.name(),
                    if good { "good" } else { "bad" }
                ),
            )
            .into());
        };
        req.timeout = Duration::from_millis(self.inner.config.retry.request_timeout_ms);
        let resp = self.inner.transport.execute(req).await.map_err(|e| {
            Error::Provider(captcha_dlq_core::Failure::new(
                captcha_dlq_core::class::reason::NETWORK,
                captcha_dlq_core::ErrorClass::Transient,
                e.message,
            ))
        })?;
        self.inner.provider.parse_report(&resp).map_err(Error::Provider)
    }

    /// Lets submissions flow again after an account error was fixed (new key, top-up).
    pub fn reset_circuit(&self) -> Result<()> {
        self.send(Command::ResetCircuit)
    }

    /// Stops the driver. Tasks in flight stay in the journal for `recover`.
    pub async fn close(&self) {
        let (ack, rx) = oneshot::channel();
        if self.inner.commands.send(Command::Shutdown { ack }).is_ok() {
            let _ = rx.await;
        }
        let handle = self.inner.driver.lock().ok().and_then(|mut h| h.take());
        if let Some(h) = handle {
            let _ = h.await;
        }
    }

    fn send(&self, cmd: Command) -> Result<()> {
        self.inner.commands.send(cmd).map_err(|_| Error::Closed)
    }
}
