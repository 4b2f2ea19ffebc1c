//! What the dashboard's tests share: clients over a memory DLQ or over the
//! seeds' batch against the mock solver, a fleet on one SQLite file, a
//! dashboard served on loopback, and an HTTP client that does not follow
//! redirects.

#![allow(dead_code)] // each test binary uses its own part

pub mod chromium;

use std::collections::BTreeMap;
use std::sync::Arc;

use captcha_dlq::core::dlq::{DlqStore, MemoryStore};

use captcha_dlq::core::dlq::testkit::sample_record;
use captcha_dlq::core::engine::{Backoff, EngineConfig, FirstPoll};
use captcha_dlq::core::fleet::{FleetReport, OwnerInfo, SharedAccountError, SharedPause};
use captcha_dlq::core::Timestamp;
use captcha_dlq::{Client, SolveInput, Task};
use captcha_dlq_dashboard::{DashboardConfig, DashboardHandle, DashboardOptions};
use captcha_dlq_mock::{Behavior, Matcher, MockConfig, MockHandle, MockSolver, Outcome, Rule};
use serde_json::json;

/// A key no page, response or log may contain.
pub const API_KEY: &str = "sk-test-9f86d081884c7d659a2feaa0c55ad015";
pub const TOKEN: &str = "dashboard-test-token-0123456789";

/// A client over a memory DLQ holding `n` sample records (ids `rec-000…`), spread over
/// minutes, every third labelled `job=x`.
pub async fn memory_client(n: u64) -> Client {
    client_over(Arc::new(MemoryStore::new()), n).await
}

/// A client over `store` holding `n` sample records, as [`memory_client`].
pub async fn client_over(store: Arc<dyn DlqStore>, n: u64) -> Client {
    let client = captcha_dlq::builder()
        .api_key(API_KEY)
        .provider("captchaai")
        .base_url("http://127.0.0.1:9/")
        .dlq_store(store)
        .build()
        .await
        .expect("a client");
    let store = client.backends().store.clone();
    for i in 0..n {
        let mut record = sample_record(&format!("rec-{i:05}"), i / 3);
        if i % 3 == 0 {
            record.labels.insert("job".into(), "x".into());
        }
        if i % 2 == 1 {
            record.reason = "Timeout".into();
        }
        store.push(record).await.expect("push");
    }
    client
}

/// The demo's polling, scaled down so the seeds' batch runs in seconds.
pub fn fast_config() -> EngineConfig {
    let mut config = EngineConfig::default();
    config.polling.first_poll_ms = FirstPoll::uniform(300);
    config.polling.interval_ms = 200;
    config.polling.max_polls = 4;
    config.polling.coalesce_ms = 100;
    config.retry.backoff = Backoff::FullJitter { base_ms: 50, cap_ms: 200 };
    config.rate.submits_per_second = 50.0;
    config
}

fn rule(page: &str, outcome: Outcome) -> Rule {
    Rule {
        matcher: Matcher { page_url_contains: Some(page.to_string()), ..Matcher::default() },
        behavior: Behavior { outcome, solve_after_ms: 200, ..Behavior::default() },
    }
}

/// The seeds' batch (five reCAPTCHA v2 tasks, page 2 unsolvable, page 4 never ready) run
/// `runs` times at once against the mock solver, into a SQLite DLQ at `dlq`: `2 × runs`
/// dead letters. The mock is healthy afterwards, so replays succeed.
pub async fn seeds_client(dlq: &str, runs: usize) -> (MockHandle, Client) {
    let script = MockConfig {
        default_behavior: Behavior { solve_after_ms: 200, ..Behavior::default() },
        rules: vec![rule("/page/2", Outcome::Unsolvable), rule("/page/4", Outcome::NeverReady)],
        ..MockConfig::default()
    };
    let mock = MockSolver::start(script).await.expect("the mock solver starts");
    let client = captcha_dlq::builder()
        .api_key(API_KEY)
        .provider("captchaai")
        .base_url(mock.base_url())
        .dlq(dlq.to_string())
        .config(fast_config())
        .build()
        .await
        .expect("a client over the mock");
    let tasks: Vec<SolveInput> = (0..runs)
        .flat_map(|run| (0..5).map(move |page| (run, page)))
        .map(|(run, page)| {
            let task = Task::from_json_value(json!({
                "type": "recaptcha_v2",
                "sitekey": "6Le-SITEKEY",
                "page_url": format!("https://example.com/page/{page}"),
            }))
            .expect("a seeds task");
            let labels =
                BTreeMap::from([("job".to_string(), format!("run-{run}")), ("page".to_string(), page.to_string())]);
            SolveInput { task: Ok(task), labels, key: None, ttl_ms: None }
        })
        .collect();
    let results = client.solve_many(tasks, Some(10)).await;
    let failed = results.iter().filter(|r| r.outcome.is_err()).count();
    assert_eq!(failed, 2 * runs, "the seeds' batch dead-letters pages 2 and 4 of each run");
    let mut healthy = mock.config();
    healthy.rules.clear();
    mock.set_script(healthy).expect("the mock takes a healthy script");
    (mock, client)
}

/// Serves `client`'s dashboard on a free loopback port.
pub async fn serve(client: &Client, config: DashboardConfig) -> DashboardHandle {
    let options = DashboardOptions { listen: "127.0.0.1:0".parse().expect("an address"), config, tls: None };
    captcha_dlq_dashboard::serve(client.clone(), options).await.expect("the dashboard starts")
}

/// An HTTP client that shows redirects instead of following them.
pub fn http() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("an HTTP client")
}

/// The CSRF token a page carries.
pub fn csrf_of(page: &str) -> String {
    let start = page.find("name=\"csrf-token\" content=\"").expect("a csrf meta tag") + 27;
    page[start..].split('"').next().expect("the token").to_string()
}

/// The wall clock, as a SQLite file's ledger reads it (its processes share one host).
pub fn now() -> Timestamp {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    Timestamp::from_unix_millis(ms)
}

/// The owner id of the client [`gone_worker`] writes.
pub const GONE_OWNER: &str = "worker-3.example/4242/01J0GONE";
/// The account [`gone_worker`] paused and stopped.
pub const BANNED_ACCOUNT: &str = "5f0c9a1b2d3e4f5061728394a5b6c7d8";

/// What a worker on another host left in `store`'s fleet ledger: it synced `silent_for` ago
/// (longer than the owner TTL: it is gone), with 4 tasks in flight at [`BANNED_ACCOUNT`],
/// reporting that the provider paused the account for ten minutes (`MAX_USER_TURN`) and
/// answered an account error that holds the fleet for ten minutes more.
pub async fn gone_worker(store: &dyn DlqStore, silent_for: std::time::Duration) {
    let ledger = store.fleet_ledger().expect("a store with a fleet ledger");
    let heartbeat = Timestamp::from_unix_millis(now().as_unix_millis() - silent_for.as_millis() as u64);
    let owner = OwnerInfo {
        owner: GONE_OWNER.into(),
        host: "worker-3.example".into(),
        pid: 4242,
        started_at: Timestamp::from_unix_millis(heartbeat.as_unix_millis() - 3_600_000),
    };
    let report = FleetReport {
        in_flight: 4,
        rate: 10.0,
        window_max: 20,
        pause: Some(SharedPause { ms: 600_000, code: "MAX_USER_TURN".into() }),
        account_error: Some(SharedAccountError {
            code: "ERROR_ZERO_BALANCE".into(),
            description: "the account has no money left".into(),
            hold_ms: 1_200_000,
        }),
        ..FleetReport::default()
    };
    ledger.sync(BANNED_ACCOUNT, &owner, &report, heartbeat).await.expect("the gone worker's last sync");
}
