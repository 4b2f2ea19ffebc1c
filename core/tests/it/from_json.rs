//! The hand-written JSON readers (`FromJson`) of every type that used to
//! derive `Deserialize`: each reads back what `Serialize` writes (with every
//! field away from its default, so a misspelt field name cannot hide behind
//! a default), `serde_json::from_str` goes through the same reader, and the
//! serde attributes the derived readers honoured (defaults, optional fields,
//! refused or ignored unknown fields, tags) still hold.

use std::collections::BTreeMap;
use std::fmt::Debug;

use captcha_dlq_core::dlq::record::HistoryEntry;
use captcha_dlq_core::dlq::replay::{ReplayDecision, ReplayPolicy, ReplayReport};
use captcha_dlq_core::dlq::testkit::{at, sample_journal_entry, sample_record, sample_task};
use captcha_dlq_core::dlq::{DeadLetterRecord, Filter, LeaseToken, Page, Phase, RecordState, StoreStats};
use captcha_dlq_core::engine::{
    Backoff, CircuitConfig, EngineConfig, FirstPoll, KindMs, PollingConfig, RateConfig, RetryConfig,
};
use captcha_dlq_core::support::json_read::FromJson;
use captcha_dlq_core::support::json_read::{decode, FieldError};
use captcha_dlq_core::{ErrorClass, JobId, JournalEntry, Labels, Solution, Task, TaskKind, Timestamp};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

/// `value` → JSON → `from_json` (and `serde_json::from_str`) gives `value` back.
fn round_trip<T: Serialize + FromJson + DeserializeOwned + PartialEq + Debug>(value: &T) {
    let json = serde_json::to_value(value).unwrap();
    assert_eq!(&T::from_json(json.clone()).unwrap(), value, "from_json of {json}");
    assert_eq!(&serde_json::from_str::<T>(&json.to_string()).unwrap(), value, "from_str of {json}");
}

/// The error reading `json` as a `T`.
fn error<T: FromJson + Debug>(json: Value) -> FieldError {
    T::from_json(json.clone()).map(|v| panic!("{json} was accepted as {v:?}")).unwrap_err()
}

fn err(field: &str, problem: &str) -> FieldError {
    FieldError::new(field, problem)
}

fn full_record() -> DeadLetterRecord {
    let mut r = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R01", 3);
    r.replays = 2;
    r.state = RecordState::Parked;
    r.deliveries = 4;
    r.parked_reason = Some("NeedsReview".into());
    r.class = ErrorClass::FixInput;
    r.solution = Some(Solution { cost: Some(0.002), expires_at: Some(120_000), ..Solution::text("kept") });
    r
}

fn full_config() -> EngineConfig {
    EngineConfig {
        retry: RetryConfig {
            max_attempts: 7,
            max_request_retries: 8,
            max_retry_after_retries: 9,
            backoff: Backoff::Decorrelated { base_ms: 11, cap_ms: 12 },
            transient_min_delay_ms: 13,
            task_deadline_ms: 14,
            request_timeout_ms: 15,
            recover_max_age_ms: 16,
        },
        polling: PollingConfig {
            first_poll_ms: FirstPoll::uniform(30)
                .with(TaskKind::Image, 21)
                .with(TaskKind::Text, 20)
                .with(TaskKind::RecaptchaV2, 22)
                .with(TaskKind::RecaptchaV3, 23)
                .with(TaskKind::Turnstile, 24)
                .with(TaskKind::GeetestV3, 25)
                .with(TaskKind::GeetestV4, 26)
                .with(TaskKind::Funcaptcha, 27)
                .with(TaskKind::Hcaptcha, 28)
                .with(TaskKind::Raw, 29),
            interval_ms: 31,
            min_interval_ms: 34,
            give_up_ms: KindMs::uniform(36).with(TaskKind::Raw, 35),
            max_polls: 32,
            batch: false,
            coalesce_ms: 33,
        },
        rate: RateConfig { submits_per_second: 2.5, max_in_flight: 41 },
        circuit: CircuitConfig {
            window: 51,
            min_calls: 52,
            failure_ratio: 0.25,
            break_ms: 53,
            unreachable_after_failures: 54,
            unreachable_after_ms: 55,
            account_hold_ms: 56,
            hold_account_errors: true,
            account_probe_ms: 57,
        },
        seed: 61,
    }
}

#[test]
fn records_and_history_round_trip() {
    round_trip(&full_record());
    round_trip(&sample_record("a", 0));
    let entry = HistoryEntry {
        at: at(9),
        phase: Phase::Deadline,
        error: "e".into(),
        provider_task_id: Some("p".into()),
        http_status: Some(503),
        provider: Some("capsolver".into()),
    };
    round_trip(&entry);
    round_trip(&HistoryEntry { provider_task_id: None, http_status: None, provider: None, ..entry });
    for phase in Phase::ALL {
        round_trip(&phase);
    }
    for state in RecordState::ALL {
        round_trip(&state);
    }
    for class in ErrorClass::ALL {
        round_trip(&class);
    }
    for kind in TaskKind::ALL {
        round_trip(&kind);
    }
}

#[test]
fn journal_entries_round_trip() {
    let mut entry = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R09", 3);
    entry.replays = 2;
    entry.history = full_record().history;
    entry.replay_of = Some("01JD7Z6Q8V3K9R2M4N5P6Q7R01".into());
    entry.owner = Some("host/1/abc".into());
    round_trip(&entry);
    round_trip(&JournalEntry {
        wanted_until: Some(Timestamp::from_unix_millis(1_700_000_000_000)),
        labels: Labels::default(),
        provider_task_id: None,
        replay_of: None,
        owner: None,
        ..entry
    });
}

#[test]
fn store_types_round_trip() {
    round_trip(&Filter {
        ids: vec!["a".into(), "b".into()],
        reasons: vec!["Timeout".into()],
        classes: vec![ErrorClass::Transient, ErrorClass::Application],
        states: vec![RecordState::Parked],
        sitekey: Some("k".into()),
        page_host: Some("example.com".into()),
        labels: BTreeMap::from([("env".to_string(), "prod".to_string())]),
        dead_lettered_before: Some(at(50)),
        dead_lettered_after: Some(at(5)),
    });
    round_trip(&Filter::all());
    round_trip(&Page { offset: 7, limit: 3 });
    round_trip(&LeaseToken { id: "i".into(), nonce: "n".into() });
    round_trip(&StoreStats {
        total: 1,
        ready: 2,
        leased: 3,
        parked: 4,
        dropped: 5,
        completed: 6,
        abandoned: 7,
        oldest_dead_lettered_at: Some(at(8)),
        in_flight: 9,
    });
    round_trip(&StoreStats::default());
}

#[test]
fn replay_types_round_trip() {
    round_trip(&ReplayPolicy {
        auto_classes: vec![ErrorClass::FixInput],
        park_after_attempts: 9,
        replay_attempts: 3,
        lease_seconds: 30,
    });
    round_trip(&ReplayPolicy { auto_classes: vec![], ..ReplayPolicy::default() });
    round_trip(&ReplayDecision::Replay { attempts_allowed: 3 });
    round_trip(&ReplayDecision::Park { reason: "r".into() });
    round_trip(&ReplayDecision::Skip { why: "w".into() });
    round_trip(&ReplayReport { received: 1, retried: 2, recovered: 3, failed_again: 4, parked: 5, skipped: 6 });
}

#[test]
fn engine_types_round_trip() {
    round_trip(&full_config());
    round_trip(&EngineConfig::default());
    for backoff in [
        Backoff::FullJitter { base_ms: 1, cap_ms: 2 },
        Backoff::Decorrelated { base_ms: 3, cap_ms: 4 },
        Backoff::Fixed { delay_ms: 5 },
    ] {
        round_trip(&backoff);
        let mut config = full_config();
        config.retry.backoff = backoff;
        round_trip(&config);
    }
    round_trip(&JobId(42));
    let mut fields = serde_json::Map::new();
    fields.insert("userAgent".into(), json!("UA"));
    fields.insert("cost".into(), json!(0.001));
    round_trip(&Solution {
        text: "03AGdBq2".into(),
        fields,
        provider_task_id: Some("7".into()),
        provider: Some("anti-captcha".into()),
        cost: Some(0.0007),
        answer: serde_json::json!({"token": "03AGdBq2"}).as_object().cloned().unwrap(),
        solved_at: Some(1_700_000_000_000),
        expires_at: Some(1_700_000_120_000),
        left_out: vec!["user_agent".into()],
    });
    round_trip(&Solution::text("abc"));
    round_trip(&sample_task("k", "https://a.example/"));
}

#[test]
fn config_sections_default_field_by_field_and_refuse_unknown_fields() {
    let partial: EngineConfig =
        decode(&json!({"retry": {"max_attempts": 2}, "polling": {"first_poll_ms": {"raw": 1}}})).unwrap();
    let mut expected = EngineConfig::default();
    expected.retry.max_attempts = 2;
    expected.polling.first_poll_ms.set(TaskKind::Raw, 1);
    assert_eq!(partial, expected);
    assert_eq!(decode::<EngineConfig>(&json!({})).unwrap(), EngineConfig::default());

    assert_eq!(error::<EngineConfig>(json!({"polling": {"intervl_ms": 10}})).field, "polling.intervl_ms");
    let typo = error::<EngineConfig>(json!({"retri": {}}));
    assert_eq!(typo.field, "retri");
    assert!(typo.problem.starts_with("unknown field `retri`, expected one of `retry`, `polling`"), "{}", typo.problem);
    assert_eq!(
        error::<EngineConfig>(json!({"polling": {"first_poll_ms": {"imag": 1}}})).field,
        "polling.first_poll_ms.imag"
    );
    assert_eq!(error::<EngineConfig>(json!({"rate": {"burst": 1}})).field, "rate.burst");
    assert_eq!(error::<EngineConfig>(json!({"circuit": {"size": 1}})).field, "circuit.size");
    assert_eq!(
        error::<EngineConfig>(json!({"polling": {"interval_ms": -5}})),
        err("polling.interval_ms", "-5 is negative: expected a whole number from 0 to 18446744073709551615")
    );
    assert_eq!(
        error::<EngineConfig>(json!({"polling": {"interval_ms": "fast"}})),
        err("polling.interval_ms", "expected a whole number, got a string")
    );
    assert_eq!(error::<EngineConfig>(json!({"retry": {"max_attempts": 1.5}})).field, "retry.max_attempts");
    assert_eq!(error::<EngineConfig>(json!({"retry": "lots"})), err("retry", "expected an object, got a string"));
    assert_eq!(error::<EngineConfig>(json!({"retry": null})), err("retry", "expected an object, got null"));
    assert_eq!(error::<EngineConfig>(json!({"polling": {"batch": 1}})).field, "polling.batch");
    assert_eq!(error::<EngineConfig>(json!({"rate": {"submits_per_second": "1"}})).field, "rate.submits_per_second");
    let rate: EngineConfig = decode(&json!({"rate": {"submits_per_second": 3}})).unwrap();
    assert_eq!(rate.rate.submits_per_second, 3.0);
    // The text entry point prefixes `config`.
    let e = EngineConfig::from_json(r#"{"retry": {"backoff": {"kind": "fixed"}}}"#).unwrap_err();
    assert_eq!((e.field.as_str(), e.problem.as_str()), ("config.retry.backoff.delay_ms", "missing field"));
}

#[test]
fn backoff_is_tagged_by_kind_and_refuses_other_fields() {
    let at_backoff = |b: Value| error::<EngineConfig>(json!({"retry": {"backoff": b}}));
    assert_eq!(at_backoff(json!({"base_ms": 1, "cap_ms": 2})), err("retry.backoff.kind", "missing field"));
    assert_eq!(
        at_backoff(json!({"kind": "exponential"})),
        err(
            "retry.backoff.kind",
            "unknown value `exponential`, expected one of `full_jitter`, `decorrelated`, `fixed`"
        )
    );
    assert_eq!(at_backoff(json!({"kind": 2, "delay_ms": 1})).field, "retry.backoff.kind");
    assert_eq!(at_backoff(json!({"kind": "full_jitter", "base_ms": 1})), err("retry.backoff.cap_ms", "missing field"));
    let extra = at_backoff(json!({"kind": "fixed", "delay_ms": 1, "base_ms": 2}));
    assert_eq!(extra.field, "retry.backoff.base_ms");
    assert!(extra.problem.starts_with("unknown field `base_ms`"), "{}", extra.problem);
    assert_eq!(at_backoff(json!({"kind": "decorrelated", "base_ms": 1, "cap_ms": -2})).field, "retry.backoff.cap_ms");
    assert_eq!(at_backoff(json!("fixed")), err("retry.backoff", "expected an object, got a string"));
}

#[test]
fn replay_policy_defaults_and_refuses_typos_decisions_and_reports_ignore_extras() {
    let p: ReplayPolicy = decode(&json!({"replay_attempts": 3})).unwrap();
    assert_eq!(p, ReplayPolicy { replay_attempts: 3, ..ReplayPolicy::default() });
    assert_eq!(error::<ReplayPolicy>(json!({"lease_secs": 1})).field, "lease_secs");
    assert_eq!(
        error::<ReplayPolicy>(json!({"auto_classes": ["transient", "sometimes"]})),
        err(
            "auto_classes[1]",
            "unknown value `sometimes`, expected one of `not_ready`, `transient`, `retry_after`, `task_terminal`, \
             `fix_input`, `account_terminal`, `cancelled`, `application`"
        )
    );
    let d: ReplayDecision = decode(&json!({"decision": "park", "reason": "r", "extra": 1})).unwrap();
    assert_eq!(d, ReplayDecision::Park { reason: "r".into() });
    assert_eq!(error::<ReplayDecision>(json!({"decision": "replay"})), err("attempts_allowed", "missing field"));
    assert_eq!(error::<ReplayDecision>(json!({"reason": "r"})), err("decision", "missing field"));
    let r: ReplayReport = decode(&json!({"parked": 2, "note": "x"})).unwrap();
    assert_eq!(r, ReplayReport { parked: 2, ..ReplayReport::default() });
}

#[test]
fn records_require_their_fields_ignore_unknown_ones_and_name_nested_paths() {
    let json = serde_json::to_value(full_record()).unwrap();
    for required in [
        "schema",
        "id",
        "task",
        "provider",
        "reason",
        "description",
        "class",
        "attempts",
        "replays",
        "history",
        "first_failed_at",
        "dead_lettered_at",
        "state",
    ] {
        let mut v = json.clone();
        v.as_object_mut().unwrap().remove(required);
        assert_eq!(error::<DeadLetterRecord>(v), err(required, "missing field"));
    }
    let mut lean = json.clone();
    for optional in ["labels", "deliveries", "parked_reason"] {
        lean.as_object_mut().unwrap().remove(optional);
    }
    lean["future_field"] = json!({"anything": true});
    let r = DeadLetterRecord::from_json(lean).unwrap();
    assert_eq!((r.labels.len(), r.deliveries, r.parked_reason), (0, 0, None));

    let mut v = json.clone();
    v["parked_reason"] = Value::Null;
    assert_eq!(DeadLetterRecord::from_json(v).unwrap().parked_reason, None);
    let mut v = json.clone();
    v["labels"] = Value::Null;
    assert_eq!(error::<DeadLetterRecord>(v), err("labels", "expected an object, got null"));
    let mut v = json.clone();
    v["labels"]["n"] = json!(1);
    assert_eq!(error::<DeadLetterRecord>(v), err("labels.n", "expected a string, got a number"));
    let mut v = json.clone();
    v["history"][1]["at"] = json!("yesterday");
    assert_eq!(error::<DeadLetterRecord>(v), err("history[1].at", "not an RFC 3339 timestamp: \"yesterday\""));
    let mut v = json.clone();
    v["history"][0]["http_status"] = json!(70000);
    assert_eq!(error::<DeadLetterRecord>(v).field, "history[0].http_status");
    let mut v = json.clone();
    v["history"][0]["phase"] = json!("later");
    assert_eq!(error::<DeadLetterRecord>(v).field, "history[0].phase");
    let mut v = json.clone();
    v["state"] = json!("gone");
    assert_eq!(
        error::<DeadLetterRecord>(v),
        err("state", "unknown value `gone`, expected one of `ready`, `leased`, `parked`")
    );
    let mut v = json.clone();
    v["attempts"] = json!(-1);
    assert_eq!(error::<DeadLetterRecord>(v).field, "attempts");
    // Tasks are validated when read back, and their errors land under `task`.
    let mut v = json.clone();
    v["task"]["sitekey"] = json!("");
    assert_eq!(error::<DeadLetterRecord>(v), err("task.sitekey", "must not be empty"));
    let mut v = json.clone();
    v["task"]["proxy"] = json!({"type": "http", "host": "h", "port": "80"});
    assert_eq!(error::<DeadLetterRecord>(v).field, "task.proxy.port");
    let mut v = json.clone();
    v["task"] = json!("recaptcha");
    assert_eq!(error::<DeadLetterRecord>(v), err("task", "expected an object, got a string"));
    // Records inside a list name their index.
    let list = json!([json.clone(), {"schema": 1}]);
    assert_eq!(error::<Vec<DeadLetterRecord>>(list), err("[1].id", "missing field"));
}

#[test]
fn journal_entries_and_store_replies_keep_their_defaults() {
    let json = serde_json::to_value(sample_journal_entry("j", 1)).unwrap();
    let mut lean = json.clone();
    for optional in ["labels", "provider_task_id", "replays", "history", "replay_of", "owner"] {
        lean.as_object_mut().unwrap().remove(optional);
    }
    let e = JournalEntry::from_json(lean).unwrap();
    assert_eq!((e.labels.len(), e.provider_task_id, e.replays, e.history.len()), (0, None, 0, 0));
    for required in ["id", "task", "provider", "attempts", "accepted_at", "updated_at"] {
        let mut v = json.clone();
        v.as_object_mut().unwrap().remove(required);
        assert_eq!(error::<JournalEntry>(v), err(required, "missing field"));
    }
    assert_eq!(decode::<Filter>(&json!({})).unwrap(), Filter::all());
    assert_eq!(error::<Filter>(json!({"reason": ["Timeout"]})).field, "reason");
    assert_eq!(error::<Filter>(json!({"classes": "transient"})), err("classes", "expected an array, got a string"));
    assert_eq!(error::<Filter>(json!({"dead_lettered_before": 5})).field, "dead_lettered_before");
    assert_eq!(error::<Page>(json!({"offset": 0})), err("limit", "missing field"));
    assert_eq!(error::<LeaseToken>(json!({"id": "i"})), err("nonce", "missing field"));
    assert_eq!(error::<StoreStats>(json!({})), err("total", "missing field"));
    assert_eq!(error::<Solution>(json!({"fields": {}})), err("text", "missing field"));
    assert_eq!(
        error::<Solution>(json!({"text": "t", "fields": []})),
        err("fields", "expected an object, got an array")
    );
    assert_eq!(error::<JobId>(json!("5")).problem, "expected a whole number, got a string");
    assert_eq!(error::<TaskKind>(json!("morse_code")).field, "");
    assert_eq!(error::<Task>(json!({"type": "image", "body": "aGk=", "extra": 1})).field, "extra");
}

#[test]
fn serde_errors_carry_the_path() {
    let e = serde_json::from_str::<EngineConfig>(r#"{"retry": {"max_attempts": "4"}}"#).unwrap_err().to_string();
    assert!(e.starts_with("retry.max_attempts: expected a whole number, got a string"), "{e}");
    let e = serde_json::from_value::<Vec<ErrorClass>>(json!(["transient", "often"])).unwrap_err().to_string();
    assert!(e.starts_with("unknown value `often`"), "{e}");
}

#[test]
fn a_partial_config_reads_over_a_providers_documented_defaults() {
    let provider = captcha_dlq_core::Provider::preset("capmonster").unwrap();
    let base = EngineConfig::for_provider(&provider);
    let cfg = EngineConfig::from_json_over(
        base.clone(),
        r#"{"polling": {"give_up_ms": {"recaptcha_v2": 200000}, "first_poll_ms": 2000}, "retry": {"max_attempts": 2}}"#,
    )
    .unwrap();
    let mut expected = base.clone();
    expected.polling.give_up_ms.set(TaskKind::RecaptchaV2, 200_000);
    expected.polling.first_poll_ms = KindMs::uniform(2000);
    expected.retry.max_attempts = 2;
    assert_eq!(cfg, expected);
    // What is left out keeps the provider's figures, not the generic defaults.
    assert_eq!(cfg.rate.submits_per_second, base.rate.submits_per_second);
    assert_eq!(cfg.polling.min_interval_ms, 2000);
    // A backoff replaces the base's whole (its fields belong to its kind).
    let fixed =
        EngineConfig::from_json_over(base.clone(), r#"{"retry": {"backoff": {"kind": "fixed", "delay_ms": 5}}}"#);
    assert_eq!(fixed.unwrap().retry.backoff, Backoff::Fixed { delay_ms: 5 });
    // Unknown fields and bad values are still named.
    let e = EngineConfig::from_json_over(base.clone(), r#"{"polling": {"give_up_ms": {"recaptcha": 1}}}"#).unwrap_err();
    assert_eq!(e.field, "config.polling.give_up_ms.recaptcha");
    let e = EngineConfig::from_json_over(base.clone(), r#"{"polling": {"give_up_ms": {"image": 500}}}"#).unwrap_err();
    assert_eq!(e.field, "polling.give_up_ms.image", "{e}");
    let e = EngineConfig::from_json_over(base, r#"{"polling": {"min_interval_ms": 0}}"#).unwrap_err();
    assert_eq!(e.field, "polling.min_interval_ms");
    // The old spellings still read: a fixed interval, per-kind first polls.
    let old =
        EngineConfig::from_json(r#"{"polling": {"first_poll_ms": {"image": 60}, "interval_ms": 50, "max_polls": 3}}"#)
            .unwrap();
    assert_eq!(
        (old.polling.first_poll_ms.ms(TaskKind::Image), old.polling.interval_ms, old.polling.max_polls),
        (60, 50, 3)
    );
}
