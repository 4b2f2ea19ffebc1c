//! Runs the seeds' batch (five tasks; page 2 unsolvable, page 4 never ready)
//! through the engine and the simulated service on the virtual clock, and
//! returns `solved * 100 + dead_lettered * 10 + attempts_of_the_first_dead`.
//! CI builds this for wasm32-unknown-unknown, checks that the module imports
//! nothing (no `env`, no host clock or randomness), and runs it in Node:
//! the expected answer is 324 (3 solved, 2 dead-lettered, 4 attempts).

use core::time::Duration;

use captcha_dlq_core::engine::EngineConfig;
use captcha_dlq_core::sim::{seed_task, Behavior, FakeService, Harness};

pub fn seeds_batch() -> u32 {
    let service = FakeService::new(|page| {
        if page.ends_with("/page/2") {
            Behavior::Unsolvable { after: Duration::from_secs(20) }
        } else if page.ends_with("/page/4") {
            Behavior::NeverReady
        } else {
            Behavior::SolveAfter(Duration::from_secs(20))
        }
    });
    let mut h = Harness::new(EngineConfig::default(), service);
    for i in 0..5 {
        h.submit(seed_task(i), &[]);
    }
    h.run();
    let attempts = h.dead.first().map_or(0, |(_, r)| r.attempts);
    h.solved.len() as u32 * 100 + h.dead.len() as u32 * 10 + attempts
}

#[no_mangle]
pub extern "C" fn probe_seeds_batch() -> u32 {
    seeds_batch()
}

#[cfg(test)]
mod tests {
    #[test]
    fn native_build_gives_the_expected_answer() {
        assert_eq!(super::seeds_batch(), 324);
    }
}
