//! The edit action over HTTP, without a browser: what a bad form gets (malformed JSON, an
//! unknown field or step, a misspelt filter, a text search), a group edit applied to exactly
//! the filter's records, and "apply and replay" refused on a dashboard without an API key.
//! The pages themselves are walked in Chromium (`browser.rs`, `browser_steps/edit.rs`).

use crate::support;
use captcha_dlq::core::dlq::{Filter, Page, Phase};
use captcha_dlq_dashboard::DashboardConfig;
use reqwest::StatusCode;
use support::{csrf_of, http, memory_client, serve};

async fn post(url: &str, form: &[(&str, &str)]) -> (StatusCode, String) {
    let r = http().post(url).form(form).send().await.expect("POST");
    (r.status(), r.text().await.expect("body"))
}

#[tokio::test]
async fn a_group_edit_changes_exactly_the_selection_and_bad_forms_are_named() {
    let client = memory_client(12).await;
    let dash = serve(&client, DashboardConfig::default()).await;
    let page = http().get(dash.url()).send().await.unwrap().text().await.unwrap();
    let csrf = csrf_of(&page);
    let url = format!("{}actions/edit", dash.url());
    let labels = r#"{"checked": "yes"}"#;

    let (status, body) =
        post(&url, &[("filter", "reason=Timeout"), ("task", "{"), ("step", "preview"), ("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("task: not valid JSON") && body.contains("Edit records"), "the form again, with why: {body}");
    let (status, body) = post(&url, &[("filter", "reason=Timeout"), ("step", "preview"), ("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("changes nothing"), "{body}");
    let (status, body) =
        post(&url, &[("filter", "reason=Timeout"), ("labels", labels), ("step", "go"), ("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("step"), "{body}");
    let (status, body) =
        post(&url, &[("filter", "reason=Timeout"), ("labelz", labels), ("step", "apply"), ("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("labelz: unknown form field"), "{body}");
    let (status, body) =
        post(&url, &[("filter", "reasn=Timeout"), ("labels", labels), ("step", "apply"), ("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a misspelt filter never widens an edit: {body}");
    let (status, body) =
        post(&url, &[("filter", "q=rec"), ("labels", labels), ("step", "apply"), ("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a text search selects nothing for an edit: {body}");
    let all = client.dlq().peek(&Filter::all(), Page::default()).await.unwrap();
    assert!(all.iter().all(|r| !r.labels.contains_key("checked")), "nothing was written so far");

    let (status, body) =
        post(&url, &[("filter", "reason=Timeout"), ("labels", labels), ("step", "preview"), ("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("6 would change"), "{body}");
    let (status, body) =
        post(&url, &[("filter", "reason=Timeout"), ("labels", labels), ("step", "apply"), ("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("6 changed"), "{body}");
    let all = client.dlq().peek(&Filter::all(), Page::default()).await.unwrap();
    for r in &all {
        let edited = r.labels.contains_key("checked");
        assert_eq!(edited, r.reason == "Timeout", "{}: edited only if selected", r.id);
        assert_eq!(r.history.last().map(|h| h.phase == Phase::Edit), Some(edited), "{}: the history says so", r.id);
    }
    dash.shutdown().await;

    // Without an API key, edits are applied but "apply and replay" is refused.
    let offline = serve(&client, DashboardConfig { solving: false, ..DashboardConfig::default() }).await;
    let csrf = csrf_of(&http().get(offline.url()).send().await.unwrap().text().await.unwrap());
    let url = format!("{}actions/edit", offline.url());
    let (status, body) =
        post(&url, &[("filter", "id=rec-00000"), ("labels", labels), ("step", "apply_replay"), ("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(!client
        .dlq()
        .peek(&Filter { ids: vec!["rec-00000".into()], ..Filter::default() }, Page::default())
        .await
        .unwrap()[0]
        .labels
        .contains_key("checked"));
    offline.shutdown().await;
    client.close().await;
}
