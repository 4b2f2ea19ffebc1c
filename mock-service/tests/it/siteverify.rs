//! `/siteverify`: the tokens this mock issued verify once, for their sitekey; anything else fails with the
//! vendors' error codes. hCaptcha is solved when the script's `hcaptcha_code` is `""`.

use crate::common;
use common::{get_json, poll, post_form, start, submit_ok, KEY};
use serde_json::Value;

async fn verify(base: &str, response: &str, sitekey: Option<&str>) -> Value {
    let mut form = vec![("response", response)];
    if let Some(key) = sitekey {
        form.push(("sitekey", key));
    }
    let (status, body) = post_form(&format!("{base}/siteverify"), &form).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("siteverify answered no JSON ({e}): {body}"))
}

#[tokio::test]
async fn an_issued_token_verifies_once_for_its_sitekey_with_its_task_values() {
    let mock = start("{}").await;
    let id = submit_ok(&mock, "https://shop.example/login").await;
    let answer = poll(&mock, &id).await;
    let token = answer.strip_prefix("OK|").unwrap_or_else(|| panic!("not solved: {answer}"));
    let base = mock.base_url();

    let wrong_key = verify(&base, token, Some("6Le-OTHER")).await;
    assert_eq!(wrong_key["success"], false, "{wrong_key}");
    assert_eq!(wrong_key["error-codes"][0], "sitekey-secret-mismatch");

    let ok = verify(&base, token, Some("6Le-SITEKEY")).await;
    assert_eq!(ok["success"], true, "{ok}");
    assert_eq!(ok["hostname"], "shop.example");
    assert_eq!(ok["kind"], "recaptcha_v2");
    let params: Vec<&str> = ok["params"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert!(params.contains(&"https://shop.example/login"), "{ok}");
    assert!(!params.contains(&KEY), "the API key is never shown to a site: {ok}");

    let again = verify(&base, token, None).await;
    assert_eq!(again["error-codes"][0], "timeout-or-duplicate", "{again}");
}

#[tokio::test]
async fn a_json_body_is_read_like_a_form() {
    let mock = start("{}").await;
    let id = submit_ok(&mock, "https://shop.example/login").await;
    let answer = poll(&mock, &id).await;
    let token = answer.strip_prefix("OK|").unwrap_or_else(|| panic!("not solved: {answer}"));
    let body = serde_json::json!({ "secret": "s", "response": token, "sitekey": "6Le-SITEKEY" });
    let (status, ok) = common::post_json(&format!("{}/siteverify", mock.base_url()), &body).await;
    assert_eq!(status, 200);
    assert_eq!(ok["success"], true, "{ok}");
}

#[tokio::test]
async fn made_up_and_missing_tokens_fail() {
    let mock = start("{}").await;
    let base = mock.base_url();
    let made_up = verify(&base, "03AGdBq2-made-up", None).await;
    assert_eq!(made_up["success"], false);
    assert_eq!(made_up["error-codes"][0], "invalid-input-response");
    let missing = get_json(&format!("{base}/siteverify")).await;
    assert_eq!(missing["error-codes"][0], "missing-input-response");
}

#[tokio::test]
async fn hcaptcha_is_solved_and_verifies_when_the_script_allows_it() {
    let refusing = start("{}").await;
    let form = [("key", KEY), ("method", "hcaptcha"), ("sitekey", "hc-key"), ("pageurl", "https://a.example/")];
    let (_, refused) = post_form(&format!("{}/in.php", refusing.base_url()), &form).await;
    assert_eq!(refused, "ERROR_METHOD_CALL");

    let mock = start(r#"{"hcaptcha_code": ""}"#).await;
    let (_, accepted) = post_form(&format!("{}/in.php", mock.base_url()), &form).await;
    let id = accepted.strip_prefix("OK|").unwrap_or_else(|| panic!("refused: {accepted}"));
    let answer = poll(&mock, id).await;
    let token = answer.strip_prefix("OK|").unwrap_or_else(|| panic!("not solved: {answer}"));
    assert!(token.starts_with("P1_eyJ"), "{token}");
    let ok = verify(&mock.base_url(), token, Some("hc-key")).await;
    assert_eq!(ok["success"], true, "{ok}");
    assert_eq!(ok["kind"], "hcaptcha");
}
