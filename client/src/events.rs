//! Where the engine's and the driver's events go: the client's [`Metrics`], the host's
//! callback (every event), and `tracing` at the event's level, warnings at most once per
//! kind every ten seconds so a long outage or a flapping provider does not flood a log;
//! natively also the client's [`TaskTracer`](crate::traces::TaskTracer), if it has one.

use core::time::Duration;
use std::collections::HashMap;
use std::sync::Arc;

use captcha_dlq_core::engine::Level;
use captcha_dlq_core::{Event, JobId, TaskKind, Timestamp};

use crate::metrics::Metrics;

/// A host's event callback.
#[cfg(feature = "send")]
pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;
#[cfg(not(feature = "send"))]
pub type EventSink = Arc<dyn Fn(&Event)>;

/// Warnings of one kind closer together than this are logged at debug level.
pub const WARNING_INTERVAL: Duration = Duration::from_secs(10);

pub(crate) struct EventLog {
    sink: Option<EventSink>,
    metrics: Arc<Metrics>,
    last_warning: HashMap<&'static str, Timestamp>,
    /// Where the events that make alerts go (`alerts` option; feature `alerts`).
    #[cfg(feature = "alerts")]
    alerts: Option<crate::alerts::AlertTap>,
    #[cfg(feature = "traces")]
    tracer: Option<Box<dyn crate::traces::TaskTracer>>,
}

impl EventLog {
    pub(crate) fn new(sink: Option<EventSink>, metrics: Arc<Metrics>) -> Self {
        EventLog {
            sink,
            metrics,
            last_warning: HashMap::new(),
            #[cfg(feature = "alerts")]
            alerts: None,
            #[cfg(feature = "traces")]
            tracer: None,
        }
    }

    #[cfg(feature = "alerts")]
    pub(crate) fn with_alerts(mut self, alerts: Option<crate::alerts::AlertTap>) -> Self {
        self.alerts = alerts;
        self
    }

    /// After a task was solved: what the engine's budget counts as spent, read only while an
    /// alert watches the budget (`used` is not called otherwise).
    #[cfg(feature = "alerts")]
    pub(crate) fn spent(&mut self, used: impl FnOnce() -> Option<(f64, f64)>, now: Timestamp) {
        if let Some(tap) = self.alerts.as_mut().filter(|t| t.watches_budget()) {
            tap.spent(used(), now);
        }
    }

    /// Also reports every task and event to `tracer`.
    #[cfg(feature = "traces")]
    pub(crate) fn with_tracer(mut self, tracer: Option<Box<dyn crate::traces::TaskTracer>>) -> Self {
        self.tracer = tracer;
        self
    }

    /// A job started: a new task, a replay (`replayed`) or a journal entry taken over
    /// (`recovered`). `engine` knows its labels.
    pub(crate) fn task_started(
        &mut self,
        engine: &captcha_dlq_core::Engine,
        (job, id, kind): (JobId, &str, TaskKind),
        origin: crate::traces::TaskOrigin,
        now: Timestamp,
    ) {
        self.metrics.job_started(job, kind);
        #[cfg(feature = "traces")]
        if let Some(tracer) = &mut self.tracer {
            let (labels, replays) = engine.job_labels(job).map_or_else(Default::default, |(l, r)| (l.to_map(), r));
            tracer.task_started(crate::traces::TracedTask { job, id, kind, labels, origin, replays }, now);
        }
        #[cfg(not(feature = "traces"))]
        let _ = (engine, id, origin, now);
    }

    /// A job left without an event ending it (see [`TaskLeft`](crate::traces::TaskLeft)).
    pub(crate) fn task_left(&mut self, job: JobId, why: crate::traces::TaskLeft, now: Timestamp) {
        self.metrics.job_withdrawn(job);
        #[cfg(feature = "traces")]
        if let Some(tracer) = &mut self.tracer {
            tracer.task_left(job, why, now);
        }
        #[cfg(not(feature = "traces"))]
        let _ = (why, now);
    }

    /// `Client::flush`: what the tracer (if any) must export before the flush resolves.
    #[cfg(feature = "traces")]
    pub(crate) fn flush_traces(&mut self) -> Option<crate::runtime::BoxFuture<'static, ()>> {
        self.tracer.as_mut().and_then(|tracer| tracer.flush())
    }

    /// The driver stops: the tracer (if any) ends what is open and exports what is left.
    #[cfg(feature = "traces")]
    pub(crate) fn close(&mut self, now: Timestamp) -> Option<crate::runtime::BoxFuture<'static, ()>> {
        self.tracer.as_mut().map(|tracer| tracer.close(now))
    }

    /// The registry the events are counted in (the driver also records jobs and exchanges there).
    pub(crate) fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    pub(crate) fn emit(&mut self, event: &Event, now: Timestamp) {
        self.metrics.event(event);
        #[cfg(feature = "alerts")]
        if let Some(tap) = &mut self.alerts {
            tap.event(event, now);
        }
        #[cfg(feature = "traces")]
        if let Some(tracer) = &mut self.tracer {
            tracer.event(event, now);
        }
        if let Some(sink) = &self.sink {
            sink(event);
        }
        let mut level = event.level();
        if level >= Level::Warn {
            let name = event.name();
            match self.last_warning.get(name) {
                Some(last) if now.since(*last) < WARNING_INTERVAL => level = Level::Debug,
                _ => {
                    self.last_warning.insert(name, now);
                }
            }
        }
        match level {
            Level::Error => tracing::error!(target: "captcha_dlq", event = event.name(), "{event}"),
            Level::Warn => tracing::warn!(target: "captcha_dlq", event = event.name(), "{event}"),
            Level::Info => tracing::info!(target: "captcha_dlq", event = event.name(), "{event}"),
            Level::Debug => tracing::debug!(target: "captcha_dlq", event = event.name(), "{event}"),
        }
    }
}
