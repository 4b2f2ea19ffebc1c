//! The createTask JSON protocol over real HTTP, in each provider dialect.

use crate::common;
use common::{client, post_json, start, KEY};
use serde_json::{json, Value};

async fn create(base: &str, task: Value) -> Value {
    let (status, answer) = post_json(&format!("{base}/createTask"), &json!({"clientKey": KEY, "task": task})).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

async fn result(base: &str, task_id: Value) -> Value {
    let (status, answer) =
        post_json(&format!("{base}/getTaskResult"), &json!({"clientKey": KEY, "taskId": task_id})).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

#[tokio::test]
async fn recaptcha_in_every_dialect_is_created_and_solved() {
    let mock = start("{}").await;
    let base = mock.base_url();
    for kind in [
        "RecaptchaV2TaskProxyless",
        "ReCaptchaV2TaskProxyLess",
        "NoCaptchaTaskProxyless",
        "RecaptchaV2Task",
        "RecaptchaV2EnterpriseTaskProxyless",
        "RecaptchaV3TaskProxyless",
        "ReCaptchaV3TaskProxyLess",
    ] {
        let created = create(&base, json!({"type": kind, "websiteURL": "https://a.test", "websiteKey": "6Le"})).await;
        assert_eq!(created["errorId"], 0, "{kind}: {created}");
        let answer = result(&base, created["taskId"].clone()).await;
        assert_eq!(answer["status"], "ready", "{kind}: {answer}");
        let token = answer["solution"]["gRecaptchaResponse"].as_str().unwrap_or_default();
        assert!(token.starts_with("03AGdBq2"), "{kind}: {answer}");
        assert_eq!(answer["solution"]["token"], token);
    }
}

#[tokio::test]
async fn other_kinds_return_their_solution_shapes() {
    let mock = start("{}").await;
    let base = mock.base_url();
    let cases = [
        (json!({"type": "TurnstileTaskProxyless", "websiteURL": "https://a", "websiteKey": "0x4"}), "token"),
        (json!({"type": "AntiTurnstileTaskProxyLess", "websiteURL": "https://a", "websiteKey": "0x4"}), "token"),
        (json!({"type": "ImageToTextTask", "body": "aGVsbG8gd29ybGQ="}), "text"),
        (json!({"type": "FunCaptchaTaskProxyless", "websiteURL": "https://a", "websitePublicKey": "pk"}), "token"),
        (json!({"type": "GeeTestTaskProxyless", "websiteURL": "https://a", "gt": "g", "challenge": "c"}), "validate"),
        (
            json!({"type": "GeeTestTaskProxyless", "websiteURL": "https://a", "version": 4, "initParameters": {"captcha_id": "cid"}}),
            "pass_token",
        ),
        (
            json!({"type": "GeeTestTaskProxyLess", "websiteURL": "https://a", "version": 4, "captchaId": "cid"}),
            "lot_number",
        ),
    ];
    for (task, field) in cases {
        let created = create(&base, task.clone()).await;
        assert_eq!(created["errorId"], 0, "{task}: {created}");
        let answer = result(&base, created["taskId"].clone()).await;
        assert!(answer["solution"][field].is_string(), "{task}: {answer}");
    }
}

/// The kinds of issue 33's second round: the Cloudflare challenge's cookie in both dialects that
/// solve it, the image classifications' cells, and an AntiGate session.
#[tokio::test]
async fn clearance_classification_and_antigate_answers_have_their_shapes() {
    let mock = start("{}").await;
    let base = mock.base_url();
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let proxied = |task: Value| {
        let mut task = task;
        let flat = json!({"proxyType": "http", "proxyAddress": "203.0.113.7", "proxyPort": 3128});
        task.as_object_mut().unwrap().extend(flat.as_object().unwrap().clone());
        task
    };
    let capmonster_cf = proxied(json!({"type": "TurnstileTask", "websiteURL": "https://a.test", "websiteKey": "0x4",
        "cloudflareTaskType": "cf_clearance", "htmlPageBase64": "PGh0bWw+", "userAgent": "UA"}));
    let capsolver_cf =
        json!({"type": "AntiCloudflareTask", "websiteURL": "https://a.test", "proxy": "203.0.113.7:3128"});
    for task in [capmonster_cf, capsolver_cf] {
        let created = create(&base, task.clone()).await;
        let answer = result(&base, created["taskId"].clone()).await;
        let cookie = answer["solution"]["cf_clearance"].as_str().unwrap_or_default();
        assert_eq!(cookie.len(), 160, "{task}: {answer}");
        assert_eq!(answer["solution"]["cookies"]["cf_clearance"], cookie, "{task}: {answer}");
        assert!(answer["solution"]["userAgent"].is_string(), "{task}: {answer}");
    }
    let unproxied = create(&base, json!({"type": "AntiCloudflareTask", "websiteURL": "https://a.test"})).await;
    assert_eq!(unproxied["errorCode"], "ERROR_BAD_PARAMETERS", "{unproxied}");

    let grids = [
        (
            json!({"type": "ComplexImageTask", "class": "recaptcha", "imagesBase64": [png], "metadata": {"Grid": "4x4"}}),
            16,
        ),
        (
            json!({"type": "ComplexImageTask", "class": "recaptcha", "imagesBase64": [png], "metadata": {"Grid": "3x3"}}),
            9,
        ),
        (
            json!({"type": "ComplexImageTask", "class": "hcaptcha", "imagesBase64": [png, png, png], "metadata": {"Task": "q"}}),
            3,
        ),
        (
            json!({"type": "ComplexImageTask", "class": "funcaptcha", "imagesBase64": [png], "metadata": {"Task": "q"}}),
            6,
        ),
    ];
    for (task, cells) in grids {
        let created = create(&base, task.clone()).await;
        let answer = result(&base, created["taskId"].clone()).await;
        let flags = answer["solution"]["answer"].as_array().cloned().unwrap_or_default();
        assert_eq!(flags.len(), cells, "{task}: {answer}");
        assert!(flags.iter().all(Value::is_boolean) && flags.contains(&json!(true)), "{task}: {answer}");
    }
    let positions =
        create(&base, json!({"type": "ReCaptchaV2Classification", "image": png, "question": "/m/04_sv"})).await;
    let answer = result(&base, positions["taskId"].clone()).await;
    let objects = answer["solution"]["objects"].as_array().cloned().unwrap_or_default();
    assert!(!objects.is_empty() && objects.iter().all(|i| i.as_u64().is_some_and(|i| i < 9)), "{answer}");
    for (bad, code) in [
        (
            json!({"type": "ComplexImageTask", "class": "recaptcha", "imagesBase64": ["@@@"]}),
            "ERROR_IMAGE_TYPE_NOT_SUPPORTED",
        ),
        (json!({"type": "ComplexImageTask", "class": "recaptcha"}), "ERROR_ZERO_CAPTCHA_FILESIZE"),
        (json!({"type": "ComplexImageTask", "imagesBase64": [png]}), "ERROR_BAD_PARAMETERS"),
    ] {
        let refused = create(&base, bad.clone()).await;
        assert_eq!((&refused["errorId"], &refused["errorCode"]), (&json!(1), &json!(code)), "{bad}: {refused}");
    }

    let antigate = create(
        &base,
        json!({"type": "AntiGateTask", "websiteURL": "https://a.test",
        "templateName": "Sign-in and wait for control text", "variables": {"login": "l"}}),
    )
    .await;
    let answer = result(&base, antigate["taskId"].clone()).await;
    for key in ["url", "domain"] {
        assert!(answer["solution"][key].is_string(), "{key}: {answer}");
    }
    for key in ["cookies", "localStorage", "fingerprint"] {
        assert!(answer["solution"][key].is_object(), "{key}: {answer}");
    }
    let nameless = create(&base, json!({"type": "AntiGateTask", "websiteURL": "https://a.test"})).await;
    assert_eq!(nameless["errorCode"], "ERROR_BAD_PARAMETERS", "{nameless}");
}

#[tokio::test]
async fn processing_until_solved_and_string_task_ids_are_accepted() {
    let mock = start(r#"{"default": {"solve_after_ms": 60000}}"#).await;
    let base = mock.base_url();
    let created =
        create(&base, json!({"type": "RecaptchaV2TaskProxyless", "websiteURL": "https://a", "websiteKey": "k"})).await;
    let id = created["taskId"].as_u64().unwrap_or_default();
    assert_eq!(result(&base, json!(id)).await, json!({"errorId": 0, "status": "processing"}));
    assert_eq!(result(&base, json!(id.to_string())).await["status"], "processing");
}

#[tokio::test]
async fn errors_name_the_problem() {
    let mock = start(r#"{"bad_keys": ["bad-key"]}"#).await;
    let base = mock.base_url();
    let url = format!("{base}/createTask");
    let recaptcha = json!({"type": "RecaptchaV2TaskProxyless", "websiteURL": "https://a", "websiteKey": "k"});
    let cases = [
        (json!({"task": recaptcha}), "ERROR_KEY_DOES_NOT_EXIST"),
        (json!({"clientKey": "bad-key", "task": recaptcha}), "ERROR_KEY_DOES_NOT_EXIST"),
        (json!({"clientKey": KEY}), "ERROR_TASK_ABSENT"),
        (json!({"clientKey": KEY, "task": "nope"}), "ERROR_TASK_ABSENT"),
        (json!({"clientKey": KEY, "task": {"websiteURL": "https://a"}}), "ERROR_TASK_NOT_SUPPORTED"),
        (json!({"clientKey": KEY, "task": {"type": "WhatIsThisTask"}}), "ERROR_TASK_NOT_SUPPORTED"),
        (
            json!({"clientKey": KEY, "task": {"type": "HCaptchaTaskProxyless", "websiteURL": "https://a", "websiteKey": "k"}}),
            "ERROR_METHOD_CALL",
        ),
        (json!({"clientKey": KEY, "task": {"type": "RecaptchaV2TaskProxyless", "websiteKey": "k"}}), "ERROR_PAGEURL"),
        (
            json!({"clientKey": KEY, "task": {"type": "RecaptchaV2TaskProxyless", "websiteURL": "https://a"}}),
            "ERROR_GOOGLEKEY",
        ),
        (
            json!({"clientKey": KEY, "task": {"type": "TurnstileTask", "websiteURL": "https://a"}}),
            "ERROR_BAD_PARAMETERS",
        ),
        (
            json!({"clientKey": KEY, "task": {"type": "GeeTestTask", "websiteURL": "https://a", "gt": "g"}}),
            "ERROR_BAD_PARAMETERS",
        ),
        (
            json!({"clientKey": KEY, "task": {"type": "GeeTestTask", "websiteURL": "https://a", "version": 4}}),
            "ERROR_BAD_PARAMETERS",
        ),
        (json!({"clientKey": KEY, "task": {"type": "ImageToTextTask"}}), "ERROR_ZERO_CAPTCHA_FILESIZE"),
        (json!([1, 2]), "ERROR_BAD_PARAMETERS"),
    ];
    for (body, code) in cases {
        let (status, answer) = post_json(&url, &body).await;
        assert_eq!(status, 200);
        assert_eq!(answer["errorId"], 1, "{body}: {answer}");
        assert_eq!(answer["errorCode"], code, "{body}: {answer}");
        assert!(answer["errorDescription"].as_str().is_some_and(|d| !d.is_empty()), "{answer}");
    }
    assert_eq!(mock.counters().tasks_created, 0);
    assert_eq!(mock.counters().submit_errors, 14);
}

#[tokio::test]
async fn unknown_and_malformed_task_ids() {
    let mock = start("{}").await;
    let base = mock.base_url();
    assert_eq!(result(&base, json!(12)).await["errorCode"], "ERROR_NO_SUCH_CAPCHA_ID");
    assert_eq!(result(&base, json!("twelve")).await["errorCode"], "ERROR_NO_SUCH_CAPCHA_ID");
    assert_eq!(result(&base, json!(null)).await["errorCode"], "ERROR_NO_SUCH_CAPCHA_ID");
}

#[tokio::test]
async fn invalid_json_bodies_get_a_json_error_not_a_500() {
    let mock = start("{}").await;
    for path in ["createTask", "getTaskResult", "getBalance"] {
        let response = client()
            .post(format!("{}/{path}", mock.base_url()))
            .body("{\"clientKey\": \"k\", \"task\": ")
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let answer: Value = response.json().await.unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(answer["errorCode"], "ERROR_BAD_PARAMETERS", "{path}: {answer}");
    }
}

#[tokio::test]
async fn get_balance_and_method_checks() {
    let mock = start(r#"{"balance": 42.25}"#).await;
    let base = mock.base_url();
    let (_, answer) = post_json(&format!("{base}/getBalance"), &json!({"clientKey": KEY})).await;
    assert_eq!(answer, json!({"errorId": 0, "balance": 42.25}));
    let response = client().get(format!("{base}/createTask")).send().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status().as_u16(), 405);
}

#[tokio::test]
async fn tasks_are_shared_between_the_protocols() {
    let mock = start("{}").await;
    let id = common::submit_ok(&mock, "https://a").await;
    let answer = result(&mock.base_url(), json!(id)).await;
    assert_eq!(answer["status"], "ready", "{answer}");
}

/// With `sync_image`, an image task that is ready at once comes back solved in the createTask
/// answer (CapSolver's recognition tasks); other kinds, and images that take time, keep a task id.
#[tokio::test]
async fn sync_image_answers_recognition_tasks_in_create_task() {
    let mock = start(r#"{"sync_image": true}"#).await;
    let base = mock.base_url();
    let image = json!({"type": "ImageToTextTask", "body": "aGVsbG8gd29ybGQ="});
    let created = create(&base, image.clone()).await;
    assert_eq!(created["status"], "ready", "{created}");
    assert!(created["solution"]["text"].as_str().is_some_and(|t| !t.is_empty()), "{created}");
    assert!(created["taskId"].is_string(), "{created}");
    assert_eq!(mock.counters().tasks_solved, 1);
    let token =
        create(&base, json!({"type": "ReCaptchaV2TaskProxyLess", "websiteURL": "https://a.test", "websiteKey": "6Le"}))
            .await;
    assert!(token.get("status").is_none() && token["taskId"].is_number(), "{token}");
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let cells = create(&base, json!({"type": "ReCaptchaV2Classification", "image": png, "question": "/m/04_sv"})).await;
    assert_eq!(cells["status"], "ready", "{cells}");
    assert!(cells["solution"]["objects"].as_array().is_some_and(|o| !o.is_empty()), "{cells}");

    let slow = start(r#"{"sync_image": true, "default": {"solve_after_ms": 60000}}"#).await;
    let later = create(&slow.base_url(), image).await;
    assert!(later.get("status").is_none() && later["taskId"].is_number(), "{later}");
    // Without the switch the mock keeps its asynchronous answer.
    let plain = start("{}").await;
    let created = create(&plain.base_url(), json!({"type": "ImageToTextTask", "body": "aGVsbG8gd29ybGQ="})).await;
    assert!(created.get("status").is_none(), "{created}");
}

#[tokio::test]
async fn a_charged_balance_runs_dry_and_answers_report_the_task_cost() {
    let mock = start(r#"{"balance": 0.003, "task_cost": 0.0015, "charge": true}"#).await;
    let base = mock.base_url();
    let task = json!({"type": "RecaptchaV2TaskProxyless", "websiteURL": "https://a.test", "websiteKey": "6Le"});
    let first = create(&base, task.clone()).await;
    assert_eq!(first["errorId"], 0, "{first}");
    assert_eq!(result(&base, first["taskId"].clone()).await["cost"], "0.00150");
    assert_eq!(create(&base, task.clone()).await["errorId"], 0);
    let refused = create(&base, task).await;
    assert_eq!(refused["errorCode"], "ERROR_ZERO_BALANCE", "two tasks paid the whole balance: {refused}");
    let (_, balance) = post_json(&format!("{base}/getBalance"), &json!({"clientKey": KEY})).await;
    assert_eq!(balance["balance"], json!(0.0));
    assert_eq!(mock.counters().tasks_created, 2);
}
