//! The client's streams as JavaScript pulls them: `next()` resolves with the next
//! item as a host value, or `null` at the end.
//!
//! A stream is only polled while a `next()` is pending, so a batch never runs ahead
//! of its consumer by more than its concurrency (the client's `SolveStream` starts a
//! task only when polled). `close()` drops the stream — what closing early means
//! (tasks not sent are cancelled, tasks the provider has run on for `recover`) is the
//! client's. An answer's journal entry goes (its receipt is acknowledged) on the JS
//! thread, once the item holding it has become a JS value.

use std::sync::{Arc, Mutex};

use captcha_dlq::{api_values, Receipt, RecoverStream, ReplayStream, SolveStream};
use captcha_dlq::{CollectAll, RecoverCollector, ReplayCollector};
use captcha_dlq_core::support::json_read::Casing;
use futures::StreamExt;
use napi::bindgen_prelude::PromiseRaw;
use napi::Env;
use napi_derive::napi;
use serde_json::Value;
use tokio::sync::watch;

use crate::error;

/// A stream shared between `next()` calls, and a flag that ends a pending `next()`.
struct Slot<S> {
    stream: tokio::sync::Mutex<Option<S>>,
    closed: watch::Sender<bool>,
}

impl<S: futures::Stream + Unpin> Slot<S> {
    fn new(stream: S) -> Arc<Self> {
        Arc::new(Slot { stream: tokio::sync::Mutex::new(Some(stream)), closed: watch::Sender::new(false) })
    }

    /// The next item, or `None` once the stream ended or was closed (it is dropped then).
    /// `observe` sees the stream after each step (to keep a copy of its counts).
    async fn next(&self, observe: impl FnOnce(&S)) -> Option<S::Item> {
        let mut closed = self.closed.subscribe();
        let mut guard = self.stream.lock().await;
        let stream = guard.as_mut()?;
        let item = tokio::select! {
            item = stream.next() => item,
            _ = closed.wait_for(|&c| c) => None,
        };
        observe(stream);
        if item.is_none() {
            *guard = None;
        }
        item
    }

    fn close(&self) {
        self.closed.send_replace(true);
        if let Ok(mut guard) = self.stream.try_lock() {
            *guard = None;
        }
    }
}

/// Resolves with `item` as JS receives it, acknowledging `receipt` once it is converted.
fn hand_over<'env>(
    env: &'env Env,
    work: impl core::future::Future<Output = Result<Option<(Value, Option<Receipt>)>, Value>> + Send + 'static,
) -> napi::Result<PromiseRaw<'env, Option<Value>>> {
    error::settle(env, work, |_, item| {
        Ok(item.map(|(value, receipt)| {
            if let Some(receipt) = receipt {
                receipt.ack();
            }
            value
        }))
    })
}

/// A batch's results in completion order (`api_values::solve_result`).
#[napi]
pub struct NativeStream {
    slot: Arc<Slot<SolveStream>>,
}

impl std::fmt::Debug for NativeStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NativeStream")
    }
}

impl NativeStream {
    pub fn new(stream: SolveStream) -> Self {
        NativeStream { slot: Slot::new(stream) }
    }
}

#[napi]
impl NativeStream {
    /// `{index, id, key, labels, ok, solution | error}`, or `null` at the end.
    #[napi(ts_return_type = "Promise<any>")]
    pub fn next<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Option<Value>>> {
        let slot = self.slot.clone();
        hand_over(env, async move {
            Ok(slot.next(|_| {}).await.map(|r| (api_values::solve_result(&r, Casing::Camel), None)))
        })
    }

    /// Stops the batch: what is not finished is cancelled.
    #[napi]
    pub fn close(&self) {
        self.slot.close();
    }
}

/// A replay's or a recovery's stream, its counts so far, and (when the caller collects) what
/// `replay()` / `recover()` return: what [`NativeReplay`] and [`NativeRecover`] share.
struct Collecting<C: CollectAll> {
    slot: Arc<Slot<C::Stream>>,
    counts: Arc<Mutex<C::Counts>>,
    collected: Option<Arc<Mutex<C>>>,
}

impl<C> Collecting<C>
where
    C: CollectAll + Send,
    C::Stream: Send,
    C::Item: Send,
    C::Counts: Send,
{
    fn new(stream: C::Stream, collect: bool) -> Self {
        let counts = Arc::new(Mutex::new(C::counts(&stream)));
        Collecting { slot: Slot::new(stream), counts, collected: collect.then(|| Arc::new(Mutex::new(C::default()))) }
    }

    fn next<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Option<Value>>> {
        let (slot, counts, collected) = (self.slot.clone(), self.counts.clone(), self.collected.clone());
        hand_over(env, async move {
            let item = slot
                .next(|stream| {
                    if let Ok(mut c) = counts.lock() {
                        *c = C::counts(stream);
                    }
                })
                .await;
            match item {
                None => Ok(None),
                Some(Err(e)) => Err(error::payload(&e)),
                Some(Ok(item)) => {
                    let mut keep = collected.as_ref().and_then(|c| c.lock().ok());
                    Ok(Some(C::hand_over(item, Casing::Camel, keep.as_deref_mut())))
                }
            }
        })
    }

    fn counts(&self) -> Value {
        api_values::value(&self.counts.lock().map(|c| *c).unwrap_or_default(), Casing::Camel)
    }

    fn result(&self) -> Option<Value> {
        let mut collected = self.collected.as_ref()?.lock().ok()?;
        let counts = self.counts.lock().map(|c| *c).unwrap_or_default();
        Some(std::mem::take(&mut *collected).result(counts, Casing::Camel))
    }
}

/// A replay's outcomes as they come (`api_values::replay_item`), and its report.
#[napi]
pub struct NativeReplay {
    inner: Collecting<ReplayCollector>,
    cancel: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for NativeReplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NativeReplay")
    }
}

impl NativeReplay {
    pub fn new(stream: ReplayStream, collect: bool) -> Self {
        let cancel = stream.canceller();
        NativeReplay { inner: Collecting::new(stream, collect), cancel }
    }
}

#[napi]
impl NativeReplay {
    /// `{id, labels, outcome, solution?, record?, parked?, reason?, why?, error?}`, or `null`.
    #[napi(ts_return_type = "Promise<any>")]
    pub fn next<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Option<Value>>> {
        self.inner.next(env)
    }

    /// The counts so far; final once `next()` answered `null`.
    #[napi(ts_return_type = "any")]
    pub fn report(&self) -> Value {
        self.inner.counts()
    }

    /// What `replay()` returns (`api_values::replay_result`), once `next()` answered `null`; `null`
    /// when the stream was not opened to collect.
    #[napi(ts_return_type = "any")]
    pub fn result(&self) -> Option<Value> {
        self.inner.result()
    }

    /// Stops starting records; those already started finish and are reported.
    #[napi]
    pub fn cancel(&self) {
        self.cancel.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A recovery's tasks as they end (`api_values::recover_item`), and its summary.
#[napi]
pub struct NativeRecover {
    inner: Collecting<RecoverCollector>,
}

impl std::fmt::Debug for NativeRecover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NativeRecover")
    }
}

impl NativeRecover {
    pub fn new(stream: RecoverStream, collect: bool) -> Self {
        NativeRecover { inner: Collecting::new(stream, collect) }
    }
}

#[napi]
impl NativeRecover {
    /// `{id, key, labels, ok, solution | error}`, or `null` at the end.
    #[napi(ts_return_type = "Promise<any>")]
    pub fn next<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Option<Value>>> {
        self.inner.next(env)
    }

    /// What `recover()` returns (`api_values::recover_result`), once `next()` answered `null`; `null`
    /// when the stream was not opened to collect.
    #[napi(ts_return_type = "any")]
    pub fn result(&self) -> Option<Value> {
        self.inner.result()
    }

    /// `{found, skippedLive, solved, deadLettered}` so far; final once `next()` answered `null`.
    #[napi(ts_return_type = "any")]
    pub fn summary(&self) -> Value {
        self.inner.counts()
    }
}
