//! What the engine's integration tests share (`mod support;` in each): an engine for one
//! provider that the test answers itself, the actions it asks for at a moment, and durations.

use std::time::Duration;

use captcha_dlq_core::engine::{Action, EngineConfig};
use captcha_dlq_core::sim::KEY;
use captcha_dlq_core::{Engine, Provider, Secret, Timestamp};

/// `s` seconds.
pub fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// An engine with the captchaai preset's defaults, at a base URL nothing answers: each test
/// plays the service by answering the engine's requests itself.
pub fn engine() -> Engine {
    let provider = Provider::preset("captchaai").unwrap().with_base_url("https://sim.invalid").unwrap();
    Engine::new(provider, Secret::new(KEY), EngineConfig::default())
}

/// Every action the engine asks for at `now`, in order.
pub fn drain(engine: &mut Engine, now: Timestamp) -> Vec<Action> {
    std::iter::from_fn(|| engine.poll_action(now)).collect()
}
