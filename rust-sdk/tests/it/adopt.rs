//! Adoption with real parts: clients on one SQLite file or one real `redis-server`, the mock
//! solver over loopback, and a fleet member that dies with tasks in flight (its own tokio
//! runtime shut down: its driver, heartbeat and connections stop at once, as in a crash). The
//! running clients take its entries over and finish them: each answer reaches one consumer (an
//! `on_adopted` hook, or `recover` after the entry was released), no task is submitted again,
//! a live owner's entries are never taken, and clocks a minute apart change nothing.
//!
//! Waits are bounded (a minute) and never asserted on: the outcomes and the mock's counters are.

use crate::support;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use captcha_dlq::core::dlq::interpose::{Interpose, Interposed};
use captcha_dlq::core::dlq::{DlqStore, StoreError};
use captcha_dlq::core::engine::EngineConfig;
use captcha_dlq::core::{JournalEntry, Timestamp};
use captcha_dlq::liveness::ProcessLiveness;
use captcha_dlq::runtime::TokioRuntime;
use captcha_dlq::store::{RedisStore, SqliteStore};
use captcha_dlq::transport::ReqwestTransport;
use captcha_dlq::{AdoptedAnswer, AdoptedHook, Backends, Client, RecoverOptions};
use captcha_dlq_mock::redis_server::RedisServer;
use captcha_dlq_mock::MockHandle;
use serde_json::json;

const KEY: &str = "ADOPTKEY0123456789abcdef01234567";

fn fast_config() -> EngineConfig {
    let mut c = support::quick_polling(100, 50.0);
    c.polling.max_polls = 2_000;
    c
}

/// Where every client of a test opens the store (each its own connection, as processes do).
#[derive(Clone)]
enum Place {
    Sqlite(std::path::PathBuf),
    Redis(String, String),
}

impl Place {
    async fn open(&self) -> Arc<dyn DlqStore> {
        match self {
            Place::Sqlite(path) => Arc::new(SqliteStore::open(path).expect("open SQLite")),
            Place::Redis(url, namespace) => Arc::new(RedisStore::connect(url, namespace).await.expect("connect")),
        }
    }
}

/// What a client is built with besides the store.
#[derive(Clone, Default)]
struct Spec {
    /// Its clock's error.
    offset_ms: i64,
    /// `fleet.adopt`.
    adopt_off: bool,
    hook: Option<AdoptedHook>,
}

async fn client(mock: &MockHandle, place: &Place, spec: Spec) -> Client {
    client_at(&mock.base_url(), place, spec).await
}

/// A client of the mock at `base_url` (from any runtime: it runs on the current one).
async fn client_at(base_url: &str, place: &Place, spec: Spec) -> Client {
    let mut builder = captcha_dlq::builder().api_key(KEY).base_url(base_url).config(fast_config());
    if spec.adopt_off {
        builder = builder.option("fleet", json!({"adopt": false}));
    }
    let options = builder.options().expect("options");
    let backends = Backends {
        runtime: Arc::new(support::OffsetClock::skewed(spec.offset_ms)),
        transport: Arc::new(ReqwestTransport::new(options.secrets(), None).expect("transport")),
        liveness: Arc::new(ProcessLiveness),
        store: place.open().await,
    };
    Client::start_with(options, backends, None, spec.hook).expect("client starts")
}

/// Answers a hook was handed, by record id (every one, so a second delivery shows).
#[derive(Clone, Default)]
struct Taken(Arc<Mutex<BTreeMap<String, Vec<AdoptedAnswer>>>>);

impl Taken {
    fn hook(&self) -> AdoptedHook {
        let taken = self.0.clone();
        Arc::new(move |answer: AdoptedAnswer| {
            taken.lock().expect("lock").entry(answer.id.clone()).or_default().push(answer);
            Box::pin(async { Ok(()) })
        })
    }
    fn ids(&self) -> Vec<String> {
        self.0.lock().expect("lock").keys().cloned().collect()
    }
    fn deliveries(&self) -> usize {
        self.0.lock().expect("lock").values().map(Vec::len).sum()
    }
}

/// A fleet member on a runtime of its own, with `n` tasks in flight (submitted, their provider
/// task ids in the journal), that dies when [`Dying::die`] shuts that runtime down.
struct Dying {
    owner: String,
    die: std::sync::mpsc::Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Dying {
    async fn start(mock: &MockHandle, place: &Place, spec: Spec, n: usize, first_page: usize) -> Dying {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<String>();
        let (die, die_rx) = std::sync::mpsc::channel::<()>();
        let (mock_url, place2) = (mock.base_url(), place.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("rt");
            rt.block_on(async move {
                let client = client_at(&mock_url, &place2, spec).await;
                for i in 0..n {
                    let handle =
                        client.submit(support::task(first_page + i), BTreeMap::new(), None).await.expect("submit");
                    // Waited for by nobody: the task runs on in this runtime until it dies.
                    tokio::spawn(async move { handle.outcome().await });
                }
                let _ = ready_tx.send(client.owner().to_string());
                // Kept until the runtime is shut down.
                std::mem::forget(client);
            });
            let _ = die_rx.recv();
            rt.shutdown_background();
        });
        let owner = tokio::task::spawn_blocking(move || ready_rx.recv().expect("the dying client started"))
            .await
            .expect("join");
        Dying { owner, die, thread: Some(thread) }
    }

    async fn die(&mut self) {
        let _ = self.die.send(());
        if let Some(thread) = self.thread.take() {
            tokio::task::spawn_blocking(move || thread.join().expect("the dying client's thread")).await.expect("join");
        }
    }
}

async fn journal(store: &Arc<dyn DlqStore>) -> Vec<JournalEntry> {
    store.journal_entries().await.expect("journal")
}

/// Entries of `owner` that name their provider task (submitted, and known to be).
async fn submitted_by(store: &Arc<dyn DlqStore>, owner: &str) -> usize {
    journal(store).await.iter().filter(|e| e.owner.as_deref() == Some(owner) && e.provider_task_id.is_some()).count()
}

/// Waits until `owner` has `n` entries with a provider task id.
async fn journaled(store: &Arc<dyn DlqStore>, owner: &str, n: usize) {
    support::until(&format!("{n} journaled submissions of {owner}"), || async move {
        submitted_by(store, owner).await == n
    })
    .await;
}

/// `client` solves the tasks of `pages` (`support::task`), each in a task of its own; the
/// handles answer their outcomes.
fn solve_in_background(
    client: &Client,
    pages: std::ops::Range<usize>,
) -> Vec<tokio::task::JoinHandle<Result<captcha_dlq::Solution, captcha_dlq::Error>>> {
    pages
        .map(|page| {
            let client = client.clone();
            tokio::spawn(async move { client.solve(support::task(page)).await })
        })
        .collect()
}

/// Two adopters (clocks a minute fast and a minute slow) race for a dead member's entries while
/// a live member (its clock a minute slow too) works on its own: each dead entry is claimed
/// once, its answer goes to exactly one hook once, nothing is submitted twice, and the live
/// member's entries are never taken.
async fn two_adopters_race_for_a_dead_members_entries(place: Place) {
    const DEAD: usize = 12;
    const LIVE: usize = 4;
    let mock = support::mock(20_000, vec![]).await;
    let store = place.open().await;
    let mut dying = Dying::start(&mock, &place, Spec { offset_ms: 60_000, ..Spec::default() }, DEAD, 0).await;
    journaled(&store, &dying.owner, DEAD).await;
    let (a_taken, b_taken) = (Taken::default(), Taken::default());
    let a = client(&mock, &place, Spec { offset_ms: 60_000, hook: Some(a_taken.hook()), ..Spec::default() }).await;
    let b = client(&mock, &place, Spec { offset_ms: -60_000, hook: Some(b_taken.hook()), ..Spec::default() }).await;
    // The live member does not adopt (it is here as an owner whose entries must stay its own).
    let live = client(&mock, &place, Spec { offset_ms: -60_000, adopt_off: true, ..Spec::default() }).await;
    let live_runs = solve_in_background(&live, 1_000..1_000 + LIVE);
    journaled(&store, live.owner(), LIVE).await;
    dying.die().await;

    support::until("every dead entry's answer reached a hook", || {
        let n = a_taken.deliveries() + b_taken.deliveries();
        async move { n >= DEAD }
    })
    .await;
    for run in live_runs {
        run.await.expect("join").expect("the live member solves its own tasks");
    }
    let (a_ids, b_ids) = (a_taken.ids(), b_taken.ids());
    assert_eq!(a_taken.deliveries() + b_taken.deliveries(), DEAD, "each answer once: {a_ids:?} {b_ids:?}");
    assert!(a_ids.iter().all(|id| !b_ids.contains(id)), "no answer went to both hooks");
    let (sa, sb) = (a.adoption_stats(), b.adoption_stats());
    assert_eq!(sa.claimed + sb.claimed, DEAD as u64, "each dead entry claimed once: {sa:?} {sb:?}");
    assert_eq!(sa.handed_to_hook + sb.handed_to_hook, DEAD as u64);
    assert_eq!((sa.released, sb.released, sa.dead_lettered, sb.dead_lettered), (0, 0, 0, 0));
    let counters = mock.counters();
    assert_eq!(counters.tasks_created, (DEAD + LIVE) as u64, "no task was submitted again");
    a.flush().await.expect("flush");
    b.flush().await.expect("flush");
    live.flush().await.expect("flush");
    // A hook's `Ok` lets its entry go after the hook returned (the acknowledgement is a store write of
    // its own), so the last entries can still be on their way when the counts above are complete.
    support::until("every answer's entry forgotten once its hook took it", || async {
        journal(&store).await.is_empty()
    })
    .await;
    for c in [a, b, live] {
        c.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_adopters_race_on_redis_with_clocks_a_minute_apart() {
    let Some(server) = RedisServer::for_tests() else { return };
    two_adopters_race_for_a_dead_members_entries(Place::Redis(server.url(), "adopt-race".into())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_adopters_race_on_a_sqlite_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    // One file is one host, hence one clock: the skew is Redis's test (the ledger's clock is
    // the server's there); here every client's clock is right.
    let place = Place::Sqlite(dir.path().join("adopt.sqlite"));
    race_without_skew(place).await;
}

/// [`two_adopters_race_for_a_dead_members_entries`] with every clock right.
async fn race_without_skew(place: Place) {
    const DEAD: usize = 12;
    let mock = support::mock(15_000, vec![]).await;
    let store = place.open().await;
    let mut dying = Dying::start(&mock, &place, Spec::default(), DEAD, 0).await;
    journaled(&store, &dying.owner, DEAD).await;
    let (a_taken, b_taken) = (Taken::default(), Taken::default());
    let a = client(&mock, &place, Spec { hook: Some(a_taken.hook()), ..Spec::default() }).await;
    let b = client(&mock, &place, Spec { hook: Some(b_taken.hook()), ..Spec::default() }).await;
    dying.die().await;
    support::until("every dead entry's answer reached a hook", || {
        let n = a_taken.deliveries() + b_taken.deliveries();
        async move { n >= DEAD }
    })
    .await;
    let (sa, sb) = (a.adoption_stats(), b.adoption_stats());
    assert_eq!(a_taken.deliveries() + b_taken.deliveries(), DEAD, "each answer once");
    assert!(a_taken.ids().iter().all(|id| !b_taken.ids().contains(id)), "no answer went to both hooks");
    assert_eq!(sa.claimed + sb.claimed, DEAD as u64, "each dead entry claimed once: {sa:?} {sb:?}");
    assert_eq!(mock.counters().tasks_created, DEAD as u64, "no task was submitted again");
    a.flush().await.expect("flush");
    b.flush().await.expect("flush");
    // A hook's `Ok` lets its entry go after the hook returned (the acknowledgement is a store write of
    // its own), so the last entries can still be on their way when the counts above are complete.
    support::until("every answer's entry forgotten once its hook took it", || async {
        journal(&store).await.is_empty()
    })
    .await;
    a.close().await;
    b.close().await;
}

/// Without a hook the adopter fetches each answer, keeps it in the entry and releases the entry:
/// `recover` (here another client's) then hands each over once, and nothing is paid again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_hook_adopted_answers_wait_for_recover_released() {
    let Some(server) = RedisServer::for_tests() else { return };
    const DEAD: usize = 6;
    let place = Place::Redis(server.url(), "adopt-release".into());
    let mock = support::mock(2_000, vec![]).await;
    let store = place.open().await;
    let mut dying = Dying::start(&mock, &place, Spec::default(), DEAD, 0).await;
    journaled(&store, &dying.owner, DEAD).await;
    let adopter = client(&mock, &place, Spec::default()).await;
    dying.die().await;
    support::until("every adopted answer is released", || {
        let released = adopter.adoption_stats().released;
        async move { released >= DEAD as u64 }
    })
    .await;
    let entries = journal(&store).await;
    assert_eq!(entries.len(), DEAD);
    assert!(
        entries.iter().all(|e| e.owner.is_none() && e.solution.is_some()),
        "each released entry holds its answer and no owner: {entries:?}"
    );
    let recoverer = client(&mock, &place, Spec { adopt_off: true, ..Spec::default() }).await;
    let report = recoverer.recover(RecoverOptions::default()).await.expect("recover");
    assert_eq!((report.report.found, report.solved.len()), (DEAD as u64, DEAD));
    let again = recoverer.recover(RecoverOptions::default()).await.expect("recover again");
    assert_eq!(again.report.found, 0, "each answer is handed over once");
    assert!(journal(&store).await.is_empty());
    assert_eq!(mock.counters().tasks_created, DEAD as u64, "no task was submitted again");
    adopter.close().await;
    recoverer.close().await;
}

/// A client with `fleet.adopt` off never takes a dead member's entries; one with it on (the
/// default) then does, which shows they were there to take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_adoption_off_nothing_is_adopted() {
    const DEAD: usize = 3;
    let dir = tempfile::tempdir().expect("tempdir");
    let place = Place::Sqlite(dir.path().join("adopt-off.sqlite"));
    let mock = support::mock(1_000, vec![]).await;
    let store = place.open().await;
    let mut dying = Dying::start(&mock, &place, Spec::default(), DEAD, 0).await;
    journaled(&store, &dying.owner, DEAD).await;
    let taken = Taken::default();
    let off = client(&mock, &place, Spec { adopt_off: true, hook: Some(taken.hook()), ..Spec::default() }).await;
    dying.die().await;
    let owner = dying.owner.clone();
    support::until("the ledger sees the member dead", || {
        let off = off.clone();
        let owner = owner.clone();
        async move {
            let view = off.fleet_view().await.expect("view").expect("a ledger");
            view.owners.iter().any(|row| row.owner == owner && !row.alive(view.now_ms))
        }
    })
    .await;
    // Two adoption periods after the owner went silent: rounds would have run by now.
    tokio::time::sleep(Duration::from_millis(2 * captcha_dlq::adopt::ADOPT_PERIOD_MS)).await;
    let stats = off.adoption_stats();
    assert!(!stats.enabled && stats.rounds == 0 && stats.claimed == 0, "{stats:?}");
    assert_eq!(taken.deliveries(), 0);
    assert_eq!(submitted_by(&store, &owner).await, DEAD, "the entries still name their dead owner");

    let taken_on = Taken::default();
    let on = client(&mock, &place, Spec { hook: Some(taken_on.hook()), ..Spec::default() }).await;
    support::until("the adopting client takes them", || {
        let n = taken_on.deliveries();
        async move { n >= DEAD }
    })
    .await;
    assert_eq!(on.adoption_stats().claimed, DEAD as u64);
    assert_eq!(mock.counters().tasks_created, DEAD as u64);
    off.close().await;
    on.close().await;
}

/// A member's store whose fleet ledger stops answering when `cut` is set (a host cut off from
/// the store's ledger, or paused): its heartbeat stops while it still works on its tasks.
struct Partitioned {
    cut: Arc<std::sync::atomic::AtomicBool>,
}

struct CutLedger {
    inner: Arc<dyn captcha_dlq::core::fleet::FleetLedger>,
    cut: Arc<std::sync::atomic::AtomicBool>,
}

#[async_trait::async_trait]
impl captcha_dlq::core::fleet::FleetLedger for CutLedger {
    fn account_id(&self, base_url: &str, key: &captcha_dlq::core::Secret) -> String {
        self.inner.account_id(base_url, key)
    }
    async fn sync(
        &self,
        account: &str,
        owner: &captcha_dlq::core::fleet::OwnerInfo,
        report: &captcha_dlq::core::fleet::FleetReport,
        now: Timestamp,
    ) -> Result<captcha_dlq::core::fleet::FleetGrant, StoreError> {
        if self.cut.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Backend("the ledger is out of reach (injected)".into()));
        }
        self.inner.sync(account, owner, report, now).await
    }
    async fn leave(&self, owner: &str) -> Result<(), StoreError> {
        self.inner.leave(owner).await
    }
    async fn view(&self, now: Timestamp) -> Result<captcha_dlq::core::fleet::FleetView, StoreError> {
        self.inner.view(now).await
    }
}

#[async_trait::async_trait]
impl Interpose for Partitioned {
    fn ledger(
        &self,
        inner: Option<Arc<dyn captcha_dlq::core::fleet::FleetLedger>>,
    ) -> Option<Arc<dyn captcha_dlq::core::fleet::FleetLedger>> {
        let inner = inner?;
        Some(Arc::new(CutLedger { inner, cut: self.cut.clone() }))
    }
}

/// A member that is cut off from the ledger (its heartbeat stops) but keeps working is seen as
/// dead and adopted; when it then gets the answers its journal writes are fenced off
/// (`StoreError::Taken`): its callers hear that the task was taken over, and each answer reaches
/// exactly one consumer (the adopter's hook). Nothing is submitted twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_cut_off_from_the_ledger_is_fenced_off_its_adopted_entries() {
    const N: usize = 4;
    let dir = tempfile::tempdir().expect("tempdir");
    let place = Place::Sqlite(dir.path().join("fenced.sqlite"));
    // Answers come well after the adopter has claimed the entries (15 s TTL, 5 s rounds).
    let mock = support::mock(35_000, vec![]).await;
    let store = place.open().await;
    let cut = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let partitioned: Arc<dyn DlqStore> =
        Arc::new(Interposed { store: place.open().await, hooks: Partitioned { cut: cut.clone() } });
    let options = captcha_dlq::builder()
        .api_key(KEY)
        .base_url(mock.base_url())
        .config(fast_config())
        .option("fleet", json!({"adopt": false}))
        .options()
        .expect("options");
    let member = Client::start(
        options.clone(),
        Backends {
            runtime: Arc::new(TokioRuntime::current().expect("tokio")),
            transport: Arc::new(ReqwestTransport::new(options.secrets(), None).expect("transport")),
            liveness: Arc::new(ProcessLiveness),
            store: partitioned,
        },
        None,
    )
    .expect("member starts");
    let runs = solve_in_background(&member, 500..500 + N);
    journaled(&store, member.owner(), N).await;
    cut.store(true, std::sync::atomic::Ordering::SeqCst);
    let taken = Taken::default();
    let adopter = client(&mock, &place, Spec { hook: Some(taken.hook()), ..Spec::default() }).await;
    support::until("the adopter claims the member's entries", || {
        let claimed = adopter.adoption_stats().claimed;
        async move { claimed >= N as u64 }
    })
    .await;

    let mut fenced = Vec::new();
    for run in runs {
        match run.await.expect("join") {
            Err(captcha_dlq::Error::Store(StoreError::Taken { id })) => fenced.push(id),
            other => panic!("the member's caller must hear its task was taken over, got {other:?}"),
        }
    }
    support::until("every answer reached the adopter's hook", || {
        let n = taken.deliveries();
        async move { n >= N }
    })
    .await;
    fenced.sort();
    assert_eq!(taken.ids(), fenced, "each answer went to the hook, and only there");
    assert_eq!(taken.deliveries(), N, "once each");
    assert_eq!(mock.counters().tasks_created, N as u64, "no task was submitted again");
    adopter.flush().await.expect("flush");
    assert!(journal(&store).await.is_empty());
    member.close().await;
    adopter.close().await;
}
