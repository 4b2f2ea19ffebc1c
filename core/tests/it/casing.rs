//! Values in a host's casing (`support::cased`): records, events and solutions respelled field by
//! field, never their map keys or values. Here rather than beside `cased` because they use the
//! records and events above it.

use captcha_dlq_core::dlq::testkit::sample_record;
use captcha_dlq_core::engine::{Event, JobId};
use captcha_dlq_core::solution::Solution;
use captcha_dlq_core::support::cased::to_value;
use captcha_dlq_core::support::json_read::Casing;
use serde_json::json;

#[test]
fn field_names_are_respelled_and_map_keys_are_not() {
    let mut record = sample_record("r1", 0);
    record.labels.insert("jobId".into(), "x".into());
    record.labels.insert("snake_label".into(), "y".into());
    let v = to_value(&record, Casing::Camel).unwrap();
    assert!(v.get("deadLetteredAt").is_some() && v.get("dead_lettered_at").is_none());
    assert_eq!(v["labels"], json!({"job": "scrape-42", "jobId": "x", "snake_label": "y"}));
    assert_eq!(v["task"]["pageUrl"], json!("https://example.com/page/2"), "nested structs too");
    assert_eq!(v["history"][1]["providerTaskId"], json!("71823460"), "inside arrays too");
    assert_eq!(v["class"], json!("task_terminal"), "values are never respelled");
    let snake = to_value(&record, Casing::Snake).unwrap();
    assert_eq!(snake, serde_json::to_value(&record).unwrap());
}

#[test]
fn tagged_enums_and_solutions() {
    let e = Event::Submitted { job: JobId(3), attempt: 1, provider_task_id: "77".into(), provider: None };
    assert_eq!(
        to_value(&e, Casing::Camel).unwrap(),
        json!({"event": "submitted", "job": 3, "attempt": 1, "providerTaskId": "77"})
    );
    let mut s = Solution::text("tok");
    s.fields.insert("user_agent".into(), json!("UA"));
    s.provider_task_id = Some("9".into());
    assert_eq!(
        to_value(&s, Casing::Camel).unwrap(),
        json!({"text": "tok", "fields": {"user_agent": "UA"}, "providerTaskId": "9"})
    );
    // Snake case is serde_json's own encoding, field for field: stores and exports write it.
    assert_eq!(to_value(&e, Casing::Snake).unwrap(), serde_json::to_value(&e).unwrap());
    assert_eq!(to_value(&s, Casing::Snake).unwrap(), serde_json::to_value(&s).unwrap());
}
