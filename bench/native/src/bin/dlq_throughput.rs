//! DLQ throughput: records pushed one by one, then received in leased batches
//! and completed one by one, on SQLite (a temporary file in WAL mode) and on
//! Redis (a throwaway `redis-server`), beside the seeds' JSON file queue that
//! rewrites the whole file on every push and pop.
//!
//! Run: `cargo run --release -p captcha-dlq-bench-native --bin dlq-throughput -- [RECORDS]`

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use captcha_dlq::store::{RedisStore, SqliteStore};
use captcha_dlq_bench_native::json_file::JsonFileDlq;
use captcha_dlq_bench_native::redis_server::{self, RedisServer};
use captcha_dlq_bench_native::{human_bytes, now};
use captcha_dlq_core::dlq::testkit::sample_record;
use captcha_dlq_core::dlq::{DeadLetterRecord, DlqStore, Filter};
use clap::Parser;

/// Push, receive and complete records on every DLQ backend and print one table.
#[derive(Debug, Parser)]
#[command(name = "dlq-throughput")]
struct Args {
    /// Records pushed and drained on SQLite and Redis.
    #[arg(default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    records: u64,
    /// Records leased per `receive` call.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    batch: u64,
    /// Queue sizes for the JSON file queue (each capped at RECORDS). Its cost grows with the
    /// square of the size: 100,000 would take hours.
    #[arg(long, value_delimiter = ',', default_values_t = [1_000u64, 10_000])]
    json_records: Vec<u64>,
    /// A phase (push, or receive+complete) running longer than this stops, and the row reports
    /// the rate of what it did and says it is partial.
    #[arg(long, default_value_t = 900)]
    phase_budget_secs: u64,
    /// Leave out the Redis row even if redis-server is installed.
    #[arg(long)]
    skip_redis: bool,
    /// Receive with a label filter `KEY=VALUE` instead of none (every record carries
    /// `job=scrape-42`, so `job=scrape-42` measures the filtered path draining everything).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_label)]
    label_filter: Option<(String, String)>,
}

fn parse_label(s: &str) -> Result<(String, String), String> {
    s.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).ok_or_else(|| format!("{s:?} is not KEY=VALUE"))
}

#[derive(Debug)]
struct Row {
    store: String,
    records: u64,
    pushed: u64,
    push_secs: f64,
    drained: u64,
    drain_secs: f64,
    size: String,
    note: String,
}

impl Row {
    fn print(&self) {
        let rate = |n: u64, secs: f64| if secs > 0.0 { format!("{:.0}", n as f64 / secs) } else { "-".into() };
        println!(
            "| {} | {} | {} | {} | {:.2} | {} | {} |",
            self.store,
            self.records,
            rate(self.pushed, self.push_secs),
            rate(self.drained, self.drain_secs),
            self.push_secs + self.drain_secs,
            self.size,
            self.note
        );
    }
}

fn records(n: u64) -> Vec<DeadLetterRecord> {
    // One minute apart, so oldest-first order is the push order.
    (0..n).map(|i| sample_record(&format!("bench-{i:09}"), i)).collect()
}

/// Pushes every record, measures the store's size once full (`size`), then drains it.
async fn bench_store<F, Fut>(name: &str, store: &dyn DlqStore, args: &Args, size: F) -> Result<Row, String>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let budget = Duration::from_secs(args.phase_budget_secs);
    let all = records(args.records);
    eprintln!("{name}: pushing {} records…", args.records);
    let start = Instant::now();
    let mut pushed = 0u64;
    for record in all {
        store.push(record).await.map_err(|e| format!("{name}: push failed: {e}"))?;
        pushed += 1;
        if start.elapsed() > budget {
            break;
        }
    }
    let push_secs = start.elapsed().as_secs_f64();
    let size = size().await;

    eprintln!("{name}: receiving (batches of {}) and completing {pushed} records…", args.batch);
    let batch = usize::try_from(args.batch).unwrap_or(usize::MAX);
    let lease = Duration::from_secs(3600);
    let filter = Filter { labels: args.label_filter.iter().cloned().collect(), ..Filter::default() };
    let start = Instant::now();
    let mut drained = 0u64;
    while start.elapsed() <= budget {
        let leased =
            store.receive(&filter, batch, lease, now()).await.map_err(|e| format!("{name}: receive failed: {e}"))?;
        if leased.is_empty() {
            break;
        }
        for l in leased {
            store.complete(&l.token, now()).await.map_err(|e| format!("{name}: complete failed: {e}"))?;
            drained += 1;
        }
    }
    let drain_secs = start.elapsed().as_secs_f64();

    let left = store.count(&Filter::all(), now()).await.map_err(|e| format!("{name}: count failed: {e}"))?;
    let mut note = Vec::new();
    if pushed < args.records {
        note.push(format!("partial: pushed {pushed} within the {} s budget", args.phase_budget_secs));
    }
    if drained < pushed {
        note.push(format!("partial: drained {drained} within the {} s budget", args.phase_budget_secs));
    }
    if left != pushed - drained {
        return Err(format!("{name}: {left} records left after draining {drained} of {pushed}: records were lost"));
    }
    Ok(Row {
        store: name.to_string(),
        records: args.records,
        pushed,
        push_secs,
        drained,
        drain_secs,
        size,
        note: note.join("; "),
    })
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

async fn sqlite_row(args: &Args, dir: &Path) -> Result<Row, String> {
    let path = dir.join("dlq.sqlite");
    let store = SqliteStore::open(&path).map_err(|e| format!("sqlite: {e}"))?;
    let wal = dir.join("dlq.sqlite-wal");
    let size = || async {
        let (db, log) = (file_len(&path), file_len(&wal));
        format!("{} (db {} + wal {})", human_bytes(db + log), human_bytes(db), human_bytes(log))
    };
    bench_store("SQLite (file, WAL)", &store, args, size).await
}

async fn redis_used_memory(url: &str) -> Result<u64, String> {
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let mut conn = client.get_multiplexed_async_connection().await.map_err(|e| e.to_string())?;
    let info: String = redis::cmd("INFO").arg("memory").query_async(&mut conn).await.map_err(|e| e.to_string())?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| "INFO memory has no used_memory field".to_string())
}

async fn redis_row(args: &Args) -> Result<Row, String> {
    let server = RedisServer::start()?;
    let url = server.url();
    let baseline = redis_used_memory(&url).await?;
    let store = Arc::new(RedisStore::connect(&url, "bench").await.map_err(|e| format!("redis: {e}"))?);
    let size = || async {
        match redis_used_memory(&url).await {
            Ok(used) => format!("{} (server memory)", human_bytes(used.saturating_sub(baseline))),
            Err(e) => format!("unknown ({e})"),
        }
    };
    bench_store("Redis (streams + Lua)", store.as_ref(), args, size).await
}

fn json_row(n: u64, dir: &Path, budget: Duration) -> Result<Row, String> {
    let path = dir.join(format!("captcha-dlq-{n}.json"));
    let err = |e: std::io::Error| format!("JSON file: {}: {e}", path.display());
    let mut dlq = JsonFileDlq::create(&path).map_err(err)?;
    eprintln!("JSON file: pushing {n} records…");
    let start = Instant::now();
    for record in records(n) {
        dlq.push(record).map_err(err)?;
        if start.elapsed() > budget {
            break;
        }
    }
    let push_secs = start.elapsed().as_secs_f64();
    let pushed = dlq.len() as u64;
    let size = human_bytes(file_len(dlq.path()));
    eprintln!("JSON file: popping {pushed} records…");
    let start = Instant::now();
    let mut drained = 0u64;
    while start.elapsed() <= budget && dlq.pop().map_err(err)?.is_some() {
        drained += 1;
    }
    let drain_secs = start.elapsed().as_secs_f64();
    let mut note = vec!["pop = receive+complete (no lease)".to_string()];
    if pushed < n || drained < pushed {
        note.push(format!("partial within the {} s budget: pushed {pushed}, popped {drained}", budget.as_secs()));
    }
    Ok(Row {
        store: "JSON file (seeds: whole file rewritten per op)".into(),
        records: n,
        pushed,
        push_secs,
        drained,
        drain_secs,
        size,
        note: note.join("; "),
    })
}

async fn run(args: Args) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let mut rows = Vec::new();
    let mut notes = Vec::new();

    rows.push(sqlite_row(&args, dir.path()).await?);
    if args.skip_redis {
        notes.push("Redis skipped (--skip-redis).".to_string());
    } else if !redis_server::installed() {
        notes.push("Redis skipped: redis-server is not installed (apt-get install -y redis-server).".to_string());
    } else {
        rows.push(redis_row(&args).await?);
    }
    let mut json_sizes: Vec<u64> =
        args.json_records.iter().map(|n| (*n).min(args.records)).filter(|n| *n > 0).collect();
    json_sizes.sort_unstable();
    json_sizes.dedup();
    for n in json_sizes {
        rows.push(json_row(n, dir.path(), Duration::from_secs(args.phase_budget_secs))?);
    }

    let filtered = match &args.label_filter {
        Some((k, v)) => format!(" with the label filter {k}={v}"),
        None => String::new(),
    };
    println!(
        "DLQ throughput: push one by one; receive {} at a time{filtered} under a lease, complete one by one",
        args.batch
    );
    println!("| store | records | push ops/s | receive+complete ops/s | total s | size when full | note |");
    println!("|---|---|---|---|---|---|---|");
    for row in &rows {
        row.print();
    }
    notes.push(
        "The JSON file queue is O(n) per operation (O(n²) per run): 100,000 records would take hours, so it \
         runs at the smaller sizes only."
            .into(),
    );
    for note in notes {
        println!("\n{note}");
    }
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(args).await {
        eprintln!("dlq-throughput: {e}");
        std::process::exit(1);
    }
}
