//! The client's streams (solve, replay, recover) as Python objects: `next()` blocks
//! (interruptibly), `next_async()` is an awaitable, and nothing finished is ever dropped
//! on the way.
//!
//! A stream is polled only when Python asks for the next item, so it never runs ahead of
//! its consumer by more than its concurrency. If Ctrl-C interrupts a blocking `next()`
//! just as an item finished, the item is kept (`ready()` hands it over); answers cross
//! with their receipts ([`crate::handover`]), acknowledged when Python takes them.
//! Closing (or dropping) a stream drops the client's stream, which cancels what it had
//! not finished: tasks not yet sent are dead-lettered as `Cancelled`, tasks the provider
//! already has run on and wait in the journal for `recover()`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use captcha_dlq::core::dlq::replay::ReplayReport;
use captcha_dlq::core::support::json_read::Casing;
use captcha_dlq::{
    api_values, Error, Receipt, RecoverItem, RecoverStream, ReplayItem, ReplayStream, SolveResult, SolveStream,
};
use captcha_dlq::{CollectAll, RecoverCollector, RecoverSummary, ReplayCollector};
use futures::stream::{Stream, StreamExt};
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::handover::{hand_over, NativeItem};
use crate::wait::{runtime, wait, Waited};

/// An item as JSON text and the receipt of the answer it carries (if any), or its error.
type Converted = Result<(String, Option<Receipt>), Error>;

/// What `replay()` / `recover()` return, kept as the items are handed over (only when they
/// asked: a stream iterated item by item keeps nothing).
/// The stream's counts are copied in after each item, as the stream itself is dropped once
/// Python has taken its last item.
#[derive(Default)]
enum Collected {
    #[default]
    Nothing,
    Replay(ReplayCollector, ReplayReport),
    Recover(RecoverCollector, RecoverSummary),
}

/// What the three stream objects share: the client's stream and what was taken from it.
pub(crate) struct Shared<S: Stream> {
    stream: tokio::sync::Mutex<Option<S>>,
    /// Finished while a blocking `next()` was being interrupted, not yet handed over.
    stash: Mutex<VecDeque<S::Item>>,
    /// Every item handed over, when the caller collects them all (`solve_many`).
    kept: Option<Mutex<Vec<String>>>,
    convert: fn(S::Item, Option<&Mutex<Collected>>) -> Converted,
    collected: Option<Mutex<Collected>>,
    /// A summary of the stream (a replay's report), refreshed after each item (into the
    /// collected result too).
    observe: fn(&S, Option<&Mutex<Collected>>) -> Option<String>,
    observed: Mutex<Option<String>>,
}

impl<S> Shared<S>
where
    S: Stream + Unpin + Send + 'static,
    S::Item: Send + 'static,
{
    fn new(
        stream: S,
        keep: bool,
        convert: fn(S::Item, Option<&Mutex<Collected>>) -> Converted,
        observe: fn(&S, Option<&Mutex<Collected>>) -> Option<String>,
    ) -> Arc<Self> {
        Shared::collecting(stream, keep, convert, observe, None)
    }

    fn collecting(
        stream: S,
        keep: bool,
        convert: fn(S::Item, Option<&Mutex<Collected>>) -> Converted,
        observe: fn(&S, Option<&Mutex<Collected>>) -> Option<String>,
        collected: Option<Collected>,
    ) -> Arc<Self> {
        let observed = Mutex::new(observe(&stream, None));
        Arc::new(Shared {
            stream: tokio::sync::Mutex::new(Some(stream)),
            stash: Mutex::new(VecDeque::new()),
            kept: keep.then(|| Mutex::new(Vec::new())),
            convert,
            collected: collected.map(Mutex::new),
            observe,
            observed,
        })
    }

    /// The next item of the stream; `None` once it ended or was closed.
    async fn fetch(self: Arc<Self>) -> Option<S::Item> {
        let mut guard = self.stream.lock().await;
        let stream = guard.as_mut()?;
        let item = stream.next().await;
        if let Some(summary) = (self.observe)(stream, self.collected.as_ref()) {
            if let Ok(mut observed) = self.observed.lock() {
                *observed = Some(summary);
            }
        }
        item
    }

    /// Hands an item over to Python: its answer is acknowledged, and kept if asked.
    fn hand(&self, item: S::Item) -> PyResult<String> {
        let (json, receipt) = (self.convert)(item, self.collected.as_ref()).map_err(|e| to_py(&e))?;
        let json = hand_over(json, receipt);
        if let Some(kept) = &self.kept {
            if let Ok(mut kept) = kept.lock() {
                kept.push(json.clone());
            }
        }
        Ok(json)
    }

    fn unstash(&self) -> Option<S::Item> {
        self.stash.lock().ok().and_then(|mut s| s.pop_front())
    }

    fn next_blocking(self: &Arc<Self>, py: Python<'_>) -> PyResult<Option<String>> {
        if let Some(item) = self.unstash() {
            return self.hand(item).map(Some);
        }
        match wait(py, self.clone().fetch())? {
            Waited::Done(None) => Ok(None),
            Waited::Done(Some(item)) => self.hand(item).map(Some),
            Waited::Interrupted(e, finished) => {
                if let (Some(Some(item)), Ok(mut stash)) = (finished, self.stash.lock()) {
                    stash.push_back(item);
                }
                Err(e)
            }
        }
    }

    /// Takes every item to the end (handing each over as it comes).
    fn run_blocking(self: &Arc<Self>, py: Python<'_>) -> PyResult<()> {
        while let Some(item) = self.unstash() {
            self.hand(item)?;
        }
        let this = self.clone();
        let run = async move {
            while let Some(item) = this.clone().fetch().await {
                this.hand(item)?;
            }
            Ok(())
        };
        match wait(py, run)? {
            Waited::Done(result) => result,
            Waited::Interrupted(e, _) => Err(e),
        }
    }

    fn next_awaitable<'py>(self: &Arc<Self>, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let this = self.clone();
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let item = match this.unstash() {
                Some(item) => Some(item),
                None => this.clone().fetch().await,
            };
            match item {
                None => Ok(None),
                Some(item) => {
                    let (json, receipt) = (this.convert)(item, this.collected.as_ref()).map_err(|e| to_py(&e))?;
                    Ok(Some(NativeItem::new(json, receipt)))
                }
            }
        })
    }

    /// Items that finished while Python was interrupted, handed over now.
    fn ready(&self) -> PyResult<Vec<String>> {
        let items: Vec<S::Item> = self.stash.lock().map(|mut s| s.drain(..).collect()).unwrap_or_default();
        items.into_iter().map(|item| self.hand(item)).collect()
    }

    fn taken(&self) -> Vec<String> {
        self.kept.as_ref().and_then(|k| k.lock().ok().map(|k| k.clone())).unwrap_or_default()
    }

    /// What was collected, taken out (the stream keeps nothing after); `None` when this
    /// stream does not collect.
    fn take_collected(&self) -> Option<Collected> {
        Some(std::mem::take(&mut *self.collected.as_ref()?.lock().ok()?))
    }

    fn observed(&self) -> Option<String> {
        self.observed.lock().ok().and_then(|o| o.clone())
    }

    /// Drops the client's stream (see the module documentation). Items stashed and not
    /// handed over are dropped unacknowledged: their answers stay in the journal.
    fn close(self: &Arc<Self>) {
        if let Ok(mut stash) = self.stash.lock() {
            stash.clear();
        }
        match self.stream.try_lock() {
            Ok(mut guard) => drop(guard.take()),
            Err(_) => {
                // An awaitable still holds it: close once that one lets go.
                let this = self.clone();
                runtime().spawn(async move { drop(this.stream.lock().await.take()) });
            }
        }
    }
}

fn solve_item(r: SolveResult, _: Option<&Mutex<Collected>>) -> Converted {
    let json = api_values::solve_result(&r, Casing::Snake).to_string();
    Ok((json, r.receipt))
}

fn replay_item(item: Result<ReplayItem, Error>, collected: Option<&Mutex<Collected>>) -> Converted {
    let mut guard = collected.and_then(|c| c.lock().ok());
    let keep = match guard.as_deref_mut() {
        Some(Collected::Replay(keep, _)) => Some(keep),
        _ => None,
    };
    let (value, receipt) = ReplayCollector::hand_over(item?, Casing::Snake, keep);
    Ok((value.to_string(), receipt))
}

fn recover_item(item: Result<RecoverItem, Error>, collected: Option<&Mutex<Collected>>) -> Converted {
    let mut guard = collected.and_then(|c| c.lock().ok());
    let keep = match guard.as_deref_mut() {
        Some(Collected::Recover(keep, _)) => Some(keep),
        _ => None,
    };
    let (value, receipt) = RecoverCollector::hand_over(item?, Casing::Snake, keep);
    Ok((value.to_string(), receipt))
}

fn nothing<S>(_: &S, _: Option<&Mutex<Collected>>) -> Option<String> {
    None
}

fn replay_report(s: &ReplayStream, collected: Option<&Mutex<Collected>>) -> Option<String> {
    let report = s.report();
    if let Some(Ok(mut collected)) = collected.map(|c| c.lock()) {
        if let Collected::Replay(_, counts) = &mut *collected {
            *counts = report;
        }
    }
    Some(api_values::value(&report, Casing::Snake).to_string())
}

fn recover_summary(s: &RecoverStream, collected: Option<&Mutex<Collected>>) -> Option<String> {
    let summary = s.summary();
    if let Some(Ok(mut collected)) = collected.map(|c| c.lock()) {
        if let Collected::Recover(_, counts) = &mut *collected {
            *counts = summary;
        }
    }
    Some(api_values::value(&summary, Casing::Snake).to_string())
}

/// Results of `solve_iter` / `solve_many`, in completion order.
#[pyclass(module = "captcha_dlq._native", frozen)]
pub(crate) struct NativeSolveStream(Arc<Shared<SolveStream>>);

impl NativeSolveStream {
    pub(crate) fn new(stream: SolveStream, keep: bool) -> Self {
        NativeSolveStream(Shared::new(stream.with_receipts(), keep, solve_item, nothing))
    }
}

#[pymethods]
impl NativeSolveStream {
    fn next(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.0.next_blocking(py)
    }
    fn next_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.0.next_awaitable(py)
    }
    fn run(&self, py: Python<'_>) -> PyResult<()> {
        self.0.run_blocking(py)
    }
    fn ready(&self) -> PyResult<Vec<String>> {
        self.0.ready()
    }
    fn taken(&self) -> Vec<String> {
        self.0.taken()
    }
    fn close(&self) {
        self.0.close();
    }
}

impl Drop for NativeSolveStream {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Outcomes of `replay_iter` / `replay`; `report()` is final once the stream has ended.
#[pyclass(module = "captcha_dlq._native", frozen)]
pub(crate) struct NativeReplayStream {
    shared: Arc<Shared<ReplayStream>>,
    canceller: Arc<std::sync::atomic::AtomicBool>,
}

impl NativeReplayStream {
    /// With `collect`, the stream also keeps what `replay()` returns (`result()`).
    pub(crate) fn new(stream: ReplayStream, collect: bool) -> Self {
        let canceller = stream.canceller();
        let collected = collect.then(|| Collected::Replay(ReplayCollector::default(), stream.report()));
        NativeReplayStream {
            shared: Shared::collecting(stream, false, replay_item, replay_report, collected),
            canceller,
        }
    }
}

#[pymethods]
impl NativeReplayStream {
    fn next(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.shared.next_blocking(py)
    }
    fn next_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.shared.next_awaitable(py)
    }
    fn ready(&self) -> PyResult<Vec<String>> {
        self.shared.ready()
    }
    fn report(&self) -> String {
        self.shared.observed().unwrap_or_else(|| "{}".into())
    }
    /// What `replay()` returns (`api_values::replay_result`, JSON), once the stream has ended.
    fn result(&self) -> Option<String> {
        let Collected::Replay(collected, report) = self.shared.take_collected()? else { return None };
        Some(collected.result(report, Casing::Snake).to_string())
    }
    /// Stops starting records; those already started finish and are still yielded.
    fn cancel(&self) {
        self.canceller.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    fn close(&self) {
        self.shared.close();
    }
}

impl Drop for NativeReplayStream {
    fn drop(&mut self) {
        self.shared.close();
    }
}

/// Recovered tasks of `recover_iter` / `recover`; `summary()` is final once it has ended.
#[pyclass(module = "captcha_dlq._native", frozen)]
pub(crate) struct NativeRecoverStream(Arc<Shared<RecoverStream>>);

impl NativeRecoverStream {
    /// With `collect`, the stream also keeps what `recover()` returns (`result()`).
    pub(crate) fn new(stream: RecoverStream, collect: bool) -> Self {
        let collected = collect.then(|| Collected::Recover(RecoverCollector::default(), stream.summary()));
        NativeRecoverStream(Shared::collecting(stream, false, recover_item, recover_summary, collected))
    }
}

#[pymethods]
impl NativeRecoverStream {
    fn next(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.0.next_blocking(py)
    }
    fn next_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.0.next_awaitable(py)
    }
    fn ready(&self) -> PyResult<Vec<String>> {
        self.0.ready()
    }
    fn summary(&self) -> String {
        self.0.observed().unwrap_or_else(|| "{}".into())
    }
    /// What `recover()` returns (`api_values::recover_result`, JSON), once the stream has ended.
    fn result(&self) -> Option<String> {
        let Collected::Recover(collected, summary) = self.0.take_collected()? else { return None };
        Some(collected.result(summary, Casing::Snake).to_string())
    }
    fn close(&self) {
        self.0.close();
    }
}

impl Drop for NativeRecoverStream {
    fn drop(&mut self) {
        self.0.close();
    }
}
