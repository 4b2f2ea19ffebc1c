//! End to end over real HTTP on loopback: the `Client` against the mock solver.

use crate::support;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use captcha_dlq::core::class::reason;
use captcha_dlq::core::dlq::testkit::sample_record;
use captcha_dlq::core::dlq::{DlqStore, Filter, MemoryStore, Page, RecordState};
use captcha_dlq::core::engine::EngineConfig;
use captcha_dlq::core::{ErrorClass, Task, ValidTask};
use captcha_dlq::{Client, Error, ReplayOptions, SolveInput};
use captcha_dlq_mock::{Behavior, Faults, Matcher, MockConfig, MockHandle, MockSolver, Outcome, Rule};
use serde_json::json;

/// Polling scaled down ~100×, so the seeds' schedule runs in a second or two.
fn fast_config() -> EngineConfig {
    let mut c = support::fast_retries(6);
    c.rate.max_in_flight = 500;
    c
}

fn rule(page: &str, outcome: Outcome, solve_after_ms: u64) -> Rule {
    Rule {
        matcher: Matcher { page_url_contains: Some(page.into()), ..Matcher::default() },
        behavior: Behavior { outcome, solve_after_ms, ..Behavior::default() },
    }
}

async fn mock(script: MockConfig) -> MockHandle {
    MockSolver::start(script).await.expect("mock starts")
}

async fn client(mock: &MockHandle, key: &str, dlq: &str, config: EngineConfig) -> Client {
    captcha_dlq::builder()
        .api_key(key)
        .base_url(mock.base_url())
        .dlq(dlq)
        .config(config)
        .build()
        .await
        .expect("client builds")
}

/// A client of `provider`'s API at the mock, with its DLQ in the SQLite file `dlq`.
async fn provider_client(mock: &MockHandle, provider: &str, dlq: &std::path::Path) -> Client {
    captcha_dlq::builder()
        .api_key("test-key")
        .provider(provider)
        .base_url(mock.base_url())
        .dlq(dlq.to_str().unwrap())
        .config(fast_config())
        .build()
        .await
        .expect("client builds")
}

fn inputs(tasks: impl IntoIterator<Item = (ValidTask, BTreeMap<String, String>)>) -> Vec<SolveInput> {
    tasks.into_iter().map(|(task, labels)| SolveInput { task: Ok(task), labels, key: None, ttl_ms: None }).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeds_batch_over_http_then_replay_recovers_both() {
    let dir = tempfile::tempdir().unwrap();
    let dlq = dir.path().join("dlq.sqlite");
    let rules = vec![rule("/page/2", Outcome::Unsolvable, 30), rule("/page/4", Outcome::NeverReady, 0)];
    let mock = support::mock(30, rules).await;
    let client = client(&mock, "test-key", dlq.to_str().unwrap(), fast_config()).await;

    let tasks = inputs((0..5).map(|i| (support::task(i), BTreeMap::from([("page".to_string(), i.to_string())]))));
    let results = client.solve_many(tasks, Some(5)).await;
    let summary: Vec<_> = results
        .iter()
        .map(|r| match &r.outcome {
            Ok(s) => format!("solved:{}", &s.text[..8]),
            Err(Error::SolveFailed { record, stored: true }) => format!("dlq:{}:{}", record.reason, record.attempts),
            Err(e) => format!("other:{e}"),
        })
        .collect();
    assert_eq!(
        summary,
        ["solved:03AGdBq2", "solved:03AGdBq2", "dlq:ERROR_CAPTCHA_UNSOLVABLE:4", "solved:03AGdBq2", "dlq:Timeout:4"]
    );
    let store = client.dlq();
    assert_eq!(store.count(&Filter::all()).await.unwrap(), 2);
    let records = store.peek(&Filter::all(), Page::default()).await.unwrap();
    assert!(records.iter().all(|r| r.labels.contains_key("page") && r.history.len() == 4));
    let journal = settled_journal(&client).await;
    assert!(journal.is_empty(), "journal empty once every answer was handed over: {journal:?}");
    // 4 submissions for each dead-lettered task, 1 for each solved one.
    assert_eq!(mock.counters().requests_to("/in.php"), 3 + 4 + 4);

    let mut healthy = mock.config();
    healthy.rules.clear();
    mock.set_script(healthy).unwrap();
    let report = client.replay(ReplayOptions::default()).await.unwrap().report;
    assert_eq!((report.received, report.retried, report.recovered), (2, 2, 2));
    client.close().await; // finishes the acknowledged removals
    let reopened = captcha_dlq::builder().api_key("test-key").dlq(dlq.to_str().unwrap()).build().await.unwrap();
    let store = reopened.dlq();
    assert_eq!(store.count(&Filter::all()).await.unwrap(), 0);
    assert_eq!(store.stats().await.unwrap().completed, 2);
    assert!(store.journal().await.unwrap().is_empty());
    reopened.close().await;
}

/// The journal once the acknowledgements queued so far have been written.
async fn settled_journal(client: &Client) -> Vec<captcha_dlq::core::JournalEntry> {
    for _ in 0..6_000 {
        let entries = client.dlq().journal().await.unwrap();
        if entries.is_empty() {
            return entries;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    client.dlq().journal().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_tasks_through_injected_faults_all_end_with_a_precise_reason() {
    let script = MockConfig {
        default_behavior: Behavior { solve_after_ms: 20, ..Behavior::default() },
        faults: Faults {
            http_5xx: 0.10,
            html_502: 0.05,
            truncated_json: 0.05,
            connection_reset: 0.05,
            ..Faults::default()
        },
        ..MockConfig::default()
    };
    let mock = mock(script).await;
    let client = client(&mock, "test-key", "memory", fast_config()).await;
    let results = client.solve_many(inputs((0..1000).map(|i| (support::task(i), BTreeMap::new()))), Some(1000)).await;
    assert_eq!(results.len(), 1000);
    assert!(results.iter().enumerate().all(|(i, r)| r.index == i), "in input order");

    let transient_reasons: BTreeSet<&str> =
        [reason::NETWORK, reason::UNPARSEABLE, "HTTP 500", "HTTP 502", "HTTP 503", "HTTP 504"].into_iter().collect();
    let mut solved = 0;
    let mut dead = BTreeMap::<String, usize>::new();
    for r in &results {
        match &r.outcome {
            Ok(s) => {
                assert!(s.text.starts_with("03AGdBq2"), "a real token, not a fault body: {:?}", s.text);
                solved += 1;
            }
            Err(Error::SolveFailed { record, stored: true }) => {
                assert!(transient_reasons.contains(record.reason.as_str()), "imprecise reason {:?}", record.reason);
                assert_eq!(record.class, ErrorClass::Transient);
                *dead.entry(record.reason.clone()).or_default() += 1;
            }
            Err(e) => panic!("a task ended neither solved nor dead-lettered: {e}"),
        }
    }
    let dead_total: usize = dead.values().sum();
    assert_eq!(solved + dead_total, 1000);
    assert!(solved >= 950, "only {solved} solved; dead: {dead:?}");
    assert_eq!(client.dlq().count(&Filter::all()).await.unwrap(), dead_total as u64);
    assert!(mock.counters().faults_total() > 100, "faults were really injected");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_key_gives_one_clear_error_and_no_further_submits() {
    let mut script = MockConfig::default();
    script.account_errors.insert("wrong-key".into(), "ERROR_WRONG_USER_KEY".into());
    let mock = mock(script).await;
    let mut config = fast_config();
    config.rate.submits_per_second = 5.0; // the first answer arrives before the second submission is due
    let client = client(&mock, "wrong-key", "memory", config).await;
    let results = client.solve_many(inputs((0..20).map(|i| (support::task(i), BTreeMap::new()))), Some(20)).await;
    assert_eq!(mock.counters().requests_to("/in.php"), 1, "one submission reached the service");
    let reasons: BTreeSet<_> = results
        .iter()
        .map(|r| match &r.outcome {
            Err(e @ Error::SolveFailed { record, .. }) => {
                assert!(e.is_account_error());
                assert_eq!(e.code(), "ACCOUNT_ERROR");
                record.reason.clone()
            }
            other => panic!("expected an account error, got {other:?}"),
        })
        .collect();
    assert_eq!(reasons, BTreeSet::from(["ERROR_WRONG_USER_KEY".to_string(), reason::CIRCUIT_OPEN.to_string()]));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_appears_nowhere_a_user_can_see() {
    let key = "SECRETKEY0123456789abcdef01234567";
    let script = MockConfig {
        default_behavior: Behavior { outcome: Outcome::Unsolvable, ..Behavior::default() },
        faults: Faults { truncated_json: 0.3, ..Faults::default() },
        ..MockConfig::default()
    };
    let mock = mock(script).await;
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let client = captcha_dlq::builder()
        .api_key(key)
        .base_url(mock.base_url())
        .dlq("memory")
        .config(fast_config())
        .on_event(move |e| sink.lock().unwrap().push(format!("{e} {e:?} {}", serde_json::to_string(e).unwrap())))
        .build()
        .await
        .unwrap();
    let err = client.solve(support::task(1)).await.unwrap_err();
    let Error::SolveFailed { record, .. } = &err else { panic!("{err}") };
    let exported = captcha_dlq::core::dlq::export::export_json(&[(**record).clone()]);
    let shown = format!("{err} {err:?} {client:?} {exported}");
    assert!(!shown.contains(key), "key leaked: {shown}");
    let events = seen.lock().unwrap().join("\n");
    assert!(!events.is_empty());
    assert!(!events.contains(key), "key leaked in events");

    // An unreachable host: the transport error must not carry the URL (which holds the key).
    let unreachable = captcha_dlq::builder()
        .api_key(key)
        .base_url("http://127.0.0.1:9")
        .dlq("memory")
        .config(fast_config())
        .build()
        .await
        .unwrap();
    let err = unreachable.solve(support::task(1)).await.unwrap_err();
    let Error::SolveFailed { record, .. } = &err else { panic!("{err}") };
    assert_eq!(record.reason, reason::NETWORK);
    assert!(!format!("{err} {err:?} {}", serde_json::to_string(record).unwrap()).contains(key));
    let balance = unreachable.balance().await.unwrap_err();
    assert!(!format!("{balance} {balance:?}").contains(key));
    client.close().await;
    unreachable.close().await;
}

/// `store.durability = power_loss`: a SQLite DLQ syncs every commit and keeps its promises
/// (answers handed over, failures dead-lettered, the journal settled); any other store is
/// refused naming the option and the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn power_loss_durability_runs_on_sqlite_and_is_refused_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let dlq = dir.path().join("synced.sqlite");
    let mock = support::mock(30, vec![rule("/page/1", Outcome::Unsolvable, 30)]).await;
    let synced = |dlq: &str| {
        captcha_dlq::builder()
            .api_key("test-key")
            .base_url(mock.base_url())
            .dlq(dlq)
            .config(fast_config())
            .option("store", json!({"durability": "power_loss"}))
    };
    let client = synced(dlq.to_str().unwrap()).build().await.expect("a SQLite DLQ takes power_loss");
    let results = client.solve_many(inputs((0..3).map(|i| (support::task(i), BTreeMap::new()))), Some(3)).await;
    let solved = results.iter().filter(|r| r.outcome.is_ok()).count();
    assert_eq!(solved, 2);
    assert_eq!(client.dlq().count(&Filter::all()).await.unwrap(), 1, "the unsolvable task is dead-lettered");
    assert!(settled_journal(&client).await.is_empty());
    client.close().await;

    for (location, named) in [("memory", "\"memory\""), ("redis://127.0.0.1:1", "\"redis://127.0.0.1:1\"")] {
        let Err(Error::Config(e)) = synced(location).build().await else {
            panic!("{location}: refused as configuration")
        };
        assert_eq!(e.field, "store.durability");
        assert!(e.problem.contains(named) && e.problem.contains("SQLite DLQ only"), "{}", e.problem);
    }
    let custom = captcha_dlq::builder()
        .api_key("test-key")
        .base_url(mock.base_url())
        .option("store", json!({"durability": "power_loss"}))
        .dlq_store(Arc::new(captcha_dlq::core::dlq::memory::MemoryStore::new()));
    let Err(e) = custom.build().await else { panic!("a custom store: refused") };
    assert!(e.to_string().contains("the custom store is not one"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_configuration_is_refused_naming_the_problem() {
    let refuse = |b: captcha_dlq::ClientBuilder| async move { b.build().await.unwrap_err().to_string() };
    assert!(refuse(captcha_dlq::builder().dlq("memory")).await.contains("api_key"));
    assert!(refuse(captcha_dlq::builder().api_key("k").provider("nosuch").dlq("memory")).await.contains("nosuch"));
    let plain = refuse(captcha_dlq::builder().api_key("k").base_url("http://solver.example.com").dlq("memory")).await;
    assert!(plain.contains("http") && plain.contains("unencrypted"), "{plain}");
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("corrupt.sqlite");
    std::fs::write(&corrupt, b"this is not a database, it is a shopping list").unwrap();
    let msg = refuse(captcha_dlq::builder().api_key("k").dlq(corrupt.to_str().unwrap())).await;
    assert!(msg.contains("corrupt.sqlite"), "{msg}");
    let mut bad = EngineConfig::default();
    bad.rate.max_in_flight = 0;
    assert!(refuse(captcha_dlq::builder().api_key("k").dlq("memory").config(bad)).await.contains("rate.max_in_flight"));
}

/// Issue 44, finding 3: a tiny replay `per_second` overflowed the interval between starts and
/// panicked after the records were leased. Every rate out of bounds is refused first, naming
/// the option, and the record was handed to nobody (its deliveries unchanged).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tiny_replay_per_second_is_refused_before_any_record_is_leased() {
    let store: Arc<dyn DlqStore> = Arc::new(MemoryStore::default());
    store.push(sample_record("r0", 1)).await.unwrap();
    let client =
        captcha_dlq::builder().api_key("k").base_url("http://127.0.0.1:9").dlq_store(store).build().await.unwrap();
    for rate in [1e-300, 1e-9, 0.0, -1.0, f64::NAN, f64::INFINITY, 1e9] {
        let options = ReplayOptions {
            filter: Some(Filter::all()),
            explicit: true,
            per_second: Some(rate),
            ..ReplayOptions::default()
        };
        let refused = client.replay(options).await.expect_err("refused");
        assert!(matches!(refused, Error::Config(_)), "{rate}: {refused:?}");
        assert!(refused.to_string().contains("per_second"), "{rate}: {refused}");
    }
    let records = client.dlq().peek(&Filter::all(), Page::default()).await.unwrap();
    assert_eq!((records[0].deliveries, records[0].state), (0, RecordState::Ready), "never leased");
    assert!(client.dlq().audit(10, None).await.unwrap().is_empty(), "a refused replay is no replay");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn balance_report_and_cancel() {
    let script =
        MockConfig { balance: 12.5, rules: vec![rule("/page/9", Outcome::NeverReady, 0)], ..MockConfig::default() };
    let mock = mock(script).await;
    let client = client(&mock, "test-key", "memory", fast_config()).await;
    assert_eq!(client.balance().await.unwrap(), 12.5);
    let solved = client.solve(support::task(0)).await.unwrap();
    let provider_task_id = solved.provider_task_id.expect("solutions name their provider task");
    client.report(&provider_task_id, false).await.unwrap();
    let bogus = client.report("no-such-task", true).await.unwrap_err();
    assert!(bogus.to_string().contains("ERROR_WRONG_ID_FORMAT"), "{bogus}");

    // Cancelled after the provider has it: it runs on (never submitted again), and its
    // outcome still ends up somewhere: here its attempt times out and it is dead-lettered
    // with that reason, after exactly one submission.
    let submits_before = mock.counters().requests_to("/in.php");
    let labels = BTreeMap::from([("job".to_string(), "cancelled".to_string())]);
    let handle = client.submit(support::task(9), labels.clone(), None).await.unwrap();
    // Readiness wait with a generous bound (not a timing assertion): the provider has it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while mock.counters().requests_to("/in.php") == submits_before {
        assert!(std::time::Instant::now() < deadline, "the task never reached the provider");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    handle.cancel();
    match handle.wait().await.unwrap_err() {
        Error::Cancelled { runs_on: true, .. } => {}
        other => panic!("expected a cancellation that runs on, got {other}"),
    }
    let record = wait_for_record(&client, Filter { labels, ..Filter::default() }).await;
    assert_eq!((record.reason.as_str(), record.attempts), (reason::TIMEOUT, 1));
    assert_eq!(mock.counters().requests_to("/in.php"), submits_before + 1, "submitted once");

    // A wait dropped before the task was sent (a timeout here, asyncio cancellation in Python):
    // the task is dead-lettered as Cancelled with its labels, and never sent.
    let labels = BTreeMap::from([("job".to_string(), "dropped".to_string())]);
    let handle = client.submit(support::task(9), labels.clone(), None).await.unwrap();
    drop(handle);
    let record = wait_for_record(&client, Filter { labels, ..Filter::default() }).await;
    assert!(
        record.reason == reason::CANCELLED || record.reason == reason::TIMEOUT,
        "cancelled before or just after it was sent: {}",
        record.reason
    );
    client.close().await;
}

async fn wait_for_record(client: &Client, filter: Filter) -> captcha_dlq::core::dlq::DeadLetterRecord {
    for _ in 0..400 {
        let found = client.dlq().peek(&filter, Page::default()).await.unwrap();
        if let Some(record) = found.into_iter().next() {
            return record;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("no record matching {filter:?} appeared");
}

/// Two independent mock services on loopback, as a new user would run them: the first
/// (createTask, anti-captcha's dialect, reporting each task's cost) runs out of money after
/// 50 tasks, the second (v1, 2captcha, slower, priced in the options) takes the rest. No
/// task is lost or dead-lettered while a provider could solve it, none is submitted to both,
/// each solution names its provider and cost, and the spend report matches the mocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_providers_one_runs_dry_the_other_takes_the_rest_and_spend_matches_the_mocks() {
    let dry = mock(MockConfig {
        balance: 0.05,
        task_cost: 0.001,
        charge: true,
        default_behavior: Behavior { solve_after_ms: 30, ..Behavior::default() },
        ..MockConfig::default()
    })
    .await;
    let slow = support::mock(250, Vec::new()).await;
    // Polls until the slow service answers however loaded the machine is: this test is about
    // where tasks go, not about giving up (fast_config's 6 polls span about its solve time).
    let mut patient = fast_config();
    patient.polling.max_polls = 500;
    let client = captcha_dlq::builder()
        .option(
            "providers",
            json!([
                {"provider": "anti-captcha", "api_key": "key-a", "base_url": dry.base_url()},
                {"provider": "2captcha", "api_key": "key-b", "base_url": slow.base_url(), "price": {"recaptcha_v2": 0.002}},
            ]),
        )
        .dlq("memory")
        .config(patient)
        .build()
        .await
        .expect("client builds");
    let results = client.solve_many(inputs((0..150).map(|i| (support::task(i), BTreeMap::new()))), Some(150)).await;
    let mut by_provider: BTreeMap<String, usize> = BTreeMap::new();
    for r in &results {
        let solution = r.outcome.as_ref().unwrap_or_else(|e| panic!("task {} failed: {e}", r.index));
        *by_provider.entry(solution.provider.clone().expect("names its provider")).or_default() += 1;
        assert!(solution.cost.is_some(), "a reported or configured cost");
    }
    assert_eq!(by_provider, BTreeMap::from([("2captcha".to_string(), 100), ("anti-captcha".to_string(), 50)]));
    let (a, b) = (dry.counters(), slow.counters());
    assert_eq!((a.tasks_created, a.tasks_solved), (50, 50), "the first until its balance ran out");
    assert_eq!(a.tasks_created + b.tasks_created, 150, "no task submitted twice, at either provider");
    assert_eq!(client.dlq().count(&Filter::all()).await.unwrap(), 0, "nothing dead-lettered");

    let spend = client.spend().await.unwrap();
    let cost = |name: &str| spend.by_provider.iter().find(|r| r.key == name).map(|r| (r.solved, r.cost));
    let (solved_a, cost_a) = cost("anti-captcha").expect("a row");
    let (solved_b, cost_b) = cost("2captcha").expect("a row");
    assert_eq!((solved_a, solved_b), (a.tasks_solved, b.tasks_solved));
    assert!((cost_a - a.tasks_solved as f64 * 0.001).abs() < 1e-9, "reported costs: {cost_a}");
    assert!((cost_b - b.tasks_solved as f64 * 0.002).abs() < 1e-9, "configured price: {cost_b}");
    assert_eq!(spend.unpriced, 0);

    let status = client.status().await.unwrap();
    assert_eq!(status.providers.len(), 2);
    assert!(status.providers[0].account_failure.as_deref().is_some_and(|f| f.starts_with("ERROR_ZERO_BALANCE")));
    assert!(status.account_failure.is_none(), "the second provider still takes tasks");

    // Balance and report go to the provider asked for, or the one that solved the answer.
    let balances = client.balances().await;
    assert_eq!(balances.len(), 2);
    assert_eq!(balances[1].1.as_ref().ok(), Some(&10.0));
    assert_eq!(client.balance_of("anti-captcha").await.unwrap(), 0.0);
    let from_b =
        results.iter().filter_map(|r| r.outcome.as_ref().ok()).find(|s| s.provider.as_deref() == Some("2captcha"));
    client.report_solution(from_b.expect("a 2captcha answer"), true).await.unwrap();
    assert_eq!((slow.counters().reports_good, dry.counters().reports_good), (1, 0));
    assert!(client.balance_of("nobody").await.unwrap_err().to_string().contains("anti-captcha, 2captcha"));
    client.close().await;
}

/// A provider that cannot be reached at all: its tasks go to the next one, none is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_first_provider_sends_every_task_to_the_second() {
    let up = support::mock(20, Vec::new()).await;
    let client = captcha_dlq::builder()
        .option(
            "providers",
            json!([
                {"provider": "2captcha", "name": "down", "api_key": "key-a", "base_url": "http://127.0.0.1:9"},
                {"provider": "2captcha", "name": "up", "api_key": "key-b", "base_url": up.base_url()},
            ]),
        )
        .dlq("memory")
        .config(fast_config())
        .build()
        .await
        .expect("client builds");
    let results = client.solve_many(inputs((0..20).map(|i| (support::task(i), BTreeMap::new()))), Some(20)).await;
    for r in &results {
        let s = r.outcome.as_ref().unwrap_or_else(|e| panic!("task {} failed: {e}", r.index));
        assert_eq!(s.provider.as_deref(), Some("up"));
    }
    assert_eq!(up.counters().tasks_created, 20);
    assert!(client.status().await.unwrap().unreachable_episodes >= 1);
    client.close().await;
}

/// The tasks of every kind a service solves, as the shared vectors send them to it.
fn vector_tasks(provider: &str) -> Vec<serde_json::Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/tasks.json");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut seen = BTreeSet::new();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["provider"] == provider && c["expected"].get("request").is_some() && c.get("options").is_none())
        .filter(|c| c["task"]["type"].as_str().is_some_and(|kind| seen.insert(kind.to_string())))
        .map(|c| c["task"].clone())
        .collect()
}

/// Every kind the vectors send to 2captcha (v1), CapMonster, anti-captcha and CapSolver
/// (createTask) is solved by the mock over HTTP, its answer carries every value its kind
/// declares, and every kind (but raw tasks and hCaptcha, which the mock refuses by default) is
/// solved by one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_is_solved_over_http_with_its_declared_answer() {
    let mock = support::mock(10, Vec::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut solved = BTreeSet::new();
    // The fewest kinds each service's vectors send (hCaptcha and raw tasks left out).
    for (provider, fewest) in [("2captcha", 36), ("capmonster", 16), ("anti-captcha", 10), ("capsolver", 10)] {
        let client = provider_client(&mock, provider, &dir.path().join(format!("{provider}.sqlite"))).await;
        let tasks: Vec<ValidTask> = vector_tasks(provider)
            .into_iter()
            .filter(|t| !matches!(t["type"].as_str(), Some("raw" | "hcaptcha")))
            .map(|t| Task::from_json_value(t).unwrap())
            .collect();
        assert!(tasks.len() >= fewest, "{provider}: {} kinds", tasks.len());
        for task in tasks {
            let kind = task.kind();
            let solution = client.solve(task).await.unwrap_or_else(|e| panic!("{provider} {kind}: {e}"));
            for a in task_decl(kind).answer.iter().filter(|a| a.required) {
                assert!(solution.answer.contains_key(a.name), "{provider} {kind}: no `{}` in {:?}", a.name, solution);
            }
            solved.insert(kind);
        }
        client.close().await;
    }
    let unsolved: Vec<_> = captcha_dlq::core::TaskKind::ALL
        .into_iter()
        .filter(|k| !solved.contains(k) && !matches!(k.as_str(), "raw" | "hcaptcha"))
        .collect();
    assert!(unsolved.is_empty(), "kinds no service solved over HTTP: {unsolved:?}");
}

fn task_decl(kind: captcha_dlq::core::TaskKind) -> &'static captcha_dlq::core::task::kinds::KindDecl {
    captcha_dlq::core::task::kinds::decl(kind)
}

/// anti-captcha bills `ERROR_CAPTCHA_UNSOLVABLE`: a challenge it cannot solve is paid for twice
/// at most by default (four attempts allowed), where 2captcha, which does not bill it, gets all four.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsolvable_task_is_billed_at_most_twice_where_the_service_bills_it() {
    let dir = tempfile::tempdir().unwrap();
    for (provider, submissions, path) in [("anti-captcha", 2, "/createTask"), ("2captcha", 4, "/in.php")] {
        let unsolvable = Behavior { outcome: Outcome::Unsolvable, solve_after_ms: 10, ..Behavior::default() };
        let mock = mock(MockConfig { default_behavior: unsolvable, ..MockConfig::default() }).await;
        let client = provider_client(&mock, provider, &dir.path().join(format!("{provider}.sqlite"))).await;
        match client.solve(support::task(1)).await {
            Err(Error::SolveFailed { record, .. }) => {
                assert_eq!(
                    (record.reason.as_str(), record.attempts),
                    ("ERROR_CAPTCHA_UNSOLVABLE", submissions),
                    "{provider}"
                );
            }
            other => panic!("{provider}: {other:?}"),
        }
        assert_eq!(mock.counters().requests_to(path), u64::from(submissions), "{provider}: paid submissions");
        client.close().await;
    }
}
