//! DLQ throughput on SQLite (a temporary file in WAL mode) and Redis (a
//! throwaway `redis-server`), each row beside a floor measured in the same run
//! (raw SQLite through rusqlite, or the redis crate's blocking connection, doing
//! the same work with nothing else: see `sqlite_floor.rs` and `redis_floor.rs`),
//! plus the seeds' JSON file queue that rewrites the whole file per operation.
//!
//! The store and its floor take turns, a slice of 1,000 operations (or one
//! receive batch) at a time, each going first every other slice, so that both
//! see the same machine: on a shared machine, load that comes and goes would
//! otherwise land on one of them. Each side's time is the sum of its slices.
//!
//! Workloads, each on a fresh file or namespace:
//! - one by one: RECORDS pushes, then a drain (receive `--batch` under a lease,
//!   complete each), one call at a time; the floor runs one transaction (one
//!   round trip) per operation;
//! - concurrent: `--concurrency` callers pushing at once, then a drain whose
//!   completes go in one `complete_many` per receive batch; the floor groups that many operations per
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

use captcha_dlq::store::{Durability, RedisStore, SqliteStore};
use captcha_dlq_bench_native::json_file::JsonFileDlq;
use captcha_dlq_bench_native::redis_floor::{self, RedisFloor};
use captcha_dlq_bench_native::sqlite_floor::{self, SqliteFloor};
use captcha_dlq_bench_native::{human_bytes, now, FloorLease};
use captcha_dlq_core::dlq::testkit::{sample_journal_entry, sample_record};
use captcha_dlq_core::dlq::{DeadLetterRecord, DlqStore, Filter};
use captcha_dlq_core::{JournalEntry, Solution};
use captcha_dlq_mock::redis_server::{self, RedisServer};
use clap::Parser;

/// Operations per turn of the store or its floor.
const SLICE: usize = 1_000;

const LEASE: Duration = Duration::from_secs(3600);

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
    /// square of the size: 10,000 takes minutes, 100,000 would take hours.
    #[arg(long, value_delimiter = ',', default_values_t = [1_000u64])]
    json_records: Vec<u64>,
    /// Leave out the Redis rows even if redis-server is installed.
    #[arg(long)]
    skip_redis: bool,
    /// Leave out the SQLite rows.
    #[arg(long)]
    skip_sqlite: bool,
    /// What a SQLite commit survives, in the store and its floor alike: `process`
    /// (`synchronous = NORMAL`, the store's default) or `power-loss` (`synchronous = FULL`: every
    /// commit syncs the write-ahead log, which group commit shares).
    #[arg(long, value_enum, default_value_t = SqliteSync::Process)]
    sqlite_durability: SqliteSync,
    /// The connection the Redis floor sends on: the redis crate's async multiplexed connection
    /// on this runtime (the store's I/O model), or its blocking connection (no runtime at all).
    #[arg(long, value_enum, default_value_t = RedisFloorKind::Async)]
    redis_floor: RedisFloorKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SqliteSync {
    Process,
    PowerLoss,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RedisFloorKind {
    Async,
    Blocking,
}

/// One line of the table.
#[derive(Debug)]
struct Row {
    store: &'static str,
    workload: String,
    ops: u64,
    time: Turns,
    /// The one-by-one rate of the same operation, for the concurrent rows.
    one_by_one_rate: Option<f64>,
    note: String,
}

impl Row {
    fn print(&self) {
        let floor_rate =
            if self.time.floor > 0.0 { format!("{:.0}", self.ops as f64 / self.time.floor) } else { "-".into() };
        let ratio =
            if self.time.floor > 0.0 { format!("{:.2}", self.time.store / self.time.floor) } else { "-".into() };
        let speedup = self.one_by_one_rate.map_or("-".into(), |r| format!("{:.1}×", self.time.rate(self.ops) / r));
        let per_op = |secs: f64| secs * 1e6 / self.ops.max(1) as f64;
        let cpu = if self.time.floor > 0.0 {
            format!("{:.0} ({:.0})", per_op(self.time.store_cpu), per_op(self.time.floor_cpu))
        } else {
            format!("{:.0}", per_op(self.time.store_cpu))
        };
        println!(
            "| {} | {} | {} | {:.2} | {:.0} | {} | {} | {} | {} | {} |",
            self.store,
            self.workload,
            self.ops,
            self.time.store,
            self.time.rate(self.ops),
            floor_rate,
            ratio,
            cpu,
            speedup,
            self.note
        );
    }
}

/// Seconds the store and its floor spent on the same work: wall time, and CPU time (this
/// process's, plus the Redis server's for Redis rows).
#[derive(Debug, Default, Clone, Copy)]
struct Turns {
    store: f64,
    floor: f64,
    store_cpu: f64,
    floor_cpu: f64,
}

impl Turns {
    fn rate(&self, ops: u64) -> f64 {
        if self.store > 0.0 {
            ops as f64 / self.store
        } else {
            0.0
        }
    }

    fn plus(self, other: Turns) -> Turns {
        Turns {
            store: self.store + other.store,
            floor: self.floor + other.floor,
            store_cpu: self.store_cpu + other.store_cpu,
            floor_cpu: self.floor_cpu + other.floor_cpu,
        }
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

/// Runs `work` for every item, at most `concurrency` at once, in this task (as the client runs
/// its store calls: futures polled together, not a task each).
async fn at_once<T, F, Fut>(items: Vec<T>, concurrency: usize, work: F) -> Result<(), String>
where
    F: Fn(T) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    use futures::stream::{self, StreamExt, TryStreamExt};
    stream::iter(items).map(work).buffer_unordered(concurrency.max(1)).try_collect::<()>().await
}

/// The floors behind one interface. Inputs are encoded before any clock runs; each call is one
/// transaction (one round trip).
trait Floor {
    type Record: Send + Sync;
    type Entry: Send + Sync;
    fn encode_record(record: &DeadLetterRecord) -> Result<Self::Record, String>;
    fn encode_entry(entry: &JournalEntry) -> Result<Self::Entry, String>;
    async fn push(&mut self, records: &[Self::Record]) -> Result<(), String>;
    async fn receive(&mut self, max: usize) -> Result<Vec<FloorLease>, String>;
    async fn complete(&mut self, leases: &[FloorLease]) -> Result<(), String>;
    async fn journal_upsert(&mut self, entries: &[Self::Entry]) -> Result<(), String>;
    async fn journal_forget(&mut self, ids: &[String]) -> Result<(), String>;
}

fn now_ms() -> i64 {
    i64::try_from(now().as_unix_millis()).unwrap_or(i64::MAX)
}

/// The SQLite floor blocks: let the runtime move other tasks off this thread meanwhile.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

impl Floor for SqliteFloor {
    type Record = sqlite_floor::EncodedRecord;
    type Entry = sqlite_floor::EncodedEntry;

    fn encode_record(record: &DeadLetterRecord) -> Result<Self::Record, String> {
        sqlite_floor::EncodedRecord::new(record)
    }

    fn encode_entry(entry: &JournalEntry) -> Result<Self::Entry, String> {
        sqlite_floor::EncodedEntry::new(entry)
    }

    async fn push(&mut self, records: &[Self::Record]) -> Result<(), String> {
        blocking(|| SqliteFloor::push(self, records))
    }

    async fn receive(&mut self, max: usize) -> Result<Vec<FloorLease>, String> {
        blocking(|| SqliteFloor::receive(self, max, now_ms(), 3_600_000))
    }

    async fn complete(&mut self, leases: &[FloorLease]) -> Result<(), String> {
        blocking(|| SqliteFloor::complete(self, leases))
    }

    async fn journal_upsert(&mut self, entries: &[Self::Entry]) -> Result<(), String> {
        blocking(|| SqliteFloor::journal_upsert(self, entries))
    }

    async fn journal_forget(&mut self, ids: &[String]) -> Result<(), String> {
        blocking(|| SqliteFloor::journal_forget(self, ids, now_ms()))
    }
}

impl Floor for RedisFloor {
    type Record = redis_floor::EncodedRecord;
    type Entry = redis_floor::EncodedEntry;

    fn encode_record(record: &DeadLetterRecord) -> Result<Self::Record, String> {
        redis_floor::EncodedRecord::new(record)
    }

    fn encode_entry(entry: &JournalEntry) -> Result<Self::Entry, String> {
        redis_floor::EncodedEntry::new(entry)
    }

    async fn push(&mut self, records: &[Self::Record]) -> Result<(), String> {
        RedisFloor::push(self, records).await
    }

    async fn receive(&mut self, max: usize) -> Result<Vec<FloorLease>, String> {
        RedisFloor::receive(self, max, now().as_unix_millis(), 3_600_000).await
    }

    async fn complete(&mut self, leases: &[FloorLease]) -> Result<(), String> {
        RedisFloor::complete(self, leases).await
    }

    async fn journal_upsert(&mut self, entries: &[Self::Entry]) -> Result<(), String> {
        RedisFloor::journal_upsert(self, entries).await
    }

    async fn journal_forget(&mut self, ids: &[String]) -> Result<(), String> {
        RedisFloor::journal_forget(self, ids, now().as_unix_millis()).await
    }
}

/// CPU seconds used so far by this process and, for Redis, by the server.
type CpuClock = Arc<dyn Fn() -> f64 + Send + Sync>;

fn process_cpu() -> f64 {
    cpu_time::ProcessTime::try_now().map(|t| t.as_duration().as_secs_f64()).unwrap_or(0.0)
}

/// Times the floor's and the store's share of one slice, the one or the other first.
async fn turn(
    cpu: &CpuClock,
    floor_first: bool,
    floor: impl Future<Output = Result<(), String>>,
    store: impl Future<Output = Result<(), String>>,
) -> Result<Turns, String> {
    let mut t = Turns::default();
    let mut floor = Some(floor);
    let mut store = Some(store);
    for floors_turn in if floor_first { [true, false] } else { [false, true] } {
        let (start, cpu0) = (Instant::now(), cpu());
        if floors_turn {
            if let Some(f) = floor.take() {
                f.await?;
            }
            t.floor += start.elapsed().as_secs_f64();
            t.floor_cpu += cpu() - cpu0;
        } else {
            if let Some(s) = store.take() {
                s.await?;
            }
            t.store += start.elapsed().as_secs_f64();
            t.store_cpu += cpu() - cpu0;
        }
    }
    Ok(t)
}

/// Pushes `all` (the floor: the same records encoded), `callers` at once, slice by slice.
async fn push_turns<F: Floor>(
    cpu: &CpuClock,
    name: &str,
    floor: &mut F,
    store: &Store,
    all: &[DeadLetterRecord],
    callers: usize,
) -> Result<Turns, String> {
    let encoded = all.iter().map(F::encode_record).collect::<Result<Vec<_>, _>>()?;
    let mut total = Turns::default();
    for (i, (slice, enc)) in all.chunks(SLICE).zip(encoded.chunks(SLICE)).enumerate() {
        let slice = slice.to_vec();
        let floor_side = async {
            for group in enc.chunks(callers) {
                floor.push(group).await?;
            }
            Ok(())
        };
        let (store, name) = (Arc::clone(store), name.to_string());
        let store_side = at_once(slice, callers, move |r| {
            let (store, name) = (Arc::clone(&store), name.clone());
            async move { store.push(r).await.map(drop).map_err(|e| format!("{name}: push: {e}")) }
        });
        let t = turn(cpu, i % 2 == 0, floor_side, store_side).await?;
        total = total.plus(t);
    }
    Ok(total)
}

/// Drains both: a receive of `batch`, then its completes, one by one or `callers` per
/// `complete_many` (the floor: that many per transaction), a batch at a time each. Returns the time and how many each drained.
async fn drain_turns<F: Floor>(
    cpu: &CpuClock,
    name: &str,
    floor: &mut F,
    store: &Store,
    batch: usize,
    callers: usize,
) -> Result<(Turns, u64, u64), String> {
    let (mut floor_drained, mut store_drained) = (0u64, 0u64);
    let (mut floor_done, mut store_done) = (false, false);
    let mut total = Turns::default();
    let mut i = 0usize;
    while !(floor_done && store_done) {
        let floor_side = async {
            if floor_done {
                return Ok(());
            }
            let leases = floor.receive(batch).await?;
            floor_done = leases.is_empty();
            floor_drained += leases.len() as u64;
            for group in leases.chunks(callers) {
                floor.complete(group).await?;
            }
            Ok(())
        };
        let store_side = async {
            if store_done {
                return Ok(());
            }
            let leased = store.receive(&Filter::all(), batch, LEASE, now()).await;
            let leased = leased.map_err(|e| format!("{name}: receive: {e}"))?;
            store_done = leased.is_empty();
            store_drained += leased.len() as u64;
            let tokens: Vec<_> = leased.into_iter().map(|l| l.token).collect();
            if callers == 1 {
                for t in &tokens {
                    store.complete(t, now()).await.map_err(|e| format!("{name}: complete: {e}"))?;
                }
                return Ok(());
            }
            // Together, as an orchestration settling a receive batch does: one `complete_many`.
            for group in tokens.chunks(callers) {
                for result in store.complete_many(group, now()).await {
                    result.map_err(|e| format!("{name}: complete_many: {e}"))?;
                }
            }
            Ok(())
        };
        let t = turn(cpu, i % 2 == 0, floor_side, store_side).await?;
        total = total.plus(t);
        i += 1;
    }
    Ok((total, floor_drained, store_drained))
}

async fn upsert_turns<F: Floor>(
    cpu: &CpuClock,
    name: &str,
    floor: &mut F,
    store: &Store,
    all: &[JournalEntry],
    callers: usize,
) -> Result<Turns, String> {
    let encoded = all.iter().map(F::encode_entry).collect::<Result<Vec<_>, _>>()?;
    let mut total = Turns::default();
    for (i, (slice, enc)) in all.chunks(SLICE).zip(encoded.chunks(SLICE)).enumerate() {
        let slice = slice.to_vec();
        let floor_side = async {
            for group in enc.chunks(callers) {
                floor.journal_upsert(group).await?;
            }
            Ok(())
        };
        let (store, name) = (Arc::clone(store), name.to_string());
        let store_side = at_once(slice, callers, move |e| {
            let (store, name) = (Arc::clone(&store), name.clone());
            async move { store.journal_upsert(&e).await.map_err(|e| format!("{name}: journal_upsert: {e}")) }
        });
        let t = turn(cpu, i % 2 == 0, floor_side, store_side).await?;
        total = total.plus(t);
    }
    Ok(total)
}

async fn forget_turns<F: Floor>(
    cpu: &CpuClock,
    name: &str,
    floor: &mut F,
    store: &Store,
    ids: &[String],
    callers: usize,
) -> Result<Turns, String> {
    let mut total = Turns::default();
    for (i, slice) in ids.chunks(SLICE).enumerate() {
        let owned = slice.to_vec();
        let floor_side = async {
            for group in slice.chunks(callers) {
                floor.journal_forget(group).await?;
            }
            Ok(())
        };
        let (store, name) = (Arc::clone(store), name.to_string());
        let store_side = at_once(owned, callers, move |id| {
            let (store, name) = (Arc::clone(&store), name.clone());
            async move { store.journal_forget(&id, now()).await.map_err(|e| format!("{name}: journal_forget: {e}")) }
        });
        let t = turn(cpu, i % 2 == 0, floor_side, store_side).await?;
        total = total.plus(t);
    }
    Ok(total)
}

/// How to get a fresh store and a fresh floor for each workload.
trait Backend {
    const NAME: &'static str;
    /// What one group of calls is called: a transaction, a round trip.
    const GROUP: &'static str;
    type F: Floor;
    async fn store(&mut self, tag: &str) -> Result<(Store, Grouping), String>;
    async fn floor(&mut self, tag: &str) -> Result<Self::F, String>;
    /// CPU seconds so far of this process and of any server doing the work.
    fn cpu(&self) -> Result<CpuClock, String>;
}

struct Sqlite<'a> {
    dir: &'a Path,
    /// `synchronous = FULL` in the store and the floor.
    sync_each_commit: bool,
}

impl Backend for Sqlite<'_> {
    const NAME: &'static str = "SQLite (file, WAL)";
    const GROUP: &'static str = "transaction";
    type F = SqliteFloor;

    async fn store(&mut self, tag: &str) -> Result<(Store, Grouping), String> {
        let durability = if self.sync_each_commit { Durability::PowerLoss } else { Durability::Process };
        let store = SqliteStore::open(self.dir.join(format!("store-{tag}.sqlite")))
            .and_then(|s| s.with_durability(durability))
            .map_err(|e| e.to_string())?;
        let stats = store.clone();
        let grouping: Grouping = Box::new(move || {
            let s = stats.group_commit_stats();
            (s.writes, s.transactions)
        });
        Ok((Arc::new(store), grouping))
    }

    async fn floor(&mut self, tag: &str) -> Result<SqliteFloor, String> {
        SqliteFloor::create(&self.dir.join(format!("floor-{tag}.sqlite")), self.sync_each_commit)
    }

    fn cpu(&self) -> Result<CpuClock, String> {
        Ok(Arc::new(process_cpu))
    }
}

struct Redis {
    url: String,
    /// Measure against the redis crate's blocking connection instead of its async one.
    blocking_floor: bool,
}

/// The server's CPU seconds so far (`INFO cpu`, microsecond resolution).
fn redis_cpu(conn: &mut redis::Connection) -> Result<f64, String> {
    let info: String = redis::cmd("INFO").arg("cpu").query(conn).map_err(|e| format!("INFO cpu: {e}"))?;
    let field = |name: &str| -> f64 {
        info.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok()).unwrap_or(0.0)
    };
    Ok(field("used_cpu_user:") + field("used_cpu_sys:"))
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
        RedisFloor::connect(&self.url, tag, self.blocking_floor).await
    }

    fn cpu(&self) -> Result<CpuClock, String> {
        let client = redis::Client::open(self.url.as_str()).map_err(|e| e.to_string())?;
        let conn = std::sync::Mutex::new(client.get_connection().map_err(|e| e.to_string())?);
        Ok(Arc::new(move || {
            let server = conn.lock().ok().and_then(|mut c| tokio::task::block_in_place(|| redis_cpu(&mut c)).ok());
            process_cpu() + server.unwrap_or(0.0)
        }))
    }
}

async fn bench_backend<B: Backend>(b: &mut B, args: &Args) -> Result<Vec<Row>, String> {
    let name = B::NAME;
    let n = args.records;
    let batch = usize::try_from(args.batch).unwrap_or(usize::MAX);
    let c = usize::try_from(args.concurrency).unwrap_or(usize::MAX);
    let row = |workload: String, ops: u64, time: Turns, one_by_one_rate: Option<f64>, note: String| Row {
        store: name,
        workload,
        ops,
        time,
        one_by_one_rate,
        note,
    };
    let mut rows = Vec::new();
    let all = records(n);
    let cpu = b.cpu()?;

    let mut one_by_one = (0.0, 0.0);
    for (tag, callers) in [("serial", 1usize), ("concurrent", c)] {
        eprintln!("{name}: push and drain, {callers} at once…");
        let mut floor = b.floor(tag).await?;
        let (store, grouping) = b.store(tag).await?;
        let g0 = grouping();
        let push = push_turns(&cpu, name, &mut floor, &store, &all, callers).await?;
        let g1 = grouping();
        let (drain, floor_drained, drained) =
            drain_turns(&cpu, name, &mut floor, &store, batch, callers.min(batch)).await?;
        if (floor_drained, drained) != (n, n) {
            return Err(format!("{name}: drained {drained} (floor {floor_drained}) of {n}"));
        }
        let (push_note, drain_note) = (grouping_note(g0, g1, B::GROUP), grouping_note(g1, grouping(), B::GROUP));
        if callers == 1 {
            one_by_one = (push.rate(n), drain.rate(n));
            rows.push(row("push, one by one".into(), n, push, None, push_note));
            rows.push(row(format!("receive {batch} + complete, one by one"), n, drain, None, drain_note));
            rows.push(row("push then drain, total".into(), 2 * n, push.plus(drain), None, String::new()));
        } else {
            rows.push(row(format!("push, {c} callers at once"), n, push, Some(one_by_one.0), push_note));
            let workload = format!("receive {batch} + complete_many of {}", c.min(batch));
            rows.push(row(workload, n, drain, Some(one_by_one.1), drain_note));
        }
    }

    // The journal path of solved tasks: entry, entry with answer, forget (settles the key).
    let jn = args.journal_records.unwrap_or(n);
    let (first, answered) = entries(jn);
    let ids: Vec<String> = first.iter().map(|e| e.id.clone()).collect();
    let mut one_by_one = [0.0f64; 3];
    for (tag, callers) in [("journal-serial", 1usize), ("journal-concurrent", c)] {
        eprintln!("{name}: journal, {callers} at once…");
        let mut floor = b.floor(tag).await?;
        let (store, grouping) = b.store(tag).await?;
        let g0 = grouping();
        let upsert = upsert_turns(&cpu, name, &mut floor, &store, &first, callers).await?;
        let g1 = grouping();
        let answer = upsert_turns(&cpu, name, &mut floor, &store, &answered, callers).await?;
        let g2 = grouping();
        let forget = forget_turns(&cpu, name, &mut floor, &store, &ids, callers).await?;
        let g3 = grouping();
        let settled = store.settled("batch-7/").await.map_err(|e| format!("{name}: settled: {e}"))?;
        if settled.len() as u64 != jn {
            return Err(format!("{name}: {} keys settled of {jn}", settled.len()));
        }
        let cleared = store.clear_settled("").await.map_err(|e| format!("{name}: clear_settled: {e}"))?;
        if cleared != jn {
            return Err(format!("{name}: cleared {cleared} settled keys of {jn}"));
        }
        let phases = [
            ("journal_upsert (new entry)", upsert, grouping_note(g0, g1, B::GROUP)),
            ("journal_upsert (with answer)", answer, grouping_note(g1, g2, B::GROUP)),
            ("journal_forget (settles key)", forget, grouping_note(g2, g3, B::GROUP)),
        ];
        for (i, (what, time, note)) in phases.into_iter().enumerate() {
            let (mode, base) = if callers == 1 {
                one_by_one[i] = time.rate(jn);
                ("one by one".to_string(), None)
            } else {
                (format!("{callers} callers at once"), Some(one_by_one[i]))
            };
            rows.push(row(format!("{what}, {mode}"), jn, time, base, note));
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
    let (start, cpu0) = (Instant::now(), process_cpu());
    for record in records(n) {
        dlq.push(record).map_err(err)?;
    }
    let size = human_bytes(file_len(dlq.path()));
    let mut drained = 0u64;
    while dlq.pop().map_err(err)?.is_some() {
        drained += 1;
    }
    let (secs, cpu) = (start.elapsed().as_secs_f64(), process_cpu() - cpu0);
    Ok(Row {
        store: "JSON file (seeds)",
        workload: "push then pop, total".into(),
        ops: n + drained,
        time: Turns { store: secs, store_cpu: cpu, ..Turns::default() },
        one_by_one_rate: None,
        note: format!("whole file rewritten per op; {size} when full; pop = receive+complete without a lease"),
    })
}

async fn run(args: Args) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let load_before = load_average();

    if !args.skip_sqlite {
        let sync_each_commit = args.sqlite_durability == SqliteSync::PowerLoss;
        if sync_each_commit {
            notes.push(
                "SQLite with power-loss durability (--sqlite-durability power-loss): synchronous = FULL in the \
                 store and its floor, every commit syncs the write-ahead log."
                    .to_string(),
            );
        }
        let mut sqlite = Sqlite { dir: dir.path(), sync_each_commit };
        rows.extend(bench_backend(&mut sqlite, &args).await?);
    }
    if args.skip_redis {
        notes.push("Redis skipped (--skip-redis).".to_string());
    } else if !redis_server::installed() {
        notes.push("Redis skipped: redis-server is not installed (apt-get install -y redis-server).".to_string());
    } else {
        let server = RedisServer::start().map_err(|e| format!("redis-server: {e}"))?;
        let mut redis = Redis { url: server.url(), blocking_floor: args.redis_floor == RedisFloorKind::Blocking };
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
    println!(
        "| store | workload | ops | s | ops/s | floor ops/s | time ÷ floor | CPU µs/op (floor) | × one by one | note |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for row in &rows {
        row.print();
    }
    notes.push(format!(
        "Floors (same run, taking turns with the store slice by slice): raw SQLite through rusqlite on the \
             calling thread, and the redis crate's {} connection with one minimal script per operation, doing the \
             same work with the same pragmas and one transaction (round trip) per operation; in the concurrent rows \
             the floor puts that many operations in one transaction (one script call). See \
             bench/native/src/sqlite_floor.rs and redis_floor.rs.",
        match args.redis_floor {
            RedisFloorKind::Async => "async multiplexed",
            RedisFloorKind::Blocking => "blocking",
        }
    ));
    notes.push(
        "The JSON file queue is O(n) per operation (O(n²) per run), so it runs at small sizes only (--json-records)."
            .into(),
    );
    notes.push(format!(
        "CPU is this process's CPU time (plus the Redis server's, from INFO cpu, in Redis rows) while each side \
         ran. Load average (1 min) at the start and end of the run: {} and {} on {} CPUs; the time ratios of the \
         one-by-one rows grow with it, since each store call wakes a thread (or task) the floor does not have.",
        load_before,
        load_average(),
        std::thread::available_parallelism().map_or(0, usize::from)
    ));
    for note in notes {
        println!("\n{note}");
    }
    Ok(())
}

/// The 1-minute load average (`/proc/loadavg`), or `?`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    captcha_dlq_bench_native::exit_on_error("dlq-throughput", run(Args::parse()).await);
}
