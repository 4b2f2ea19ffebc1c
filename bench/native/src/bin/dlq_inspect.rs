//! Operator reads on a full DLQ: `peek` (first page, and a deep page with a
//! label filter), `count` with a filter, and `purge` of a third of the
//! records, on SQLite (a temporary file in WAL mode) and on Redis (a throwaway
//! `redis-server`). Prints one table of wall times and the client's peak RSS
//! growth per operation.
//!
//! Run: `cargo run --release -p captcha-dlq-bench-native --bin dlq-inspect -- [RECORDS]`

use std::future::Future;
use std::time::Instant;

use captcha_dlq::store::{RedisStore, SqliteStore};
use captcha_dlq_bench_native::{human_bytes, now, proc_status};
use captcha_dlq_core::dlq::testkit::sample_record;
use captcha_dlq_core::dlq::{DlqStore, Filter, Page};
use captcha_dlq_mock::redis_server::{self, RedisServer};
use clap::Parser;

/// Time peek, count and purge on a DLQ holding RECORDS records.
#[derive(Debug, Parser)]
#[command(name = "dlq-inspect")]
struct Args {
    /// Records in the DLQ (a third carry the label `job=x`).
    #[arg(default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(3..))]
    records: u64,
    /// Leave out the Redis rows even if redis-server is installed.
    #[arg(long)]
    skip_redis: bool,
}

/// Runs `op`, returning its result, wall time in ms and the growth of the peak RSS.
async fn measure<T, Fut: Future<Output = T>>(op: impl FnOnce() -> Fut) -> (T, f64, String) {
    let reset = proc_status::reset_peak_rss();
    let before = proc_status::rss_kib().unwrap_or(0);
    let start = Instant::now();
    let out = op().await;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let growth = match (reset, proc_status::peak_rss_kib()) {
        (true, Some(peak)) => human_bytes(peak.saturating_sub(before) * 1024),
        _ => "-".to_string(),
    };
    (out, ms, growth)
}

async fn bench(name: &str, store: &dyn DlqStore, n: u64) -> Result<(), String> {
    let fail = |op: &str, e: captcha_dlq_core::dlq::StoreError| format!("{name}: {op} failed: {e}");
    eprintln!("{name}: pushing {n} records…");
    for i in 0..n {
        let mut record = sample_record(&format!("bench-{i:09}"), i);
        if i % 3 == 0 {
            record.labels.insert("job".into(), "x".into());
        }
        store.push(record).await.map_err(|e| fail("push", e))?;
    }
    let job = Filter { labels: [("job".to_string(), "x".to_string())].into(), ..Filter::default() };
    let tagged = n.div_ceil(3);
    let deep = Page { offset: usize::try_from(tagged / 2).unwrap_or(0), limit: 100 };
    let row = |op: &str, ms: f64, rss: &str, result: String| println!("| {name} | {op} | {ms:.1} | {rss} | {result} |");

    let all = Filter::all();
    let (got, ms, rss) = measure(|| store.peek(&all, Page::default(), now())).await;
    row("peek first 100, no filter", ms, &rss, format!("{} records", got.map_err(|e| fail("peek", e))?.len()));
    let (got, ms, rss) = measure(|| store.peek(&job, deep, now())).await;
    row(
        &format!("peek 100 at offset {}, label filter", deep.offset),
        ms,
        &rss,
        format!("{} records", got.map_err(|e| fail("peek", e))?.len()),
    );
    let (got, ms, rss) = measure(|| store.count(&job, now())).await;
    let counted = got.map_err(|e| fail("count", e))?;
    row("count, label filter", ms, &rss, format!("{counted}"));
    let (got, ms, rss) = measure(|| store.purge(&job, now())).await;
    let purged = got.map_err(|e| fail("purge", e))?;
    row("purge, label filter", ms, &rss, format!("{purged} removed"));
    let left = store.count(&Filter::all(), now()).await.map_err(|e| fail("count", e))?;
    if counted != tagged || purged != tagged || left != n - tagged {
        return Err(format!(
            "{name}: counted {counted}, purged {purged}, left {left}; expected {tagged}, {tagged}, {}",
            n - tagged
        ));
    }
    Ok(())
}

async fn run(args: Args) -> Result<(), String> {
    println!("DLQ reads on {} records (a third labelled job=x)\n", args.records);
    println!("| store | operation | ms | peak RSS growth | result |");
    println!("|---|---|---|---|---|");
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let sqlite = SqliteStore::open(dir.path().join("dlq.sqlite")).map_err(|e| format!("sqlite: {e}"))?;
    bench("SQLite", &sqlite, args.records).await?;
    if args.skip_redis {
        println!("\nRedis skipped (--skip-redis).");
    } else if !redis_server::installed() {
        println!("\nRedis skipped: redis-server is not installed (apt-get install -y redis-server).");
    } else {
        let server = RedisServer::start().map_err(|e| format!("redis-server: {e}"))?;
        let redis = RedisStore::connect(&server.url(), "inspect").await.map_err(|e| format!("redis: {e}"))?;
        bench("Redis", &redis, args.records).await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() {
    captcha_dlq_bench_native::exit_on_error("dlq-inspect", run(Args::parse()).await);
}
