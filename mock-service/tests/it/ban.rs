//! The opt-in submit-rate ban over real HTTP: nothing is refused under the limit; the submission
//! past it is refused with the dialect's code and bans the key, for both protocols; the ban ends
//! after `ban_ms` even while the key keeps submitting; bans and refusals are counted per key.
//! Windows and bans are long where a test needs them to hold, short where it needs one to end, so
//! that no assertion depends on the machine's speed.

use crate::common;
use common::{get_json, post_json, start, submit_recaptcha, KEY};
use serde_json::{json, Value};

/// A window and a ban no test run outlasts.
const LONG_MS: u64 = 600_000;

async fn create_task(base: &str, key: &str) -> Value {
    let task = json!({"type": "RecaptchaV2TaskProxyless", "websiteURL": "https://a.test", "websiteKey": "6Le"});
    let (status, answer) = post_json(&format!("{base}/createTask"), &json!({"clientKey": key, "task": task})).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

fn script(max_submits: u32, window_ms: u64, ban_ms: u64) -> String {
    json!({"ban": {"max_submits": max_submits, "window_ms": window_ms, "ban_ms": ban_ms}}).to_string()
}

#[tokio::test]
async fn up_to_the_limit_nothing_is_refused() {
    let mock = start(&script(5, LONG_MS, LONG_MS)).await;
    for i in 0..3 {
        let answer = submit_recaptcha(&mock, &format!("https://a.test/{i}")).await;
        assert!(answer.starts_with("OK|"), "v1 submission {i}: {answer}");
    }
    for i in 0..2 {
        let answer = create_task(&mock.base_url(), KEY).await;
        assert_eq!(answer["errorId"], 0, "createTask {i}: {answer}");
    }
    let counters = mock.counters();
    assert_eq!((counters.tasks_created, counters.submit_errors), (5, 0));
    assert_eq!((counters.bans_started, counters.banned_submits), (0, 0));
}

#[tokio::test]
async fn the_v1_submission_past_the_limit_gets_max_user_turn_and_bans_the_key_everywhere() {
    let mock = start(&script(3, LONG_MS, LONG_MS)).await;
    let base = mock.base_url();
    for i in 0..3 {
        let answer = submit_recaptcha(&mock, &format!("https://a.test/{i}")).await;
        assert!(answer.starts_with("OK|"), "submission {i}: {answer}");
    }
    assert_eq!(submit_recaptcha(&mock, "https://a.test/3").await, "MAX_USER_TURN");
    // Banned now: the JSON envelope says the same, and so does the other protocol.
    let url = format!("{base}/in.php?key={KEY}&method=userrecaptcha&googlekey=6Le&pageurl=https://a.test&json=1");
    let answer = get_json(&url).await;
    assert_eq!(answer["status"], 0, "{answer}");
    assert_eq!(answer["request"], "MAX_USER_TURN", "{answer}");
    let answer = create_task(&base, KEY).await;
    assert_eq!((answer["errorId"].clone(), answer["errorCode"].clone()), (json!(1), json!("ERROR_TOO_MUCH_REQUESTS")));
    // Another key is not banned, and polls of the banned key still work.
    assert_eq!(create_task(&base, "other-key").await["errorId"], 0);
    let balance = get_json(&format!("{base}/res.php?key={KEY}&action=getbalance&json=1")).await;
    assert_eq!(balance["status"], 1, "{balance}");

    let counters = mock.counters();
    assert_eq!((counters.bans_started, counters.banned_submits), (1, 3));
    assert_eq!(counters.tasks_created, 4, "three of the banned key, one of the other");
    assert_eq!(counters.submit_errors, 3);
    let key = &counters.by_key[KEY];
    assert_eq!((key.bans_started, key.banned_submits, key.submits, key.tasks_created), (1, 3, 6, 3));
    assert_eq!((counters.by_key["other-key"].bans_started, counters.by_key["other-key"].banned_submits), (0, 0));
}

#[tokio::test]
async fn the_create_task_past_the_limit_gets_the_json_code_and_bans_the_key_everywhere() {
    let mock = start(&script(2, LONG_MS, LONG_MS)).await;
    let base = mock.base_url();
    for i in 0..2 {
        assert_eq!(create_task(&base, KEY).await["errorId"], 0, "createTask {i}");
    }
    let refused = create_task(&base, KEY).await;
    assert_eq!(refused["errorId"], 1, "{refused}");
    assert_eq!(refused["errorCode"], "ERROR_TOO_MUCH_REQUESTS", "{refused}");
    assert!(refused["errorDescription"].as_str().is_some_and(|d| !d.is_empty()), "{refused}");
    assert_eq!(submit_recaptcha(&mock, "https://a.test/v1").await, "MAX_USER_TURN");
    // The counters over HTTP carry the same figures.
    let counters = get_json(&format!("{base}/mock/counters")).await;
    assert_eq!((counters["bans_started"].clone(), counters["banned_submits"].clone()), (json!(1), json!(2)));
    assert_eq!(counters["by_key"][KEY]["bans_started"], 1, "{counters}");
    assert_eq!(counters["by_key"][KEY]["banned_submits"], 2, "{counters}");
}

#[tokio::test]
async fn the_codes_can_be_scripted() {
    let script = json!({"ban": {"max_submits": 1, "window_ms": LONG_MS, "ban_ms": LONG_MS,
                                "v1_code": "ERROR: 1001", "json_code": "ERROR_RATE_LIMIT"}});
    let mock = start(&script.to_string()).await;
    assert!(submit_recaptcha(&mock, "https://a.test").await.starts_with("OK|"));
    assert_eq!(submit_recaptcha(&mock, "https://a.test").await, "ERROR: 1001");
    assert_eq!(create_task(&mock.base_url(), KEY).await["errorCode"], "ERROR_RATE_LIMIT");
}

#[tokio::test]
async fn the_ban_ends_after_ban_ms_although_the_key_keeps_submitting() {
    // A window no run outlasts, so every ban here is started by the count alone; a short ban.
    let mock = start(&script(1, LONG_MS, 300)).await;
    assert!(submit_recaptcha(&mock, "https://a.test/0").await.starts_with("OK|"));
    assert_eq!(submit_recaptcha(&mock, "https://a.test/1").await, "MAX_USER_TURN");
    // Submitting much more often than the ban lasts: if refused requests extended the ban, it
    // would never end and the loop would give up at its bound.
    let mut refused = 0;
    let mut accepted = None;
    for _ in 0..3000 {
        let answer = submit_recaptcha(&mock, "https://a.test/2").await;
        if answer == "MAX_USER_TURN" {
            refused += 1;
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        } else {
            accepted = Some(answer);
            break;
        }
    }
    let accepted = accepted.unwrap_or_else(|| panic!("the ban never ended ({refused} submissions refused)"));
    assert!(accepted.starts_with("OK|"), "{accepted}");
    // The window started afresh with the ban's end: the accepted submission fills it, the next
    // one starts a second ban.
    assert_eq!(submit_recaptcha(&mock, "https://a.test/3").await, "MAX_USER_TURN");
    let counters = mock.counters();
    assert_eq!(counters.bans_started, 2);
    assert_eq!(counters.banned_submits, 1 + refused + 1);
    assert_eq!(counters.tasks_created, 2);
}

#[tokio::test]
async fn a_reset_forgets_bans() {
    let mock = start(&script(1, LONG_MS, LONG_MS)).await;
    assert!(submit_recaptcha(&mock, "https://a.test").await.starts_with("OK|"));
    assert_eq!(submit_recaptcha(&mock, "https://a.test").await, "MAX_USER_TURN");
    mock.reset();
    assert!(submit_recaptcha(&mock, "https://a.test").await.starts_with("OK|"));
    assert_eq!(mock.counters().bans_started, 0);
}

#[tokio::test]
async fn without_a_ban_rule_no_rate_is_refused() {
    let mock = start("{}").await;
    for i in 0..100 {
        assert!(submit_recaptcha(&mock, "https://a.test").await.starts_with("OK|"), "submission {i}");
    }
    assert_eq!(mock.counters().bans_started, 0);
}

#[tokio::test]
async fn bad_ban_rules_are_refused_naming_the_field() {
    let cases = [
        (r#"{"ban": {"max_submits": 0}}"#, "ban.max_submits"),
        (r#"{"ban": {"max_submits": 1000000}}"#, "ban.max_submits"),
        (r#"{"ban": {"window_ms": 0}}"#, "ban.window_ms"),
        (r#"{"ban": {"ban_ms": 0}}"#, "ban.ban_ms"),
        (r#"{"ban": {"ban_ms": 99999999999}}"#, "ban.ban_ms"),
        (r#"{"ban": {"v1_code": " "}}"#, "ban.v1_code"),
        (r#"{"ban": {"json_code": ""}}"#, "ban.json_code"),
        (r#"{"ban": {"max_submit": 60}}"#, "max_submit"),
        (r#"{"ban": {"max_submits": "60"}}"#, "max_submits"),
        (r#"{"ban": true}"#, "ban: invalid type"),
    ];
    for (script, field) in cases {
        let error = captcha_dlq_mock::MockConfig::from_json(script).err().unwrap_or_default();
        assert!(error.contains(field), "{script}: expected an error naming {field}, got {error:?}");
    }
    // The defaults are 2captcha's documented figures.
    let config = captcha_dlq_mock::MockConfig::from_json(r#"{"ban": {}}"#).unwrap_or_else(|e| panic!("{e}"));
    let rule = config.ban.unwrap_or_else(|| panic!("no ban rule"));
    assert_eq!((rule.max_submits, rule.window_ms, rule.ban_ms), (60, 3000, 10_000));
    assert_eq!((rule.v1_code.as_str(), rule.json_code.as_str()), ("MAX_USER_TURN", "ERROR_TOO_MUCH_REQUESTS"));
    // Over HTTP, a bad rule is refused and the old script stays.
    let mock = start(&script(1, LONG_MS, LONG_MS)).await;
    let (status, answer) =
        post_json(&format!("{}/mock/script", mock.base_url()), &json!({"ban": {"window_ms": 0}})).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer["error"].as_str().is_some_and(|e| e.contains("ban.window_ms")), "{answer}");
    assert_eq!(mock.config().ban.map(|b| b.max_submits), Some(1));
}
