//! The cost of one `solve` round trip when the service answers at once: the Rust
//! client's own overhead per task (submit, poll, hand-over, journal in memory), at
//! 1, 100 and 1,000 tasks in flight, over real HTTP on loopback against the
//! in-process mock, which solves every task on submission. The Python and Node
//! packages are measured against the same workload to give the bindings' cost
//! per call (issue 18, item 6); this is the Rust row.
//!
//! Run: `cargo run --release -p captcha-dlq-bench-native --bin overhead -- [--tasks N]`

use std::time::{Duration, Instant};

use captcha_dlq::core::engine::{EngineConfig, FirstPoll};
use captcha_dlq::Task;
use captcha_dlq_mock::{Behavior, MockConfig, MockSolver};
use clap::Parser;
use cpu_time::ProcessTime;
use futures::stream::{self, StreamExt};
use serde_json::json;

/// Solve tasks that are ready at once, at several concurrencies; one row each.
#[derive(Debug, Parser)]
#[command(name = "overhead")]
struct Args {
    /// Tasks per concurrency level.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    tasks: u64,
    /// Concurrency levels (tasks in flight at once), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,100,1000")]
    concurrency: Vec<usize>,
    /// Base URL of a mock solver running in its own process (as the Python and Node benches
    /// use it), e.g. `captcha-dlq-mock --port 0 --config '{"max_tasks":100000}'`; without it
    /// the mock runs in this process and shares its threads.
    #[arg(long)]
    mock_url: Option<String>,
}

/// The engine polls 1 ms after submission and every millisecond after, with no rate
/// limit: what is measured is the client, not its schedule.
fn config(concurrency: usize) -> EngineConfig {
    let mut c = EngineConfig::default();
    c.polling.first_poll_ms = FirstPoll::uniform(1);
    c.polling.interval_ms = 1;
    c.polling.coalesce_ms = 0;
    c.rate.submits_per_second = 1.0e6;
    c.rate.max_in_flight = u32::try_from(concurrency).unwrap_or(u32::MAX);
    c
}

struct Row {
    concurrency: usize,
    solved: u64,
    wall: Duration,
    cpu: Duration,
    /// HTTP requests the mock counted (an in-process mock only).
    requests: Option<u64>,
}

async fn run_once(tasks: u64, concurrency: usize, mock_url: Option<&str>) -> Result<Row, String> {
    let mock = match mock_url {
        Some(_) => None,
        None => {
            let script = MockConfig {
                default_behavior: Behavior { solve_after_ms: 0, ..Behavior::default() },
                max_tasks: usize::try_from(tasks).unwrap_or(usize::MAX).max(1),
                ..MockConfig::default()
            };
            Some(MockSolver::start(script).await.map_err(|e| format!("mock solver: {e}"))?)
        }
    };
    let base_url = match (&mock, mock_url) {
        (Some(m), _) => m.base_url(),
        (None, url) => url.unwrap_or_default().to_string(),
    };
    let client = captcha_dlq::builder()
        .api_key("bench-key")
        .base_url(base_url)
        .dlq("memory")
        .config(config(concurrency))
        .build()
        .await
        .map_err(|e| format!("client: {e}"))?;
    let inputs = (0..tasks)
        .map(|i| {
            Task::from_json_value(json!({
                "type": "recaptcha_v2",
                "sitekey": "6Le-SITEKEY",
                "page_url": format!("https://example.com/page/{i}"),
            }))
            .map_err(|e| format!("task {i}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let cpu = ProcessTime::now();
    let start = Instant::now();
    let outcomes: Vec<_> =
        stream::iter(inputs).map(|task| client.solve(task)).buffer_unordered(concurrency).collect().await;
    let wall = start.elapsed();
    let cpu = cpu.elapsed();
    client.close().await;
    let requests = match mock {
        Some(m) => {
            let requests = m.counters().requests.values().sum();
            m.shutdown().await;
            Some(requests)
        }
        None => None,
    };
    if let Some(Err(e)) = outcomes.iter().find(|o| o.is_err()) {
        eprintln!("concurrency {concurrency}: a task failed, e.g.: {e}");
    }
    let solved = outcomes.iter().filter(|o| o.is_ok()).count() as u64;
    Ok(Row { concurrency, solved, wall, cpu, requests })
}

async fn run(args: Args) -> Result<(), String> {
    if args.concurrency.contains(&0) {
        return Err("--concurrency levels must be at least 1".to_string());
    }
    let mut rows = Vec::new();
    for &c in &args.concurrency {
        eprintln!("concurrency {c}: solving {} tasks…", args.tasks);
        rows.push(run_once(args.tasks, c, args.mock_url.as_deref()).await?);
    }
    let mock = if args.mock_url.is_some() { "its own process" } else { "this process" };
    println!(
        "overhead: {} recaptcha_v2 tasks per row, Rust client, memory store, mock solves on submission (in {mock}); \
         first poll 1 ms, then every 1 ms; no submit rate limit",
        args.tasks
    );
    println!("| client | concurrency | solved | wall s | µs per task (wall) | CPU µs per task (this process) | HTTP requests / task |");
    println!("|---|---|---|---|---|---|---|");
    for r in &rows {
        let per_task = |d: Duration| d.as_secs_f64() * 1e6 / r.solved.max(1) as f64;
        println!(
            "| Rust | {} | {} | {:.2} | {:.0} | {:.0} | {} |",
            r.concurrency,
            r.solved,
            r.wall.as_secs_f64(),
            per_task(r.wall),
            per_task(r.cpu),
            r.requests.map_or_else(|| "n/a".to_string(), |n| format!("{:.2}", n as f64 / r.solved.max(1) as f64))
        );
    }
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    captcha_dlq_bench_native::exit_on_error("overhead", run(Args::parse()).await);
}
