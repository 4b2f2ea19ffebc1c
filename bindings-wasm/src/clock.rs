//! Time for the engine (`Date.now()`) and sleeping (a JS timer), both through
//! `globalThis`, so they work in windows, workers and service workers.

use core::time::Duration;

use captcha_dlq_core::Timestamp;

/// The wall-clock time as the engine counts it.
pub(crate) fn now() -> Timestamp {
    let ms = js_sys::Date::now();
    // Date.now() is a non-negative integer number of ms; clamp anything odd.
    let ms = if ms.is_finite() && ms > 0.0 { ms as u64 } else { 0 };
    Timestamp::from_unix_millis(ms)
}

/// Resolves after `d` (capped to what `setTimeout` accepts: about 24.8 days).
pub(crate) async fn sleep(d: Duration) {
    let ms = u32::try_from(d.as_millis()).unwrap_or(u32::MAX).min(i32::MAX as u32);
    gloo_timers::future::TimeoutFuture::new(ms).await;
}
