//! Several providers over real HTTP: N tasks (default 1,000) through the `Client` against
//! two in-process mock services of different latency, failure rate and price, once per
//! routing policy, side by side with a client of either provider alone. Prints solved,
//! dead-lettered, where the tasks were solved, HTTP requests per solved task, wall time
//! and spend (as the client's spend report has it).
//!
//! - `quick`: the 2captcha v1 protocol, answers after `--quick-ms` (300), with transport
//!   faults (`--quick-faults`, 8 %: 5xx and resets) and every tenth page unsolvable there;
//!   it reports no cost, so its `price` is configured (0.003).
//! - `steady`: anti-captcha's createTask protocol, answers after `--steady-ms` (1500), no
//!   faults, reports each task's cost (0.002).
//!
//! Polling is scaled down (first poll 300 ms, then every 200 ms) and submissions capped at
//! `--rate` per second per provider.
//!
//! Run: `cargo run --release -p captcha-dlq-bench-native --bin providers -- [--tasks N]`

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use captcha_dlq::core::engine::{EngineConfig, FirstPoll};
use captcha_dlq::{SolveInput, Task};
use captcha_dlq_mock::{Behavior, Faults, Matcher, MockConfig, MockHandle, MockSolver, Outcome, Rule};
use clap::Parser;
use serde_json::{json, Value};

#[derive(Debug, Parser)]
#[command(name = "providers")]
struct Args {
    /// Tasks per run.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=20_000))]
    tasks: u64,
    /// The quick provider answers this long after a submission.
    #[arg(long, default_value_t = 300)]
    quick_ms: u64,
    /// The steady provider answers this long after a submission.
    #[arg(long, default_value_t = 1500)]
    steady_ms: u64,
    /// Share of the quick provider's requests answered with a fault (5xx or a reset).
    #[arg(long, default_value_t = 0.08)]
    quick_faults: f64,
    /// Submissions per second per provider at most.
    #[arg(long, default_value_t = 200.0)]
    rate: f64,
}

const QUICK_PRICE: f64 = 0.003;
const STEADY_COST: f64 = 0.002;

/// One client set-up to measure.
struct Setup {
    name: &'static str,
    /// The `providers` option, or the simple form's options.
    options: Value,
}

#[derive(Debug)]
struct Row {
    name: &'static str,
    solved: u64,
    dead: u64,
    at_quick: u64,
    at_steady: u64,
    requests: u64,
    wall: Duration,
    spend: f64,
}

fn config(args: &Args) -> EngineConfig {
    let mut c = EngineConfig::default();
    c.polling.first_poll_ms = FirstPoll::uniform(300);
    c.polling.interval_ms = 200;
    c.polling.coalesce_ms = 100;
    c.polling.max_polls = 200;
    c.rate.submits_per_second = args.rate;
    c.rate.max_in_flight = u32::try_from(args.tasks).unwrap_or(u32::MAX);
    c.retry.transient_min_delay_ms = 50;
    c.retry.backoff = captcha_dlq::core::engine::Backoff::FullJitter { base_ms: 100, cap_ms: 1000 };
    c.circuit.break_ms = 2000;
    c
}

fn quick_script(args: &Args) -> MockConfig {
    let unsolvable = Rule {
        matcher: Matcher { page_url_contains: Some("/hard/".into()), ..Matcher::default() },
        behavior: Behavior { outcome: Outcome::Unsolvable, solve_after_ms: args.quick_ms, ..Behavior::default() },
    };
    MockConfig {
        default_behavior: Behavior { solve_after_ms: args.quick_ms, ..Behavior::default() },
        rules: vec![unsolvable],
        faults: Faults {
            seed: 20,
            http_5xx: args.quick_faults * 0.6,
            connection_reset: args.quick_faults * 0.4,
            ..Faults::default()
        },
        max_tasks: usize::try_from(args.tasks * 8).unwrap_or(usize::MAX),
        ..MockConfig::default()
    }
}

fn steady_script(args: &Args) -> MockConfig {
    MockConfig {
        default_behavior: Behavior { solve_after_ms: args.steady_ms, ..Behavior::default() },
        task_cost: STEADY_COST,
        max_tasks: usize::try_from(args.tasks * 8).unwrap_or(usize::MAX),
        ..MockConfig::default()
    }
}

fn inputs(n: u64) -> Result<Vec<SolveInput>, String> {
    (0..n)
        .map(|i| {
            let kind = if i % 10 == 0 { "hard" } else { "page" };
            let task = Task::from_json_value(json!({
                "type": "recaptcha_v2",
                "sitekey": "6Le-SITEKEY",
                "page_url": format!("https://example.com/{kind}/{i}"),
            }))
            .map_err(|e| format!("task {i}: {e}"))?;
            Ok(SolveInput {
                task: Ok(task),
                labels: BTreeMap::from([("kind".into(), kind.into())]),
                key: None,
                ttl_ms: None,
            })
        })
        .collect()
}

async fn run_once(args: &Args, setup: &Setup, quick: &MockHandle, steady: &MockHandle) -> Result<Row, String> {
    quick.set_script(quick_script(args))?;
    steady.set_script(steady_script(args))?;
    quick.reset();
    steady.reset();
    let mut builder = captcha_dlq::builder().dlq("memory").config(config(args));
    for (name, value) in setup.options.as_object().into_iter().flatten() {
        builder = builder.option(name, value.clone());
    }
    let client = builder.build().await.map_err(|e| format!("{}: client: {e}", setup.name))?;
    eprintln!("{}: solving {} tasks…", setup.name, args.tasks);
    let start = Instant::now();
    let results = client.solve_many(inputs(args.tasks)?, Some(usize::try_from(args.tasks).unwrap_or(usize::MAX))).await;
    let wall = start.elapsed();
    let spend = client.spend().await.map_err(|e| format!("{}: spend: {e}", setup.name))?;
    client.close().await;
    let solved_at = |name: &str| {
        results.iter().filter(|r| r.outcome.as_ref().is_ok_and(|s| s.provider.as_deref() == Some(name))).count() as u64
    };
    let solved = results.iter().filter(|r| r.outcome.is_ok()).count() as u64;
    let requests: u64 =
        quick.counters().requests.values().sum::<u64>() + steady.counters().requests.values().sum::<u64>();
    Ok(Row {
        name: setup.name,
        solved,
        dead: results.len() as u64 - solved,
        at_quick: solved_at("quick"),
        at_steady: solved_at("steady"),
        requests,
        wall,
        spend: spend.cost,
    })
}

async fn run(args: Args) -> Result<(), String> {
    if !(args.rate.is_finite() && args.rate > 0.0 && (0.0..=1.0).contains(&args.quick_faults)) {
        return Err("--rate must be positive and --quick-faults within 0..=1".into());
    }
    let quick = MockSolver::start(quick_script(&args)).await.map_err(|e| format!("mock: {e}"))?;
    let steady = MockSolver::start(steady_script(&args)).await.map_err(|e| format!("mock: {e}"))?;
    let quick_entry = json!({"provider": "2captcha", "name": "quick", "api_key": "bench-quick",
                             "base_url": quick.base_url(), "price": QUICK_PRICE});
    let steady_entry =
        json!({"provider": "anti-captcha", "name": "steady", "api_key": "bench-steady", "base_url": steady.base_url()});
    let several = |policy: &str| json!({"providers": [quick_entry, steady_entry], "routing": policy});
    let setups = [
        Setup { name: "quick alone", options: json!({"providers": [quick_entry]}) },
        Setup { name: "steady alone", options: json!({"providers": [steady_entry]}) },
        Setup { name: "both, ordered", options: several("ordered") },
        Setup { name: "both, fastest", options: several("fastest") },
        Setup { name: "both, cheapest", options: several("cheapest") },
    ];
    let mut rows = Vec::new();
    for setup in &setups {
        rows.push(run_once(&args, setup, &quick, &steady).await?);
    }
    quick.shutdown().await;
    steady.shutdown().await;

    println!(
        "providers: {} recaptcha_v2 tasks over HTTP on loopback, every tenth unsolvable at quick; quick answers after {} ms \
         with {:.0}% transport faults and costs {QUICK_PRICE} (configured), steady answers after {} ms and reports {STEADY_COST}; \
         at most {} submits/s per provider",
        args.tasks,
        args.quick_ms,
        args.quick_faults * 100.0,
        args.steady_ms,
        args.rate
    );
    println!("| client | solved | dead-lettered | solved at quick / steady | HTTP requests / solved task | wall s | spend | spend / solved task |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} / {} | {:.2} | {:.2} | {:.4} | {:.5} |",
            r.name,
            r.solved,
            r.dead,
            r.at_quick,
            r.at_steady,
            r.requests as f64 / r.solved.max(1) as f64,
            r.wall.as_secs_f64(),
            r.spend,
            r.spend / r.solved.max(1) as f64
        );
    }
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    captcha_dlq_bench_native::exit_on_error("providers", run(Args::parse()).await);
}
