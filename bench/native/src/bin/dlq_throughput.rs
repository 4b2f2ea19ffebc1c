//! DLQ throughput on SQLite (a temporary file in WAL mode) and Redis (a
//! throwaway `redis-server`), each row beside a floor measured in the same run
//! (raw SQLite through rusqlite, or the redis crate's blocking connection, doing
//! the same work with nothing else: see `sqlite_floor.rs` and `redis_floor.rs`),
//! plus the seeds' JSON file queue that rewrites the whole file per operation.
//!
//! Workloads, each on a fresh file or namespace:
//! - one by one: RECORDS pushes, then a drain (receive `--batch` under a lease,
//!   complete each), one call at a time; the floor runs one transaction (one
//!   round trip) per operation;
//! - concurrent: `--concurrency` callers pushing at once, then a drain whose
//!   completes run at once; the floor groups that many operations per
//!   transaction (per round trip), which is the best group commit can do;
//! - the journal path of a solved task, as the client writes it: the entry
//!   before submission, the entry again with its answer, then `journal_forget`
//!   (which settles the task's key), one by one and concurrently.
//!
//! Run: `cargo run --release -p captcha-dlq-bench-native --bin dlq-throughput -- [RECORDS]`

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use captcha_dlq::store::{RedisStore, SqliteStore};
use captcha_dlq_bench_native::json_file::JsonFileDlq;
use captcha_dlq_bench_native::redis_floor::{self, RedisFloor};
use captcha_dlq_bench_native::redis_server::{self, RedisServer};
use captcha_dlq_bench_native::sqlite_floor::{self, SqliteFloor};
use captcha_dlq_bench_native::{human_bytes, now};
use captcha_dlq_core::dlq::testkit::{sample_journal_entry, sample_record};
use captcha_dlq_core::dlq::{DeadLetterRecord, DlqStore, Filter};
use captcha_dlq_core::{JournalEntry, Solution};
use clap::Parser;

/// Push, receive, complete and journal writes on every DLQ backend, beside their floors.
#[derive(Debug, Parser)]
#[command(name = "dlq-throughput")]
struct Args {
    /// Records pushed and drained per workload on SQLite and Redis.
    #[arg(default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    records: u64,
    /// Records leased per `receive` call.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    batch: u64,
    /// Callers at once in the concurrent workloads.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(2..=10_000))]
    concurrency: u64,
    /// Tasks in the journal workloads (default: RECORDS).
    #[arg(long)]
    journal_records: Option<u64>,
    /// Queue sizes for the JSON file queue (each capped at RECORDS). Its cost grows with the
    /// square of the size: 100,000 would take hours.
    #[arg(long, value_delimiter = ',', default_values_t = [1_000u64])]
    json_records: Vec<u64>,
    /// Leave out the Redis rows even if redis-server is installed.
    #[arg(long)]
    skip_redis: bool,
    /// Leave out the SQLite rows.
    #[arg(long)]
    skip_sqlite: bool,
}

/// One line of the table.
#[derive(Debug)]
struct Row {
    store: &'static str,
    workload: String,
    ops: u64,
    secs: f64,
    /// The floor's time for the same work.
    floor_secs: Option<f64>,
    /// The one-by-one rate of the same operation, for the concurrent rows.
    one_by_one_rate: Option<f64>,
    note: String,
}

impl Row {
    fn rate(&self) -> f64 {
        if self.secs > 0.0 {
            self.ops as f64 / self.secs
        } else {
            0.0
        }
    }

    fn print(&self) {
        let floor_rate = self.floor_secs.map_or("-".into(), |f| format!("{:.0}", self.ops as f64 / f));
        let ratio = self.floor_secs.map_or("-".into(), |f| format!("{:.2}", self.secs / f));
        let speedup = self.one_by_one_rate.map_or("-".into(), |r| format!("{:.1}×", self.rate() / r));
        println!(
            "| {} | {} | {} | {:.2} | {:.0} | {} | {} | {} | {} |",
            self.store,
            self.workload,
            self.ops,
            self.secs,
            self.rate(),
            floor_rate,
            ratio,
            speedup,
            self.note
        );
    }
}

fn records(n: u64) -> Vec<DeadLetterRecord> {
    // One minute apart, so oldest-first order is the push order.
    (0..n).map(|i| sample_record(&format!("bench-{i:09}"), i)).collect()
}

/// The entries of `n` keyed tasks: as written before submission, and again with the answer.
fn entries(n: u64) -> (Vec<JournalEntry>, Vec<JournalEntry>) {
    let first: Vec<JournalEntry> = (0..n)
        .map(|i| {
            let mut e = sample_journal_entry(&format!("task-{i:09}"), 1);
            e.key = Some(format!("batch-7/line-{i:09}"));
            e
        })
        .collect();
    let answered = first
        .iter()
        .map(|e| {
            let mut e = e.clone();
            let mut solution = Solution::text("03AGdBq24PBCbwiDRaS_MJ7Z".repeat(20));
            solution.provider_task_id = Some("71823461".into());
            e.solution = Some(solution);
            e
        })
        .collect();
    (first, answered)
}

type Store = Arc<dyn DlqStore>;

/// How many calls the store has run, and in how many transactions (round trips).
type Grouping = Box<dyn Fn() -> (u64, u64) + Send + Sync>;

/// "N calls per transaction" between two readings of a [`Grouping`].
fn grouping_note(before: (u64, u64), after: (u64, u64), per: &str) -> String {
    let (calls, groups) = (after.0 - before.0, after.1 - before.1);
    if groups == 0 {
        return String::new();
    }
    format!("{:.1} calls per {per}", calls as f64 / groups as f64)
}

async fn timed<T, Fut: Future<Output = Result<T, String>>>(f: Fut) -> Result<(T, f64), String> {
    let start = Instant::now();
    let out = f.await?;
    Ok((out, start.elapsed().as_secs_f64()))
}

/// Runs `work` for every item, with `concurrency` tasks each taking items in turn.
async fn at_once<T, F, Fut>(items: Vec<T>, concurrency: usize, work: F) -> Result<(), String>
where
    T: Send + 'static,
    F: Fn(T) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send,
{
    let queue = Arc::new(std::sync::Mutex::new(items.into_iter()));
    let work = Arc::new(work);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (queue, work) = (Arc::clone(&queue), Arc::clone(&work));
        tasks.spawn(async move {
            loop {
                let next = queue.lock().map_err(|_| "queue poisoned".to_string())?.next();
                let Some(item) = next else { return Ok::<(), String>(()) };
                work(item).await?;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| format!("a bench task failed: {e}"))??;
    }
    Ok(())
}

async fn push_all(name: &str, store: &Store, all: Vec<DeadLetterRecord>, concurrency: usize) -> Result<(), String> {
    let name = name.to_string();
    let store = Arc::clone(store);
    at_once(all, concurrency, move |r| {
        let (store, name) = (Arc::clone(&store), name.clone());
        async move { store.push(r).await.map(drop).map_err(|e| format!("{name}: push failed: {e}")) }
    })
    .await
}

/// Receives `batch` at a time and completes them, `concurrency` at once; returns how many.
async fn drain(name: &str, store: &Store, batch: usize, concurrency: usize) -> Result<u64, String> {
    let lease = Duration::from_secs(3600);
    let mut drained = 0u64;
    loop {
        let leased =
            store.receive(&Filter::all(), batch, lease, now()).await.map_err(|e| format!("{name}: receive: {e}"))?;
        if leased.is_empty() {
            return Ok(drained);
        }
        drained += leased.len() as u64;
        let tokens: Vec<_> = leased.into_iter().map(|l| l.token).collect();
        let (name, store) = (name.to_string(), Arc::clone(store));
        at_once(tokens, concurrency, move |t| {
            let (store, name) = (Arc::clone(&store), name.clone());
            async move { store.complete(&t, now()).await.map_err(|e| format!("{name}: complete: {e}")) }
        })
        .await?;
    }
}

async fn upsert_all(name: &str, store: &Store, all: Vec<JournalEntry>, concurrency: usize) -> Result<(), String> {
    let (name, store) = (name.to_string(), Arc::clone(store));
    at_once(all, concurrency, move |e| {
        let (store, name) = (Arc::clone(&store), name.clone());
        async move { store.journal_upsert(&e).await.map_err(|e| format!("{name}: journal_upsert: {e}")) }
    })
    .await
}

async fn forget_all(name: &str, store: &Store, ids: Vec<String>, concurrency: usize) -> Result<(), String> {
    let (name, store) = (name.to_string(), Arc::clone(store));
    at_once(ids, concurrency, move |id| {
        let (store, name) = (Arc::clone(&store), name.clone());
        async move { store.journal_forget(&id, now()).await.map_err(|e| format!("{name}: journal_forget: {e}")) }
    })
    .await
}

/// The floors, behind one interface: `group` operations per transaction or round trip.
trait Floor: Send {
    fn push(&mut self, records: &[DeadLetterRecord], group: usize) -> Result<f64, String>;
    /// Receives `batch` at a time, completes `group` per transaction; returns (drained, secs).
    fn drain(&mut self, batch: usize, group: usize) -> Result<(u64, f64), String>;
    fn journal_upsert(&mut self, entries: &[JournalEntry], group: usize) -> Result<f64, String>;
    fn journal_forget(&mut self, ids: &[String], group: usize) -> Result<f64, String>;
}

fn now_ms() -> i64 {
    i64::try_from(now().as_unix_millis()).unwrap_or(i64::MAX)
}

fn timed_sync(f: impl FnOnce() -> Result<(), String>) -> Result<f64, String> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed().as_secs_f64())
}

impl Floor for SqliteFloor {
    fn push(&mut self, records: &[DeadLetterRecord], group: usize) -> Result<f64, String> {
        let encoded = records.iter().map(sqlite_floor::EncodedRecord::new).collect::<Result<Vec<_>, _>>()?;
        timed_sync(|| encoded.chunks(group).try_for_each(|g| SqliteFloor::push(self, g)))
    }

    fn drain(&mut self, batch: usize, group: usize) -> Result<(u64, f64), String> {
        let start = Instant::now();
        let mut drained = 0;
        loop {
            let leases = self.receive(batch, now_ms(), 3_600_000)?;
            if leases.is_empty() {
                return Ok((drained, start.elapsed().as_secs_f64()));
            }
            drained += leases.len() as u64;
            leases.chunks(group).try_for_each(|g| self.complete(g))?;
        }
    }

    fn journal_upsert(&mut self, entries: &[JournalEntry], group: usize) -> Result<f64, String> {
        let encoded = entries.iter().map(sqlite_floor::EncodedEntry::new).collect::<Result<Vec<_>, _>>()?;
        timed_sync(|| encoded.chunks(group).try_for_each(|g| SqliteFloor::journal_upsert(self, g)))
    }

    fn journal_forget(&mut self, ids: &[String], group: usize) -> Result<f64, String> {
        timed_sync(|| ids.chunks(group).try_for_each(|g| SqliteFloor::journal_forget(self, g, now_ms())))
    }
}

impl Floor for RedisFloor {
    fn push(&mut self, records: &[DeadLetterRecord], group: usize) -> Result<f64, String> {
        let encoded = records.iter().map(redis_floor::EncodedRecord::new).collect::<Result<Vec<_>, _>>()?;
        timed_sync(|| encoded.chunks(group).try_for_each(|g| RedisFloor::push(self, g)))
    }

    fn drain(&mut self, batch: usize, group: usize) -> Result<(u64, f64), String> {
        let start = Instant::now();
        let mut drained = 0;
        loop {
            let leases = self.receive(batch, now().as_unix_millis(), 3_600_000)?;
            if leases.is_empty() {
                return Ok((drained, start.elapsed().as_secs_f64()));
            }
            drained += leases.len() as u64;
            leases.chunks(group).try_for_each(|g| self.complete(g))?;
        }
    }

    fn journal_upsert(&mut self, entries: &[JournalEntry], group: usize) -> Result<f64, String> {
        let encoded = entries.iter().map(redis_floor::EncodedEntry::new).collect::<Result<Vec<_>, _>>()?;
        timed_sync(|| encoded.chunks(group).try_for_each(|g| RedisFloor::journal_upsert(self, g)))
    }

    fn journal_forget(&mut self, ids: &[String], group: usize) -> Result<f64, String> {
        timed_sync(|| ids.chunks(group).try_for_each(|g| RedisFloor::journal_forget(self, g, now().as_unix_millis())))
    }
}

/// Runs blocking floor work off the async runtime.
async fn floor_run<F: Floor + 'static, T: Send + 'static>(
    floor: F,
    work: impl FnOnce(&mut F) -> Result<T, String> + Send + 'static,
) -> Result<(F, T), String> {
    tokio::task::spawn_blocking(move || {
        let mut floor = floor;
        let out = work(&mut floor)?;
        Ok((floor, out))
    })
    .await
    .map_err(|e| format!("floor thread failed: {e}"))?
}

/// How to get a fresh store and a fresh floor for each workload.
trait Backend {
    const NAME: &'static str;
    /// What one group of calls is called: a transaction, a round trip.
    const GROUP: &'static str;
    type F: Floor + 'static;
    async fn store(&mut self, tag: &str) -> Result<(Store, Grouping), String>;
    async fn floor(&mut self, tag: &str) -> Result<Self::F, String>;
}

struct Sqlite<'a> {
    dir: &'a Path,
}

impl Backend for Sqlite<'_> {
    const NAME: &'static str = "SQLite (file, WAL)";
    const GROUP: &'static str = "transaction";
    type F = SqliteFloor;

    async fn store(&mut self, tag: &str) -> Result<(Store, Grouping), String> {
        let store = SqliteStore::open(self.dir.join(format!("store-{tag}.sqlite"))).map_err(|e| e.to_string())?;
        let stats = store.clone();
        let grouping: Grouping = Box::new(move || {
            let s = stats.group_commit_stats();
            (s.writes, s.transactions)
        });
        Ok((Arc::new(store), grouping))
    }

    async fn floor(&mut self, tag: &str) -> Result<SqliteFloor, String> {
        SqliteFloor::create(&self.dir.join(format!("floor-{tag}.sqlite")))
    }
}

struct Redis {
    url: String,
}

impl Backend for Redis {
    const NAME: &'static str = "Redis (streams + Lua)";
    const GROUP: &'static str = "round trip";
    type F = RedisFloor;

    async fn store(&mut self, tag: &str) -> Result<(Store, Grouping), String> {
        let store = RedisStore::connect(&self.url, &format!("bench-{tag}")).await.map_err(|e| e.to_string())?;
        let stats = store.clone();
        let grouping: Grouping = Box::new(move || {
            let s = stats.batch_stats();
            (s.operations, s.round_trips)
        });
        Ok((Arc::new(store), grouping))
    }

    async fn floor(&mut self, tag: &str) -> Result<RedisFloor, String> {
        let url = self.url.clone();
        let tag = tag.to_string();
        tokio::task::spawn_blocking(move || {
            let mut floor = RedisFloor::connect(&url, &tag)?;
            floor.load()?;
            Ok(floor)
        })
        .await
        .map_err(|e| format!("floor thread failed: {e}"))?
    }
}

async fn bench_backend<B: Backend>(b: &mut B, args: &Args) -> Result<Vec<Row>, String> {
    let name = B::NAME;
    let n = args.records;
    let batch = usize::try_from(args.batch).unwrap_or(usize::MAX);
    let c = usize::try_from(args.concurrency).unwrap_or(usize::MAX);
    let row = |workload: String, ops: u64, secs: f64, floor_secs: f64, one_by_one_rate: Option<f64>, note: String| {
        Row { store: name, workload, ops, secs, floor_secs: Some(floor_secs), one_by_one_rate, note }
    };
    let mut rows = Vec::new();

    // One by one: push, then drain.
    eprintln!("{name}: one by one, floor…");
    let (floor, push_floor) = floor_run(b.floor("serial").await?, move |f| f.push(&records(n), 1)).await?;
    let (_, (floor_drained, drain_floor)) = floor_run(floor, move |f| f.drain(batch, 1)).await?;
    if floor_drained != n {
        return Err(format!("{name} floor drained {floor_drained} of {n}"));
    }
    eprintln!("{name}: one by one, store…");
    let (store, grouping) = b.store("serial").await?;
    let g0 = grouping();
    let ((), push_secs) = timed(push_all(name, &store, records(n), 1)).await?;
    let g1 = grouping();
    let (drained, drain_secs) = timed(drain(name, &store, batch, 1)).await?;
    if drained != n {
        return Err(format!("{name}: drained {drained} of {n}"));
    }
    let (push_note, drain_note) = (grouping_note(g0, g1, B::GROUP), grouping_note(g1, grouping(), B::GROUP));
    let push_rate = n as f64 / push_secs;
    let drain_rate = n as f64 / drain_secs;
    rows.push(row("push, one by one".into(), n, push_secs, push_floor, None, push_note));
    rows.push(row(format!("receive {batch} + complete, one by one"), n, drain_secs, drain_floor, None, drain_note));
    rows.push(row(
        "push then drain, total".into(),
        2 * n,
        push_secs + drain_secs,
        push_floor + drain_floor,
        None,
        String::new(),
    ));
    drop(store);

    // Concurrent: push, then drain with the completes of each batch at once.
    eprintln!("{name}: {c} at once, floor…");
    let (floor, push_floor) = floor_run(b.floor("concurrent").await?, move |f| f.push(&records(n), c)).await?;
    let (_, (_, drain_floor)) = floor_run(floor, move |f| f.drain(batch, c.min(batch))).await?;
    eprintln!("{name}: {c} at once, store…");
    let (store, grouping) = b.store("concurrent").await?;
    let g0 = grouping();
    let ((), push_secs) = timed(push_all(name, &store, records(n), c)).await?;
    let g1 = grouping();
    let (drained, drain_secs) = timed(drain(name, &store, batch, c)).await?;
    if drained != n {
        return Err(format!("{name}: drained {drained} of {n} (concurrent)"));
    }
    let (push_note, drain_note) = (grouping_note(g0, g1, B::GROUP), grouping_note(g1, grouping(), B::GROUP));
    rows.push(row(format!("push, {c} callers at once"), n, push_secs, push_floor, Some(push_rate), push_note));
    rows.push(row(
        format!("receive {batch} + complete, {} at once", c.min(batch)),
        n,
        drain_secs,
        drain_floor,
        Some(drain_rate),
        drain_note,
    ));
    drop(store);

    // The journal path of solved tasks: entry, entry with answer, forget (settles the key).
    let jn = args.journal_records.unwrap_or(n);
    let mut one_by_one = [0.0f64; 3];
    for (tag, callers) in [("journal-serial", 1usize), ("journal-concurrent", c)] {
        eprintln!("{name}: journal, {callers} at once, floor…");
        let (first, answered) = entries(jn);
        let ids: Vec<String> = first.iter().map(|e| e.id.clone()).collect();
        let (first2, answered2, ids2) = (first.clone(), answered.clone(), ids.clone());
        let (_, floors) = floor_run(b.floor(tag).await?, move |f| {
            Ok([
                f.journal_upsert(&first2, callers)?,
                f.journal_upsert(&answered2, callers)?,
                f.journal_forget(&ids2, callers)?,
            ])
        })
        .await?;
        eprintln!("{name}: journal, {callers} at once, store…");
        let (store, grouping) = b.store(tag).await?;
        let g0 = grouping();
        let ((), upsert_secs) = timed(upsert_all(name, &store, first, callers)).await?;
        let g1 = grouping();
        let ((), answer_secs) = timed(upsert_all(name, &store, answered, callers)).await?;
        let g2 = grouping();
        let ((), forget_secs) = timed(forget_all(name, &store, ids, callers)).await?;
        let g3 = grouping();
        let upsert_note = grouping_note(g0, g1, B::GROUP);
        let answer_note = grouping_note(g1, g2, B::GROUP);
        let forget_note = grouping_note(g2, g3, B::GROUP);
        let settled = store.settled("batch-7/").await.map_err(|e| format!("{name}: settled: {e}"))?;
        if settled.len() as u64 != jn {
            return Err(format!("{name}: {} keys settled of {jn}", settled.len()));
        }
        let cleared = store.clear_settled("").await.map_err(|e| format!("{name}: clear_settled: {e}"))?;
        if cleared != jn {
            return Err(format!("{name}: cleared {cleared} settled keys of {jn}"));
        }
        let secs = [upsert_secs, answer_secs, forget_secs];
        let notes = [upsert_note, answer_note, forget_note];
        let what = ["journal_upsert (new entry)", "journal_upsert (with answer)", "journal_forget (settles key)"];
        for i in 0..3 {
            let mode = if callers == 1 { "one by one".to_string() } else { format!("{callers} callers at once") };
            let base = if callers == 1 {
                one_by_one[i] = jn as f64 / secs[i];
                None
            } else {
                Some(one_by_one[i])
            };
            rows.push(row(format!("{}, {mode}", what[i]), jn, secs[i], floors[i], base, notes[i].clone()));
        }
    }
    Ok(rows)
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn json_row(n: u64, dir: &Path) -> Result<Row, String> {
    let path = dir.join(format!("captcha-dlq-{n}.json"));
    let err = |e: std::io::Error| format!("JSON file: {}: {e}", path.display());
    let mut dlq = JsonFileDlq::create(&path).map_err(err)?;
    eprintln!("JSON file: pushing and popping {n} records…");
    let start = Instant::now();
    for record in records(n) {
        dlq.push(record).map_err(err)?;
    }
    let size = human_bytes(file_len(dlq.path()));
    let mut drained = 0u64;
    while dlq.pop().map_err(err)?.is_some() {
        drained += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    Ok(Row {
        store: "JSON file (seeds)",
        workload: "push then pop, total".into(),
        ops: n + drained,
        secs,
        floor_secs: None,
        one_by_one_rate: None,
        note: format!("whole file rewritten per op; {size} when full; pop = receive+complete without a lease"),
    })
}

async fn run(args: Args) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let mut rows = Vec::new();
    let mut notes = Vec::new();

    if !args.skip_sqlite {
        let mut sqlite = Sqlite { dir: dir.path() };
        rows.extend(bench_backend(&mut sqlite, &args).await?);
    }
    let _server;
    if args.skip_redis {
        notes.push("Redis skipped (--skip-redis).".to_string());
    } else if !redis_server::installed() {
        notes.push("Redis skipped: redis-server is not installed (apt-get install -y redis-server).".to_string());
    } else {
        let server = RedisServer::start()?;
        let mut redis = Redis { url: server.url() };
        _server = server;
        rows.extend(bench_backend(&mut redis, &args).await?);
    }
    let mut json_sizes: Vec<u64> =
        args.json_records.iter().map(|n| (*n).min(args.records)).filter(|n| *n > 0).collect();
    json_sizes.sort_unstable();
    json_sizes.dedup();
    for n in json_sizes {
        rows.push(json_row(n, dir.path())?);
    }

    println!(
        "DLQ throughput: {} records per workload, receive {} at a time under a lease, {} callers in the concurrent rows",
        args.records, args.batch, args.concurrency
    );
    println!("| store | workload | ops | s | ops/s | floor ops/s | time ÷ floor | × one by one | note |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in &rows {
        row.print();
    }
    notes.push(
        "Floors (same run): raw SQLite through rusqlite, or the redis crate's blocking connection with one minimal \
         script per operation, doing the same work with the same pragmas and one transaction (round trip) per \
         operation; in the concurrent rows the floor puts that many operations in one transaction (round trip). \
         See bench/native/src/sqlite_floor.rs and redis_floor.rs."
            .into(),
    );
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
