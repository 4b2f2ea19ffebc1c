//! The dashboard in real Chromium through chromedriver (WebDriver), as an
//! operator uses it: a DLQ filled by the seeds' batch against the mock
//! solver; the overview; a filter; a record; a group replayed while the
//! count drops; a purge with its typed confirmation; a forged POST; a
//! read-only dashboard; `/metrics` read by Prometheus's own parser; and the
//! Fleet page of two clients sharing a SQLite file (its `/metrics` parsed too).
//!
//! Needs `chromium` and `chromium-driver` (Debian) and a Python with
//! `prometheus_client` (`CAPTCHA_DLQ_PYTHON`, default `python3`); `test.sh`
//! installs them. `CAPTCHA_DLQ_SKIP_BROWSER=1` skips this file where they
//! cannot be installed. Screenshots go to `target/dashboard-screenshots/`
//! (`docs/dashboard.png` and `docs/dashboard-fleet.png` are copies of
//! `overview.png` and `fleet.png`).

#[path = "browser_steps/edit.rs"]
mod edit_steps;
use crate::support;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use captcha_dlq::store::SqliteStore;
use captcha_dlq::{Client, Task};
use captcha_dlq_dashboard::DashboardConfig;
use captcha_dlq_mock::{Behavior, MockConfig, MockSolver};
use fantoccini::{Client as Browser, Locator};
use serde_json::{json, Value};
use support::chromium::{
    fetch_post, open_browser, python, screenshot, skipped, start_driver, text_of, wait_for, wait_text, SKIP_ENV,
};
use support::{seeds_client, serve, API_KEY};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_works_through_the_dashboard_in_chromium() {
    if skipped() {
        eprintln!("{SKIP_ENV}=1: the Chromium tests are skipped");
        return;
    }
    check_python();
    // The memory store: SQLite and Redis remove a solved replay's record once the store
    // rules being ported to them land (journal_forget); then this can be a SQLite file.
    let (mock, client) = seeds_client("memory", 2).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let base = dash.url().trim_end_matches('/').to_string();
    let driver = start_driver();
    let browser = open_browser(&driver).await;

    overview(&browser, &base).await;
    filter_and_open_a_record(&browser, &base).await;
    replay_a_group_and_watch_the_count_drop(&browser, &base).await;
    purge_with_the_typed_confirmation(&browser, &base).await;
    forged_post_is_refused(&browser, &base).await;
    read_only(&browser, &client).await;
    metrics_parse(&base).await;
    fleet(&browser).await;
    edit_steps::edit_then_replay(&browser).await;

    browser.close().await.unwrap();
    dash.shutdown().await;
    client.close().await;
    mock.shutdown().await;
}

async fn overview(browser: &Browser, base: &str) {
    browser.goto(&format!("{base}/")).await.unwrap();
    wait_text(browser, "#dlq-total [data-stat=total]", "4").await;
    let reasons = text_of(browser, ".breakdowns").await.unwrap();
    assert!(reasons.contains("ERROR_CAPTCHA_UNSOLVABLE") && reasons.contains("Timeout"), "{reasons}");
    assert!(text_of(browser, "svg.timeline").await.is_some(), "a failures chart");
    let source = browser.source().await.unwrap();
    assert!(!source.contains(API_KEY));
    screenshot(browser, "overview").await;
}

async fn filter_and_open_a_record(browser: &Browser, base: &str) {
    browser.goto(&format!("{base}/records")).await.unwrap();
    browser.find(Locator::Css("input[name=reason]")).await.unwrap().send_keys("Timeout").await.unwrap();
    browser.find(Locator::Css("form.filters button[type=submit]")).await.unwrap().click().await.unwrap();
    wait_for("the filtered page", || async {
        browser.current_url().await.ok()?.as_str().contains("reason=Timeout").then_some(())
    })
    .await;
    wait_text(browser, "#match-count", "2").await;
    let rows = browser.find_all(Locator::Css("table.records tbody tr")).await.unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert!(row.text().await.unwrap().contains("Timeout"));
    }
    screenshot(browser, "records").await;
    browser.find(Locator::Css("a.record-link")).await.unwrap().click().await.unwrap();
    wait_for("the record page", || async { text_of(browser, "h1").await.filter(|t| t.starts_with("Record")) }).await;
    let facts = text_of(browser, "dl.facts").await.unwrap();
    assert!(facts.contains("Timeout"), "{facts}");
    let history = browser.find_all(Locator::Css("ol.timeline li")).await.unwrap();
    assert!(!history.is_empty(), "the record's history is a timeline");
    assert!(!browser.source().await.unwrap().contains(API_KEY));
    screenshot(browser, "record").await;
}

async fn replay_a_group_and_watch_the_count_drop(browser: &Browser, base: &str) {
    browser.goto(&format!("{base}/groups")).await.unwrap();
    wait_text(browser, "#dlq-total [data-stat=total]", "4").await;
    let row = browser.find(Locator::Css("tr[data-group=Timeout]")).await.unwrap();
    assert_eq!(row.find(Locator::Css(".group-count")).await.unwrap().text().await.unwrap(), "2");
    row.find(Locator::Css("button.replay-group")).await.unwrap().click().await.unwrap();
    wait_for("the replay page", || async {
        browser.current_url().await.ok()?.as_str().contains("/replays/").then_some(())
    })
    .await;
    // The live counter drops while the page shows the request's progress.
    wait_text(browser, "#dlq-total [data-stat=total]", "2").await;
    wait_text(browser, "[data-field=status]", "finished").await;
    assert_eq!(text_of(browser, "[data-field=recovered]").await.as_deref(), Some("2"));
    screenshot(browser, "replay").await;
    browser.goto(&format!("{base}/groups")).await.unwrap();
    assert!(browser.find(Locator::Css("tr[data-group=Timeout]")).await.is_err(), "the group is gone");
}

async fn purge_with_the_typed_confirmation(browser: &Browser, base: &str) {
    let css = "tr[data-group=ERROR_CAPTCHA_UNSOLVABLE] form.purge";
    let form = browser.find(Locator::Css(css)).await.unwrap();
    let input = form.find(Locator::Css("input[name=confirm]")).await.unwrap();
    let button = form.find(Locator::Css("button[type=submit]")).await.unwrap();
    assert!(!button.is_enabled().await.unwrap(), "disabled until the count is typed");
    input.send_keys("1").await.unwrap();
    assert!(!button.is_enabled().await.unwrap(), "the wrong number does not enable it");
    input.clear().await.unwrap();
    input.send_keys("2").await.unwrap();
    assert!(button.is_enabled().await.unwrap());
    button.click().await.unwrap();
    wait_for("the purge's answer", || async {
        text_of(browser, "p.message").await.filter(|t| t.contains("Purged 2 of the 2 records"))
    })
    .await;
    browser.goto(&format!("{base}/")).await.unwrap();
    wait_text(browser, "#dlq-total [data-stat=total]", "0").await;
}

async fn forged_post_is_refused(browser: &Browser, base: &str) {
    let status = fetch_post(browser, &format!("{base}/actions/purge"), "filter=&confirm=purge").await;
    assert_eq!(status, 403, "a POST without the CSRF token");
}

async fn read_only(browser: &Browser, client: &Client) {
    let dash = serve(client, DashboardConfig { read_only: true, ..DashboardConfig::default() }).await;
    let base = dash.url().trim_end_matches('/').to_string();
    browser.goto(&format!("{base}/records")).await.unwrap();
    wait_text(browser, ".pill.readonly", "read-only").await;
    for css in ["section.actions", "form.purge", "input.select", "button.replay-group"] {
        assert!(browser.find_all(Locator::Css(css)).await.unwrap().is_empty(), "read-only shows {css}");
    }
    let csrf =
        browser.execute("return document.querySelector('meta[name=\"csrf-token\"]').content;", vec![]).await.unwrap();
    let body = format!("filter=&confirm=purge&csrf={}", csrf.as_str().unwrap());
    let status = fetch_post(browser, &format!("{base}/actions/purge"), &body).await;
    assert_eq!(status, 403, "read-only refuses an action even with the CSRF token");
    dash.shutdown().await;
}

fn check_python() {
    let ok = Command::new(python()).args(["-c", "import prometheus_client"]).status().is_ok_and(|s| s.success());
    assert!(
        ok,
        "{} cannot import prometheus_client: set CAPTCHA_DLQ_PYTHON to a Python that has it (test.sh makes a venv), or {SKIP_ENV}=1",
        python()
    );
}

/// `/metrics` of the dashboard at `base` read by prometheus_client's parser: its families as
/// `{name: {"type": …, "samples": [[name, labels, value]]}}`.
async fn parsed_metrics(base: &str) -> Value {
    let text = reqwest::get(format!("{base}/metrics")).await.unwrap().text().await.unwrap();
    assert!(!text.contains(API_KEY));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/parse_metrics.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the parser refused /metrics: {}\n{text}", String::from_utf8_lossy(&out.stderr));
    let families: Value = serde_json::from_slice(&out.stdout).unwrap();
    for name in families.as_object().unwrap().keys() {
        assert!(name.starts_with("captcha_dlq_"), "{name}");
    }
    families
}

async fn metrics_parse(base: &str) {
    let families = parsed_metrics(base).await;
    // The parser names counter families without `_total`; their samples keep it.
    let family = |name: &str| families.get(name).unwrap_or_else(|| panic!("no family {name} in {families}"));
    let total = |name: &str| -> f64 {
        family(name)["samples"].as_array().unwrap().iter().map(|s| s[2].as_f64().unwrap()).sum()
    };
    assert_eq!(family("captcha_dlq_tasks_dead_lettered")["type"], "counter");
    let dead = &family("captcha_dlq_tasks_dead_lettered")["samples"];
    assert!(
        dead.as_array()
            .unwrap()
            .iter()
            .any(|s| s[1]["error_type"] == "task_terminal" && s[1]["task_type"] == "recaptcha_v2" && s[2] == 4.0),
        "four recaptcha_v2 dead letters: {dead}"
    );
    assert!(total("captcha_dlq_tasks_solved") >= 8.0, "six solved in the batch, two by the replay");
    assert!(total("captcha_dlq_tasks_submitted") >= total("captcha_dlq_tasks_solved"));
    assert!(total("captcha_dlq_http_requests") > 0.0);
    assert_eq!(family("captcha_dlq_http_request_duration_seconds")["type"], "histogram");
    assert_eq!(family("captcha_dlq_dlq_records")["type"], "gauge");
    assert_eq!(total("captcha_dlq_dlq_records"), 0.0, "the DLQ is empty after the replay and the purge");
    assert_eq!(family("captcha_dlq_circuit_open")["samples"][0][2], 0.0);
    assert!(families.get("captcha_dlq_fleet_up").is_none(), "a memory store keeps no fleet: {families}");
}

/// The Fleet page of a fleet on one SQLite file: two clients of the mock on one key (the
/// second with three tasks at the provider), and a worker of another host that went silent
/// with its account paused and stopped by an account error. Then that dashboard's `/metrics`
/// through the parser.
async fn fleet(browser: &Browser) {
    let slow = MockConfig {
        default_behavior: Behavior { solve_after_ms: 600_000, ..Behavior::default() },
        ..MockConfig::default()
    };
    let mock = MockSolver::start(slow).await.expect("the mock solver starts");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.sqlite");
    let (first, second) = (SqliteStore::open(&path).unwrap(), SqliteStore::open(&path).unwrap());
    support::gone_worker(&first, Duration::from_secs(40)).await;
    let fleet_client = |store: SqliteStore| {
        // The default polling: the tasks stay with the provider for as long as the page is read.
        captcha_dlq::builder()
            .api_key(API_KEY)
            .provider("captchaai")
            .base_url(mock.base_url())
            .dlq_store(Arc::new(store))
            .build()
    };
    let a = fleet_client(first).await.expect("a client");
    let b = fleet_client(second).await.expect("a client");
    let mut at_the_provider = Vec::new();
    for page in 0..3 {
        let task = Task::from_json_value(json!({
            "type": "recaptcha_v2",
            "sitekey": "6Le-SITEKEY",
            "page_url": format!("https://example.com/fleet/{page}"),
        }))
        .unwrap();
        at_the_provider.push(b.submit(task, BTreeMap::new(), None).await.expect("accepted"));
    }
    let dash = serve(&a, DashboardConfig::default()).await;
    let base = dash.url().trim_end_matches('/').to_string();
    let (account, provider) = {
        let own = a.fleet_accounts();
        (own[0].1.clone(), own[0].0.clone())
    };

    browser.goto(&format!("{base}/fleet")).await.unwrap();
    // The page follows the ledger live: b's tasks show once its next sync reports them.
    let row = |owner: &str| format!("tr[data-owner=\"{owner}\"]");
    wait_text(browser, &format!("{} [data-field=in_flight]", row(b.owner())), "3").await;
    wait_text(browser, &format!("tr[data-account=\"{account}\"] [data-field=in_flight]",), "3").await;
    let rows = browser.find_all(Locator::Css("table.fleet-owners tbody tr")).await.unwrap();
    assert_eq!(rows.len(), 3, "two clients and the gone worker");
    let mine = text_of(browser, &row(a.owner())).await.unwrap();
    assert!(mine.contains("this dashboard's client") && mine.contains("live"), "{mine}");
    assert!(mine.contains(&std::process::id().to_string()) && mine.contains(" ago"), "{mine}");
    let gone = text_of(browser, &row(support::GONE_OWNER)).await.unwrap();
    assert!(gone.contains("worker-3.example") && gone.contains("4242") && gone.contains("gone"), "{gone}");
    let ours = text_of(browser, &format!("tr[data-account=\"{account}\"]")).await.unwrap();
    assert!(ours.contains(&provider) && ours.contains("none"), "{ours}");
    let banned = text_of(browser, &format!("tr[data-account=\"{}\"]", support::BANNED_ACCOUNT)).await.unwrap();
    assert!(
        banned.contains("more (MAX_USER_TURN)") && banned.contains("ERROR_ZERO_BALANCE: the account has no money left"),
        "{banned}"
    );
    assert_eq!(text_of(browser, "[data-fleet-stat=live]").await.as_deref(), Some("2"));
    assert_eq!(text_of(browser, "[data-fleet-stat=gone]").await.as_deref(), Some("1"));
    let spend = text_of(browser, "section.spend").await.unwrap();
    assert!(spend.contains("The fleet's spend") && spend.contains("The fleet"), "{spend}");
    assert!(!browser.source().await.unwrap().contains(API_KEY));
    screenshot(browser, "fleet").await;

    let families = parsed_metrics(&base).await;
    let samples = |name: &str| {
        families[name]["samples"].as_array().cloned().unwrap_or_else(|| panic!("no family {name} in {families}"))
    };
    let value = |name: &str, labels: Value| {
        let found = samples(name).into_iter().find(|s| s[1] == labels);
        found.unwrap_or_else(|| panic!("no {name} {labels} in {families}"))[2].as_f64().unwrap()
    };
    for name in [
        "captcha_dlq_fleet_up",
        "captcha_dlq_fleet_owners",
        "captcha_dlq_fleet_in_flight",
        "captcha_dlq_fleet_window",
        "captcha_dlq_fleet_paused_seconds",
        "captcha_dlq_fleet_account_error",
        "captcha_dlq_fleet_account_info",
    ] {
        assert_eq!(families[name]["type"], "gauge", "{name}");
    }
    assert_eq!(families["captcha_dlq_spend"]["type"], "counter");
    assert_eq!(value("captcha_dlq_fleet_up", json!({})), 1.0);
    assert_eq!(value("captcha_dlq_fleet_owners", json!({"state": "live"})), 2.0);
    assert_eq!(value("captcha_dlq_fleet_owners", json!({"state": "gone"})), 1.0);
    assert_eq!(value("captcha_dlq_fleet_in_flight", json!({"account": account})), 3.0);
    assert_eq!(value("captcha_dlq_fleet_in_flight", json!({"account": support::BANNED_ACCOUNT})), 0.0);
    assert!(value("captcha_dlq_fleet_window", json!({"account": account})) >= 3.0);
    assert!(value("captcha_dlq_fleet_paused_seconds", json!({"account": support::BANNED_ACCOUNT})) > 0.0);
    assert_eq!(
        value(
            "captcha_dlq_fleet_account_error",
            json!({"account": support::BANNED_ACCOUNT, "code": "ERROR_ZERO_BALANCE"})
        ),
        1.0
    );
    assert_eq!(value("captcha_dlq_fleet_account_info", json!({"account": account, "provider": provider})), 1.0);

    drop(at_the_provider);
    dash.shutdown().await;
    b.close().await;
    a.close().await;
    mock.shutdown().await;
}
