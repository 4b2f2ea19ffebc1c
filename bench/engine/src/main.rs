//! Engine cost at scale: CPU time per task and heap bytes per in-flight job
//! for 100,000 jobs, on the virtual-time simulator (no network, no sleeping),
//! so the numbers are the engine's own (plus the simulated service's).
//!
//! Run: `cargo run --release -p captcha-dlq-bench-engine [JOBS]`

use std::alloc::System;
use std::time::Duration;

use captcha_dlq_core::engine::EngineConfig;
use captcha_dlq_core::sim::{seed_task, Behavior, FakeService, Harness};
use cpu_time::ProcessTime;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn main() {
    let jobs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let tasks: Vec<_> = (0..jobs).map(seed_task).collect();

    let mut config = EngineConfig::default();
    config.rate.submits_per_second = 1.0e6;
    config.rate.max_in_flight = u32::try_from(jobs).unwrap_or(u32::MAX);
    let service = FakeService::new(|page| {
        if page.ends_with('7') {
            Behavior::Unsolvable { after: Duration::from_secs(20) }
        } else {
            Behavior::SolveAfter(Duration::from_secs(30))
        }
    });
    let mut service = service;
    service.keep_log = false;
    let mut h = Harness::new(config, service);
    h.latency = Duration::from_millis(200);
    h.keep_logs = false;

    // Memory: the engine's heap growth once every job is accepted and submitted (in flight).
    let region = Region::new(GLOBAL);
    let cpu = ProcessTime::now();
    for task in tasks {
        h.submit(task, &[("batch", "bench")]);
    }
    h.run_until(Some(h.now.add(Duration::from_secs(10))));
    let in_flight = h.engine.in_flight();
    let stats = region.change();
    let engine_and_sim_bytes = stats.bytes_allocated as i64 - stats.bytes_deallocated as i64;
    let cpu_to_in_flight = cpu.elapsed();

    h.run();
    let cpu_total = cpu.elapsed();
    let requests = h.requests;

    println!("engine benchmark: {jobs} jobs (1 in 10 unsolvable up to 4 attempts), virtual time");
    println!("| metric | value |");
    println!("|---|---|");
    println!("| jobs in flight after 10 s | {in_flight} |");
    println!(
        "| heap growth while in flight (engine + simulated service's task table) | {:.1} MiB |",
        engine_and_sim_bytes as f64 / 1048576.0
    );
    println!("| bytes per in-flight job | {} |", engine_and_sim_bytes / in_flight.max(1) as i64);
    println!("| CPU to accept and submit all | {:.3} s |", cpu_to_in_flight.as_secs_f64());
    println!("| CPU total (run to completion) | {:.3} s |", cpu_total.as_secs_f64());
    println!("| CPU per task | {:.2} µs |", cpu_total.as_secs_f64() * 1e6 / jobs as f64);
    println!("| solved / dead-lettered | {} / {} |", h.solved.len(), h.dead.len());
    println!("| requests (submits + polls, polls batched by 100) | {requests} |");
    println!("| virtual time simulated | {:.0} s |", h.now.since(captcha_dlq_core::sim::T0).as_secs_f64());
}
