//! End to end over real HTTP: a thousand tasks through the `Client` against the
//! in-process mock solver, once with the SQLite store and once in memory, with a
//! failure mix (by default 5 % unsolvable, 2 % never ready). It computes its own
//! lower bounds from the workload and the retry policy (requests per solved task,
//! time until the last solvable task is solved, wall time) and prints each
//! measurement beside its bound and as a ratio to it, with CPU time and peak RSS.
//!
//! The polling schedule is the default one scaled down 10×, keeping its ratios:
//! first poll after 1 s, then every 500 ms, riders coalesced within 250 ms; an
//! attempt that is never ready is given up after 3 s.
//!
//! `--plan` prints the workload as JSON (the mock's config, the client options, every task's
//! page and the bounds) and `--mock-url` runs the client alone against a mock in its own
//! process and prints its result as JSON: `bench/e2e/all.py` uses both to run every client
//! (Rust, Python, Node, the seeds' code, 2captcha-python) on one workload and one bound.
//!
//! Run: `cargo run --release -p captcha-dlq-bench-native --bin e2e -- [--tasks N]`

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use captcha_dlq::core::engine::EngineConfig;
use captcha_dlq::{Event, SolveInput, Task};
use captcha_dlq_bench_native::proc_status::{peak_rss_kib, reset_peak_rss, rss_kib};
use captcha_dlq_mock::{Behavior, Matcher, MockConfig, MockSolver, Outcome, Rule};
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
    /// Percent of the tasks the mock answers `ERROR_CAPTCHA_UNSOLVABLE` (retried by the policy).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(0..=100))]
    unsolvable_pct: u64,
    /// Percent of the tasks the mock never gets ready (each attempt given up after `--give-up-ms`).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=100))]
    never_ready_pct: u64,
    /// An attempt not answered this long after its submission is given up (and submitted again).
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u64).range(1..))]
    give_up_ms: u64,
    /// Print the workload as one JSON object (mock config, client options, task pages, bounds)
    /// and exit; `bench/e2e/all.py` starts the mock and every client from it.
    #[arg(long, conflicts_with = "mock_url")]
    plan: bool,
    /// Run once against a mock solver in its own process, started with the `--plan`'s
    /// `mock_config`, and print one JSON line (solved, failed, wall, last solved); the mock's
    /// counters are the caller's to read.
    #[arg(long)]
    mock_url: Option<String>,
    /// With `--mock-url`: the DLQ, `memory` or a SQLite file path.
    #[arg(long, default_value = "memory", requires = "mock_url")]
    dlq: String,
}

/// What the mock does with a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Solvable,
    Unsolvable,
    NeverReady,
}

impl Fate {
    /// Task `i`'s fate: of every 100 tasks, the first `unsolvable_pct` are unsolvable and the
    /// next `never_ready_pct` never ready, so the mix holds at any N that is a multiple of 100.
    fn of(i: u64, args: &Args) -> Fate {
        match i % 100 {
            r if r < args.unsolvable_pct => Fate::Unsolvable,
            r if r < args.unsolvable_pct + args.never_ready_pct => Fate::NeverReady,
            _ => Fate::Solvable,
        }
    }

    /// The page path the mock's rules match it by.
    fn path(self) -> &'static str {
        match self {
            Fate::Solvable => "page",
            Fate::Unsolvable => "unsolvable",
            Fate::NeverReady => "never-ready",
        }
    }
}

#[derive(Debug)]
struct Row {
    store: &'static str,
    solved: u64,
    failed: u64,
    wall: Duration,
    /// From the start until the last task was solved.
    last_solved: Option<Duration>,
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

/// The provider whose protocol and defaults every client uses (`EngineConfig::default()` holds
/// its documented figures).
const PROVIDER: &str = "2captcha";

/// The client options of this workload, as every client (Rust, Python, Node) takes them; the
/// rest of the policy (retry: 4 attempts, full-jitter backoff) is the engine's default.
fn client_options(args: &Args) -> serde_json::Value {
    json!({
        "polling": {
            "first_poll_ms": args.first_poll_ms,
            "interval_ms": args.interval_ms,
            // The default coalescing window is half the poll interval.
            "coalesce_ms": args.interval_ms / 2,
            "give_up_ms": args.give_up_ms,
        },
        "rate": { "submits_per_second": args.rate, "max_in_flight": args.tasks },
    })
}

fn config(args: &Args) -> Result<EngineConfig, String> {
    EngineConfig::from_json_over(EngineConfig::default(), &client_options(args).to_string())
        .map_err(|e| format!("client options: {e}"))
}

/// Task `i`'s page; the mock's rules give it its fate by the path.
fn page_url(i: u64, args: &Args) -> String {
    format!("https://example.com/{}/{i}", Fate::of(i, args).path())
}

/// The mock's script: solve after `solve_ms`, the unsolvable and never-ready pages by rule.
fn mock_config(args: &Args, cfg: &EngineConfig) -> MockConfig {
    let rule = |fate: Fate, outcome| Rule {
        matcher: Matcher { page_url_contains: Some(format!("/{}/", fate.path())), ..Matcher::default() },
        behavior: Behavior { outcome, solve_after_ms: args.solve_ms, ..Behavior::default() },
    };
    let attempts = u64::from(cfg.retry.max_attempts.max(1));
    MockConfig {
        default_behavior: Behavior { solve_after_ms: args.solve_ms, ..Behavior::default() },
        rules: vec![rule(Fate::Unsolvable, Outcome::Unsolvable), rule(Fate::NeverReady, Outcome::NeverReady)],
        // Every attempt of every task stays known to the mock.
        max_tasks: usize::try_from(args.tasks.saturating_mul(attempts)).unwrap_or(usize::MAX).max(1),
        ..MockConfig::default()
    }
}

fn tasks(args: &Args) -> Result<Vec<SolveInput>, String> {
    (0..args.tasks)
        .map(|i| {
            let task = Task::from_json_value(json!({
                "type": "recaptcha_v2",
                "sitekey": "6Le-SITEKEY",
                "page_url": page_url(i, args),
            }))
            .map_err(|e| format!("task {i}: {e}"))?;
            Ok(SolveInput {
                task: Ok(task),
                labels: BTreeMap::from([("n".to_string(), i.to_string())]),
                key: None,
                ttl_ms: None,
            })
        })
        .collect()
}

/// One run; the mock is started in this process unless `args.mock_url` names one (then its
/// counters are left at zero here: the caller reads them from the mock).
async fn run_once(args: &Args, cfg: &EngineConfig, store: &'static str, dlq: &str) -> Result<Row, String> {
    let tasks = tasks(args)?;
    let rss_before_kib = rss_kib();
    // The peak of this run, not of the previous one (or of building the runtime).
    let peak_reset = reset_peak_rss();
    let cpu = ProcessTime::now();
    let mock = match &args.mock_url {
        Some(_) => None,
        None => Some(MockSolver::start(mock_config(args, cfg)).await.map_err(|e| format!("mock solver: {e}"))?),
    };
    let base_url = match (&mock, &args.mock_url) {
        (Some(m), _) => m.base_url(),
        (None, url) => url.clone().unwrap_or_default(),
    };
    // When the last submission was accepted by the mock (the rate limiter's real pace) and
    // when the last task was solved.
    let last_submit: Arc<Mutex<Option<Instant>>> = Arc::default();
    let last_solved: Arc<Mutex<Option<Instant>>> = Arc::default();
    let (submitted_seen, solved_seen) = (Arc::clone(&last_submit), Arc::clone(&last_solved));
    let client = captcha_dlq::builder()
        .api_key("bench-key")
        .provider(PROVIDER)
        .on_event(move |event| {
            let seen = match event {
                Event::Submitted { .. } => &submitted_seen,
                Event::Solved { .. } => &solved_seen,
                _ => return,
            };
            if let Ok(mut at) = seen.lock() {
                *at = Some(Instant::now());
            }
        })
        .base_url(base_url)
        .dlq(dlq)
        .config(cfg.clone())
        .build()
        .await
        .map_err(|e| format!("{store}: client: {e}"))?;
    eprintln!("{store}: solving {} tasks…", args.tasks);
    let start = Instant::now();
    let concurrency = usize::try_from(args.tasks).unwrap_or(usize::MAX);
    let results: Vec<_> = client.solve_many(tasks, Some(concurrency)).await.into_iter().map(|r| r.outcome).collect();
    let wall = start.elapsed();
    let since_start =
        |at: &Mutex<Option<Instant>>| at.lock().ok().and_then(|at| *at).map(|at| at.saturating_duration_since(start));
    let (submit_phase, last_solved) = (since_start(&last_submit), since_start(&last_solved));
    client.close().await;
    let counters = match mock {
        Some(m) => {
            let counters = m.counters();
            m.shutdown().await;
            counters
        }
        None => Default::default(),
    };
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
        last_solved,
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

/// The least any client could do for this workload under this retry policy.
#[derive(Debug)]
struct Bound {
    solvable: u64,
    unsolvable: u64,
    never_ready: u64,
    /// Submissions the policy requires: one per solvable task, every attempt of the others.
    submits: u64,
    /// One batched poll per 100 answers that come ready (solutions and unsolvable errors).
    polls: u64,
    /// The last solvable task cannot be submitted before the solvable tasks and one retry
    /// per unsolvable attempt ahead of it at the submit rate, nor answered before the mock
    /// solves it or its first poll (a ride-along poll may come up to `coalesce` early).
    last_solved: Duration,
    /// The later of `last_solved` and the never-ready tasks' attempts, each given up after
    /// `give_up_ms`.
    wall: Duration,
}

impl Bound {
    fn of(args: &Args, cfg: &EngineConfig) -> Bound {
        let attempts = u64::from(cfg.retry.max_attempts.max(1));
        let count = |fate| (0..args.tasks).filter(|&i| Fate::of(i, args) == fate).count() as u64;
        let (solvable, unsolvable, never_ready) =
            (count(Fate::Solvable), count(Fate::Unsolvable), count(Fate::NeverReady));
        let submits = solvable + (unsolvable + never_ready) * attempts;
        let polls = (solvable + unsolvable * attempts).div_ceil(100);
        let spacing_ms = 1000.0 / args.rate;
        let earliest_poll_ms = args.first_poll_ms.saturating_sub(cfg.polling.coalesce_ms);
        let answer_ms = args.solve_ms.max(earliest_poll_ms) as f64;
        let last_solved_ms = solvable.saturating_sub(1) as f64 * spacing_ms + answer_ms;
        let never_ready_ms = if never_ready > 0 { (attempts * args.give_up_ms) as f64 } else { 0.0 };
        Bound {
            solvable,
            unsolvable,
            never_ready,
            submits,
            polls,
            last_solved: Duration::from_secs_f64(last_solved_ms / 1000.0),
            wall: Duration::from_secs_f64(last_solved_ms.max(never_ready_ms) / 1000.0),
        }
    }

    fn requests_per_solved(&self) -> f64 {
        (self.submits + self.polls) as f64 / self.solvable.max(1) as f64
    }

    /// The bounds as `--plan` prints them, with the formulas they come from.
    fn to_json(&self, attempts: u32) -> serde_json::Value {
        json!({
            "solvable": self.solvable,
            "unsolvable": self.unsolvable,
            "never_ready": self.never_ready,
            "attempts": attempts,
            "submits": self.submits,
            "polls": self.polls,
            "requests_per_solved": self.requests_per_solved(),
            "last_solved_s": self.last_solved.as_secs_f64(),
            "wall_s": self.wall.as_secs_f64(),
            "formulas": {
                "requests_per_solved": "(1 submit per solvable task + every attempt of the unsolvable and never-ready \
                                        tasks + 1 batched poll per 100 ready answers) / solvable tasks",
                "last_solved_s": "(solvable - 1) x submit spacing + max(solve time, first poll - coalescing window)",
                "wall_s": "max(last solved, attempts x give-up time of a never-ready task)",
            },
        })
    }
}

/// `measured (× bound)`.
fn versus(measured: f64, bound: f64, digits: usize) -> String {
    if bound > 0.0 {
        format!("{measured:.digits$} ({:.2}×)", measured / bound)
    } else {
        format!("{measured:.digits$}")
    }
}

async fn run(args: Args) -> Result<(), String> {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return Err(format!("--rate must be a positive number, got {}", args.rate));
    }
    if args.unsolvable_pct + args.never_ready_pct > 100 {
        return Err(format!(
            "--unsolvable-pct ({}) and --never-ready-pct ({}) add up to more than 100",
            args.unsolvable_pct, args.never_ready_pct
        ));
    }
    let cfg = config(&args)?;
    let bound = Bound::of(&args, &cfg);
    if args.plan {
        let plan = json!({
            "tasks": args.tasks,
            "solve_ms": args.solve_ms,
            "first_poll_ms": args.first_poll_ms,
            "interval_ms": args.interval_ms,
            "give_up_ms": args.give_up_ms,
            "rate": args.rate,
            "unsolvable_pct": args.unsolvable_pct,
            "never_ready_pct": args.never_ready_pct,
            "provider": PROVIDER,
            "sitekey": "6Le-SITEKEY",
            "page_urls": (0..args.tasks).map(|i| page_url(i, &args)).collect::<Vec<_>>(),
            "mock_config": serde_json::to_value(mock_config(&args, &cfg)).map_err(|e| format!("mock config: {e}"))?,
            "client_options": client_options(&args),
            "bound": bound.to_json(cfg.retry.max_attempts),
        });
        println!("{plan}");
        return Ok(());
    }
    if args.mock_url.is_some() {
        let r = run_once(&args, &cfg, "external mock", &args.dlq).await?;
        let secs = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
        let result = json!({
            "solved": r.solved,
            "failed": r.failed,
            "wall_s": r.wall.as_secs_f64(),
            "last_solved_s": secs(r.last_solved),
            "last_submit_s": secs(r.submit_phase),
        });
        println!("{result}");
        return Ok(());
    }
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let sqlite = dir.path().join("e2e.sqlite");
    let sqlite = sqlite.to_str().ok_or("the temporary directory's path is not UTF-8")?.to_string();
    let rows = [run_once(&args, &cfg, "SQLite", &sqlite).await?, run_once(&args, &cfg, "memory", "memory").await?];
    println!(
        "e2e: {} recaptcha_v2 tasks over HTTP on loopback ({} solvable, {} unsolvable, {} never ready); mock answers \
         after {} ms; first poll {} ms, then every {} ms (coalesce {} ms, batch polls of up to 100 ids); attempts \
         given up after {} ms; at most {} attempts per task; at most {} submits/s",
        args.tasks,
        bound.solvable,
        bound.unsolvable,
        bound.never_ready,
        args.solve_ms,
        args.first_poll_ms,
        args.interval_ms,
        cfg.polling.coalesce_ms,
        args.give_up_ms,
        cfg.retry.max_attempts,
        args.rate
    );
    println!(
        "lower bound, requests: {} submits (1 per solvable task, {} per other task) + {} polls (1 per 100 ready \
         answers) = {:.3} per solved task",
        bound.submits,
        cfg.retry.max_attempts,
        bound.polls,
        bound.requests_per_solved()
    );
    println!(
        "lower bound, last solved: (solvable - 1) x submit spacing + max(solve, first poll - coalesce) = {:.2} s; \
         wall: max(that, attempts x give-up of a never-ready task) = {:.2} s",
        bound.last_solved.as_secs_f64(),
        bound.wall.as_secs_f64()
    );
    println!("| store | solved / failed | HTTP requests / solved task (× bound) | last solved s (× bound) | wall s (× bound) | last submit at s (achieved submits/s) | submits | poll requests | ids polled | CPU s (process, incl. mock) | CPU ms / task | RSS before | peak RSS (VmHWM) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let submits = r.submit_phase.map_or_else(
            || "n/a".to_string(),
            |d| format!("{:.2} ({:.1})", d.as_secs_f64(), (r.submits.max(1) - 1) as f64 / d.as_secs_f64().max(1e-9)),
        );
        let last_solved = r
            .last_solved
            .map_or_else(|| "n/a".to_string(), |d| versus(d.as_secs_f64(), bound.last_solved.as_secs_f64(), 2));
        println!(
            "| {} | {} / {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {} | {} |",
            r.store,
            r.solved,
            r.failed,
            versus(r.requests as f64 / r.solved.max(1) as f64, bound.requests_per_solved(), 3),
            last_solved,
            versus(r.wall.as_secs_f64(), bound.wall.as_secs_f64(), 2),
            submits,
            r.submits,
            r.poll_requests,
            r.ids_polled,
            r.cpu.as_secs_f64(),
            r.cpu.as_secs_f64() * 1000.0 / args.tasks as f64,
            mib(r.rss_before_kib),
            mib(r.peak_rss_kib),
        );
    }
    println!(
        "\nCPU and RSS are the whole process: client, store and the in-process mock solver together; they have no \
         bound of their own (CPU per task is the figure to compare across clients)."
    );
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    captcha_dlq_bench_native::exit_on_error("e2e", run(Args::parse()).await);
}
