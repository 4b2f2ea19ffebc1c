//! Runs every case of `tests/vectors/*.json` through the Rust core and checks
//! that the files cover every task kind, every provider preset, every phase
//! and every code of the error table, so a missing case fails here.

use std::collections::BTreeSet;
use std::path::PathBuf;

use captcha_dlq_core::class::ErrorClass;
use captcha_dlq_core::classify;
use captcha_dlq_core::http::HttpResponse;
use captcha_dlq_core::provider::{PollOutcome, Protocol, Provider, SubmitOutcome, TaskPoll, PRESETS};
use captcha_dlq_core::task::{kinds, TaskKind};
use captcha_dlq_core::vectors::{check_source, evaluate};
use serde_json::Value;

fn load(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let cases = doc["cases"].as_array().unwrap_or_else(|| panic!("{name}: no `cases` array")).clone();
    assert!(!cases.is_empty(), "{name}: no cases");
    cases
}

/// Every case's actual output equals its `expected`; all mismatches are listed.
fn run(name: &str) -> Vec<Value> {
    let cases = load(name);
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let label = case.get("name").and_then(Value::as_str).map_or_else(|| format!("#{i}"), str::to_string);
        let expected = case.get("expected").unwrap_or_else(|| panic!("{name} {label}: no `expected`"));
        match evaluate(case) {
            Ok(actual) if &actual == expected => {}
            Ok(actual) => failures.push(format!("{label}:\n  expected {expected}\n  actual   {actual}")),
            Err(e) => failures.push(format!("{label}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases
}

fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.0).collect()
}

#[test]
fn tasks_json() {
    let cases = run("tasks.json");
    for preset in preset_names() {
        for kind in TaskKind::ALL {
            if kinds::decl(kind).wire_is_declared() {
                // A declared kind has a request case for every service its declaration sends it
                // to; the others refuse it on `type` before anything is sent.
                let solves = kinds::services_of(kind).contains(&preset);
                let sent = cases.iter().any(|c| {
                    c["provider"] == preset
                        && c["task"]["type"] == kind.as_str()
                        && c["expected"].get("request").is_some()
                });
                assert_eq!(
                    sent, solves,
                    "tasks.json: {kind} on {preset}: a request case iff the declaration sends it there"
                );
                if !solves {
                    let refused = evaluate(&serde_json::json!({"provider": preset, "task": {"type": kind.as_str()}}));
                    let first_case = cases.iter().find(|c| c["task"]["type"] == kind.as_str()).expect("a case");
                    let task = first_case["task"].clone();
                    let refusal = evaluate(&serde_json::json!({"provider": preset, "task": task})).unwrap();
                    assert_eq!(refusal["error"]["field"], "type", "{kind} on {preset}: {refusal} ({refused:?})");
                }
                continue;
            }
            let of: Vec<&Value> = cases
                .iter()
                .filter(|c| c["provider"] == preset && c["task"]["type"] == kind.as_str() && c.get("options").is_none())
                .collect();
            assert!(!of.is_empty(), "tasks.json: no {kind} case for {preset}");
            // Supported kinds must have at least one real request; unsupported ones are refused on `type`.
            let sent = of.iter().any(|c| c["expected"].get("request").is_some());
            let refused_on_type = of.iter().all(|c| c["expected"]["error"]["field"] == "type");
            assert!(sent || refused_on_type, "tasks.json: {kind} on {preset} is neither sent nor refused on `type`");
            let listed = kinds::services_of(kind).contains(&preset);
            assert_eq!(
                !refused_on_type, listed,
                "{kind} on {preset}: the declaration's services and the vectors differ"
            );
        }
        for call in ["poll", "balance", "report"] {
            assert!(
                cases.iter().any(|c| c["provider"] == preset && c["call"] == call),
                "tasks.json: no {call} request case for {preset}"
            );
        }
        assert!(
            cases.iter().any(|c| c["provider"] == preset && c.get("options").is_some()) || preset == "rucaptcha", // the same codec as 2captcha, covered there
            "tasks.json: no SubmitOptions case for {preset}"
        );
    }
    let error_fields: BTreeSet<&str> = cases.iter().filter_map(|c| c["expected"]["error"]["field"].as_str()).collect();
    for field in [
        "type",
        "task",
        "sitekey",
        "page_url",
        "min_score",
        "body",
        "min_len",
        "numeric",
        "proxy.type",
        "proxy.host",
        "proxy.port",
        "method",
        "task.type",
        "text",
        "imginstructions",
        "action",
    ] {
        assert!(error_fields.contains(field), "tasks.json: no invalid-task case naming `{field}`");
    }
    // Every task -> request case cites a documentation page or an official client, not only this
    // project's review (issue 33).
    for c in cases.iter().filter(|c| c.get("task").is_some() && c["expected"].get("request").is_some()) {
        let sources = match &c["source"] {
            Value::Array(list) => list.clone(),
            one => vec![one.clone()],
        };
        assert!(
            sources.iter().any(|s| s["kind"] != "reviewed"),
            "{}: a request case with no documentation or client source",
            c["name"]
        );
    }
    // Every expected request uses the placeholder, never a real-looking key.
    for c in &cases {
        let req = &c["expected"]["request"];
        if req.is_object() {
            let key = req["params"].get("key").or_else(|| req["json"].get("clientKey"));
            assert_eq!(key, Some(&Value::from("KEY")), "{}: the request has no KEY placeholder", c["name"]);
        }
    }
}

#[test]
fn responses_json() {
    let cases = run("responses.json");
    for (preset, _, protocol) in PRESETS {
        let mut phases = vec!["submit", "poll", "balance", "report"];
        if *protocol == Protocol::V1 {
            phases.push("batch_poll");
        }
        for phase in phases {
            let of: Vec<&Value> = cases.iter().filter(|c| c["provider"] == *preset && c["phase"] == phase).collect();
            assert!(!of.is_empty(), "responses.json: no {phase} case for {preset}");
        }
        let bodies = |pred: &dyn Fn(&Value) -> bool| cases.iter().any(|c| c["provider"] == *preset && pred(c));
        assert!(bodies(&|c| c["status"] == 502), "responses.json: no HTTP 502 case for {preset}");
        assert!(bodies(&|c| c["body"] == ""), "responses.json: no empty-body case for {preset}");
        assert!(
            bodies(&|c| c["name"].as_str().is_some_and(|n| n.contains("truncated"))),
            "no truncated JSON: {preset}"
        );
    }
    assert!(cases.iter().any(|c| c.get("body_repeat").is_some()), "responses.json: no huge-body case");
    assert!(
        cases.iter().any(|c| c["phase"] == "batch_poll" && c["expected"]["failed"]["class"] == "transient"),
        "responses.json: no batch count-mismatch case"
    );
    for code in classify::known_codes() {
        let quoted = format!("\"{code}\"");
        assert!(
            cases.iter().any(|c| c["body"].as_str().is_some_and(|b| b == code || b.contains(&quoted))),
            "responses.json: no response carrying {code}"
        );
    }
}

/// The docs/decisions/0064-error-classes.md table written out by hand, independent of `classify.rs`:
/// (code, provider, class, minimum wait in seconds).
const CLASS_TABLE: &[(&str, &str, &str, Option<u64>)] = &[
    ("CAPCHA_NOT_READY", "2captcha", "not_ready", None),
    ("processing", "anti-captcha", "not_ready", None),
    ("idle", "anti-captcha", "not_ready", None),
    ("ERROR_NO_SLOT_AVAILABLE", "2captcha", "retry_after", Some(5)),
    ("MAX_USER_TURN", "2captcha", "retry_after", Some(10)),
    ("ERROR: 1001", "2captcha", "retry_after", Some(600)),
    ("ERROR: 1002", "2captcha", "retry_after", Some(300)),
    ("ERROR: 1003", "2captcha", "retry_after", Some(30)),
    ("ERROR: 1004", "2captcha", "retry_after", Some(600)),
    ("ERROR: 1005", "2captcha", "retry_after", Some(600)),
    ("ERROR_SERVER_ERROR", "captchaai", "retry_after", Some(10)),
    ("ERROR_INTERNAL_SERVER_ERROR", "captchaai", "retry_after", Some(10)),
    ("ERROR_IP_BANNED", "capmonster", "retry_after", Some(600)),
    ("WRONG_CAPTCHA_ID", "capmonster", "task_terminal", None),
    ("ERROR_NO_SUCH_CAPCHA_ID", "capmonster", "task_terminal", None),
    ("REPORT_NOT_RECORDED", "2captcha", "fix_input", None),
    ("ERROR_REPORT_NOT_RECORDED", "2captcha", "fix_input", None),
    ("IP_BANNED", "2captcha", "retry_after", Some(300)),
    ("ERROR_ZERO_BALANCE", "captchaai", "retry_after", Some(5)),
    ("ERROR_CAPTCHA_UNSOLVABLE", "2captcha", "task_terminal", None),
    ("ERROR_BAD_DUPLICATES", "2captcha", "task_terminal", None),
    ("ERROR_PAGEURL", "2captcha", "fix_input", None),
    ("ERROR_GOOGLEKEY", "2captcha", "fix_input", None),
    ("ERROR_WRONG_GOOGLEKEY", "2captcha", "fix_input", None),
    ("ERROR_BAD_TOKEN_OR_PAGEURL", "2captcha", "fix_input", None),
    ("ERROR_BAD_PARAMETERS", "2captcha", "fix_input", None),
    ("ERROR_WRONG_CAPTCHA_ID", "2captcha", "fix_input", None),
    ("ERROR_TOKEN_EXPIRED", "2captcha", "fix_input", None),
    ("ERROR_METHOD_CALL", "2captcha", "fix_input", None),
    ("ERROR_ZERO_CAPTCHA_FILESIZE", "2captcha", "fix_input", None),
    ("ERROR_TOO_BIG_CAPTCHA_FILESIZE", "2captcha", "fix_input", None),
    ("ERROR_WRONG_FILE_EXTENSION", "2captcha", "fix_input", None),
    ("ERROR_IMAGE_TYPE_NOT_SUPPORTED", "2captcha", "fix_input", None),
    ("ERROR_UPLOAD", "2captcha", "fix_input", None),
    ("ERROR_BAD_PROXY", "2captcha", "fix_input", None),
    ("ERROR_PROXY_CONNECTION_FAILED", "2captcha", "fix_input", None),
    ("ERROR_WRONG_USER_KEY", "2captcha", "account_terminal", None),
    ("ERROR_KEY_DOES_NOT_EXIST", "2captcha", "account_terminal", None),
    ("ERROR_ZERO_BALANCE", "2captcha", "account_terminal", None),
    ("ERROR_IP_NOT_ALLOWED", "2captcha", "account_terminal", None),
    ("IP_BLOCKED", "2captcha", "account_terminal", None),
    ("ERROR_KEY_DOES_NOT_EXIST", "anti-captcha", "account_terminal", None),
    ("ERROR_ZERO_BALANCE", "anti-captcha", "account_terminal", None),
    ("ERROR_NO_SLOT_AVAILABLE", "anti-captcha", "retry_after", Some(5)),
    ("ERROR_TASK_ABSENT", "anti-captcha", "fix_input", None),
    ("ERROR_TASK_NOT_SUPPORTED", "anti-captcha", "fix_input", None),
    ("ERROR_RECAPTCHA_INVALID_SITEKEY", "anti-captcha", "fix_input", None),
    ("ERROR_INVALID_TASK_DATA", "capsolver", "fix_input", None),
    ("ERROR_KEY_DENIED_ACCESS", "capsolver", "account_terminal", None),
    ("ERROR_IP_BLOCKED", "anti-captcha", "account_terminal", None),
    ("ERROR_NOT_IN_ANY_TABLE", "2captcha", "fix_input", None),
    ("<html><body>502</body></html>", "2captcha", "transient", None),
];

#[test]
fn classes_json() {
    let cases = run("classes.json");
    let codes: BTreeSet<&str> = cases.iter().filter_map(|c| c["code"].as_str()).collect();
    for code in classify::known_codes() {
        assert!(codes.contains(code), "classes.json: no case for {code}");
    }
    assert!(
        cases.iter().any(|c| c["provider"] == "captchaai" && c["code"] == "ERROR_ZERO_BALANCE"),
        "classes.json: the CaptchaAI ERROR_ZERO_BALANCE override is not covered"
    );
    // Every failure a service charges for is stated as billed, for that service (issue 43).
    for (preset, _, _) in PRESETS {
        let provider = Provider::preset(preset).unwrap();
        for code in classify::known_codes() {
            if provider.classify(code).billed {
                assert!(
                    cases
                        .iter()
                        .any(|c| c["provider"] == *preset && c["code"] == *code && c["expected"]["billed"] == true),
                    "classes.json: {code} on {preset} is billed but no case says so"
                );
            }
        }
    }
    for (code, provider, class, secs) in CLASS_TABLE {
        let f = Provider::preset(provider).unwrap().classify(code);
        assert_eq!(f.class.as_str(), *class, "{code} on {provider}");
        assert_eq!(f.retry_after.map(|d| d.as_secs()), *secs, "{code} on {provider}");
        assert!(!f.description.is_empty(), "{code}: no description");
        // The files agree with the hand-written table wherever they hold the same case.
        for c in cases.iter().filter(|c| c["code"] == *code && c["provider"] == *provider) {
            assert_eq!(c["expected"]["class"], *class, "classes.json {code} on {provider}");
            assert_eq!(c["expected"]["retry_after_ms"], secs.map_or(Value::Null, |s| Value::from(s * 1000)));
        }
    }
}

/// Every case names where its wire fact comes from (a provider page, an official client's file)
/// or says it was made by running the core and reviewed by hand (see `vectors::check_source`).
#[test]
fn every_case_names_its_source() {
    let mut missing = Vec::new();
    for file in ["tasks.json", "responses.json", "classes.json"] {
        for (i, case) in load(file).iter().enumerate() {
            if let Err(e) = check_source(case.get("source")) {
                let label = case.get("name").and_then(Value::as_str).map_or_else(|| format!("#{i}"), str::to_string);
                missing.push(format!("{file} {label}: {e}"));
            }
        }
    }
    assert!(missing.is_empty(), "{} case(s) without a valid source:\n{}", missing.len(), missing.join("\n"));
}

#[test]
fn a_source_must_say_where_to_look() {
    use serde_json::json;
    assert!(check_source(None).is_err());
    assert!(check_source(Some(&json!([]))).is_err());
    assert!(check_source(Some(&json!({"kind": "doc", "url": "http://insecure.example"}))).is_err());
    assert!(check_source(Some(&json!({"kind": "client", "repo": "2captcha-python", "file": "x.py"}))).is_err());
    assert!(check_source(Some(&json!({"kind": "reviewed"}))).is_err());
    assert!(check_source(Some(&json!({"kind": "hearsay", "note": "n"}))).is_err());
    assert!(check_source(Some(&json!({"kind": "doc", "url": "https://a.example", "page": 2}))).is_err());
    assert!(check_source(Some(
        &json!([{"kind": "doc", "url": "https://a.example"}, {"kind": "reviewed", "note": "n"}])
    ))
    .is_ok());
}

/// The createTask dialects' per-kind report endpoints and CapSolver's answer in createTask are covered.
#[test]
fn reports_per_kind_and_synchronous_answers_are_covered() {
    let tasks = load("tasks.json");
    for (preset, _, protocol) in PRESETS {
        if matches!(protocol, Protocol::CreateTask(_)) {
            for kind in ["image", "recaptcha_v2", "hcaptcha"] {
                assert!(
                    tasks.iter().any(|c| c["provider"] == *preset && c["call"] == "report" && c["kind"] == kind),
                    "tasks.json: no {kind} report case for {preset}"
                );
            }
        }
    }
    let responses = load("responses.json");
    assert!(
        responses.iter().any(|c| c["provider"] == "capsolver" && c["expected"].get("solved").is_some()),
        "responses.json: no synchronous CapSolver answer"
    );
}

/// Every failure a codec returns for the response cases has human text.
#[test]
fn failures_have_descriptions() {
    for case in load("responses.json") {
        let Some(body) = case["body"].as_str() else { continue };
        let provider = Provider::from_spec(case["provider"].as_str().unwrap()).unwrap();
        let status = u16::try_from(case["status"].as_u64().unwrap_or(200)).unwrap();
        let resp = HttpResponse::new(status, body);
        let ids: Vec<&str> =
            case["ids"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let mut failures = Vec::new();
        match case["phase"].as_str().unwrap() {
            "submit" => {
                if let SubmitOutcome::Failed(f) = provider.parse_submit(&resp) {
                    failures.push(f);
                }
            }
            "poll" | "batch_poll" => match provider.parse_poll(&resp, &ids) {
                PollOutcome::Failed(f) => failures.push(f),
                PollOutcome::PerTask(ps) => {
                    assert_eq!(ps.len(), ids.len(), "{}: one answer per id", case["name"]);
                    failures.extend(ps.into_iter().filter_map(|p| match p {
                        TaskPoll::Failed(f) => Some(f),
                        _ => None,
                    }));
                }
            },
            "balance" => failures.extend(provider.parse_balance(&resp).err()),
            _ => failures.extend(provider.parse_report(&resp).err()),
        }
        for f in failures {
            assert!(f.description.len() > 10, "{}: description {:?}", case["name"], f.description);
            assert!(f.class != ErrorClass::NotReady, "{}: a failure classed not_ready", case["name"]);
        }
    }
}
