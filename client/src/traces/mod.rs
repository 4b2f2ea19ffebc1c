//! Where a front end's per-task traces plug into the driver.
//!
//! The driver reports each task's start (its id, type and labels) and every engine event to
//! a [`TaskTracer`], from the one place its events go ([`crate::events`]); the tracer builds
//! spans out of them with the one span model, [`spans::SpanBook`], and exports them off the solve
//! path. The native crate's `otlp` feature exports them through the OpenTelemetry SDK; a front end
//! that brings no exporter (the browser) gets [`otlp_json::OtlpJsonTracer`], OTLP/HTTP JSON posted
//! through its own transport. Feature `traces`.

use std::collections::BTreeMap;

use captcha_dlq_core::{Event, JobId, TaskKind, Timestamp};

use crate::runtime::BoxFuture;

// The model and the exporter exist with feature `traces` only; the types above are what the driver reports in any build.
#[cfg(feature = "traces")]
pub mod otlp_json;
#[cfg(feature = "traces")]
pub mod spans;

/// `Send` natively, where the driver may move between threads; nothing in the browser, whose
/// exporter holds JS values.
#[cfg(feature = "send")]
pub trait MaybeSend: Send {}
#[cfg(feature = "send")]
impl<T: Send> MaybeSend for T {}
#[cfg(not(feature = "send"))]
pub trait MaybeSend {}
#[cfg(not(feature = "send"))]
impl<T> MaybeSend for T {}

/// A task as it starts, for its trace.
#[derive(Debug)]
pub struct TracedTask<'a> {
    pub job: JobId,
    /// The record id (ULID) the task keeps in the journal and the DLQ.
    pub id: &'a str,
    pub kind: TaskKind,
    pub labels: BTreeMap<String, String>,
    /// How the task came to this client.
    pub origin: TaskOrigin,
    /// Replays of its DLQ record so far (0 for a new task).
    pub replays: u32,
}

/// How a task came to the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskOrigin {
    /// `solve`, `submit`, a stream.
    Submitted,
    /// A DLQ record replayed.
    Replayed,
    /// A journal entry recovered (or adopted from a dead fleet member).
    Recovered,
}

impl TaskOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskOrigin::Submitted => "submitted",
            TaskOrigin::Replayed => "replayed",
            TaskOrigin::Recovered => "recovered",
        }
    }
}

/// Why a task left this client without an engine event ending it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskLeft {
    /// Withdrawn before it was sent: its journal entry could not be written (nothing was paid).
    NotSubmitted,
    /// Another client of the fleet took it over.
    TakenOver,
}

impl TaskLeft {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskLeft::NotSubmitted => "not_submitted",
            TaskLeft::TakenOver => "taken_over",
        }
    }
}

/// Builds and exports traces out of what the driver reports. Called on the driver's turn:
/// an implementation must not block (it hands finished spans to an exporter of its own).
pub trait TaskTracer: MaybeSend + 'static {
    fn task_started(&mut self, task: TracedTask<'_>, now: Timestamp);
    /// Every engine event, as the event sink sees it.
    fn event(&mut self, event: &Event, now: Timestamp);
    fn task_left(&mut self, job: JobId, why: TaskLeft, now: Timestamp);
    /// `Client::flush`: exports what ended so far; the flush resolves once the returned future
    /// has. `None` when the exporter keeps its own schedule (the OpenTelemetry SDK's batches).
    fn flush(&mut self) -> Option<BoxFuture<'static, ()>> {
        None
    }
    /// The client closes: ends the spans of the tasks still running (they stay in the journal)
    /// and exports what is left; the driver waits for the returned future before it stops.
    fn close(&mut self, now: Timestamp) -> BoxFuture<'static, ()>;
}
