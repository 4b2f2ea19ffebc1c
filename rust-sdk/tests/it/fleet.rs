//! The fleet ledger on real stores: the conformance suite on a SQLite file and on a real
//! `redis-server`, and clients sharing one store and one key against the mock solver over
//! loopback (an account error seen by one holds the others; the fleet view lists each client).

use crate::support;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use captcha_dlq::core::class::reason;
use captcha_dlq::core::dlq::DlqStore;
use captcha_dlq::core::engine::EngineConfig;
use captcha_dlq::core::fleet::testkit::run_ledger_suite;
use captcha_dlq::core::Timestamp;
use captcha_dlq::store::{RedisStore, SqliteStore};
use captcha_dlq::{Client, Error};
use captcha_dlq_mock::redis_server::RedisServer;
use captcha_dlq_mock::{MockConfig, MockHandle, MockSolver};
use serde_json::json;

fn now() -> Timestamp {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    Timestamp::from_unix_millis(ms)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_ledger_follows_the_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(dir.path().join("fleet.sqlite")).expect("open");
    let ledger = store.fleet_ledger().expect("a SQLite file keeps a fleet ledger");
    assert_eq!(run_ledger_suite(ledger.as_ref(), now(), 1).await, 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_ledger_follows_the_rules_on_the_servers_clock() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = RedisStore::connect(&server.url(), "fleet-suite").await.expect("connect");
    let ledger = store.fleet_ledger().expect("a Redis namespace keeps a fleet ledger");
    // The hosts' clocks do not matter: a `now` a minute off gives the same answers.
    assert_eq!(run_ledger_suite(ledger.as_ref(), now().add(Duration::from_secs(60)), 2).await, 9);
    let skewed_back = Timestamp::from_unix_millis(now().as_unix_millis() - 60_000);
    assert_eq!(run_ledger_suite(ledger.as_ref(), skewed_back, 3).await, 9);
}

fn fast_config() -> EngineConfig {
    support::quick_polling(40, 50.0)
}

async fn client_on(mock: &MockHandle, key: &str, store: Arc<dyn DlqStore>) -> Client {
    client_with(mock, key, store, fast_config(), &[]).await
}

/// A client of `mock` on `store` with `config` and the options `extra` (name, JSON value).
async fn client_with(
    mock: &MockHandle,
    key: &str,
    store: Arc<dyn DlqStore>,
    config: EngineConfig,
    extra: &[(&str, serde_json::Value)],
) -> Client {
    let mut builder = captcha_dlq::builder().api_key(key).base_url(mock.base_url()).dlq_store(store).config(config);
    for (name, value) in extra {
        builder = builder.option(name, value.clone());
    }
    builder.build().await.expect("client builds")
}

/// `n` tasks for client number `c` (pages apart from the other clients').
fn inputs(c: usize, n: usize) -> Vec<captcha_dlq::SolveInput> {
    (0..n)
        .map(|i| captcha_dlq::SolveInput {
            task: Ok(support::task(c * 100 + i)),
            labels: BTreeMap::new(),
            key: None,
            ttl_ms: None,
        })
        .collect()
}

/// Waits (bounded) until the ledger holds an account error for some account.
async fn until_the_ledger_holds_an_account_error(client: &Client) {
    for _ in 0..200 {
        let view = client.fleet_view().await.expect("view").expect("a ledger");
        if view.accounts.values().any(|a| a.account_error.is_some()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the account error never reached the ledger");
}

async fn an_account_error_holds_every_client_on_the_store(store: Arc<dyn DlqStore>) {
    let mut script = MockConfig::default();
    script.account_errors.insert("wrong-key".into(), "ERROR_WRONG_USER_KEY".into());
    let mock = MockSolver::start(script).await.expect("mock starts");
    let first = client_on(&mock, "wrong-key", store.clone()).await;
    match first.solve(support::task(0)).await {
        Err(Error::SolveFailed { record, .. }) => assert_eq!(record.reason, "ERROR_WRONG_USER_KEY"),
        other => panic!("expected the account error, got {other:?}"),
    }
    until_the_ledger_holds_an_account_error(&first).await;
    // Three more clients (other processes, as far as the ledger knows) start after it.
    let mut others = Vec::new();
    for _ in 0..3 {
        others.push(client_on(&mock, "wrong-key", store.clone()).await);
    }
    for (i, client) in others.iter().enumerate() {
        match client.solve(support::task(i + 1)).await {
            Err(Error::SolveFailed { record, .. }) => {
                assert_eq!(record.reason, reason::CIRCUIT_OPEN, "held without asking: {record:?}");
                assert!(record.description.contains("ERROR_WRONG_USER_KEY"), "{}", record.description);
            }
            other => panic!("expected a dead letter held by the fleet, got {other:?}"),
        }
    }
    assert_eq!(mock.counters().requests_to("/in.php"), 1, "only the first client's submission reached the service");
    for client in others {
        client.close().await;
    }
    first.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_error_holds_every_client_on_a_sqlite_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(dir.path().join("fleet.sqlite")).expect("open");
    an_account_error_holds_every_client_on_the_store(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_error_holds_every_client_on_a_redis_namespace() {
    let Some(server) = RedisServer::for_tests() else { return };
    let store = RedisStore::connect(&server.url(), "fleet-account").await.expect("connect");
    an_account_error_holds_every_client_on_the_store(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_share_the_schedule_and_the_view_lists_each_of_them() {
    let mock = MockSolver::start(MockConfig::default()).await.expect("mock starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn DlqStore> = Arc::new(SqliteStore::open(dir.path().join("fleet.sqlite")).expect("open"));
    let clients =
        [client_on(&mock, "shared-key", store.clone()).await, client_on(&mock, "shared-key", store.clone()).await];
    let runs =
        clients.iter().enumerate().map(|(c, client)| async move { client.solve_many(inputs(c, 10), Some(10)).await });
    for results in futures::future::join_all(runs).await {
        assert!(results.iter().all(|r| r.outcome.is_ok()), "{results:?}");
    }
    let view = clients[0].fleet_view().await.expect("view").expect("a ledger");
    let owners: Vec<&str> = view.owners.iter().map(|row| row.owner.as_str()).collect();
    for client in &clients {
        assert!(owners.contains(&client.owner()), "{} in {owners:?}", client.owner());
    }
    let row = view.owners.iter().find(|row| row.owner == clients[0].owner()).expect("listed");
    assert_eq!(row.pid, std::process::id());
    assert!(row.alive(view.now_ms));
    // One account for the shared key.
    assert_eq!(view.accounts.len(), 1, "{view:?}");
    assert_eq!(mock.counters().requests_to("/in.php"), 20);
    let [a, b] = clients;
    a.close().await;
    let after = b.fleet_view().await.expect("view").expect("a ledger");
    assert!(!after.owners.iter().any(|row| row.owner == a.owner()), "a closed client leaves the ledger");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_with_the_fleet_off_keeps_its_own_limits() {
    let mock = MockSolver::start(MockConfig::default()).await.expect("mock starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn DlqStore> = Arc::new(SqliteStore::open(dir.path().join("fleet.sqlite")).expect("open"));
    let client = client_with(&mock, "alone", store, fast_config(), &[("fleet", json!({"enabled": false}))]).await;
    client.solve(support::task(1)).await.expect("solved");
    let view = client.fleet_view().await.expect("view").expect("the store still has a ledger");
    assert!(view.owners.is_empty() && view.accounts.is_empty(), "it never synced: {view:?}");
    client.close().await;
    let refused = captcha_dlq::builder()
        .api_key("k")
        .base_url(mock.base_url())
        .dlq("memory")
        .option("fleet", json!({"enable": false}))
        .build()
        .await;
    let message = refused.expect_err("a misspelt fleet option is refused").to_string();
    assert!(message.contains("fleet.enable"), "{message}");
}

/// A journal entry of a client on another host, written just now (so the host's age rule alone
/// would wait for the task deadline), whose owner row in the ledger is `silent_for` old.
async fn entry_of_another_host(store: &SqliteStore, owner: &str, silent_for: Duration) -> String {
    let ledger = store.fleet_ledger().expect("ledger");
    let info = captcha_dlq::core::fleet::OwnerInfo {
        owner: owner.to_string(),
        host: "another-host".into(),
        pid: 4242,
        started_at: Timestamp::from_unix_millis(now().as_unix_millis() - 600_000),
    };
    let heartbeat = Timestamp::from_unix_millis(now().as_unix_millis() - silent_for.as_millis() as u64);
    let report = captcha_dlq::core::fleet::FleetReport { rate: 10.0, window_max: 10, ..Default::default() };
    ledger.sync("some-account", &info, &report, heartbeat).await.expect("the owner's last heartbeat");
    let id = ulid::Ulid::generate().to_string();
    let entry = captcha_dlq::core::JournalEntry {
        id: id.clone(),
        task: support::task(7),
        provider: "custom".into(),
        labels: Default::default(),
        provider_task_id: None,
        attempts: 0,
        replays: 0,
        history: Vec::new(),
        accepted_at: now(),
        updated_at: now(),
        replay_of: None,
        owner: Some(owner.to_string()),
        key: None,
        solution: None,
        wanted_until: None,
    };
    store.journal_upsert(&entry).await.expect("entry");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recover_takes_a_silent_owners_entries_at_once_and_leaves_a_live_ones() {
    let mock = MockSolver::start(MockConfig::default()).await.expect("mock starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(dir.path().join("fleet.sqlite")).expect("open");
    let dead = entry_of_another_host(&store, "another-host/4242/DEAD", Duration::from_secs(20)).await;
    let live = entry_of_another_host(&store, "another-host/4243/LIVE", Duration::from_secs(1)).await;
    let client = client_on(&mock, "shared-key", Arc::new(store.clone())).await;
    let report = client.recover(captcha_dlq::RecoverOptions::default()).await.expect("recover");
    assert_eq!((report.report.found, report.report.skipped_live), (1, 1), "{:?}", report.report);
    assert_eq!(report.solved.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec![dead.as_str()]);
    let left: Vec<String> = store.journal_entries().await.expect("journal").into_iter().map(|e| e.id).collect();
    assert_eq!(left, vec![live], "the live owner's entry stays with it");
    client.close().await;
}

/// Four clients on one key and one SQLite file, each pacing itself at the account's rate: alone
/// each would be within the provider's limit, together four times over it. The fleet keeps the
/// account's one schedule, so the mock's ban rule (2captcha's `MAX_USER_TURN`) never fires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_clients_on_one_key_stay_under_the_providers_limit_together() {
    let script = MockConfig {
        ban: Some(captcha_dlq_mock::BanRule { max_submits: 20, window_ms: 1_000, ban_ms: 2_000, ..Default::default() }),
        ..MockConfig::default()
    };
    let mock = MockSolver::start(script).await.expect("mock starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn DlqStore> = Arc::new(SqliteStore::open(dir.path().join("fleet.sqlite")).expect("open"));
    let mut config = fast_config();
    config.rate.submits_per_second = 10.0;
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(client_with(&mock, "fleet-key", store.clone(), config.clone(), &[]).await);
    }
    let runs =
        clients.iter().enumerate().map(|(c, client)| async move { client.solve_many(inputs(c, 8), Some(8)).await });
    for results in futures::future::join_all(runs).await {
        assert!(results.iter().all(|r| r.outcome.is_ok()), "{results:?}");
    }
    let counters = mock.counters();
    assert_eq!((counters.bans_started, counters.banned_submits), (0, 0), "the fleet kept to one schedule");
    assert_eq!(counters.requests_to("/in.php"), 32);
    for client in clients {
        client.close().await;
    }
}

/// Four clients on one SQLite file, each told `budget: 0.02` at 0.001 a task: the budget is the
/// fleet's, so together they solve at most 20 tasks (alone, each would solve 20), and the rest
/// are dead-lettered `BudgetExhausted`, paying nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_clients_share_one_budget() {
    let mock = MockSolver::start(MockConfig::default()).await.expect("mock starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn DlqStore> = Arc::new(SqliteStore::open(dir.path().join("fleet.sqlite")).expect("open"));
    let mut clients = Vec::new();
    let priced = [("budget", json!(0.02)), ("price", json!(0.001))];
    for _ in 0..4 {
        clients.push(client_with(&mock, "budget-key", store.clone(), fast_config(), &priced).await);
    }
    let runs =
        clients.iter().enumerate().map(|(c, client)| async move { client.solve_many(inputs(c, 10), Some(10)).await });
    let (mut solved, mut cost, mut refused) = (0, 0.0, 0);
    for results in futures::future::join_all(runs).await {
        for r in results {
            match r.outcome {
                Ok(solution) => {
                    solved += 1;
                    cost += solution.cost.expect("priced");
                }
                Err(Error::SolveFailed { record, .. }) => {
                    assert_eq!(record.reason, reason::BUDGET_EXHAUSTED, "{record:?}");
                    assert!(record.description.contains("fleet's budget"), "{}", record.description);
                    refused += 1;
                }
                Err(other) => panic!("unexpected {other:?}"),
            }
        }
    }
    assert_eq!(solved + refused, 40);
    assert!(cost <= 0.02 + 1e-9, "the fleet spent {cost} ({solved} tasks) of a 0.02 budget");
    assert!(solved >= 10, "the budget was used: {solved} solved");
    assert_eq!(mock.counters().requests_to("/in.php"), solved, "nothing refused was paid for");
    let own = [priced[0].clone(), priced[1].clone(), ("fleet", json!({"budget": "process"}))];
    let process = client_with(&mock, "budget-key", store.clone(), fast_config(), &own).await;
    process.solve(support::task(999)).await.expect("a per-process budget ignores the fleet's spend");
    process.close().await;
    for client in clients {
        client.close().await;
    }
}

/// Clients that run one after another, each closing right after its last answer, within a
/// heartbeat: each one's spend reaches the ledger as it closes, so the second one sees the
/// first one's spend and the fleet's budget holds across them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closing_client_reports_its_spend_before_it_leaves() {
    let mock = MockSolver::start(MockConfig::default()).await.expect("mock starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn DlqStore> = Arc::new(SqliteStore::open(dir.path().join("fleet.sqlite")).expect("open"));
    let priced = [("budget", json!(0.01)), ("price", json!(0.001))];
    let mut solved = 0;
    for c in 0..2 {
        let client = client_with(&mock, "closing-key", store.clone(), fast_config(), &priced).await;
        solved += client.solve_many(inputs(c, 10), Some(10)).await.iter().filter(|r| r.outcome.is_ok()).count();
        client.close().await;
    }
    assert_eq!(solved, 10, "the second client had only what the first left of the budget");
    let viewer = client_with(&mock, "closing-key", store.clone(), fast_config(), &priced).await;
    let view = viewer.fleet_view().await.expect("view").expect("a ledger");
    let spent: u64 = view.accounts.values().map(|a| a.spent_nano).sum();
    assert_eq!(spent, 10_000_000, "ten tasks at 0.001 in nano-units: {view:?}");
    viewer.close().await;
}

/// Two providers for the hCaptcha test: `first` answers that it does not solve hCaptcha, `second`
/// solves it. Each client has both, with the same keys (the same accounts). Both are CaptchaAI, a
/// v1 service core/kinds/hcaptcha.toml still routes hCaptcha to (2captcha dropped it).
fn hcaptcha_providers(refuser: &MockHandle, solver: &MockHandle) -> serde_json::Value {
    json!([
        {"name": "first", "provider": "captchaai", "api_key": "key-first", "base_url": refuser.base_url()},
        {"name": "second", "provider": "captchaai", "api_key": "key-second", "base_url": solver.base_url()},
    ])
}

fn hcaptcha(page: usize) -> captcha_dlq::ValidTask {
    captcha_dlq::Task::from_json_value(json!({
        "type": "hcaptcha", "sitekey": "10000000-ffff-ffff-ffff-000000000001",
        "page_url": format!("https://example.com/h/{page}"),
    }))
    .expect("valid task")
}

/// Issue 43, item 4: a service's "hCaptcha not supported" is shared through the fleet ledger.
/// The first client is refused once and solves the task at the next service; a second client on
/// the same store then sends its hCaptcha task straight to the next service, never to the one
/// that refused it.
async fn a_kind_one_client_was_refused_is_skipped_by_the_next(stores: [Arc<dyn DlqStore>; 2]) {
    let [store_first, store_second] = stores;
    // The mock's v1 hCaptcha: refused with the code given, or solved with none.
    let refusing = MockConfig { hcaptcha_code: "ERROR_HCAPTCHA_NOT_SUPPORTED".into(), ..MockConfig::default() };
    let refuser = MockSolver::start(refusing).await.expect("mock");
    let solver =
        MockSolver::start(MockConfig { hcaptcha_code: String::new(), ..MockConfig::default() }).await.expect("mock");
    let build = |store: Arc<dyn DlqStore>| {
        captcha_dlq::builder()
            .option("providers", hcaptcha_providers(&refuser, &solver))
            .dlq_store(store)
            .config(fast_config())
            .build()
    };
    let first = build(store_first).await.expect("client builds");
    let solved = first.solve(hcaptcha(1)).await.expect("solved at the next service");
    assert_eq!(solved.provider.as_deref(), Some("second"));
    assert_eq!(refuser.counters().submits, 1, "refused once");
    // The mark reaches the ledger with the first client's next sync.
    let refusing_account = first.fleet_accounts().into_iter().find(|(name, _)| name == "first").expect("first").1;
    let mut marked = false;
    for _ in 0..400 {
        let view = first.fleet_view().await.expect("view").expect("a ledger");
        if view.accounts.get(&refusing_account).is_some_and(|a| a.refused_kinds.contains_key("hcaptcha")) {
            marked = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(marked, "the refusal never reached the ledger");

    // Another process on the same store: its task goes straight to the service that solves it.
    let second = build(store_second).await.expect("client builds");
    let solved = second.solve(hcaptcha(2)).await.expect("solved");
    assert_eq!(solved.provider.as_deref(), Some("second"));
    assert_eq!(refuser.counters().submits, 1, "the second client never sent it to the service that refused it");
    let mut other_kind = second.solve(support::task(3)).await.expect("a reCAPTCHA is still sent to first");
    assert_eq!(other_kind.provider.take().as_deref(), Some("first"), "only the refused kind is skipped");
    first.close().await;
    second.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_refused_at_one_client_is_skipped_by_another_on_the_same_sqlite_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("fleet.sqlite");
    let open = || -> Arc<dyn DlqStore> { Arc::new(SqliteStore::open(&path).expect("open")) };
    a_kind_one_client_was_refused_is_skipped_by_the_next([open(), open()]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_refused_at_one_client_is_skipped_by_another_on_the_same_redis_namespace() {
    let Some(server) = RedisServer::for_tests() else { return };
    let first = RedisStore::connect(&server.url(), "fleet-kinds").await.expect("connect");
    let second = RedisStore::connect(&server.url(), "fleet-kinds").await.expect("connect");
    a_kind_one_client_was_refused_is_skipped_by_the_next([Arc::new(first), Arc::new(second)]).await;
}
