//! Scripted per-task outcomes, rule matching, runtime script changes and account errors.

use crate::common;
use captcha_dlq_mock::{MockConfig, Outcome};
use common::{get, get_json, poll, post_json, start, submit_ok, submit_recaptcha, KEY};
use serde_json::json;

#[tokio::test]
async fn the_seeds_batch_three_solved_one_unsolvable_one_never_ready() {
    let mock = start(
        r#"{"rules": [
            {"match": {"page_url_contains": "/page/2"}, "behavior": {"outcome": "unsolvable"}},
            {"match": {"page_url_contains": "/page/4"}, "behavior": {"outcome": "never_ready"}}
        ]}"#,
    )
    .await;
    let mut answers = Vec::new();
    for page in 0..5 {
        let id = submit_ok(&mock, &format!("https://example.com/page/{page}")).await;
        answers.push(poll(&mock, &id).await);
    }
    assert!(answers[0].starts_with("OK|03AGdBq2"));
    assert!(answers[1].starts_with("OK|03AGdBq2"));
    assert_eq!(answers[2], "ERROR_CAPTCHA_UNSOLVABLE");
    assert!(answers[3].starts_with("OK|03AGdBq2"));
    assert_eq!(answers[4], "CAPCHA_NOT_READY");
    assert_eq!(mock.counters().tasks_solved, 3);
}

#[tokio::test]
async fn unsolvable_is_an_error_in_the_json_protocol_too() {
    let mock = start(r#"{"rules": [{"match": {"kind": "turnstile"}, "behavior": {"outcome": "unsolvable"}}]}"#).await;
    let base = mock.base_url();
    let task = json!({"type": "TurnstileTaskProxyless", "websiteURL": "https://a", "websiteKey": "0x4"});
    let (_, created) = post_json(&format!("{base}/createTask"), &json!({"clientKey": KEY, "task": task})).await;
    let (_, answer) =
        post_json(&format!("{base}/getTaskResult"), &json!({"clientKey": KEY, "taskId": created["taskId"]})).await;
    assert_eq!(answer["errorId"], 1);
    assert_eq!(answer["errorCode"], "ERROR_CAPTCHA_UNSOLVABLE");
}

#[tokio::test]
async fn fail_first_submits_refuses_k_times_then_accepts() {
    let mock = start(
        r#"{"rules": [{"match": {"page_url_contains": "busy"},
            "behavior": {"fail_first_submits": 2, "fail_code": "ERROR_NO_SLOT_AVAILABLE"}}]}"#,
    )
    .await;
    assert_eq!(submit_recaptcha(&mock, "https://busy.test").await, "ERROR_NO_SLOT_AVAILABLE");
    // Other tasks are not affected by the rule.
    assert!(submit_recaptcha(&mock, "https://calm.test").await.starts_with("OK|"));
    assert_eq!(submit_recaptcha(&mock, "https://busy.test").await, "ERROR_NO_SLOT_AVAILABLE");
    assert!(submit_recaptcha(&mock, "https://busy.test").await.starts_with("OK|"));
    assert!(submit_recaptcha(&mock, "https://busy.test").await.starts_with("OK|"));
    let counters = mock.counters();
    assert_eq!((counters.submits, counters.submit_errors, counters.tasks_created), (5, 2, 3));
}

#[tokio::test]
async fn bad_parameters_refuses_at_submit_with_the_scripted_code() {
    let mock = start(
        r#"{"rules": [
            {"match": {"site_key": "6Le-WRONG"}, "behavior": {"outcome": "bad_parameters", "code": "ERROR_WRONG_GOOGLEKEY"}},
            {"match": {"page_url_contains": "broken"}, "behavior": {"outcome": "bad_parameters"}}
        ]}"#,
    )
    .await;
    let base = mock.base_url();
    let (_, body) =
        get(&format!("{base}/in.php?key={KEY}&method=userrecaptcha&googlekey=6Le-WRONG&pageurl=https://a")).await;
    assert_eq!(body, "ERROR_WRONG_GOOGLEKEY");
    assert_eq!(submit_recaptcha(&mock, "https://broken.test").await, "ERROR_BAD_PARAMETERS");
    let task = json!({"type": "RecaptchaV2TaskProxyless", "websiteURL": "https://broken", "websiteKey": "k"});
    let (_, answer) = post_json(&format!("{base}/createTask"), &json!({"clientKey": KEY, "task": task})).await;
    assert_eq!(answer["errorCode"], "ERROR_BAD_PARAMETERS");
}

#[tokio::test]
async fn poll_error_and_fixed_tokens() {
    let mock = start(
        r#"{"rules": [
            {"match": {"any_contains": "expired"}, "behavior": {"outcome": "poll_error", "code": "ERROR_TOKEN_EXPIRED"}},
            {"match": {"page_url_contains": "fixed"}, "behavior": {"token": "03AGdBq2-FIXED"}}
        ]}"#,
    )
    .await;
    let expired = submit_ok(&mock, "https://expired.test").await;
    assert_eq!(poll(&mock, &expired).await, "ERROR_TOKEN_EXPIRED");
    let fixed = submit_ok(&mock, "https://fixed.test").await;
    assert_eq!(poll(&mock, &fixed).await, "OK|03AGdBq2-FIXED");
}

#[tokio::test]
async fn set_script_changes_new_tasks_only() {
    let mock = start("{}").await;
    let before = submit_ok(&mock, "https://a").await;
    let mut config = MockConfig::default();
    config.default_behavior.outcome = Outcome::Unsolvable;
    mock.set_script(config).unwrap_or_else(|e| panic!("{e}"));
    let after = submit_ok(&mock, "https://a").await;
    assert!(poll(&mock, &before).await.starts_with("OK|"));
    assert_eq!(poll(&mock, &after).await, "ERROR_CAPTCHA_UNSOLVABLE");
    let mut invalid = MockConfig::default();
    invalid.faults.http_5xx = 2.0;
    assert!(mock.set_script(invalid).is_err_and(|e| e.contains("faults.http_5xx")));
}

#[tokio::test]
async fn script_reset_and_config_over_http() {
    let mock = start("{}").await;
    let base = mock.base_url();
    let script = json!({"default": {"outcome": "never_ready"}, "balance": 1.0});
    let (status, answer) = post_json(&format!("{base}/mock/script"), &script).await;
    assert_eq!((status, answer), (200, json!({"ok": true})));
    assert_eq!(get_json(&format!("{base}/mock/config")).await["default"]["outcome"], "never_ready");
    let id = submit_ok(&mock, "https://a").await;
    assert_eq!(poll(&mock, &id).await, "CAPCHA_NOT_READY");

    let (status, answer) = post_json(&format!("{base}/mock/script"), &json!({"defualt": {}})).await;
    assert_eq!(status, 400);
    assert!(answer["error"].as_str().is_some_and(|e| e.contains("defualt")), "{answer}");
    let (status, answer) = post_json(&format!("{base}/mock/script"), &json!({"rules": [{"match": {}}]})).await;
    assert_eq!(status, 400, "{answer}");

    let (status, _) = post_json(&format!("{base}/mock/reset"), &json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(mock.counters(), captcha_dlq_mock::Counters::default());
    assert_eq!(poll(&mock, &id).await, "ERROR_WRONG_CAPTCHA_ID", "reset forgets tasks");
    let next = submit_ok(&mock, "https://a").await;
    assert_ne!(next, id, "ids are never reused after a reset");
}

#[tokio::test]
async fn account_errors_and_key_lists_apply_to_every_endpoint() {
    let mock = start(
        r#"{"keys": ["good", "broke", "gone"], "bad_keys": ["gone"],
            "account_errors": {"broke": "ERROR_ZERO_BALANCE"}}"#,
    )
    .await;
    let base = mock.base_url();
    let submit = |key: &str| format!("{base}/in.php?key={key}&method=userrecaptcha&googlekey=k&pageurl=https://a");
    assert!(get(&submit("good")).await.1.starts_with("OK|"));
    assert_eq!(get(&submit("broke")).await.1, "ERROR_ZERO_BALANCE");
    assert_eq!(get(&submit("gone")).await.1, "ERROR_KEY_DOES_NOT_EXIST");
    assert_eq!(get(&submit("stranger")).await.1, "ERROR_KEY_DOES_NOT_EXIST");
    assert_eq!(get(&submit("")).await.1, "ERROR_KEY_DOES_NOT_EXIST");
    assert_eq!(get(&format!("{base}/res.php?key=broke&action=get&id=71823460")).await.1, "ERROR_ZERO_BALANCE");
    let json = get_json(&format!("{base}/res.php?key=broke&action=getbalance&json=1")).await;
    assert_eq!((json["status"].clone(), json["request"].clone()), (json!(0), json!("ERROR_ZERO_BALANCE")));
    let (_, answer) = post_json(&format!("{base}/getBalance"), &json!({"clientKey": "broke"})).await;
    assert_eq!(answer["errorCode"], "ERROR_ZERO_BALANCE");
    let task = json!({"type": "RecaptchaV2TaskProxyless", "websiteURL": "https://a", "websiteKey": "k"});
    let (_, answer) = post_json(&format!("{base}/createTask"), &json!({"clientKey": "gone", "task": task})).await;
    assert_eq!(answer["errorCode"], "ERROR_KEY_DOES_NOT_EXIST");
}

#[tokio::test]
async fn default_config_accepts_any_non_empty_key() {
    let mock = start("{}").await;
    let (_, body) =
        get(&format!("{}/in.php?key=whatever&method=userrecaptcha&googlekey=k&pageurl=https://a", mock.base_url()))
            .await;
    assert!(body.starts_with("OK|"), "{body}");
    let (_, body) =
        get(&format!("{}/in.php?method=userrecaptcha&googlekey=k&pageurl=https://a", mock.base_url())).await;
    assert_eq!(body, "ERROR_KEY_DOES_NOT_EXIST");
}
