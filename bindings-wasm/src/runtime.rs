//! The browser runtime under the orchestration: `Date.now()` as the clock,
//! `setTimeout` (gloo-timers) as timers, `spawn_local` to run the driver on
//! the JS event loop, and `crypto.getRandomValues` for the engine's seed.
//! All are globals of pages, dedicated workers and service workers alike.

use core::time::Duration;

use captcha_dlq_client::core::Timestamp;
use captcha_dlq_client::{BoxFuture, Runtime};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `crypto.getRandomValues` of whatever global this runs in.
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues)]
    fn get_random_values(buffer: &mut [u8]);
}

/// The longest single `setTimeout` (2^31 − 1 ms): a longer delay fires at once in
/// browsers. A longer sleep ends early; the driver then simply re-arms.
const LONGEST_TIMEOUT_MS: u32 = i32::MAX as u32;

/// The current time as the engine counts it.
pub fn now() -> Timestamp {
    let ms = js_sys::Date::now();
    Timestamp::from_unix_millis(if ms.is_finite() && ms > 0.0 { ms as u64 } else { 0 })
}

/// Random bytes from the browser's CSPRNG.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    get_random_values(&mut bytes);
    bytes
}

/// The runtime of a page, worker or service worker.
#[derive(Clone, Copy, Debug, Default)]
pub struct BrowserRuntime;

impl Runtime for BrowserRuntime {
    fn now(&self) -> Timestamp {
        now()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        let ms = u32::try_from(duration.as_millis()).unwrap_or(u32::MAX).min(LONGEST_TIMEOUT_MS);
        Box::pin(gloo_timers::future::TimeoutFuture::new(ms))
    }

    fn spawn(&self, future: BoxFuture<'static, ()>) {
        wasm_bindgen_futures::spawn_local(future);
    }

    fn random_seed(&self) -> u64 {
        u64::from_le_bytes(random_bytes())
    }
}
