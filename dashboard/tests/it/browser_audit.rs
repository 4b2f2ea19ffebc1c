//! Roles and the audit trail in real Chromium: a dashboard with two named tokens over the
//! seeds' batch against the mock solver. The operator (`alice`) logs in, replays a group and
//! purges another, and finds both on `/audit` under her name; the viewer (`vic`) logs in, sees
//! every page and her entries, no action, and gets 403 for every action even with the CSRF
//! token (and so does a script with her bearer token). No page shows a token.
//!
//! Needs `chromium` and `chromium-driver`, as `browser.rs`; `CAPTCHA_DLQ_SKIP_BROWSER=1` skips
//! it. `target/dashboard-screenshots/audit.png` is `docs/dashboard-audit.png`.

use crate::support;
use captcha_dlq_dashboard::{DashboardConfig, NamedToken, Role};
use fantoccini::{Client as Browser, Locator};
use serde_json::{json, Value};
use support::chromium::{
    fetch_post, open_browser, screenshot, skipped, start_driver, text_of, wait_for, wait_text, SKIP_ENV,
};
use support::{seeds_client, serve, API_KEY};

const ALICE: &str = "alice-operator-token-4b1d0c8e";
const VIC: &str = "vic-viewer-token-9e2f7a31c5";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operators_actions_are_audited_and_a_viewer_changes_nothing() {
    if skipped() {
        eprintln!("{SKIP_ENV}=1: the Chromium tests are skipped");
        return;
    }
    let (mock, client) = seeds_client("memory", 1).await;
    let tokens = vec![
        NamedToken { name: "alice".into(), token: ALICE.into(), role: Role::Operator },
        NamedToken { name: "vic".into(), token: VIC.into(), role: Role::Viewer },
    ];
    let dash = serve(&client, DashboardConfig { tokens, ..DashboardConfig::default() }).await;
    let base = dash.url().trim_end_matches('/').to_string();
    let driver = start_driver();
    let browser = open_browser(&driver).await;

    log_in(&browser, &base, ALICE, "alice · operator").await;
    replay_and_purge(&browser, &base).await;
    the_trail_names_alice(&browser, &base).await;

    browser.delete_all_cookies().await.unwrap();
    log_in(&browser, &base, VIC, "vic · viewer").await;
    a_viewer_sees_everything_and_changes_nothing(&browser, &base).await;
    a_viewers_bearer_token_changes_nothing(&base).await;

    browser.close().await.unwrap();
    dash.shutdown().await;
    client.close().await;
    mock.shutdown().await;
}

async fn log_in(browser: &Browser, base: &str, token: &str, whoami: &str) {
    browser.goto(&format!("{base}/records")).await.unwrap();
    wait_for("the login page", || async {
        browser.current_url().await.ok()?.as_str().ends_with("/login").then_some(())
    })
    .await;
    browser.find(Locator::Css("input[name=token]")).await.unwrap().send_keys(token).await.unwrap();
    browser.find(Locator::Css("form button[type=submit]")).await.unwrap().click().await.unwrap();
    wait_text(browser, "#whoami", whoami).await;
}

async fn replay_and_purge(browser: &Browser, base: &str) {
    browser.goto(&format!("{base}/groups")).await.unwrap();
    wait_text(browser, "#dlq-total [data-stat=total]", "2").await;
    let row = browser.find(Locator::Css("tr[data-group=Timeout]")).await.unwrap();
    row.find(Locator::Css("button.replay-group")).await.unwrap().click().await.unwrap();
    wait_for("the replay page", || async {
        browser.current_url().await.ok()?.as_str().contains("/replays/").then_some(())
    })
    .await;
    wait_text(browser, "[data-field=status]", "finished").await;
    assert_eq!(text_of(browser, "[data-field=recovered]").await.as_deref(), Some("1"));

    browser.goto(&format!("{base}/groups")).await.unwrap();
    let form = browser.find(Locator::Css("tr[data-group=ERROR_CAPTCHA_UNSOLVABLE] form.purge")).await.unwrap();
    form.find(Locator::Css("input[name=confirm]")).await.unwrap().send_keys("1").await.unwrap();
    form.find(Locator::Css("button[type=submit]")).await.unwrap().click().await.unwrap();
    wait_for("the purge's answer", || async {
        text_of(browser, "p.message").await.filter(|t| t.contains("Purged 1 of the 1 records"))
    })
    .await;
}

/// The result rows of `/audit` (each action's intent has its own row before it): (operator,
/// action, count), newest first.
async fn audit_rows(browser: &Browser, base: &str) -> Vec<(String, String, String)> {
    browser.goto(&format!("{base}/audit")).await.unwrap();
    let mut rows = Vec::new();
    for row in browser.find_all(Locator::Css("table#audit tbody tr[data-stage=result]")).await.unwrap() {
        let operator = row.attr("data-operator").await.unwrap().unwrap_or_default();
        let action = row.attr("data-action").await.unwrap().unwrap_or_default();
        let count = row.find(Locator::Css("td.count")).await.unwrap().text().await.unwrap();
        rows.push((operator, action, count));
    }
    rows
}

fn row(operator: &str, action: &str, count: &str) -> (String, String, String) {
    (operator.into(), action.into(), count.into())
}

async fn the_trail_names_alice(browser: &Browser, base: &str) {
    let rows = audit_rows(browser, base).await;
    assert_eq!(rows, vec![row("alice", "purge", "1"), row("alice", "replay", "1")]);
    let source = browser.source().await.unwrap();
    assert!(source.contains("ERROR_CAPTCHA_UNSOLVABLE"), "the purge's selection is shown");
    for secret in [ALICE, VIC, API_KEY] {
        assert!(!source.contains(secret), "the audit page shows a secret");
    }
    screenshot(browser, "audit").await;

    let script = "return fetch(arguments[0]).then((r) => r.json());";
    let api = browser.execute(script, vec![json!(format!("{base}/api/audit?limit=1"))]).await.unwrap();
    let entries = api["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 1, "limit=1: {api}");
    assert_eq!((entries[0]["operator"].as_str(), entries[0]["action"].as_str()), (Some("alice"), Some("purge")));
    assert_eq!(entries[0]["count"], 1);
    assert_eq!(entries[0]["filter"]["reasons"], json!(["ERROR_CAPTCHA_UNSOLVABLE"]));
}

async fn a_viewer_sees_everything_and_changes_nothing(browser: &Browser, base: &str) {
    for path in ["/", "/records", "/groups", "/journal", "/replays", "/audit"] {
        browser.goto(&format!("{base}{path}")).await.unwrap();
        wait_text(browser, "#whoami", "vic · viewer").await;
        for css in ["section.actions", "form.purge", "input.select", "button.replay-group", "button.cancel"] {
            assert!(browser.find_all(Locator::Css(css)).await.unwrap().is_empty(), "{path} shows a viewer {css}");
        }
        let source = browser.source().await.unwrap();
        assert!(!source.contains(ALICE) && !source.contains(VIC), "{path} shows a token");
    }
    assert_eq!(audit_rows(browser, base).await.len(), 2, "a viewer reads the trail");
    let csrf =
        browser.execute("return document.querySelector('meta[name=\"csrf-token\"]').content;", vec![]).await.unwrap();
    let csrf = csrf.as_str().unwrap().to_string();
    for (action, body) in [
        ("purge", "filter=&confirm=purge"),
        ("replay", "filter="),
        ("park", "id=anything"),
        ("unpark", "id=anything"),
        ("selected", "id=anything&action=park"),
        ("recover", "owner=someone"),
    ] {
        let status = fetch_post(browser, &format!("{base}/actions/{action}"), &format!("{body}&csrf={csrf}")).await;
        assert_eq!(status, 403, "a viewer's {action} with the CSRF token");
    }
    assert_eq!(audit_rows(browser, base).await.len(), 2, "nothing a viewer asked for happened");
}

async fn a_viewers_bearer_token_changes_nothing(base: &str) {
    let http = support::http();
    let page = http.get(format!("{base}/records")).bearer_auth(VIC).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let csrf = support::csrf_of(&page.text().await.unwrap());
    let post = http
        .post(format!("{base}/actions/purge"))
        .bearer_auth(VIC)
        .header("x-csrf-token", csrf)
        .form(&[("filter", ""), ("confirm", "purge")])
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), 403);
    let said = post.text().await.unwrap();
    assert!(said.contains("vic is a viewer") && !said.contains(VIC), "{said}");
    let api: Value = http.get(format!("{base}/api/audit")).bearer_auth(VIC).send().await.unwrap().json().await.unwrap();
    assert_eq!(api["entries"].as_array().map(Vec::len), Some(4), "two actions, each an intent and a result");
    let wrong = http.get(format!("{base}/api/audit")).bearer_auth("vic-viewer-token-wrong").send().await.unwrap();
    assert_eq!(wrong.status(), 401);
}
