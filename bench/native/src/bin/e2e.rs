//! End to end over real HTTP: a thousand tasks through the `Client` against the
//! in-process mock solver, once with the SQLite store and once in memory. It
//! prints wall time beside its lower bound, HTTP requests per solved task (the
//! mock's counters), CPU time and peak RSS of the process.
//!
//! The polling schedule is the default one scaled down 10×, keeping its ratios:
//! first poll after 1 s, then every 500 ms, riders coalesced within 250 ms.
//!
//! Run: `cargo run --release -p captcha-dlq-bench-native --bin e2e -- [--tasks N]`

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use captcha_dlq::core::engine::{EngineConfig, FirstPoll};
use captcha_dlq::{Event, SolveInput, Task};
use captcha_dlq_bench_native::proc_status::{peak_rss_kib, reset_peak_rss, rss_kib};
use captcha_dlq_mock::{Behavior, MockConfig, MockSolver};
use clap::Parser;
use cpu_time::ProcessTime;
use serde_json::json;

/// Solve many tasks against the mock and print one row per store.
#[derive(Debug, Parser)]
#[command(name = "e2e")]
struct Args {
    /// Tasks per run.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    tasks: u64,
    /// The mock solves each task this long after its submission.
    #[arg(long, default_value_t = 500)]
    solve_ms: u64,
    /// First poll after submission.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    first_poll_ms: u64,
    /// Then a poll every this many milliseconds.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..))]
    interval_ms: u64,
    /// Submissions per second at most (the engine's rate limit).
    #[arg(long, default_value_t = 100.0)]
    rate: f64,
}

#[derive(Debug)]
struct Row {
    store: &'static str,
    solved: u64,
    failed: u64,
    wall: Duration,
    /// From the start until the last submission went out.
    submit_phase: Option<Duration>,
    requests: u64,
    submits: u64,
    poll_requests: u64,
    ids_polled: u64,
    cpu: Duration,
    peak_rss_kib: Option<u64>,
    rss_before_kib: Option<u64>,
}

fn config(args: &Args) -> EngineConfig {
    let mut c = EngineConfig::default();
    c.polling.first_poll_ms = FirstPoll::uniform(args.first_poll_ms);
    c.polling.interval_ms = args.interval_ms;
    // The default coalescing window is half the poll interval.
    c.polling.coalesce_ms = args.interval_ms / 2;
    c.rate.submits_per_second = args.rate;
    c.rate.max_in_flight = u32::try_from(args.tasks).unwrap_or(u32::MAX);
    c
}

fn tasks(n: u64) -> Result<Vec<SolveInput>, String> {
    (0..n)
        .map(|i| {
            let task = Task::from_json_value(json!({
                "type": "recaptcha_v2",
                "sitekey": "6Le-SITEKEY",
                "page_url": format!("https://example.com/page/{i}"),
            }))
            .map_err(|e| format!("task {i}: {e}"))?;
            Ok(SolveInput { task: Ok(task), labels: BTreeMap::from([("n".to_string(), i.to_string())]), key: None })
        })
        .collect()
}

async fn run_once(args: &Args, store: &'static str, dlq: &str) -> Result<Row, String> {
    let tasks = tasks(args.tasks)?;
    let rss_before_kib = rss_kib();
    // The peak of this run, not of the previous one (or of building the runtime).
    let peak_reset = reset_peak_rss();
    let cpu = ProcessTime::now();
    let script = MockConfig {
        default_behavior: Behavior { solve_after_ms: args.solve_ms, ..Behavior::default() },
        max_tasks: usize::try_from(args.tasks).unwrap_or(usize::MAX).max(1),
        ..MockConfig::default()
    };
    let mock = MockSolver::start(script).await.map_err(|e| format!("mock solver: {e}"))?;
    // When the last submission was accepted by the mock: the rate limiter's real pace.
    let last_submit: Arc<Mutex<Option<Instant>>> = Arc::default();
    let seen = Arc::clone(&last_submit);
    let client = captcha_dlq::builder()
        .api_key("bench-key")
        .on_event(move |event| {
            if let (Event::Submitted { .. }, Ok(mut at)) = (event, seen.lock()) {
                *at = Some(Instant::now());
            }
        })
        .base_url(mock.base_url())
        .dlq(dlq)
        .config(config(args))
        .build()
        .await
        .map_err(|e| format!("{store}: client: {e}"))?;
    eprintln!("{store}: solving {} tasks…", args.tasks);
    let start = Instant::now();
    let concurrency = usize::try_from(args.tasks).unwrap_or(usize::MAX);
    let results: Vec<_> = client.solve_many(tasks, Some(concurrency)).await.into_iter().map(|r| r.outcome).collect();
    let wall = start.elapsed();
    let submit_phase = last_submit.lock().ok().and_then(|at| *at).map(|at| at.saturating_duration_since(start));
    client.close().await;
    let counters = mock.counters();
    mock.shutdown().await;
    let cpu = cpu.elapsed();
    let solved = results.iter().filter(|r| r.is_ok()).count() as u64;
    if let Some(Err(e)) = results.iter().find(|r| r.is_err()) {
        eprintln!("{store}: a task failed, e.g.: {e}");
    }
    Ok(Row {
        store,
        solved,
        failed: results.len() as u64 - solved,
        wall,
        submit_phase,
        requests: counters.requests.values().sum(),
        submits: counters.submits,
        poll_requests: counters.polls_single + counters.polls_batch,
        ids_polled: counters.ids_polled,
        cpu,
        peak_rss_kib: if peak_reset { peak_rss_kib() } else { None },
        rss_before_kib,
    })
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "n/a".to_string(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

async fn run(args: Args) -> Result<(), String> {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return Err(format!("--rate must be a positive number, got {}", args.rate));
    }
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let sqlite = dir.path().join("e2e.sqlite");
    let sqlite = sqlite.to_str().ok_or("the temporary directory's path is not UTF-8")?.to_string();
    let rows = [run_once(&args, "SQLite", &sqlite).await?, run_once(&args, "memory", "memory").await?];

    // The last task cannot be submitted before (N-1) submit spacings, nor answered before
    // the mock solves it or before its first poll (a ride-along poll may come up to
    // coalesce_ms early): whichever is later.
    let cfg = config(&args);
    let spacing_ms = 1000.0 / args.rate;
    let submits_ms = (args.tasks - 1) as f64 * spacing_ms;
    let earliest_poll_ms = args.first_poll_ms.saturating_sub(cfg.polling.coalesce_ms);
    let answer_ms = args.solve_ms.max(earliest_poll_ms);
    let bound_s = (submits_ms + answer_ms as f64) / 1000.0;

    println!(
        "e2e: {} recaptcha_v2 tasks over HTTP on loopback; mock solves after {} ms; first poll {} ms, then every {} ms \
         (coalesce {} ms, batch polls of up to 100 ids); at most {} submits/s",
        args.tasks, args.solve_ms, args.first_poll_ms, args.interval_ms, cfg.polling.coalesce_ms, args.rate
    );
    println!(
        "lower bound = (N-1) x submit spacing + max(solve, first poll - coalesce) = {} x {:.1} ms + max({} ms, {} ms) = {:.2} s",
        args.tasks - 1,
        spacing_ms,
        args.solve_ms,
        earliest_poll_ms,
        bound_s
    );
    println!("| store | solved / failed | wall s | lower bound s | over bound | last submit at s (achieved submits/s) | HTTP requests / solved task | submits | poll requests | ids polled | CPU s (process, incl. mock) | CPU ms / task | RSS before | peak RSS (VmHWM) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let wall = r.wall.as_secs_f64();
        let submits = r.submit_phase.map_or_else(
            || "n/a".to_string(),
            |d| format!("{:.2} ({:.1})", d.as_secs_f64(), (r.submits.max(1) - 1) as f64 / d.as_secs_f64().max(1e-9)),
        );
        println!(
            "| {} | {} / {} | {:.2} | {:.2} | {:+.1}% | {} | {:.2} | {} | {} | {} | {:.2} | {:.2} | {} | {} |",
            r.store,
            r.solved,
            r.failed,
            wall,
            bound_s,
            (wall / bound_s - 1.0) * 100.0,
            submits,
            r.requests as f64 / r.solved.max(1) as f64,
            r.submits,
            r.poll_requests,
            r.ids_polled,
            r.cpu.as_secs_f64(),
            r.cpu.as_secs_f64() * 1000.0 / args.tasks as f64,
            mib(r.rss_before_kib),
            mib(r.peak_rss_kib),
        );
    }
    println!("\nCPU and RSS are the whole process: client, store and the in-process mock solver together.");
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(args).await {
        eprintln!("e2e: {e}");
        std::process::exit(1);
    }
}
