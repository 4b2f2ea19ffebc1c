//! Single-call writes that arrive together go to Redis as one script call.
//!
//! Every `push`, `complete`, `abandon`, `park`, `unpark`, `journal_upsert`
//! and `journal_forget` becomes an [`Op`] sent to one task per store. The task
//! takes whatever has queued up since its last call (up to [`MAX_BATCH`]) and
//! runs it as one `EVALSHA` of the `APPLY` script: one round trip, and one
//! script start with its keys, for the whole batch instead of one per call.
//! Nothing waits for a batch to fill: a call arriving while nothing is in
//! flight goes out at once, and while a call is in flight the next batch
//! queues up behind it. Each operation is as atomic as it was alone (the whole
//! script is), and gets its own reply: an operation the server refuses (a key
//! of the wrong type) fails alone, while a failed round trip (connection lost,
//! timeout) fails every call of the batch with the same error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use redis::aio::ConnectionManager;
use redis::{ErrorKind, RedisError, RedisResult, ServerErrorKind, ToRedisArgs, Value};
use tokio::sync::{mpsc, oneshot};

use super::scripts::{Op, Scripts};

/// Operations one script call carries at most, so that no call holds the server for long.
pub(super) const MAX_BATCH: usize = 128;

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

struct Queued {
    call: Call,
    reply: oneshot::Sender<RedisResult<Value>>,
}

/// How much batching happened, for benchmarks and operators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Script calls sent.
    pub round_trips: u64,
    /// Operations they carried.
    pub operations: u64,
}

#[derive(Debug, Default)]
struct Counts {
    round_trips: AtomicU64,
    operations: AtomicU64,
}

/// The sending side; the task ends when every clone is dropped.
#[derive(Clone, Debug)]
pub(super) struct Batcher {
    queue: mpsc::UnboundedSender<Queued>,
    counts: Arc<Counts>,
}

impl Batcher {
    /// Starts the task on the current tokio runtime.
    pub(super) fn start(conn: ConnectionManager, keys: Vec<String>, scripts: Arc<Scripts>) -> Batcher {
        let (queue, calls) = mpsc::unbounded_channel();
        let counts = Arc::new(Counts::default());
        tokio::spawn(serve(conn, keys, scripts, calls, Arc::clone(&counts)));
        Batcher { queue, counts }
    }

    /// Runs `call` in the next batch; its own reply, or the batch's error.
    pub(super) async fn run(&self, call: Call) -> RedisResult<Value> {
        let (reply, answer) = oneshot::channel();
        let stopped = || RedisError::from((ErrorKind::Io, "the Redis batch task stopped"));
        self.queue.send(Queued { call, reply }).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    pub(super) fn stats(&self) -> BatchStats {
        BatchStats {
            round_trips: self.counts.round_trips.load(Ordering::Relaxed),
            operations: self.counts.operations.load(Ordering::Relaxed),
        }
    }
}

async fn serve(
    mut conn: ConnectionManager,
    keys: Vec<String>,
    scripts: Arc<Scripts>,
    mut calls: mpsc::UnboundedReceiver<Queued>,
    counts: Arc<Counts>,
) {
    let mut batch: Vec<Queued> = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = calls.recv().await {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match calls.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        counts.round_trips.fetch_add(1, Ordering::Relaxed);
        counts.operations.fetch_add(batch.len() as u64, Ordering::Relaxed);
        let replies = apply(&mut conn, &keys, &scripts, &batch).await;
        match replies {
            Ok(replies) => {
                let mut replies = replies.into_iter();
                for queued in batch.drain(..) {
                    let reply = replies.next().unwrap_or_else(|| {
                        Err(RedisError::from((ErrorKind::Parse, "the batch script gave too few replies")))
                    });
                    // The caller may have gone (timed out); its write is settled all the same.
                    let _ = queued.reply.send(reply);
                }
            }
            Err(e) => {
                for queued in batch.drain(..) {
                    let _ = queued.reply.send(Err(e.clone()));
                }
            }
        }
    }
}

/// One `EVALSHA APPLY` for `batch`, loading the script first if the server lost it (restarted,
/// `SCRIPT FLUSH`). One reply per operation: its value, or the error the server gave it.
async fn apply(
    conn: &mut ConnectionManager,
    keys: &[String],
    scripts: &Scripts,
    batch: &[Queued],
) -> RedisResult<Vec<RedisResult<Value>>> {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(scripts.apply.get_hash()).arg(keys.len()).arg(keys);
    for Queued { call, .. } in batch {
        cmd.arg(call.op.name()).arg(call.args.len()).arg(&call.args);
    }
    let reply: RedisResult<Value> = cmd.query_async(conn).await;
    let reply = match reply {
        Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
            scripts.apply.prepare_invoke().load_async(conn).await?;
            cmd.query_async(conn).await?
        }
        other => other?,
    };
    match reply {
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
