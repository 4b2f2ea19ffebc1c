//! The 2captcha-compatible v1 protocol over real HTTP: submit, poll, batch poll, balance, reports, and the
//! error codes for missing parameters.

use crate::common;
use common::{get, get_json, poll, post_form, start, submit_ok, KEY};
use serde_json::Value;

#[tokio::test]
async fn plain_submit_then_poll_returns_a_recaptcha_like_token() {
    let mock = start("{}").await;
    let id = submit_ok(&mock, "https://example.com/page/0").await;
    assert!(id.parse::<u64>().is_ok(), "ids are numeric: {id}");
    let answer = poll(&mock, &id).await;
    let token = answer.strip_prefix("OK|").unwrap_or_else(|| panic!("not solved: {answer}"));
    assert!(token.starts_with("03AGdBq2"), "{token}");
    assert!(token.len() > 400, "real tokens are long, got {}", token.len());
    assert!(token.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{token}");
}

#[tokio::test]
async fn json_submit_and_poll_use_the_status_envelope() {
    let mock = start("{}").await;
    let url = format!(
        "{}/in.php?key={KEY}&method=userrecaptcha&googlekey=6Le-K&pageurl=https://a.test&json=1",
        mock.base_url()
    );
    let submitted = get_json(&url).await;
    assert_eq!(submitted["status"], 1);
    let id = submitted["request"].as_str().unwrap_or_default().to_string();
    assert!(id.parse::<u64>().is_ok(), "{submitted}");
    let polled = get_json(&format!("{}/res.php?key={KEY}&action=get&id={id}&json=1", mock.base_url())).await;
    assert_eq!(polled["status"], 1);
    assert!(polled["request"].as_str().is_some_and(|t| t.starts_with("03AGdBq2")), "{polled}");
}

#[tokio::test]
async fn tokens_are_unique_per_task_and_deterministic_from_the_id() {
    let first = start("{}").await;
    let second = start("{}").await;
    let mut tokens = Vec::new();
    for page in 0..3 {
        let a = submit_ok(&first, &format!("https://example.com/page/{page}")).await;
        let b = submit_ok(&second, &format!("https://example.com/page/{page}")).await;
        assert_eq!(a, b, "both mocks hand out the same id sequence");
        let (ta, tb) = (poll(&first, &a).await, poll(&second, &b).await);
        assert_eq!(ta, tb, "the token is a function of the id");
        tokens.push(ta);
    }
    tokens.sort();
    tokens.dedup();
    assert_eq!(tokens.len(), 3, "every task gets its own token");
}

#[tokio::test]
async fn not_ready_until_solve_after_ms_has_passed() {
    let mock = start(r#"{"default": {"solve_after_ms": 3000}}"#).await;
    let id = submit_ok(&mock, "https://example.com/slow").await;
    assert_eq!(poll(&mock, &id).await, "CAPCHA_NOT_READY");
    let json = get_json(&format!("{}/res.php?key={KEY}&action=get&id={id}&json=1", mock.base_url())).await;
    assert_eq!(
        json,
        serde_json::json!({"status": 0, "request": "CAPCHA_NOT_READY", "error_text": "The captcha is not solved yet"})
    );
    let mut answer = String::new();
    for _ in 0..300 {
        answer = poll(&mock, &id).await;
        if answer != "CAPCHA_NOT_READY" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(answer.starts_with("OK|03AGdBq2"), "{answer}");
    assert_eq!(mock.counters().tasks_solved, 1);
}

#[tokio::test]
async fn batch_poll_answers_in_the_order_asked() {
    let mock = start(
        r#"{"rules": [{"match": {"page_url_contains": "never"}, "behavior": {"outcome": "never_ready"}},
        {"match": {"page_url_contains": "bad"}, "behavior": {"outcome": "unsolvable"}}]}"#,
    )
    .await;
    let solved = submit_ok(&mock, "https://example.com/ok").await;
    let never = submit_ok(&mock, "https://example.com/never").await;
    let bad = submit_ok(&mock, "https://example.com/bad").await;
    let url = format!("{}/res.php?key={KEY}&action=get&ids={never},{solved},{bad},999,x", mock.base_url());
    let (status, body) = get(&url).await;
    assert_eq!(status, 200);
    let parts: Vec<&str> = body.split('|').collect();
    assert_eq!(parts.len(), 5, "{body}");
    assert_eq!(parts[0], "CAPCHA_NOT_READY");
    assert!(parts[1].starts_with("03AGdBq2"), "{body}");
    assert_eq!(parts[2], "ERROR_CAPTCHA_UNSOLVABLE");
    assert_eq!(parts[3], "ERROR_WRONG_CAPTCHA_ID");
    assert_eq!(parts[4], "ERROR_WRONG_ID_FORMAT");
    let counters = mock.counters();
    assert_eq!(counters.polls_batch, 1);
    assert_eq!(counters.polls_single, 0);
    assert_eq!(counters.ids_polled, 5);
}

#[tokio::test]
async fn batch_poll_refuses_more_than_the_limit() {
    let mock = start("{}").await;
    let ids: Vec<String> = (0..101).map(|i| (71_823_460 + i).to_string()).collect();
    let (_, body) = get(&format!("{}/res.php?key={KEY}&action=get&ids={}", mock.base_url(), ids.join(","))).await;
    assert_eq!(body, "ERROR_BAD_PARAMETERS");
    let (_, body) =
        get(&format!("{}/res.php?key={KEY}&action=get&ids={}", mock.base_url(), ids[..100].join(","))).await;
    assert_eq!(body.split('|').count(), 100, "100 ids are allowed");
}

#[tokio::test]
async fn every_method_checks_its_required_parameters() {
    let mock = start(r#"{"hcaptcha_code": "ERROR_METHOD_CALL"}"#).await;
    let url = format!("{}/in.php", mock.base_url());
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("method", "userrecaptcha"), ("pageurl", "https://a")], "ERROR_GOOGLEKEY"),
        (&[("method", "userrecaptcha"), ("googlekey", "6Le")], "ERROR_PAGEURL"),
        (&[("method", "turnstile"), ("pageurl", "https://a")], "ERROR_BAD_PARAMETERS"),
        (&[("method", "turnstile"), ("sitekey", "0x4")], "ERROR_PAGEURL"),
        (&[("method", "geetest"), ("gt", "g"), ("pageurl", "https://a")], "ERROR_BAD_PARAMETERS"),
        (&[("method", "geetest"), ("gt", "g"), ("challenge", "c")], "ERROR_PAGEURL"),
        (&[("method", "geetest_v4"), ("pageurl", "https://a")], "ERROR_BAD_PARAMETERS"),
        (&[("method", "funcaptcha"), ("pageurl", "https://a")], "ERROR_BAD_PARAMETERS"),
        (&[("method", "funcaptcha"), ("publickey", "p")], "ERROR_PAGEURL"),
        (&[("method", "base64")], "ERROR_ZERO_CAPTCHA_FILESIZE"),
        (&[("method", "base64"), ("body", "%%%not base64%%%")], "ERROR_IMAGE_TYPE_NOT_SUPPORTED"),
        (&[("method", "hcaptcha"), ("sitekey", "s"), ("pageurl", "https://a")], "ERROR_METHOD_CALL"),
        (&[("method", "no-such-method")], "ERROR_BAD_PARAMETERS"),
        (&[], "ERROR_BAD_PARAMETERS"),
    ];
    for (params, expected) in cases {
        let mut form = vec![("key", KEY)];
        form.extend_from_slice(params);
        let (status, body) = post_form(&url, &form).await;
        assert_eq!((status, body.as_str()), (200, *expected), "params {params:?}");
    }
    let counters = mock.counters();
    assert_eq!(counters.submits, cases.len() as u64);
    assert_eq!(counters.submit_errors, cases.len() as u64);
    assert_eq!(counters.tasks_created, 0);
}

#[tokio::test]
async fn json_errors_carry_status_zero_and_the_code() {
    let mock = start("{}").await;
    let url = format!("{}/in.php?key={KEY}&method=userrecaptcha&pageurl=https://a&json=1", mock.base_url());
    let answer = get_json(&url).await;
    assert_eq!(answer["status"], 0);
    assert_eq!(answer["request"], "ERROR_GOOGLEKEY");
}

#[tokio::test]
async fn every_kind_is_accepted_and_answered_in_its_shape() {
    let mock = start("{}").await;
    let url = format!("{}/in.php", mock.base_url());
    let image = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let kinds: &[&[(&str, &str)]] = &[
        &[
            ("method", "userrecaptcha"),
            ("googlekey", "6Le"),
            ("pageurl", "https://a"),
            ("version", "v3"),
            ("action", "login"),
        ],
        &[("method", "turnstile"), ("sitekey", "0x4AAA"), ("pageurl", "https://a")],
        &[("method", "funcaptcha"), ("publickey", "pk"), ("pageurl", "https://a")],
        &[("method", "base64"), ("body", image)],
        &[("method", "geetest"), ("gt", "g"), ("challenge", "c"), ("pageurl", "https://a")],
        &[("method", "geetest_v4"), ("captcha_id", "cid"), ("pageurl", "https://a")],
    ];
    let mut answers = Vec::new();
    for params in kinds {
        let mut form = vec![("key", KEY), ("json", "1")];
        form.extend_from_slice(params);
        let (_, body) = post_form(&url, &form).await;
        let submitted: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!(submitted["status"], 1, "{params:?}: {body}");
        let id = submitted["request"].as_str().unwrap_or_default().to_string();
        answers.push(get_json(&format!("{}/res.php?key={KEY}&action=get&id={id}&json=1", mock.base_url())).await);
    }
    assert!(answers[0]["request"].as_str().is_some_and(|t| t.starts_with("03AGdBq2")), "{}", answers[0]);
    assert!(answers[1]["request"].as_str().is_some_and(|t| t.starts_with("0.")), "{}", answers[1]);
    assert!(answers[2]["request"].as_str().is_some_and(|t| t.contains("|r=")), "{}", answers[2]);
    assert!(answers[3]["request"].as_str().is_some_and(|t| !t.is_empty() && t.len() < 10), "{}", answers[3]);
    for key in ["challenge", "validate", "seccode"] {
        assert!(answers[4]["request"][key].is_string(), "GeeTest v3 answer lacks {key}: {}", answers[4]);
    }
    for key in ["captcha_id", "lot_number", "pass_token", "gen_time", "captcha_output"] {
        assert!(answers[5]["request"][key].is_string(), "GeeTest v4 answer lacks {key}: {}", answers[5]);
    }
    // Plain mode gives the GeeTest object as JSON text after OK|.
    let plain = poll(&mock, &(71_823_464u64).to_string()).await;
    let object: Value =
        serde_json::from_str(plain.trim_start_matches("OK|")).unwrap_or_else(|e| panic!("{e}: {plain}"));
    assert!(object["validate"].is_string(), "{plain}");
}

#[tokio::test]
async fn balance_and_reports() {
    let mock = start(r#"{"balance": 3.5}"#).await;
    let base = mock.base_url();
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=getbalance")).await.1, "3.50000");
    let json = get_json(&format!("{base}/res.php?key={KEY}&action=getbalance&json=1")).await;
    assert_eq!(json["status"], 1);
    assert_eq!(json["request"], "3.50000");
    let id = submit_ok(&mock, "https://a").await;
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=reportgood&id={id}")).await.1, "OK_REPORT_RECORDED");
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=reportbad&id={id}")).await.1, "OK_REPORT_RECORDED");
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=reportbad&id=5")).await.1, "ERROR_WRONG_CAPTCHA_ID");
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=reportbad")).await.1, "ERROR_WRONG_ID_FORMAT");
    let counters = mock.counters();
    assert_eq!((counters.balance_checks, counters.reports_good, counters.reports_bad), (2, 1, 3));
}

#[tokio::test]
async fn res_php_rejects_bad_ids_and_actions() {
    let mock = start("{}").await;
    let base = mock.base_url();
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=get&id=abc")).await.1, "ERROR_WRONG_ID_FORMAT");
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=get")).await.1, "ERROR_WRONG_ID_FORMAT");
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=get&id=1")).await.1, "ERROR_WRONG_CAPTCHA_ID");
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=get&ids=,,")).await.1, "ERROR_WRONG_ID_FORMAT");
    assert_eq!(get(&format!("{base}/res.php?key={KEY}")).await.1, "ERROR_EMPTY_ACTION");
    assert_eq!(get(&format!("{base}/res.php?key={KEY}&action=dance")).await.1, "ERROR_BAD_PARAMETERS");
}

#[tokio::test]
async fn query_and_form_parameters_are_merged() {
    let mock = start("{}").await;
    let url = format!("{}/in.php?key={KEY}&method=userrecaptcha", mock.base_url());
    let (_, body) = post_form(&url, &[("googlekey", "6Le"), ("pageurl", "https://a")]).await;
    assert!(body.starts_with("OK|"), "{body}");
}
