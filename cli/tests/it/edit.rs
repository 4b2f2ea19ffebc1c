//! `captcha-dlq dlq edit` as an operator runs it: tasks dead-lettered for a wrong sitekey are
//! shown their change (nothing written), then edited with `--yes --replay`, and solve.

use crate::support;
use std::process::Output;

use captcha_dlq::core::dlq::{DlqStore, Filter, Page, Phase};
use captcha_dlq::store::SqliteStore;
use captcha_dlq_mock::{Behavior, Matcher, MockConfig, MockSolver, Outcome, Rule};
use serde_json::Value;

const KEY: &str = "CLIKEY0123456789abcdef0123456789";
const FAST: &str = r#"{"polling":{"first_poll_ms":{"recaptcha_v2":60},"interval_ms":50,"max_polls":200,"coalesce_ms":20},"retry":{"transient_min_delay_ms":10,"backoff":{"kind":"full_jitter","base_ms":20,"cap_ms":200}}}"#;

/// The operator's fix: the wrong sitekey's records get the right one and a label saying so.
const FIX_SITEKEY: [&str; 8] =
    ["dlq", "edit", "--sitekey", "6Le-WRONG", "--set", "sitekey=6Le-RIGHT", "--label", "fixed=sitekey"];

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_sitekeys_are_previewed_then_edited_and_replayed_until_solved() {
    // The solving service refuses the wrong sitekey, as a real one does.
    let wrong = Rule {
        matcher: Matcher { site_key: Some("6Le-WRONG".into()), ..Matcher::default() },
        behavior: Behavior {
            outcome: Outcome::BadParameters,
            code: Some("ERROR_WRONG_GOOGLEKEY".into()),
            ..Behavior::default()
        },
    };
    // Another site's task fails for a reason of its own, and must stay as it is.
    let other = Rule {
        matcher: Matcher { site_key: Some("6Le-OTHER".into()), ..Matcher::default() },
        behavior: Behavior { outcome: Outcome::Unsolvable, ..Behavior::default() },
    };
    let mock = MockSolver::start(MockConfig { rules: vec![wrong, other], ..MockConfig::default() }).await.unwrap();
    let base = mock.base_url();
    let dir = tempfile::tempdir().unwrap();
    let dlq = dir.path().join("d.sqlite").to_str().unwrap().to_string();
    let input = dir.path().join("tasks.jsonl");
    std::fs::write(
        &input,
        "{\"task\":{\"type\":\"recaptcha_v2\",\"sitekey\":\"6Le-WRONG\",\"page_url\":\"https://shop.example/a\"},\"labels\":{\"job\":\"j1\"}}\n\
         {\"task\":{\"type\":\"recaptcha_v2\",\"sitekey\":\"6Le-WRONG\",\"page_url\":\"https://shop.example/b\"},\"labels\":{\"job\":\"j1\"}}\n\
         {\"task\":{\"type\":\"recaptcha_v2\",\"sitekey\":\"6Le-OTHER\",\"page_url\":\"https://other.example/c\"}}\n",
    )
    .unwrap();
    let i = input.to_str().unwrap();
    let out =
        support::run_blocking(&["batch", i, "--dlq", &dlq, "--base-url", &base, "--config", FAST, "--json"], Some(KEY))
            .await;
    assert_eq!(out.status.code(), Some(1), "the tasks were dead-lettered: {}", text(&out));
    let store = SqliteStore::open(&dlq).unwrap();
    let wrong = Filter { sitekey: Some("6Le-WRONG".into()), ..Filter::default() };
    assert_eq!(store.count(&wrong, support::now()).await.unwrap(), 2);

    // Without --yes: the changes are printed, nothing is written, and no key is needed.
    let out = support::run_blocking(&[&FIX_SITEKEY[..], &["--dlq", &dlq]].concat(), None).await;
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert_eq!(shown.matches(r#"task.sitekey: "6Le-WRONG" → "6Le-RIGHT""#).count(), 2, "{shown}");
    assert!(shown.contains(r#"labels.fixed: (none) → "sitekey""#), "{shown}");
    assert!(shown.contains("would change 2"), "{shown}");
    assert!(shown.contains("--yes"), "the preview says how to apply: {shown}");
    assert_eq!(store.count(&wrong, support::now()).await.unwrap(), 2, "a preview writes nothing");

    // A change that makes the task invalid is refused, naming the field, and writes nothing.
    let invalid =
        ["dlq", "edit", "--sitekey", "6Le-WRONG", "--set", "page_url=not a url", "--yes", "--json", "--dlq", &dlq];
    let out = support::run_blocking(&invalid, None).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["edit"]["refused"].as_array().unwrap().len(), 2, "{v}");
    assert!(v["edit"]["refused"][0]["error"].as_str().unwrap().contains("task.page_url"), "{v}");
    assert_eq!(v["edit"]["changed"], 0);

    // --yes --replay: edited, then exactly the edited records are replayed, and they solve.
    let apply = ["--yes", "--replay", "--json", "--dlq", &dlq, "--base-url", &base, "--config", FAST];
    let out = support::run_blocking(&[&FIX_SITEKEY[..], &apply].concat(), Some(KEY)).await;
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    let docs: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let edit = &docs[0]["edit"];
    assert_eq!(
        (edit["matched"].as_u64(), edit["changed"].as_u64(), edit["preview"].as_bool()),
        (Some(2), Some(2), Some(false))
    );
    let report = &docs.last().unwrap()["report"];
    assert_eq!(report["recovered"], 2, "{shown}");
    let solved: Vec<&Value> = docs.iter().filter(|d| d["ok"] == true).collect();
    assert_eq!(solved.len(), 2, "{shown}");
    assert!(
        solved.iter().all(|s| s["labels"]["fixed"] == "sitekey"),
        "the edited labels travel with the answer: {shown}"
    );
    // Only the other site's record is left; it was not touched.
    let left = store.peek(&Filter::all(), Page::default(), support::now()).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].task.sitekey(), Some("6Le-OTHER"));
    assert!(left[0].history.iter().all(|h| h.phase != Phase::Edit));
    assert!(!shown.contains(KEY), "the key never shows");
}
