//! The thread that owns a store's connection, and its group commit.
//!
//! A write made alone runs on its caller's thread: when no other call is
//! queued or arriving and no group ran lately, the caller takes the idle
//! connection and commits its write in a transaction of its own, with no hop
//! to the thread and back (two thread wake-ups, most of a lone write's cost
//! beyond SQLite's own work). It never waits there: if another process holds
//! the write lock it hands the write to the thread, which waits for the lock
//! (the busy timeout) off the async workers. Checkpoints, which sync the
//! file, also stay on the thread: the connection does not checkpoint
//! automatically while callers commit on it, and the caller of every
//! [`CHECKPOINT_EVERY`]th such commit waits while the thread runs a passive one.
//!
//! Every other call becomes a job sent to this thread. The thread takes whatever has
//! queued up since its last transaction (up to [`MAX_GROUP`] jobs): reads run
//! first, each on its own; then every write of the group runs in one
//! `BEGIN IMMEDIATE … COMMIT`, so writes that arrive together (the client runs
//! several store calls at once) share one transaction and one WAL append
//! instead of paying for one each. Nothing waits for a group to fill: a call
//! arriving at an idle thread is committed at once, and while a transaction
//! runs the next group queues up behind it. When calls do come together (two
//! or more queued, or one right after groups of several) the thread waits
//! 50 µs at a time while more keep arriving (at most about 1 ms), with a little
//! more patience while the group is smaller than recent ones: callers polled
//! in one task arrive in bursts, and a group that starts in a pause between
//! two bursts would leave the second burst a transaction of its own.
//!
//! The durability promise is the same as with one transaction per call: a
//! caller gets its answer only after the transaction holding its write
//! committed. A write that fails on its own terms (a lost lease) has changed
//! nothing (every write checks before it changes rows), so it fails alone and
//! the rest commit. A write that fails in the database (read-only, out of
//! space, a row SQLite refuses) rolls the transaction back, and every write of
//! the group runs again in a transaction of its own, so each caller gets its
//! own answer and one bad write cannot fail the others. When the transaction
//! itself fails (the database is locked past the busy timeout, the commit
//! fails), every caller of the group gets that error, naming the cause, and
//! nothing of the group is committed. Calls of several processes on one file
//! are serialised by SQLite's write lock as before; each process groups its own.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::thread::JoinHandle;
use std::time::Duration;

use captcha_dlq_client::options::Durability;
use captcha_dlq_core::dlq::StoreError;
use rusqlite::Connection;
use tokio::sync::oneshot;

use super::errors::db_error;

/// Jobs one transaction takes at most, so that a long queue is committed in steps.
pub(super) const MAX_GROUP: usize = 128;

/// How long a group that already holds several writes waits for more before it starts (a
/// lone write never waits): concurrent callers send their writes a few microseconds apart.
/// It waits again while more keep coming, at most [`MAX_GROUP_WAITS`] times (about 1 ms).
const GROUP_DELAY: Duration = Duration::from_micros(50);
const MAX_GROUP_WAITS: usize = 20;
/// Waits in a row that bring nothing before a group smaller than the one before it starts
/// anyway. Callers polled together arrive in bursts (a task polls a few dozen futures, then
/// yields), so a pause in arrivals does not yet mean the callers of the last group are all
/// back; a group as large as the last one starts after the first empty wait.
const PATIENCE_BELOW_LAST: usize = 3;

/// Statements kept prepared (the store uses a few dozen distinct ones).
const STATEMENT_CACHE: usize = 64;

/// Commits made on callers' threads after which the thread checkpoints the WAL (SQLite's own
/// automatic checkpoint, off while callers commit, runs at about 1,000 pages: a lone push
/// writes a few).
const CHECKPOINT_EVERY: u64 = 256;
/// SQLite's default `wal_autocheckpoint`, in pages, restored while the thread commits.
const AUTOCHECKPOINT_PAGES: u32 = 1000;

/// Work that runs inside the group's write transaction. It may run twice: again in a
/// transaction of its own when another write of its group failed in the database.
pub(super) type WriteWork<T> = Box<dyn Fn(&Connection, &str) -> Result<T, StoreError> + Send>;
/// Work that runs on its own, outside any write transaction.
pub(super) type ReadWork<T> = Box<dyn FnOnce(&mut Connection, &str) -> Result<T, StoreError> + Send>;

/// A write waiting for its group's commit.
trait PendingWrite: Send {
    /// Runs the write; whether it succeeded.
    fn run(&mut self, conn: &Connection, location: &str) -> bool;
    /// The write's own failure, once run.
    fn error(&self) -> Option<&StoreError>;
    /// Answers the caller once the group's transaction is settled.
    fn finish(self: Box<Self>, transaction: Result<(), &StoreError>);
}

struct Write<T> {
    work: WriteWork<T>,
    result: Option<Result<T, StoreError>>,
    /// The answer, and the work handed back so that what it holds (the record's JSON and
    /// columns) is freed on the caller's thread, not on the one thread that writes.
    reply: oneshot::Sender<(Result<T, StoreError>, WriteWork<T>)>,
}

impl<T: Send> PendingWrite for Write<T> {
    fn run(&mut self, conn: &Connection, location: &str) -> bool {
        let result = (self.work)(conn, location);
        let ok = result.is_ok();
        self.result = Some(result);
        ok
    }

    fn error(&self) -> Option<&StoreError> {
        self.result.as_ref().and_then(|r| r.as_ref().err())
    }

    fn finish(self: Box<Self>, transaction: Result<(), &StoreError>) {
        let answer = match (self.result, transaction) {
            // The call's own failure is the precise answer, whatever happened to the group.
            (Some(Err(own)), _) => Err(own),
            (Some(Ok(value)), Ok(())) => Ok(value),
            (_, Err(group)) => Err(group.clone()),
            (None, Ok(())) => Err(StoreError::Backend("the write was never run".into())),
        };
        // The caller may have gone (timed out); its write is settled all the same.
        let _ = self.reply.send((answer, self.work));
    }
}

/// A read, run as soon as its group is taken.
trait PendingRead: Send {
    fn run(&mut self, conn: &mut Connection, location: &str);
    fn finish(self: Box<Self>);
}

struct Read<T> {
    work: Option<ReadWork<T>>,
    result: Option<Result<T, StoreError>>,
    reply: oneshot::Sender<Result<T, StoreError>>,
}

impl<T: Send> PendingRead for Read<T> {
    fn run(&mut self, conn: &mut Connection, location: &str) {
        if let Some(work) = self.work.take() {
            self.result = Some(work(conn, location));
        }
    }

    fn finish(self: Box<Self>) {
        let answer = self.result.unwrap_or_else(|| Err(StoreError::Backend("the read was never run".into())));
        let _ = self.reply.send(answer);
    }
}

enum Job {
    Write(Box<dyn PendingWrite>),
    Read(Box<dyn PendingRead>),
}

/// Who is using the connection, which decides how it waits and whether it checkpoints.
#[derive(Clone, Copy, PartialEq, Eq)]
enum User {
    /// The thread: waits for another process's lock up to the busy timeout; checkpoints.
    Thread { busy_ms: u64 },
    /// A caller on its own (async) thread: never waits for a lock, never syncs the file.
    Caller,
}

/// The connection, shared by the thread and lone callers, and how it is set up now.
struct Shared {
    conn: Connection,
    user: Option<User>,
}

impl Shared {
    /// Sets the connection up for `user` (a no-op while the same user keeps it).
    fn prepare(&mut self, user: User) {
        if self.user == Some(user) {
            return;
        }
        let (busy, pages) = match user {
            User::Thread { busy_ms } => (Duration::from_millis(busy_ms), AUTOCHECKPOINT_PAGES),
            User::Caller => (Duration::ZERO, 0),
        };
        // Applied by SQLite without touching the file; should one fail, the next use tries again.
        let applied =
            self.conn.busy_timeout(busy).is_ok() && self.conn.pragma_update(None, "wal_autocheckpoint", pages).is_ok();
        self.user = applied.then_some(user);
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

/// The connection, waiting while another user has it.
fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(recover)
}

/// The connection, if nobody else is using it.
fn try_lock(shared: &Mutex<Shared>) -> Option<MutexGuard<'_, Shared>> {
    match shared.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(recover(poisoned)),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The connection after a write panicked while holding it: the write's transaction is rolled
/// back (nothing of it was committed), and the connection serves the next call.
fn recover(poisoned: PoisonError<MutexGuard<'_, Shared>>) -> MutexGuard<'_, Shared> {
    let guard = poisoned.into_inner();
    rollback(&guard.conn);
    guard
}

/// A call between its first poll and the choice of where it runs: while others are
/// arriving, calls are being made together and go to the thread to share a transaction.
struct Arrival<'a>(&'a AtomicUsize);

impl<'a> Arrival<'a> {
    fn new(arriving: &'a AtomicUsize) -> Self {
        arriving.fetch_add(1, Ordering::AcqRel);
        Arrival(arriving)
    }

    fn alone(&self) -> bool {
        self.0.load(Ordering::Acquire) == 1
    }
}

impl Drop for Arrival<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How much grouping happened, for benchmarks and operators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// Write transactions committed or attempted.
    pub transactions: u64,
    /// Write calls run in them.
    pub writes: u64,
    /// Of those transactions, the ones a lone write committed on its caller's thread.
    pub on_callers_threads: u64,
    /// Calls handed to the store's thread and not yet answered, now.
    pub queued: u64,
}

#[derive(Debug, Default)]
struct Counts {
    transactions: AtomicU64,
    writes: AtomicU64,
    /// The busy timeout asked for, in ms; the thread applies it before its next group.
    busy_timeout_ms: AtomicU64,
    /// Jobs sent and not yet finished.
    pending: AtomicU64,
    /// Write calls deciding where to run (see [`Arrival`]).
    arriving: AtomicUsize,
    /// The size of recent groups (the last one, or half the one before if larger): in a steady
    /// stream their callers come back with their next writes, so a group below that size is
    /// worth a little more patience, and a write does not run alone on its caller's thread.
    /// It decays within a few groups once the load drops.
    recent_group: AtomicUsize,
    /// Write transactions committed on callers' threads (every [`CHECKPOINT_EVERY`]th is
    /// followed by a checkpoint).
    lone_commits: AtomicU64,
    /// Every commit syncs the file ([`Durability::PowerLoss`]): then no write runs on a
    /// caller's thread, whose async worker would wait for the disk.
    sync_each_commit: AtomicBool,
}

/// The handle to a store's connection thread. Dropping the last handle lets the
/// thread finish what is queued, close the connection and exit. When the thread is idle the
/// drop waits for that (a dropped store has closed its file); when it is still working (say
/// waiting for another process's lock) the drop does not block its caller, which may be an
/// async task, and the thread closes the file when done.
#[derive(Debug)]
pub(super) struct Writer {
    shared: Arc<Mutex<Shared>>,
    queue: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    counts: Arc<Counts>,
    location: Arc<str>,
}

impl Writer {
    pub(super) fn start(conn: Connection, location: Arc<str>, busy_timeout: Duration) -> Result<Writer, StoreError> {
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let counts = Arc::new(Counts::default());
        counts.busy_timeout_ms.store(millis(busy_timeout), Ordering::Relaxed);
        let shared = Arc::new(Mutex::new(Shared { conn, user: None }));
        let (queue, jobs) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("captcha-dlq-sqlite".into())
            .spawn({
                let (shared, counts, location) = (Arc::clone(&shared), Arc::clone(&counts), Arc::clone(&location));
                move || serve(&shared, &location, &jobs, &counts)
            })
            .map_err(|e| StoreError::Backend(format!("{location}: cannot start the SQLite thread: {e}")))?;
        Ok(Writer { shared, queue: Some(queue), thread: Some(thread), counts, location })
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        self.counts.pending.fetch_add(1, Ordering::AcqRel);
        let sent = self.queue.as_ref().map(|q| q.send(job).is_ok()).unwrap_or(false);
        if sent {
            Ok(())
        } else {
            self.counts.pending.fetch_sub(1, Ordering::AcqRel);
            Err(self.stopped())
        }
    }

    fn stopped(&self) -> StoreError {
        StoreError::Backend(format!("{}: the SQLite thread stopped (an earlier call panicked)", self.location))
    }

    /// Runs `work` in a write transaction, alone on this thread or in the next group's;
    /// answers after the commit.
    pub(super) async fn write<T: Send + 'static>(&self, work: WriteWork<T>) -> Result<T, StoreError> {
        if !self.counts.sync_each_commit.load(Ordering::Relaxed) && self.alone().await {
            if let Some(answer) = self.write_here(&work) {
                if self.counted_lone_commit() % CHECKPOINT_EVERY == 0 {
                    self.checkpoint().await;
                }
                return answer;
            }
        }
        let (reply, answer) = oneshot::channel();
        self.send(Job::Write(Box::new(Write { work, result: None, reply })))?;
        let (answer, _work) = answer.await.map_err(|_| self.stopped())?;
        answer
    }

    /// Runs the write of a call made [alone](Self::alone) in a transaction of its own on the
    /// caller's thread, if the connection is idle and no other process holds the write lock.
    /// `None`: it goes to the thread (nothing was committed).
    fn write_here<T>(&self, work: &WriteWork<T>) -> Option<Result<T, StoreError>> {
        let mut shared = try_lock(&self.shared)?;
        shared.prepare(User::Caller);
        run_alone(&shared.conn, &self.location, work)
    }

    /// Counts a transaction of one write committed on a caller's thread; how many such there
    /// have been.
    fn counted_lone_commit(&self) -> u64 {
        self.counts.transactions.fetch_add(1, Ordering::Relaxed);
        self.counts.writes.fetch_add(1, Ordering::Relaxed);
        self.counts.lone_commits.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A passive checkpoint of the WAL on the thread (it syncs the file): it copies what no
    /// reader still needs and never waits for one. A failure only leaves the WAL longer, for
    /// the next checkpoint (or SQLite's own, at the thread's commits) to take up; its cause
    /// reaches the calls that meet it.
    async fn checkpoint(&self) {
        let _ = self
            .read(Box::new(|conn, loc| {
                conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())).map_err(db_error(loc))
            }))
            .await;
    }

    /// Whether a write being made is the only call: nothing queued, no other call arriving, no
    /// group lately.
    async fn alone(&self) -> bool {
        if self.counts.recent_group.load(Ordering::Relaxed) > 1 {
            return false;
        }
        let arrival = Arrival::new(&self.counts.arriving);
        // Calls made together (one task polling several, or several tasks) are all under way
        // by the time this task runs again; then they go to the thread and share a commit.
        tokio::task::yield_now().await;
        arrival.alone() && self.counts.pending.load(Ordering::Acquire) == 0
    }

    /// Runs `work` on the connection outside any write transaction.
    pub(super) async fn read<T: Send + 'static>(&self, work: ReadWork<T>) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.send(Job::Read(Box::new(Read { work: Some(work), result: None, reply })))?;
        answer.await.map_err(|_| self.stopped())?
    }

    pub(super) fn stats(&self) -> GroupCommitStats {
        GroupCommitStats {
            transactions: self.counts.transactions.load(Ordering::Relaxed),
            writes: self.counts.writes.load(Ordering::Relaxed),
            on_callers_threads: self.counts.lone_commits.load(Ordering::Relaxed),
            queued: self.counts.pending.load(Ordering::Acquire),
        }
    }

    pub(super) fn set_busy_timeout(&self, timeout: Duration) {
        self.counts.busy_timeout_ms.store(millis(timeout), Ordering::Relaxed);
    }

    /// Sets `PRAGMA synchronous` on the connection (waiting while a transaction runs on it).
    pub(super) fn set_durability(&self, durability: Durability) -> Result<(), StoreError> {
        let full = durability == Durability::PowerLoss;
        let shared = lock(&self.shared);
        shared
            .conn
            .pragma_update(None, "synchronous", if full { "FULL" } else { "NORMAL" })
            .map_err(db_error(&self.location))?;
        self.counts.sync_each_commit.store(full, Ordering::Relaxed);
        Ok(())
    }

    /// The connection's `PRAGMA synchronous` (0 off, 1 normal, 2 full, 3 extra).
    #[cfg(test)]
    pub(super) fn synchronous(&self) -> i64 {
        lock(&self.shared).conn.pragma_query_value(None, "synchronous", |r| r.get(0)).unwrap_or(-1)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.queue = None;
        if let Some(thread) = self.thread.take() {
            if self.counts.pending.load(Ordering::Acquire) == 0 {
                // Idle: it exits at once. A panic in it was already reported to the calls it failed.
                let _ = thread.join();
            }
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The thread's loop: take a group, run its reads, commit its writes, until every handle is gone.
fn serve(shared: &Mutex<Shared>, location: &str, jobs: &mpsc::Receiver<Job>, counts: &Counts) {
    let mut reads: Vec<Box<dyn PendingRead>> = Vec::new();
    let mut writes: Vec<Box<dyn PendingWrite>> = Vec::new();
    while let Ok(first) = jobs.recv() {
        let mut next = Some(first);
        let (mut waits, mut empty_waits) = (0, 0);
        let last_group = counts.recent_group.load(Ordering::Relaxed);
        loop {
            while let Some(job) = next {
                match job {
                    Job::Read(r) => reads.push(r),
                    Job::Write(w) => writes.push(w),
                }
                next = if reads.len() + writes.len() < MAX_GROUP { jobs.try_recv().ok() } else { None };
            }
            // A lone write waits only right after groups of several (whose callers are coming
            // back one by one); otherwise it is committed at once.
            let concurrent = writes.len() >= 2 || (!writes.is_empty() && last_group >= 2);
            if !concurrent || reads.len() + writes.len() >= MAX_GROUP || waits >= MAX_GROUP_WAITS {
                break;
            }
            // Several writes came at once: more are on their way from the same callers. Give
            // them a moment to join this transaction instead of each paying for the next one,
            // and keep waiting while they keep coming.
            std::thread::sleep(GROUP_DELAY);
            waits += 1;
            next = jobs.try_recv().ok();
            if next.is_some() {
                empty_waits = 0;
            } else {
                empty_waits += 1;
                let patience = if writes.len() < last_group { PATIENCE_BELOW_LAST } else { 1 };
                if empty_waits >= patience {
                    break;
                }
            }
        }
        counts.recent_group.store(writes.len().max(last_group / 2), Ordering::Relaxed);
        let mut guard = lock(shared);
        guard.prepare(User::Thread { busy_ms: counts.busy_timeout_ms.load(Ordering::Relaxed) });
        let conn = &mut guard.conn;
        for read in &mut reads {
            read.run(conn, location);
        }
        let mut outcomes = Vec::new();
        if !writes.is_empty() {
            counts.transactions.fetch_add(1, Ordering::Relaxed);
            counts.writes.fetch_add(writes.len() as u64, Ordering::Relaxed);
            outcomes = commit_group(conn, location, &mut writes);
        }
        drop(guard);
        // Done with these jobs before any caller hears of it, so that a caller dropping the
        // store right after its answer finds the thread idle.
        counts.pending.fetch_sub((reads.len() + writes.len()) as u64, Ordering::AcqRel);
        for read in reads.drain(..) {
            read.finish();
        }
        for (write, outcome) in writes.drain(..).zip(outcomes) {
            write.finish(outcome.as_ref().map(|_| ()));
        }
    }
}

fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

/// Whether `e`, returned by a write, came from the database (the write may have changed rows
/// before failing) rather than being an answer about the data. Every write checks what it
/// answers about (a lost lease, an undecodable row) before it changes anything, so only a
/// database error can leave a write half done.
fn from_the_database(e: &StoreError) -> bool {
    matches!(e, StoreError::Backend(_) | StoreError::Corrupt { .. })
}

/// Runs `writes` in one transaction; the outcome for each write, in order (its own failure, if
/// any, is kept in the write and answered first).
fn commit_group(
    conn: &Connection,
    location: &str,
    writes: &mut [Box<dyn PendingWrite>],
) -> Vec<Result<(), StoreError>> {
    match run_group(conn, location, writes) {
        Group::Settled(outcome) => vec![outcome; writes.len()],
        // A database error in one write: the others must not pay for it (a write SQLite
        // refuses, say a record too big, would fail every group it lands in). Each write runs
        // again in a transaction of its own and gets its own answer.
        Group::Isolate => writes
            .iter_mut()
            .map(|write| match run_group(conn, location, std::slice::from_mut(write)) {
                Group::Settled(outcome) => outcome,
                Group::Isolate => Ok(()), // alone, its own error is its answer
            })
            .collect(),
    }
}

/// What became of a group's transaction.
enum Group {
    /// Committed (`Ok`; writes that failed on their own changed nothing), or failed as a whole.
    Settled(Result<(), StoreError>),
    /// A write failed in the database and the transaction was rolled back.
    Isolate,
}

/// The error of a write transaction of `n` writes that failed while `what`.
fn transaction_error(location: &str, what: &str, n: usize, e: rusqlite::Error) -> StoreError {
    match db_error(location)(e) {
        StoreError::Backend(message) if n > 1 => {
            StoreError::Backend(format!("{message} (while {what}; none of the {n} writes in it committed)"))
        }
        StoreError::Backend(message) => StoreError::Backend(format!("{message} (while {what})")),
        other => other,
    }
}

fn run_group(conn: &Connection, location: &str, writes: &mut [Box<dyn PendingWrite>]) -> Group {
    let n = writes.len();
    let failed = |what: &str, e: rusqlite::Error| {
        let cause = transaction_error(location, what, n, e);
        rollback(conn);
        Group::Settled(Err(cause))
    };
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        return failed("starting the write transaction", e);
    }
    let mut any_ok = false;
    for write in writes.iter_mut() {
        if write.run(conn, location) {
            any_ok = true;
        } else if write.error().is_some_and(from_the_database) {
            rollback(conn);
            return if n > 1 { Group::Isolate } else { Group::Settled(Ok(())) };
        }
    }
    if !any_ok {
        rollback(conn);
        return Group::Settled(Ok(()));
    }
    match exec(conn, "COMMIT") {
        Ok(()) => Group::Settled(Ok(())),
        Err(e) => failed("committing", e),
    }
}

/// Runs `work` in a transaction of its own, as a group of one would (its own failure undoes
/// it and is its answer). `None` when another connection holds the write lock: nothing was
/// changed, and the write goes to the thread, which waits for the lock.
fn run_alone<T>(conn: &Connection, location: &str, work: &WriteWork<T>) -> Option<Result<T, StoreError>> {
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        rollback(conn);
        return (!locked(&e)).then(|| Err(transaction_error(location, "starting the write transaction", 1, e)));
    }
    let answer = work(conn, location);
    if answer.is_err() {
        rollback(conn);
        return Some(answer);
    }
    match exec(conn, "COMMIT") {
        Ok(()) => Some(answer),
        Err(e) => {
            rollback(conn);
            (!locked(&e)).then(|| Err(transaction_error(location, "committing", 1, e)))
        }
    }
}

/// Whether `e` says another connection holds a lock (which the thread would wait for).
fn locked(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// Ends the open transaction, if SQLite has not already rolled it back.
fn rollback(conn: &Connection) {
    if !conn.is_autocommit() {
        // A failed rollback leaves nothing more to undo: SQLite ends the transaction anyway.
        let _ = exec(conn, "ROLLBACK");
    }
}
