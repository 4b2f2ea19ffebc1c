//! Single-call writes that arrive together go to Redis as one script call.
//!
//! Every `push`, `complete`, `abandon`, `park`, `unpark`, `journal_upsert`
//! and `journal_forget` is an [`Op`] run by the `APPLY` script, and a store
//! has at most one such script call in flight. A call made while none is in
//! flight goes out at once, by its caller (no hop through another task), and
//! by its operation's own script (`APPLY`'s dispatch would cost it 5–17 µs
//! of the server's time and buy nothing). A
//! call made while one is in flight is queued for the store's batch task,
//! which, once the call in flight is back, takes whatever has queued up (up
//! to [`MAX_BATCH`]) and runs it as one `EVALSHA` of `APPLY`: one round trip,
//! and one script start with its keys, for the whole batch instead of one per
//! call. Nothing waits for a batch to fill: batches are what arrives during a
//! round trip, so they grow with the load and cost a lone call nothing. Once
//! calls run at once (recent batches held several), every call goes through
//! the task, which yields to the runtime while more keep joining its batch:
//! callers polled in one task arrive in bursts, and a call that went out alone
//! would leave the burst behind it a round trip of its own. The hint decays
//! within a few batches when the load drops. Each operation is as atomic as it was alone (the whole
//! script is), and gets its own reply: an operation the server refuses (a key
//! of the wrong type) fails alone, while a failed round trip (connection lost,
//! timeout) fails every call of the batch with the same error.
//!
//! A caller may also send several operations as one group (`complete_many`:
//! the completes of a receive batch). A group of up to [`MAX_BATCH`]
//! operations is never split between script calls (a longer one goes as
//! several groups of that size), so the completes of one receive batch cost
//! one round trip however the gathering went; a group that does not fit in
//! the batch being gathered opens the next one.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use redis::{Cmd, ErrorKind, RedisError, RedisResult, Script, ServerErrorKind, ToRedisArgs, Value};
use tokio::sync::{mpsc, oneshot, Semaphore};

use super::conn::Conn;
use super::scripts::{Op, Scripts};

/// Operations one script call carries at most, so that no call holds the server for long.
pub(super) const MAX_BATCH: usize = 128;

/// Yields a batch waits through at most for more calls to join it, and yields in a row that
/// bring nothing before it goes.
const MAX_YIELDS: usize = 64;
const PATIENCE: usize = 3;

/// One operation with its arguments, as `APPLY` reads them.
#[derive(Debug)]
pub(super) struct Call {
    op: Op,
    args: Vec<Vec<u8>>,
}

impl Call {
    pub(super) fn new(op: Op) -> Call {
        Call { op, args: Vec::new() }
    }

    pub(super) fn op(&self) -> Op {
        self.op
    }

    pub(super) fn arg(mut self, arg: impl ToRedisArgs) -> Call {
        arg.write_redis_args(&mut self.args);
        self
    }
}

/// Calls sent together by one caller (one call, or the completes of a `complete_many`): they
/// always share a script call, and get one reply each.
struct Queued {
    calls: Vec<Call>,
    reply: oneshot::Sender<Vec<RedisResult<Value>>>,
}

/// How much batching happened, for benchmarks and operators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Script calls sent.
    pub round_trips: u64,
    /// Operations they carried.
    pub operations: u64,
}

/// What the callers and the batch task share.
struct Shared {
    conn: Conn,
    keys: Vec<String>,
    scripts: Arc<Scripts>,
    /// One script call of this store in flight at a time: while one is out, calls queue up
    /// and go together in the next (the task waits for the permit with its batch open).
    round_trip: Semaphore,
    /// The size of recent batches (the last one, or half the one before if larger). While it
    /// is above one, callers are running at once and a call goes to the batch task even when
    /// none is in flight: going out alone, it would leave the callers polled right after it a
    /// round trip of their own.
    recent_batch: AtomicUsize,
    round_trips: AtomicU64,
    operations: AtomicU64,
}

impl Shared {
    /// Counts a script call carrying `operations`.
    fn count(&self, operations: usize) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        self.operations.fetch_add(operations as u64, Ordering::Relaxed);
    }

    /// One `APPLY` call for `calls`, counted.
    async fn apply(&self, calls: &[&Call]) -> RedisResult<Vec<RedisResult<Value>>> {
        self.count(calls.len());
        apply(&mut self.conn.clone(), &self.keys, &self.scripts, calls).await
    }

    /// `call` by its own script (no `APPLY` dispatch), counted: its reply, or the error of its
    /// round trip or of the operation.
    async fn apply_alone(&self, call: &Call) -> RedisResult<Value> {
        self.count(1);
        let script = self.scripts.alone(call.op);
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(script.get_hash()).arg(self.keys.len()).arg(&self.keys).arg(&call.args);
        evalsha(&mut self.conn.clone(), script, &cmd).await
    }
}

/// The sending side; the task ends when every clone is dropped.
#[derive(Clone)]
pub(super) struct Batcher {
    queue: mpsc::UnboundedSender<Queued>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Batcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batcher").field("stats", &self.stats()).finish_non_exhaustive()
    }
}

impl Batcher {
    /// Starts the task on the current tokio runtime.
    pub(super) fn start(conn: Conn, keys: Vec<String>, scripts: Arc<Scripts>) -> Batcher {
        let (queue, calls) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            conn,
            keys,
            scripts,
            round_trip: Semaphore::new(1),
            recent_batch: AtomicUsize::new(0),
            round_trips: AtomicU64::new(0),
            operations: AtomicU64::new(0),
        });
        tokio::spawn(serve(Arc::clone(&shared), calls));
        Batcher { queue, shared }
    }

    /// Runs `call`: at once on its own when no script call of the store is in flight (no hop
    /// through the task), else in the task's next batch. Its own reply, or its round trip's error.
    pub(super) async fn run(&self, call: Call) -> RedisResult<Value> {
        self.run_group(vec![call]).await.pop().unwrap_or_else(|| Err(short_reply()))
    }

    /// Runs `calls` together, [`MAX_BATCH`] per script call: one reply per call, in order (a
    /// failed round trip answers each call it carried with its error).
    pub(super) async fn run_many(&self, mut calls: Vec<Call>) -> Vec<RedisResult<Value>> {
        let mut replies = Vec::with_capacity(calls.len());
        while !calls.is_empty() {
            let rest = calls.split_off(calls.len().min(MAX_BATCH));
            replies.extend(self.run_group(calls).await);
            calls = rest;
        }
        replies
    }

    /// `calls` (at most [`MAX_BATCH`]) in one script call, on their own when none is in flight
    /// and callers are not running at once, else in the task's next batch.
    async fn run_group(&self, calls: Vec<Call>) -> Vec<RedisResult<Value>> {
        let n = calls.len();
        if self.shared.recent_batch.load(Ordering::Relaxed) < 2 {
            if let Ok(_permit) = self.shared.round_trip.try_acquire() {
                if let [call] = calls.as_slice() {
                    return vec![self.shared.apply_alone(call).await];
                }
                let refs: Vec<&Call> = calls.iter().collect();
                return match self.shared.apply(&refs).await {
                    Ok(replies) => replies,
                    Err(e) => vec![Err(e); n],
                };
            }
        }
        let (reply, answer) = oneshot::channel();
        let stopped = || RedisError::from((ErrorKind::Io, "the Redis batch task stopped"));
        if self.queue.send(Queued { calls, reply }).is_err() {
            return vec![Err(stopped()); n];
        }
        answer.await.unwrap_or_else(|_| vec![Err(stopped()); n])
    }

    pub(super) fn stats(&self) -> BatchStats {
        BatchStats {
            round_trips: self.shared.round_trips.load(Ordering::Relaxed),
            operations: self.shared.operations.load(Ordering::Relaxed),
        }
    }
}

fn short_reply() -> RedisError {
    RedisError::from((ErrorKind::Parse, "the batch script gave too few replies"))
}

/// The operations of a batch being gathered, and a caller's group that did not fit (it opens the
/// next batch).
struct Gathering {
    batch: Vec<Queued>,
    operations: usize,
    left_over: Option<Queued>,
}

impl Gathering {
    fn full(&self) -> bool {
        self.operations >= MAX_BATCH || self.left_over.is_some()
    }

    fn add(&mut self, queued: Queued) {
        self.operations += queued.calls.len();
        self.batch.push(queued);
    }
}

async fn serve(shared: Arc<Shared>, mut calls: mpsc::UnboundedReceiver<Queued>) {
    let mut gathering = Gathering { batch: Vec::with_capacity(MAX_BATCH), operations: 0, left_over: None };
    loop {
        let first = match gathering.left_over.take() {
            Some(first) => first,
            None => match calls.recv().await {
                Some(first) => first,
                None => return,
            },
        };
        gathering.add(first);
        // Wait for the call in flight (if any) to come back; calls made meanwhile join.
        let Ok(_permit) = shared.round_trip.acquire().await else { return };
        take_queued(&mut calls, &mut gathering);
        // The batch came while another call was in flight, so callers are running at once, and
        // more of them are likely being polled right now (a task polls its futures in bursts,
        // on another worker thread): let them join while they keep coming. Each yield costs a
        // few microseconds; the round trip it saves costs tens.
        let mut empty_yields = 0;
        for _ in 0..MAX_YIELDS {
            if gathering.full() {
                break;
            }
            tokio::task::yield_now().await;
            if take_queued(&mut calls, &mut gathering) > 0 {
                empty_yields = 0;
            } else {
                empty_yields += 1;
                if empty_yields >= PATIENCE {
                    break;
                }
            }
        }
        // Callers, not operations: a caller's group of completes is one caller at once.
        let recent = shared.recent_batch.load(Ordering::Relaxed);
        shared.recent_batch.store(gathering.batch.len().max(recent / 2), Ordering::Relaxed);
        let replies = {
            let calls: Vec<&Call> = gathering.batch.iter().flat_map(|q| &q.calls).collect();
            shared.apply(&calls).await
        };
        gathering.operations = 0;
        match replies {
            Ok(replies) => {
                let mut replies = replies.into_iter();
                for queued in gathering.batch.drain(..) {
                    let own: Vec<RedisResult<Value>> =
                        queued.calls.iter().map(|_| replies.next().unwrap_or_else(|| Err(short_reply()))).collect();
                    // The caller may have gone (timed out); its write is settled all the same.
                    let _ = queued.reply.send(own);
                }
            }
            Err(e) => {
                for queued in gathering.batch.drain(..) {
                    let _ = queued.reply.send(vec![Err(e.clone()); queued.calls.len()]);
                }
            }
        }
    }
}

/// Groups queued now, moved into the batch while they fit in [`MAX_BATCH`] operations (the
/// first that does not is kept for the next batch); how many.
fn take_queued(calls: &mut mpsc::UnboundedReceiver<Queued>, gathering: &mut Gathering) -> usize {
    let before = gathering.batch.len();
    while !gathering.full() {
        match calls.try_recv() {
            Ok(next) if gathering.operations + next.calls.len() > MAX_BATCH => gathering.left_over = Some(next),
            Ok(next) => gathering.add(next),
            Err(_) => break,
        }
    }
    gathering.batch.len() - before
}

/// `cmd`, an `EVALSHA` of `script`, sent again after loading the script if the server lost it
/// (restarted, `SCRIPT FLUSH`).
async fn evalsha(conn: &mut Conn, script: &Script, cmd: &Cmd) -> RedisResult<Value> {
    match cmd.query_async(conn).await {
        Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
            script.prepare_invoke().load_async(conn).await?;
            cmd.query_async(conn).await
        }
        other => other,
    }
}

/// One `EVALSHA APPLY` for `batch` (see [`evalsha`]). One reply per operation: its value, or the
/// error the server gave it.
async fn apply(
    conn: &mut Conn,
    keys: &[String],
    scripts: &Scripts,
    batch: &[&Call],
) -> RedisResult<Vec<RedisResult<Value>>> {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(scripts.apply.get_hash()).arg(keys.len()).arg(keys);
    for call in batch {
        cmd.arg(call.op.name()).arg(call.args.len()).arg(&call.args);
    }
    match evalsha(conn, &scripts.apply, &cmd).await? {
        Value::Array(items) if items.len() == batch.len() => Ok(items
            .into_iter()
            .map(|item| match item {
                Value::ServerError(e) => Err(RedisError::from(e)),
                value => Ok(value),
            })
            .collect()),
        other => {
            let got = match other {
                Value::Array(items) => format!("{} replies", items.len()),
                _ => "no array".to_string(),
            };
            Err(RedisError::from((
                ErrorKind::Parse,
                "the batch script's reply does not match its operations",
                format!("{} operations, {got}", batch.len()),
            )))
        }
    }
}
