//! Server time of the dashboard's pages on a full DLQ: the records page
//! (first page, a filter, a page deep in the queue, the filters and search
//! the stores cannot index), the overview (the page, and how long its
//! background scan of the DLQ takes), the groups page and `/metrics`, on SQLite
//! (a temporary file) and on Redis (a throwaway `redis-server`). Prints a
//! Markdown table with the targets beside the numbers.
//!
//! The time is the dashboard's own `Server-Timing` (from the request entering
//! its guard to the response leaving it), the median of the runs.
//!
//! Run: `cargo run --release -p captcha-dlq-bench-dashboard -- [RECORDS]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use captcha_dlq::core::dlq::testkit::sample_record;
use captcha_dlq::core::dlq::DlqStore;
use captcha_dlq::core::Task;
use captcha_dlq::store::{RedisStore, SqliteStore};
use captcha_dlq_dashboard::{DashboardConfig, DashboardOptions};
use captcha_dlq_mock::redis_server::RedisServer;
use clap::Parser;

/// Time the dashboard's pages on a DLQ holding RECORDS records.
#[derive(Debug, Parser)]
#[command(name = "dashboard-pages")]
struct Args {
    #[arg(default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(100..))]
    records: u64,
    /// Runs per row (the median is printed).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Leave out the Redis rows.
    #[arg(long)]
    skip_redis: bool,
}

const REASONS: [&str; 6] = [
    "ERROR_CAPTCHA_UNSOLVABLE",
    "Timeout",
    "ERROR_NO_SLOT_AVAILABLE",
    "ERROR_PROXY_CONNECTION_FAILED",
    "Interrupted",
    "ERROR_BAD_PARAMETERS",
];

/// Records spread over a week, six reasons, twenty sitekeys, fifty hosts; every tenth labelled.
async fn fill(store: &dyn DlqStore, n: u64) -> Result<(), String> {
    let started = Instant::now();
    for i in 0..n {
        let minute = i * 7 * 24 * 60 / n;
        let mut record = sample_record(&format!("bench-{i:09}"), minute);
        record.reason = REASONS[(i % 6) as usize].to_string();
        let task = format!(
            r#"{{"type":"recaptcha_v2","sitekey":"6Le-SITEKEY-{}","page_url":"https://shop{}.example.com/login"}}"#,
            i % 20,
            i % 50
        );
        record.task = Task::from_json_str(&task).map_err(|e| e.to_string())?;
        if i % 10 == 0 {
            record.labels.insert("campaign".into(), "spring".into());
        }
        store.push(record).await.map_err(|e| format!("push: {e}"))?;
    }
    eprintln!("  filled {n} records in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The median server time of `runs` GETs of `path`, and what the last one answered.
async fn time(
    http: &reqwest::Client,
    base: &str,
    path: &str,
    runs: usize,
    pause: Duration,
) -> Result<(f64, u16), String> {
    let mut times = Vec::new();
    let mut status = 0;
    for _ in 0..runs {
        let r = http.get(format!("{base}{path}")).send().await.map_err(|e| format!("GET {path}: {e}"))?;
        status = r.status().as_u16();
        let timing = r
            .headers()
            .get("server-timing")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split("dur=").nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| format!("GET {path}: no Server-Timing"))?;
        let _ = r.bytes().await;
        times.push(timing);
        tokio::time::sleep(pause).await;
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], status))
}

/// Waits for the overview's background scan and reads how long it took from the page.
async fn scan_time(http: &reqwest::Client, base: &str) -> Result<f64, String> {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let summary = http.get(format!("{base}/api/summary")).send().await.map_err(|e| e.to_string())?;
        let summary = summary.text().await.map_err(|e| e.to_string())?;
        if !summary.contains("\"overview_at\":null") {
            break;
        }
        if Instant::now() > deadline {
            return Err("the overview's scan did not finish within 10 minutes".into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let page = http.get(format!("{base}/")).send().await.map_err(|e| e.to_string())?;
    let page = page.text().await.map_err(|e| e.to_string())?;
    page.split("one scan of the DLQ, ")
        .nth(1)
        .and_then(|rest| rest.split(" ms").next())
        .and_then(|ms| ms.parse().ok())
        .ok_or_else(|| "the overview does not say how long its scan took".to_string())
}

async fn bench(name: &str, store: Arc<dyn DlqStore>, args: &Args) -> Result<(), String> {
    eprintln!("{name}:");
    fill(store.as_ref(), args.records).await?;
    let client = captcha_dlq::builder()
        .api_key("bench-key")
        .base_url("http://127.0.0.1:9/")
        .dlq_store(store)
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let options = DashboardOptions {
        listen: "127.0.0.1:0".parse().map_err(|_| "address")?,
        config: DashboardConfig::default(),
        tls: None,
    };
    let dash = captcha_dlq_dashboard::serve(client.clone(), options).await.map_err(|e| e.to_string())?;
    let base = dash.url().trim_end_matches('/').to_string();
    let http = reqwest::Client::new();
    let quick = Duration::ZERO;
    // Beyond the overview's sharing period, so each run scans again.
    let cold = Duration::from_millis(5200);
    let middle = sample_record("x", args.records / 2 * 7 * 24 * 60 / args.records).dead_lettered_at.as_unix_millis();
    // The first overview finds no breakdowns: it starts the scan and waits at most 300 ms.
    let (ms, _) = time(&http, &base, "/", 1, quick).await?;
    println!("| {name} | overview: first request (starts the scan, waits ≤ 300 ms for it) | {ms:.1} | ≤ 500 |");
    let scan_ms = scan_time(&http, &base).await?;
    println!("| {name} | the overview's scan of every record (in the background) | {scan_ms:.1} | – |");
    let rows: Vec<(&str, String, Duration, usize, &str)> = vec![
        ("overview: a new scan each time (result 5 s old)", "/".into(), cold, 3, "≤ 500"),
        ("overview: shared result (within 5 s)", "/".into(), quick, args.runs, "≤ 500"),
        ("groups by reason (shared result)", "/groups".into(), quick, args.runs, "≤ 500"),
        ("records: first page of 50", "/records".into(), quick, args.runs, "≤ 100"),
        ("records: reason filter", "/records?reason=Timeout".into(), quick, args.runs, "≤ 100"),
        ("records: host filter", "/records?host=shop7.example.com".into(), quick, args.runs, "≤ 100"),
        (
            "records: page halfway (keyset cursor)",
            format!("/records?after={middle}.0&page=1000"),
            quick,
            args.runs,
            "≤ 100",
        ),
        ("records: label filter (no index)", "/records?label=campaign%3Dspring".into(), quick, args.runs, "≤ 100"),
        ("records: text search (scans ≤ 1,000)", "/records?q=shop7.example".into(), quick, args.runs, "≤ 100"),
        ("count of a reason (loaded after the page)", "/api/count?reason=Timeout".into(), quick, args.runs, "–"),
        ("/metrics", "/metrics".into(), quick, args.runs, "–"),
    ];
    for (what, path, pause, runs, target) in rows {
        let (ms, status) = time(&http, &base, &path, runs, pause).await?;
        let note = if status == 200 { String::new() } else { format!(" (answered {status})") };
        println!("| {name} | {what}{note} | {ms:.1} | {target} |");
    }
    dash.shutdown().await;
    client.close().await;
    Ok(())
}

async fn run(args: Args) -> Result<(), String> {
    println!("Dashboard server time on {} records (median; ms)\n", args.records);
    println!("| store | page | server ms | target ms |");
    println!("|---|---|---|---|");
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let sqlite = SqliteStore::open(dir.path().join("dlq.sqlite")).map_err(|e| format!("sqlite: {e}"))?;
    bench("SQLite", Arc::new(sqlite), &args).await?;
    if args.skip_redis {
        println!("\nRedis skipped (--skip-redis).");
        return Ok(());
    }
    match RedisServer::start() {
        Ok(server) => {
            let redis = RedisStore::connect(&server.url(), "dashboard").await.map_err(|e| format!("redis: {e}"))?;
            bench("Redis", Arc::new(redis), &args).await?;
        }
        Err(e) => println!("\nRedis skipped: {e}"),
    }
    Ok(())
}

#[tokio::main]
async fn main() {
    if let Err(e) = run(Args::parse()).await {
        eprintln!("dashboard-pages: {e}");
        std::process::exit(1);
    }
}
