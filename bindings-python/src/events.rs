//! Engine events to Python `logging`: the driver's sink only serializes the event and sends
//! it down a channel, and one thread per client hands batches to a Python callable with the
//! GIL. So the driver never waits for the GIL, and a slow log handler slows only logging.

use std::sync::mpsc;
use std::sync::Mutex;

use captcha_dlq::Event;
use pyo3::prelude::*;

/// Most events handed to Python in one call.
const BATCH: usize = 512;

/// One event as Python receives it: (name, is_warning, message, json).
type Wire = (&'static str, bool, String, String);

/// Starts the forwarding thread; returns the sink to give to the client builder.
pub(crate) fn forwarder(callback: Py<PyAny>) -> std::io::Result<impl Fn(&Event) + Send + Sync + 'static> {
    let (tx, rx) = mpsc::channel::<Wire>();
    std::thread::Builder::new().name("captcha-dlq-events".into()).spawn(move || forward(rx, callback))?;
    let tx = Mutex::new(tx);
    Ok(move |event: &Event| {
        let json = serde_json::to_string(event).unwrap_or_else(|_| "{}".into());
        if let Ok(tx) = tx.lock() {
            let _ = tx.send((event.name(), event.is_warning(), event.to_string(), json));
        }
    })
}

fn forward(rx: mpsc::Receiver<Wire>, callback: Py<PyAny>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(e) => batch.push(e),
                Err(_) => break,
            }
        }
        // None: the interpreter is shutting down; nobody is left to log to.
        let delivered = Python::try_attach(|py| {
            if let Err(e) = callback.call1(py, (batch,)) {
                e.print(py);
            }
        });
        if delivered.is_none() {
            std::mem::forget(callback);
            return;
        }
    }
    let _ = Python::try_attach(move |_py| drop(callback));
}
