//! The client's log lines to Python `logging` (logger `captcha_dlq`).
//!
//! The client logs each event through `tracing` at the level the core gives it
//! (`Event::level()`: in-flight steps are debug, a circuit opening is a warning) and
//! already turns repeated warnings into debug lines (one per kind every 10 s). This module
//! is a `tracing` layer for the `captcha_dlq` target only: a line is formatted, sent down a
//! channel, and one thread hands batches to `captcha_dlq._logging.emit` with the GIL. So
//! the driver never waits for the GIL, and a slow log handler only slows logging. Nothing
//! is decided here: the level is the client's, the handlers are the application's.

use std::fmt::Write as _;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

use pyo3::prelude::*;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// Most lines handed to Python in one call.
const BATCH: usize = 512;

/// The target the client logs under.
const TARGET: &str = "captcha_dlq";

/// One line as Python receives it: (logging level number, event name, message).
type Line = (u8, String, String);

static SINK: OnceLock<Mutex<mpsc::Sender<Line>>> = OnceLock::new();

/// Installs the layer as this extension's `tracing` subscriber (its own copy of `tracing`,
/// so no other library in the process is affected).
pub(crate) fn install() {
    let subscriber = tracing_subscriber::registry().with(ToPython);
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// Where lines go: `emit(batch)` on a thread of its own. Only the first call counts.
pub(crate) fn set_sink(emit: Py<PyAny>) -> std::io::Result<()> {
    let (tx, rx) = mpsc::channel::<Line>();
    if SINK.set(Mutex::new(tx)).is_err() {
        return Ok(());
    }
    std::thread::Builder::new().name("captcha-dlq-log".into()).spawn(move || forward(rx, emit))?;
    Ok(())
}

/// Python `logging` level numbers.
fn level_number(level: Level) -> u8 {
    match level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG | Level::TRACE => 10,
    }
}

struct ToPython;

#[derive(Default)]
struct Fields {
    event: String,
    message: String,
    extra: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "event" => self.event = value.to_string(),
            "message" => self.message = value.to_string(),
            name => {
                let _ = write!(self.extra, " {name}={value}");
            }
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "event" => self.event = format!("{value:?}"),
            "message" => self.message = format!("{value:?}"),
            name => {
                let _ = write!(self.extra, " {name}={value:?}");
            }
        }
    }
}

impl<S: Subscriber> Layer<S> for ToPython {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        if metadata.target().starts_with(TARGET) {
            tracing::subscriber::Interest::always()
        } else {
            tracing::subscriber::Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        metadata.target().starts_with(TARGET)
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let Some(sink) = SINK.get() else { return };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let line = (level_number(*event.metadata().level()), fields.event, fields.message + &fields.extra);
        if let Ok(tx) = sink.lock() {
            let _ = tx.send(line);
        }
    }
}

fn forward(rx: mpsc::Receiver<Line>, emit: Py<PyAny>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(line) => batch.push(line),
                Err(_) => break,
            }
        }
        // None: the interpreter is shutting down; nobody is left to log to.
        let delivered = Python::try_attach(|py| {
            if let Err(e) = emit.call1(py, (batch,)) {
                e.print(py);
            }
        });
        if delivered.is_none() {
            std::mem::forget(emit);
            return;
        }
    }
}
