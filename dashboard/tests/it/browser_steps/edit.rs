//! The edit pages in Chromium (a step of `browser.rs`'s walk-through, on a DLQ of its own):
//! a filtered set gets a label through the form, its preview and "Apply"; one record gets
//! its sitekey fixed (an invalid value first, refused naming the field) and "Apply and
//! replay" replays exactly that record, which solves. The preview is `edit.png`
//! (`docs/dashboard-edit.png` is a copy).

use captcha_dlq::core::dlq::{Filter, Page, Phase};
use captcha_dlq_dashboard::DashboardConfig;
use fantoccini::{Client as Browser, Locator};

use super::{screenshot, text_of, wait_for, wait_text};
use crate::support::{seeds_client, serve, API_KEY};

async fn click(browser: &Browser, css: &str) {
    browser.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}")).click().await.unwrap();
}

async fn type_into(browser: &Browser, css: &str, text: &str) {
    let field = browser.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}"));
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
}

async fn wait_heading(browser: &Browser, heading: &str) {
    wait_for(&format!("the page {heading:?}"), || async {
        text_of(browser, "h1").await.filter(|t| t == heading).map(|_| ())
    })
    .await;
}

pub(crate) async fn edit_then_replay(browser: &Browser) {
    let (mock, client) = seeds_client("memory", 1).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let base = dash.url().trim_end_matches('/').to_string();
    let dlq = client.dlq();
    let by_reason = |reason: &str| Filter { reasons: vec![reason.to_string()], ..Filter::default() };
    let timeout = dlq.peek(&by_reason("Timeout"), Page::default()).await.unwrap().remove(0);
    let unsolvable = dlq.peek(&by_reason("ERROR_CAPTCHA_UNSOLVABLE"), Page::default()).await.unwrap().remove(0);

    // A filtered set: every Timeout record gets a label.
    browser.goto(&format!("{base}/records?reason=Timeout")).await.unwrap();
    click(browser, "a.button.edit").await;
    wait_heading(browser, "Edit records").await;
    type_into(browser, "#edit-labels", r#"{"checked": "by-operator"}"#).await;
    click(browser, "button[value=preview]").await;
    wait_heading(browser, "Preview of the edit").await;
    let diff = text_of(browser, "table.diff").await.unwrap();
    assert!(
        diff.contains(&timeout.id) && diff.contains("labels.checked") && diff.contains("\"by-operator\""),
        "{diff}"
    );
    assert!(text_of(browser, ".edit-summary").await.unwrap().contains("1 would change"));
    assert!(
        !dlq.peek(&by_reason("Timeout"), Page::default()).await.unwrap()[0].labels.contains_key("checked"),
        "a preview writes nothing"
    );
    click(browser, "button[value=apply]").await;
    wait_heading(browser, "Edit applied").await;
    let edited = dlq.peek(&by_reason("Timeout"), Page::default()).await.unwrap().remove(0);
    assert_eq!(edited.labels.get("checked").map(String::as_str), Some("by-operator"));
    assert_eq!((edited.attempts, edited.history.last().map(|h| h.phase)), (timeout.attempts, Some(Phase::Edit)));

    // One record: a wrong value is refused naming the field, then the fix is applied and replayed.
    browser.goto(&format!("{base}/records/{}", unsolvable.id)).await.unwrap();
    click(browser, "section.actions a.button.edit").await;
    wait_heading(browser, "Edit records").await;
    type_into(browser, "#edit-task", r#"{"sitekey": ""}"#).await;
    click(browser, "button[value=preview]").await;
    wait_heading(browser, "Preview of the edit").await;
    let refused = text_of(browser, "ul.refused").await.unwrap();
    assert!(refused.contains("task.sitekey"), "{refused}");
    browser.back().await.unwrap();
    wait_heading(browser, "Edit records").await;
    type_into(browser, "#edit-task", r#"{"sitekey": "6Le-FIXED"}"#).await;
    click(browser, "button[value=preview]").await;
    wait_heading(browser, "Preview of the edit").await;
    let diff = text_of(browser, "table.diff").await.unwrap();
    assert!(
        diff.contains("task.sitekey") && diff.contains("\"6Le-SITEKEY\"") && diff.contains("\"6Le-FIXED\""),
        "{diff}"
    );
    assert!(!browser.source().await.unwrap().contains(API_KEY));
    screenshot(browser, "edit").await;
    click(browser, "button[value=apply_replay]").await;
    wait_for("the replay page", || async {
        browser.current_url().await.ok()?.as_str().contains("/replays/").then_some(())
    })
    .await;
    wait_text(browser, "[data-field=status]", "finished").await;
    assert_eq!(text_of(browser, "[data-field=recovered]").await.as_deref(), Some("1"));
    // Exactly the edited record was replayed: the other one is still there, its edit in its history.
    let left = dlq.peek(&Filter::all(), Page::default()).await.unwrap();
    assert_eq!(left.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [timeout.id.as_str()]);
    browser.goto(&format!("{base}/records/{}", timeout.id)).await.unwrap();
    let entry = text_of(browser, "ol.timeline li.edit").await.expect("an edit entry in the history");
    assert!(entry.contains("labels.checked (none) → \"by-operator\""), "{entry}");

    // Read-only: no edit link, the form refused, the action refused even with the CSRF token.
    let read_only = serve(&client, DashboardConfig { read_only: true, ..DashboardConfig::default() }).await;
    let ro = read_only.url().trim_end_matches('/').to_string();
    browser.goto(&format!("{ro}/records/{}", timeout.id)).await.unwrap();
    wait_text(browser, ".pill.readonly", "read-only").await;
    assert!(browser.find_all(Locator::Css("a.button.edit")).await.unwrap().is_empty(), "read-only shows an edit link");
    let csrf =
        browser.execute("return document.querySelector('meta[name=\"csrf-token\"]').content;", vec![]).await.unwrap();
    let body = format!("filter=&labels=%7B%22x%22%3A%221%22%7D&step=apply&csrf={}", csrf.as_str().unwrap());
    assert_eq!(super::fetch_post(browser, &format!("{ro}/actions/edit"), &body).await, 403);
    browser.goto(&format!("{ro}/edit?id={}", timeout.id)).await.unwrap();
    assert!(text_of(browser, "p.message").await.unwrap().contains("read-only"));
    assert!(!dlq.peek(&Filter::all(), Page::default()).await.unwrap()[0].labels.contains_key("x"));

    read_only.shutdown().await;
    dash.shutdown().await;
    client.close().await;
    mock.shutdown().await;
}
