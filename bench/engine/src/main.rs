//! Engine cost at scale, on the virtual-time simulator (no network, no sleeping):
//!
//! - **CPU and allocations per task**: JOBS jobs (default 100,000) run to completion
//!   against the simulated service (1 in 10 unsolvable, retried up to 4 attempts), driven
//!   as the engine's calling contract says: every action is performed after each submit
//!   (as the client's driver does after each command) and after the answers due at each
//!   instant. The
//!   process CPU time covers engine and simulator; the time and allocations inside the
//!   engine's own calls are counted apart, so the engine's share is printed alone.
//! - **Heap per job, the engine alone**: an engine holding JOBS accepted jobs (journaled,
//!   waiting for a submission slot) and then JOBS jobs in flight (submitted, accepted by
//!   the service, waiting for their first poll), each compared with the same engine empty.
//!   Nothing else is alive while it is measured: the driver keeps no log, every request is
//!   answered at once by the bench itself (no simulated task table), and every task is
//!   built while counting, so its heap counts as the engine's.
//!
//! Run: `cargo run --release -p captcha-dlq-bench-engine [JOBS]`

use std::alloc::System;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use captcha_dlq_core::engine::{Action, Engine, EngineConfig, KindMs, RequestId};
use captcha_dlq_core::http::{HttpResponse, Secret, TransportError};
use captcha_dlq_core::provider::Provider;
use captcha_dlq_core::sim::{seed_task, Behavior, FakeService, T0};
use captcha_dlq_core::task::ValidTask;
use captcha_dlq_core::Timestamp;
use cpu_time::ProcessTime;
use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes requested from the allocator and not yet returned.
fn live_bytes() -> i64 {
    let s = GLOBAL.stats();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
}

/// Allocations not yet freed.
fn live_blocks() -> i64 {
    let s = GLOBAL.stats();
    s.allocations as i64 - s.deallocations as i64
}

fn engine(config: EngineConfig) -> Engine {
    let provider = Provider::preset("captchaai")
        .and_then(|p| p.with_base_url("https://sim.invalid"))
        .expect("the captchaai preset takes a base URL");
    Engine::new(provider, Secret::new("bench-key-0123456789abcdef0123456789"), config)
}

fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([("batch".to_string(), "bench".to_string())])
}

/// The engine, with the wall time and allocations of its own calls counted apart from the
/// simulator's.
struct Timed {
    engine: Engine,
    busy: Duration,
    allocations: u64,
}

impl Timed {
    fn call<R>(&mut self, f: impl FnOnce(&mut Engine) -> R) -> R {
        let allocations = GLOBAL.stats().allocations;
        let start = Instant::now();
        let r = f(&mut self.engine);
        self.busy += start.elapsed();
        self.allocations += (GLOBAL.stats().allocations - allocations) as u64;
        r
    }
}

/// What a run to completion did.
struct Run {
    solved: usize,
    dead: usize,
    requests: usize,
    virtual_time: Duration,
}

/// Drives the engine against the simulated service as `sim::Harness` does (every request
/// answered after `latency`), without keeping any log. Not inlined, so that profiles can
/// tell it from the heap measurement.
#[inline(never)]
fn run_to_completion(t: &mut Timed, service: &mut FakeService, tasks: Vec<ValidTask>, latency: Duration) -> Run {
    let mut now = T0;
    // The latency is constant and the clock never goes back: answers arrive in send order.
    let mut in_transit: VecDeque<(Timestamp, RequestId, Result<HttpResponse, TransportError>)> = VecDeque::new();
    let mut run = Run { solved: 0, dead: 0, requests: 0, virtual_time: Duration::ZERO };
    // Performs what the engine asks until it has nothing more (the engine's calling contract):
    // after each submit, as the driver does after each command, and after the answers due at
    // the same (virtual) instant.
    let mut perform = |t: &mut Timed, run: &mut Run, in_transit: &mut VecDeque<_>, now: Timestamp| {
        while let Some(action) = t.call(|e| e.poll_action(now)) {
            match action {
                Action::Send { request_id, request } => {
                    let answer = service.handle(&request, now);
                    run.requests += 1;
                    in_transit.push_back((now.add(latency), request_id, answer));
                }
                Action::Journal { gates: Some(job), .. } => {
                    t.call(|e| e.journaled(job, now));
                }
                Action::Solved { .. } => run.solved += 1,
                Action::DeadLetter { .. } => run.dead += 1,
                // The bench's engine has no fleet ledger: its lanes never ask for a sync.
                Action::Journal { gates: None, .. } | Action::Event(_) | Action::FleetSync(_) => {}
            }
        }
    };
    for task in tasks {
        let labels = labels();
        t.call(|e| e.submit(task, labels, None, now)).expect("the seed task is valid");
        perform(t, &mut run, &mut in_transit, now);
    }
    loop {
        perform(t, &mut run, &mut in_transit, now);
        let next = match (t.call(|e| e.poll_timeout()), in_transit.front().map(|(at, _, _)| *at)) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(next) => next,
                None => break,
            },
        };
        now = now.max(next);
        while in_transit.front().is_some_and(|(at, _, _)| *at <= now) {
            let Some((_, rid, answer)) = in_transit.pop_front() else { break };
            t.call(|e| e.handle_response(rid, answer, now));
        }
    }
    run.virtual_time = now.since(T0);
    run
}

/// Heap of an engine with `jobs` accepted jobs, then with `jobs` jobs in flight, less the
/// same engine empty: (bytes, blocks) per job for each.
#[inline(never)]
fn engine_heap(jobs: usize) -> ((f64, f64), (f64, f64)) {
    let mut config = EngineConfig::default();
    config.rate.submits_per_second = 1.0e6;
    config.rate.max_in_flight = u32::try_from(jobs).unwrap_or(u32::MAX);
    // Nothing is polled or times out while the jobs are submitted (one a millisecond).
    config.polling.first_poll_ms = KindMs::uniform(24 * 3600 * 1000);
    config.polling.give_up_ms = KindMs::uniform(48 * 3600 * 1000);
    config.retry.task_deadline_ms = 72 * 3600 * 1000;
    let (bytes_before, blocks_before) = (live_bytes(), live_blocks());
    let mut e = engine(config);
    let empty = (live_bytes(), live_blocks());

    // Accepted: journaled, waiting at the lane (the store is "down", so nothing is sent).
    e.set_store_available(false);
    let now = T0;
    for n in 0..jobs {
        let job = e.submit(seed_task(n), labels(), None, now).expect("the seed task is valid");
        while let Some(action) = e.poll_action(now) {
            if let Action::Journal { gates: Some(gated), .. } = action {
                assert_eq!(gated, job);
                e.journaled(job, now);
            }
        }
    }
    assert_eq!(e.job_count(), jobs);
    let accepted = (live_bytes(), live_blocks());

    // In flight: every submission answered at once with a task id.
    e.set_store_available(true);
    let mut now = now;
    let mut next_id = 71_823_456u64;
    while e.in_flight() < jobs {
        while let Some(action) = e.poll_action(now) {
            if let Action::Send { request_id, .. } = action {
                next_id += 1;
                let answer = HttpResponse::new(200, format!("{{\"status\":1,\"request\":\"{next_id}\"}}"));
                e.handle_response(request_id, Ok(answer), now);
            }
        }
        match e.poll_timeout() {
            Some(next) if next > now => now = next,
            _ => break,
        }
    }
    assert_eq!(e.in_flight(), jobs, "every job in flight");
    let in_flight = (live_bytes(), live_blocks());
    let per =
        |(bytes, blocks): (i64, i64)| ((bytes - empty.0) as f64 / jobs as f64, (blocks - empty.1) as f64 / jobs as f64);
    println!("(an empty engine holds {} bytes in {} blocks)", empty.0 - bytes_before, empty.1 - blocks_before);
    let result = (per(accepted), per(in_flight));
    drop(e);
    result
}

fn main() {
    let jobs: usize = match std::env::args().nth(1) {
        None => 100_000,
        Some(a) => match a.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("usage: captcha-dlq-bench-engine [JOBS]   (JOBS: a positive number, default 100000)");
                std::process::exit(2);
            }
        },
    };

    let ((accepted_bytes, accepted_blocks), (flight_bytes, flight_blocks)) = engine_heap(jobs);

    let mut config = EngineConfig::default();
    config.rate.submits_per_second = 1.0e6;
    config.rate.max_in_flight = u32::try_from(jobs).unwrap_or(u32::MAX);
    let mut service = FakeService::new(|page| {
        if page.ends_with('7') {
            Behavior::Unsolvable { after: Duration::from_secs(20) }
        } else {
            Behavior::SolveAfter(Duration::from_secs(30))
        }
    });
    service.keep_log = false;
    let mut timed = Timed { engine: engine(config), busy: Duration::ZERO, allocations: 0 };
    // Built beforehand, as a caller would hand them over: reading tasks is not the engine's cost.
    let tasks: Vec<ValidTask> = (0..jobs).map(seed_task).collect();
    let allocations = GLOBAL.stats().allocations;
    let cpu = ProcessTime::now();
    let wall = Instant::now();
    let run = run_to_completion(&mut timed, &mut service, tasks, Duration::from_millis(200));
    let cpu = cpu.elapsed();
    let wall = wall.elapsed();
    let allocations = GLOBAL.stats().allocations - allocations;
    // The engine's share of the process CPU: its calls' share of the wall time.
    let engine_cpu = cpu.mul_f64(timed.busy.as_secs_f64() / wall.as_secs_f64().max(1e-9));
    let per_task_us = |d: Duration| d.as_secs_f64() * 1e6 / jobs as f64;

    println!(
        "engine benchmark: {jobs} reCAPTCHA v2 jobs, 1 in 10 unsolvable (up to 4 attempts), one provider, virtual time"
    );
    println!("| metric | value |");
    println!("|---|---|");
    println!("| CPU per task, engine + simulated service (process CPU) | {:.2} µs |", per_task_us(cpu));
    println!("| CPU per task, engine calls alone | {:.2} µs |", per_task_us(engine_cpu));
    println!("| allocations per task, engine + simulated service | {:.1} |", allocations as f64 / jobs as f64);
    println!("| allocations per task, engine calls alone | {:.1} |", timed.allocations as f64 / jobs as f64);
    println!("| engine heap per accepted job (journaled, waiting to be sent) | {accepted_bytes:.0} B in {accepted_blocks:.1} blocks |");
    println!("| engine heap per in-flight job (submitted, waiting for its poll) | {flight_bytes:.0} B in {flight_blocks:.1} blocks |");
    println!("| solved / dead-lettered | {} / {} |", run.solved, run.dead);
    println!("| requests (submits + polls, polls batched by 100) | {} |", run.requests);
    println!("| virtual time simulated | {:.0} s |", run.virtual_time.as_secs_f64());
    println!(
        "\nHeap is bytes requested from the allocator (the allocator's own overhead per block is not included). \
         Engine call time is wall time inside the engine's methods, scaled to the process CPU time."
    );
}
