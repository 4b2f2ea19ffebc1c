//! The audit trail end to end: a client on SQLite against the mock solver, its operator actions
//! (park, unpark, purge, replay, import, and the bindings' `op` with an `operator`) read back
//! from the trail; and a store that does not take an entry, which is never passed over in
//! silence.

use std::collections::BTreeMap;
use std::sync::Arc;

use captcha_dlq::core::dlq::audit::{AuditAction, AuditStage};
use captcha_dlq::core::dlq::interpose::{Call, Interpose, Interposed};
use captcha_dlq::core::dlq::testkit::sample_record;
use captcha_dlq::core::dlq::{DlqStore, Filter, MemoryStore, StoreError};
use captcha_dlq::core::engine::{Backoff, EngineConfig, FirstPoll};
use captcha_dlq::core::support::json_read::Casing;
use captcha_dlq::core::Task;
use captcha_dlq::{Client, ReplayOptions, SolveInput};
use captcha_dlq_mock::{Behavior, MockConfig, MockHandle, MockSolver, Outcome};
use serde_json::json;

fn fast_config() -> EngineConfig {
    let mut c = EngineConfig::default();
    c.polling.first_poll_ms = FirstPoll::uniform(30);
    c.polling.interval_ms = 20;
    c.polling.max_polls = 4;
    c.retry.backoff = Backoff::FullJitter { base_ms: 10, cap_ms: 50 };
    c.retry.transient_min_delay_ms = 5;
    c
}

async fn unsolvable_mock() -> MockHandle {
    let script = MockConfig {
        default_behavior: Behavior { outcome: Outcome::Unsolvable, solve_after_ms: 10, ..Behavior::default() },
        ..MockConfig::default()
    };
    MockSolver::start(script).await.expect("mock starts")
}

fn task(page: usize) -> SolveInput {
    let task = Task::from_json_value(json!({
        "type": "recaptcha_v2", "sitekey": "6Le-SITEKEY", "page_url": format!("https://example.com/page/{page}"),
    }));
    SolveInput { task: Ok(task.expect("valid task")), labels: BTreeMap::new(), key: None, ttl_ms: None }
}

async fn dead_letters(client: &Client, n: usize) -> Vec<String> {
    let results = client.solve_many((0..n).map(task).collect(), Some(n)).await;
    let mut ids: Vec<String> = results.iter().map(|r| r.id.clone().expect("accepted")).collect();
    ids.sort();
    assert_eq!(client.dlq().count(&Filter::all()).await.expect("count"), n as u64, "every task dead-lettered");
    ids
}

/// A client of `mock` whose DLQ is a SQLite file in `dir`.
async fn client_on_sqlite(mock: &MockHandle, dir: &std::path::Path) -> Client {
    captcha_dlq::builder()
        .api_key("test-key")
        .base_url(mock.base_url())
        .dlq(dir.join("dlq.sqlite").to_str().expect("utf-8 path"))
        .config(fast_config())
        .build()
        .await
        .expect("client builds")
}

/// A client on a SQLite DLQ in `dir` with three dead letters (`ids`, sorted) from a mock that
/// finds every task unsolvable.
struct Trail {
    _mock: MockHandle,
    dir: tempfile::TempDir,
    client: Client,
    ids: Vec<String>,
}

impl Trail {
    async fn start() -> Trail {
        let dir = tempfile::tempdir().expect("tempdir");
        let mock = unsolvable_mock().await;
        let client = client_on_sqlite(&mock, dir.path()).await;
        let ids = dead_letters(&client, 3).await;
        Trail { _mock: mock, dir, client, ids }
    }
}

fn ids(ids: &[&String]) -> Filter {
    Filter { ids: ids.iter().map(|s| s.to_string()).collect(), ..Filter::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operator_action_is_in_the_trail_with_who_what_and_how_many() {
    let Trail { _mock, dir: _dir, client, ids: ids_of } = Trail::start().await;
    let (a, b, c) = (&ids_of[0], &ids_of[1], &ids_of[2]);
    assert!(client.dlq().audit(10, None).await.expect("audit").is_empty(), "solving is no operator action");

    let alice = client.dlq().as_operator("alice").expect("a valid name");
    assert!(alice.park(a, "wrong sitekey").await.expect("park"));
    assert!(alice.unpark(a).await.expect("unpark"));
    assert_eq!(alice.purge(&ids(&[b])).await.expect("purge"), 1);
    let replayed = alice
        .replay(ReplayOptions { filter: Some(ids(&[c])), explicit: true, ..ReplayOptions::default() })
        .await
        .expect("replay");
    assert_eq!(replayed.report.received, 1);
    let (text, exported) = client.dlq().export(&Filter::all(), captcha_dlq::ExportFormat::Json).await.expect("export");
    assert_eq!(exported, 2);
    let bob = client.dlq().as_operator("bob").expect("a valid name");
    assert_eq!(bob.import(&text).await.expect("import"), 2);
    // The bindings' way: an `operator` argument to any operation.
    let purged = client
        .dlq()
        .op("purge", json!({"filter": {"ids": [c]}, "operator": "carol"}), Casing::Snake)
        .await
        .expect("purge through op");
    assert_eq!(purged, json!(1));

    let all = client.dlq().audit(100, None).await.expect("audit");
    // Each action's intent comes before it (count 0), its result after, pointing at it.
    for pair in all.chunks(2) {
        let (result, intent) = (&pair[0], &pair[1]);
        assert_eq!((intent.stage, result.stage), (AuditStage::Intent, AuditStage::Result), "{pair:?}");
        assert_eq!(
            (result.intent, result.action, &result.operator),
            (Some(intent.id), intent.action, &intent.operator)
        );
    }
    let trail: Vec<_> = all.iter().filter(|e| e.stage == AuditStage::Result).cloned().collect();
    let seen: Vec<(u64, &str, AuditAction, u64)> =
        trail.iter().map(|e| (e.id, e.operator.as_str(), e.action, e.count)).collect();
    assert_eq!(
        seen,
        vec![
            (12, "carol", AuditAction::Purge, 1),
            (10, "bob", AuditAction::Import, 2),
            (8, "alice", AuditAction::Replay, 1),
            (6, "alice", AuditAction::Purge, 1),
            (4, "alice", AuditAction::Unpark, 1),
            (2, "alice", AuditAction::Park, 1),
        ]
    );
    assert_eq!(trail[5].detail, "wrong sitekey");
    assert_eq!(trail[5].filter, json!({"ids": [a]}));
    assert_eq!(trail[3].filter, json!({"ids": [b]}), "the filter in its own names, empty fields left out");
    assert_eq!(trail[2].filter, json!({"ids": [c]}));
    assert!(
        trail[2].detail.starts_with("recovered 0, failed again 0, parked 1"),
        "the replay's counts: {}",
        trail[2].detail
    );
    assert_eq!(trail[1].filter, serde_json::Value::Null, "an import selects nothing");
    assert!(trail.iter().all(|e| e.error.is_none()), "nothing failed: {trail:?}");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_millis() as u64;
    assert!(trail.iter().all(|e| e.at.as_unix_millis() <= now && now - e.at.as_unix_millis() < 600_000));

    // Paging: the page before entry 3, and the answer through `op` in the host's casing.
    let page = client.dlq().op("audit", json!({"limit": 2, "before": 3}), Casing::Camel).await.expect("audit op");
    let page = page.as_array().expect("a list");
    assert_eq!(page.iter().map(|e| e["id"].as_u64().expect("id")).collect::<Vec<_>>(), vec![2, 1]);
    assert_eq!(page[1]["operator"], "alice");
    assert_eq!(page[1]["action"], "park");

    let refused = client.dlq().as_operator("").expect_err("an empty name");
    assert!(refused.to_string().contains("operator"), "{refused}");
    let refused = client.dlq().op("count", json!({"operator": 7}), Casing::Snake).await.expect_err("not a name");
    assert!(refused.to_string().contains("operator"), "{refused}");
    let refused = client.dlq().audit(0, None).await.expect_err("limit 0");
    assert!(refused.to_string().contains("limit"), "{refused}");
}

/// A store whose audit trail refuses every entry, and whose parks fail too.
struct NoTrail;

#[async_trait::async_trait]
impl Interpose for NoTrail {
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        match call {
            Call::AuditAppend => {
                Err(StoreError::Corrupt { location: "the test's trail".into(), problem: "refused (injected)".into() })
            }
            Call::Park => Err(StoreError::Corrupt { location: "the test's store".into(), problem: "no parks".into() }),
            _ => Ok(()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_the_store_does_not_take_is_an_error_never_silence() {
    let mock = unsolvable_mock().await;
    let memory: Arc<dyn DlqStore> = Arc::new(MemoryStore::new());
    memory.push(sample_record("r1", 0)).await.expect("push");
    memory.push(sample_record("r2", 1)).await.expect("push");
    let client = captcha_dlq::builder()
        .api_key("test-key")
        .base_url(mock.base_url())
        .dlq_store(Arc::new(Interposed { store: memory.clone(), hooks: NoTrail }))
        .config(fast_config())
        .build()
        .await
        .expect("client builds");

    // The trail refuses the intent: the action does not run, and the caller hears why.
    let purge = client.dlq().purge(&ids(&[&"r1".to_string()])).await.expect_err("the trail refused");
    let said = purge.to_string();
    assert!(said.contains("purge was not done") && said.contains("refused (injected)"), "{said}");
    assert_eq!(memory.count(&Filter::all(), captcha_dlq::core::dlq::testkit::at(0)).await.expect("count"), 2);
    let park = client.dlq().park("r2", "why").await.expect_err("not recorded, not done");
    assert!(park.to_string().contains("park was not done"), "{park}");
}

/// An edit applied through `Dlq::edit` and a retention eviction are in the trail too: the edit
/// under its operator with the paths it changed (never their values), the eviction under
/// `retention` with the limit and where the records went.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_and_evictions_are_in_the_trail() {
    let Trail { _mock, dir, client, ids: all } = Trail::start().await;
    let dave = client.dlq().as_operator("dave").expect("a valid name");
    let edit: captcha_dlq::core::dlq::Edit =
        serde_json::from_value(json!({"task": {"sitekey": "6Le-RIGHT"}, "labels": {"fixed": "yes"}})).expect("an edit");
    let preview = dave.edit(&ids(&[&all[0]]), &edit, true).await.expect("preview");
    assert_eq!(preview.changed, 1);
    assert!(client.dlq().audit(10, None).await.expect("audit").is_empty(), "a preview changes nothing");
    let applied = dave.edit(&ids(&[&all[0], &all[1]]), &edit, false).await.expect("edit");
    assert_eq!(applied.changed, 2);

    let archive = dir.path().join("evicted.jsonl");
    let options = captcha_dlq::core::dlq::retention::RetentionOptions {
        max_age_ms: None,
        max_count: Some(1),
        archive: Some(archive.to_str().expect("utf-8 path").to_string()),
        interval_ms: 60_000,
    };
    let now = captcha_dlq::runtime::now();
    let report = captcha_dlq::retention::apply(client.dlq().store(), &options, now, false, None).await.expect("retain");
    assert_eq!(report.total(), 2);

    let trail: Vec<_> = client
        .dlq()
        .audit(10, None)
        .await
        .expect("audit")
        .into_iter()
        .filter(|e| e.stage == AuditStage::Result)
        .collect();
    let seen: Vec<(&str, AuditAction, u64)> = trail.iter().map(|e| (e.operator.as_str(), e.action, e.count)).collect();
    assert_eq!(seen, vec![("retention", AuditAction::Evict, 2), ("dave", AuditAction::Edit, 2)]);
    assert_eq!(trail[1].detail, "changed labels.fixed, task.sitekey");
    assert!(!trail[1].detail.contains("6Le-RIGHT"), "the trail names fields, not values");
    assert!(trail[0].detail.starts_with("max_count, archived to "), "{}", trail[0].detail);
    assert_eq!(std::fs::read_to_string(&archive).expect("archive").lines().count(), 2);
    client.close().await;
}

/// A store whose parks fail: the trail takes the intent, then the failed result.
struct NoParks;

#[async_trait::async_trait]
impl Interpose for NoParks {
    async fn before(&self, call: Call) -> Result<(), StoreError> {
        match call {
            Call::Park => Err(StoreError::Corrupt { location: "the test's store".into(), problem: "no parks".into() }),
            _ => Ok(()),
        }
    }
}

/// Issue 44, finding 9: park reasons with control characters reached `dlq audit` raw, bidi
/// overrides passed the operator-name check, cancelling a replay was not audited, and the entry
/// was written only after the action. Now such text is refused naming the character, a cancel
/// is an entry, and an action leaves its intent before it runs (so a failed action shows both).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_9_audit_text_is_clean_cancel_is_audited_and_intent_comes_first() {
    let mock = unsolvable_mock().await;
    let memory: Arc<dyn DlqStore> = Arc::new(MemoryStore::new());
    memory.push(sample_record("r1", 0)).await.expect("push");
    let client = captcha_dlq::builder()
        .api_key("test-key")
        .base_url(mock.base_url())
        .dlq_store(Arc::new(Interposed { store: memory.clone(), hooks: NoParks }))
        .config(fast_config())
        .build()
        .await
        .expect("client builds");

    for name in ["alice\u{202E}nimda", "bob\u{2066}", "eve\u{200F}", "mallory\u{1b}[2J"] {
        let e = client.dlq().as_operator(name).expect_err("refused");
        assert!(e.to_string().contains("operator") && e.to_string().contains("U+"), "{e}");
    }
    let e = client.dlq().park("r1", "fine\u{1b}[2J\u{1b}[H forged line").await.expect_err("refused");
    assert!(e.to_string().contains("reason") && e.to_string().contains("U+001B"), "{e}");
    let e = client.dlq().park("r1", "read \u{202E}this").await.expect_err("refused");
    assert!(e.to_string().contains("U+202E"), "{e}");
    assert!(client.dlq().audit(10, None).await.expect("audit").is_empty(), "refused text is no action");

    // The store fails the park: its intent was written first, then the failed result.
    let ops = client.dlq().as_operator("ops").expect("a valid name");
    ops.park("r1", "wrong sitekey").await.expect_err("parks fail");
    let trail = client.dlq().audit(10, None).await.expect("audit");
    assert_eq!(trail.len(), 2, "{trail:?}");
    let (result, intent) = (&trail[0], &trail[1]);
    assert_eq!(
        (intent.stage, intent.action, intent.detail.as_str()),
        (AuditStage::Intent, AuditAction::Park, "wrong sitekey")
    );
    assert_eq!((result.stage, result.intent), (AuditStage::Result, Some(intent.id)));
    assert!(result.error.as_deref().is_some_and(|e| e.contains("no parks")), "{result:?}");

    // Cancelling a replay is an operator's action in the trail, the cancel between its entries.
    let cancelled = std::sync::atomic::AtomicBool::new(false);
    ops.cancel_replay(json!({"replay_request": 7}), "replay request 7".into(), || {
        cancelled.store(true, std::sync::atomic::Ordering::SeqCst)
    })
    .await
    .expect("cancel");
    assert!(cancelled.load(std::sync::atomic::Ordering::SeqCst));
    let trail = client.dlq().audit(2, None).await.expect("audit");
    assert_eq!(
        trail.iter().map(|e| (e.operator.as_str(), e.action, e.stage)).collect::<Vec<_>>(),
        vec![("ops", AuditAction::Cancel, AuditStage::Result), ("ops", AuditAction::Cancel, AuditStage::Intent)]
    );
    client.close().await;
    mock.shutdown().await;
}
