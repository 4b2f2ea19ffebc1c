//! `captcha-dlq demo`: the seeds' batch (five reCAPTCHA v2 tasks for
//! `https://example.com/page/0..4`; page 2 unsolvable, page 4 never ready)
//! against the embedded mock solver, then a replay of the DLQ once the
//! service recovers. Polling is scaled down so it runs in seconds.
//!
//! `--keep` leaves the dead letters in a SQLite file at a fixed, printed path
//! for `captcha-dlq dashboard --dlq <path>`; `--dashboard` serves the
//! dashboard over them at once, with the mock solver up (and healthy) so that
//! replays from the dashboard succeed.

use std::collections::BTreeMap;

use captcha_dlq::core::dlq::analysis::render_table;
use captcha_dlq::core::dlq::Filter;
use captcha_dlq::core::engine::{Backoff, EngineConfig, FirstPoll};
use captcha_dlq::core::Task;
use captcha_dlq::{Client, Error, ReplayOptions, SolveInput};
use captcha_dlq_dashboard::{DashboardOptions, DEFAULT_LISTEN};
use captcha_dlq_mock::{Behavior, Matcher, MockConfig, MockSolver, Outcome, Rule};
use clap::Args as ClapArgs;
use serde_json::json;

use super::{exit, Global};

/// Where `--keep` leaves the demo's DLQ (in the temporary directory).
pub const KEPT_DLQ_NAME: &str = "captcha-dlq-demo.sqlite";

#[derive(Debug, ClapArgs)]
pub struct DemoArgs {
    /// Keep the demo's DLQ in this SQLite file (default: a temporary file, removed afterwards).
    #[arg(long = "keep-dlq", conflicts_with = "keep")]
    pub keep_dlq: Option<String>,
    /// Keep the dead letters (no replay) in a fixed file, printed at the end, for
    /// `captcha-dlq dashboard --dlq <that file>`.
    #[arg(long)]
    pub keep: bool,
    /// Then serve the dashboard over the demo's DLQ, with the mock solver up, until Ctrl-C.
    #[arg(long)]
    pub dashboard: bool,
    /// Where `--dashboard` listens (loopback; anything else needs `captcha-dlq dashboard --token`).
    #[arg(long, default_value = DEFAULT_LISTEN, requires = "dashboard")]
    pub listen: String,
}

fn rule(page: &str, outcome: Outcome) -> Rule {
    Rule {
        matcher: Matcher { page_url_contains: Some(page.to_string()), ..Matcher::default() },
        behavior: Behavior { outcome, solve_after_ms: 300, ..Behavior::default() },
    }
}

fn demo_config() -> EngineConfig {
    let mut config = EngineConfig::default();
    config.polling.first_poll_ms = FirstPoll::uniform(400);
    config.polling.interval_ms = 250;
    config.polling.max_polls = 5;
    config.polling.coalesce_ms = 100;
    config.retry.backoff = Backoff::FullJitter { base_ms: 100, cap_ms: 400 };
    config.rate.submits_per_second = 20.0;
    config
}

pub async fn run(global: &Global, args: DemoArgs) -> Result<u8, Error> {
    let script = MockConfig {
        default_behavior: Behavior { solve_after_ms: 300, ..Behavior::default() },
        rules: vec![rule("/page/2", Outcome::Unsolvable), rule("/page/4", Outcome::NeverReady)],
        ..MockConfig::default()
    };
    let mock = MockSolver::start(script).await.map_err(|e| Error::Io(format!("cannot start the mock solver: {e}")))?;

    let dashboard = if args.dashboard {
        Some(DashboardOptions::listen_on(&args.listen).map_err(|e| Error::Io(e.to_string()))?)
    } else {
        None
    };
    let (dlq_path, temporary) = match args.keep_dlq {
        Some(p) => (p, false),
        None if args.keep => {
            let path = std::env::temp_dir().join(KEPT_DLQ_NAME).to_string_lossy().into_owned();
            // A fresh demo each time: the file of an earlier run goes.
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
            (path, false)
        }
        None => {
            let name = format!("captcha-dlq-demo-{}-{}.sqlite", std::process::id(), fastrand::u32(..));
            (std::env::temp_dir().join(name).to_string_lossy().into_owned(), true)
        }
    };
    let client = captcha_dlq::builder()
        .api_key("demo-key")
        .provider("captchaai")
        .base_url(mock.base_url())
        .dlq(dlq_path.clone())
        .config(demo_config())
        .build()
        .await?;
    let replay = !args.keep && dashboard.is_none();
    let mut result = run_batch(global, &client, &mock, replay).await;
    if let (Ok(_), Some(options)) = (&result, dashboard) {
        let mut healthy = mock.config();
        healthy.rules.clear();
        mock.set_script(healthy).map_err(Error::Io)?;
        println!("\nThe mock solver is healthy again: replay the records from the dashboard.");
        result = super::dashboard::serve_until_interrupted(&client, options, &dlq_path).await;
    }
    client.close().await;
    mock.shutdown().await;
    if temporary {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{dlq_path}{suffix}"));
        }
    } else if !global.json {
        println!("DLQ kept in {dlq_path}");
        if args.keep {
            println!("Open it: captcha-dlq dashboard --dlq {dlq_path}");
        }
    }
    result
}

async fn run_batch(
    global: &Global,
    client: &Client,
    mock: &captcha_dlq_mock::MockHandle,
    replay: bool,
) -> Result<u8, Error> {
    let quiet = global.json;
    if !quiet {
        println!("captcha-dlq demo: the seeds' batch against the embedded mock solver at {}", mock.base_url());
        println!("(polling scaled down: first poll 0.4 s, every 0.25 s, 5 polls per attempt, 4 attempts)\n");
    }
    let tasks: Vec<SolveInput> = (0..5)
        .map(|i| {
            let task = Task::from_json_value(json!({
                "type": "recaptcha_v2",
                "sitekey": "6Le-SITEKEY",
                "page_url": format!("https://example.com/page/{i}"),
            }))?;
            let labels = BTreeMap::from([("job".to_string(), "demo".to_string()), ("page".to_string(), i.to_string())]);
            Ok(SolveInput { task: Ok(task), labels, key: None, ttl_ms: None })
        })
        .collect::<Result<_, Error>>()?;
    let results = client.solve_many(tasks, Some(5)).await;
    let mut out = Vec::new();
    for result in &results {
        match &result.outcome {
            Ok(solution) => {
                let prefix: String = solution.text.chars().take(40).collect();
                if !quiet {
                    println!("Solved: {prefix}...");
                }
                out.push(json!({ "ok": true, "token_prefix": prefix }));
            }
            Err(Error::SolveFailed { record, .. }) => {
                if !quiet {
                    println!("[dlq] Added: {} (attempts: {}) — {}", record.reason, record.attempts, record.description);
                }
                out.push(json!({ "ok": false, "reason": record.reason, "attempts": record.attempts, "id": record.id }));
            }
            Err(e) => return Err(Error::Io(format!("demo task failed unexpectedly: {e}"))),
        }
    }
    let store = client.dlq();
    let size = store.count(&Filter::all()).await?;
    let analysis = store.analysis(&Filter::all()).await?;
    if !quiet {
        println!("\nDLQ size: {size}\n");
        println!("{}", render_table(&analysis));
    }
    if !replay {
        if quiet {
            println!("{}", json!({ "results": out, "dlq_size": size, "analysis": analysis }));
        } else {
            println!("The records stay in the DLQ (no replay): inspect and replay them from the dashboard.");
        }
        return Ok(exit::OK);
    }
    if !quiet {
        println!("The solver recovers; replaying the DLQ (auto-replayable classes, 2 more attempts each):");
    }

    let mut healthy = mock.config();
    healthy.rules.clear();
    mock.set_script(healthy).map_err(Error::Io)?;
    let report = client.replay(ReplayOptions::default()).await?.report;
    let after = store.count(&Filter::all()).await?;
    let stats_after = store.stats().await?;
    if quiet {
        println!(
            "{}",
            json!({ "results": out, "dlq_size": size, "analysis": analysis, "replay": report, "dlq_size_after_replay": after, "stats": stats_after })
        );
    } else {
        println!("[dlq] Retried: {}, Recovered: {}", report.retried, report.recovered);
        println!(
            "DLQ size after replay: {after} (completed: {}, parked: {})",
            stats_after.completed, stats_after.parked
        );
        let counters = mock.counters();
        println!(
            "\nmock solver saw {} submits and {} polls for 5 tasks + 2 replays",
            counters.requests_to("/in.php"),
            counters.requests_to("/res.php")
        );
    }
    Ok(exit::OK)
}
