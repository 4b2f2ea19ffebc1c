//! Export/import: round trips of our JSON and JSONL, the seeds' two
//! `captcha-dlq.json` shapes, and errors that name the entry and field.

use captcha_dlq_core::class::reason;
use captcha_dlq_core::dlq::export::{Location, APPLICATION_ERROR, SEED_LABEL};
use captcha_dlq_core::dlq::redact::scrub_secrets;
use captcha_dlq_core::dlq::testkit::{at, sample_record, sample_task};
use captcha_dlq_core::dlq::{export_json, export_jsonl, import, DeadLetterRecord, Phase, RecordState};
use captcha_dlq_core::{ErrorClass, Timestamp};

fn records() -> Vec<DeadLetterRecord> {
    let a = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R01", 0);
    let mut b = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R02", 1);
    b.reason = reason::TIMEOUT.into();
    b.task = sample_task("6Le-OTHER", "https://shop.example.org/checkout?step=2");
    b.labels.insert("note".into(), "multi\nline \"quoted\" ✓".into());
    b.state = RecordState::Parked;
    b.parked_reason = Some("NeedsReview".into());
    b.deliveries = 10;
    b.history.clear();
    vec![a, b]
}

#[test]
fn json_round_trip() {
    let text = export_json(&records());
    assert!(text.starts_with("[\n"), "pretty JSON array: {text}");
    assert_eq!(import(&text, "ignored", at(0)).unwrap(), records());
}

#[test]
fn jsonl_round_trip() {
    let text = export_jsonl(&records());
    assert_eq!(text.lines().count(), 2);
    assert!(text.ends_with('\n'));
    assert_eq!(import(&text, "ignored", at(0)).unwrap(), records());
    // Blank lines and CRLF line ends are tolerated.
    let crlf = text.replace('\n', "\r\n\r\n");
    assert_eq!(import(&crlf, "ignored", at(0)).unwrap(), records());
}

#[test]
fn empty_input_is_an_empty_dlq() {
    assert_eq!(export_jsonl(&[]), "");
    assert_eq!(export_json(&[]), "[]");
    for text in ["", "  \n", "[]", "\u{feff}[]"] {
        assert_eq!(import(text, "captchaai", at(0)).unwrap(), vec![], "{text:?}");
    }
}

#[test]
fn a_single_record_object_imports() {
    let one = serde_json::to_string_pretty(&records()[0]).unwrap();
    assert_eq!(import(&one, "x", at(0)).unwrap(), vec![records()[0].clone()]);
}

#[test]
fn a_leased_record_imports_as_ready() {
    let mut r = records().remove(0);
    r.state = RecordState::Leased;
    let got = import(&export_jsonl(&[r]), "x", at(0)).unwrap();
    assert_eq!(got[0].state, RecordState::Ready);
}

/// `json.dump(dlq.peek_all(), f, indent=2)` of the Python seed's batch.
const PYTHON_SEED: &str = r#"[
  {
    "sitekey": "6Le-SITEKEY",
    "page_url": "https://example.com/page/2",
    "error": "ERROR_CAPTCHA_UNSOLVABLE",
    "attempts": 4,
    "timestamp": 1795255231.5,
    "task_id": null
  },
  {
    "sitekey": "6Le-SITEKEY",
    "page_url": "https://example.com/page/4",
    "error": "Task 71823460 timed out",
    "attempts": 4,
    "timestamp": 1795255391.25,
    "task_id": null
  },
  {
    "sitekey": "6Le-SITEKEY",
    "page_url": "https://example.com/page/5",
    "error": "HTTPSConnectionPool(host='ocr.captchaai.com', port=443): Max retries exceeded with url: /res.php?key=0123456789abcdef0123456789abcdef&action=get&id=71823470&json=1 (Caused by NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))",
    "attempts": 4,
    "timestamp": 1795255400.0,
    "task_id": "71823470"
  },
  {
    "sitekey": "6Le-SITEKEY",
    "page_url": "https://example.com/page/6",
    "error": "'NoneType' object is not subscriptable",
    "attempts": 1,
    "timestamp": 1795255401
  }
]"#;

#[test]
fn python_seed_file() {
    let now = at(86_400);
    let got = import(PYTHON_SEED, "captchaai", now).unwrap();
    assert_eq!(got.len(), 4);
    let [unsolvable, timeout, network, app] = &got[..] else { panic!("four records") };

    assert_eq!(unsolvable.reason, "ERROR_CAPTCHA_UNSOLVABLE");
    assert_eq!(unsolvable.class, ErrorClass::TaskTerminal);
    assert_eq!(unsolvable.attempts, 4);
    assert_eq!(unsolvable.provider, "captchaai");
    assert_eq!(unsolvable.task, sample_task("6Le-SITEKEY", "https://example.com/page/2"));
    assert_eq!(unsolvable.dead_lettered_at, Timestamp::parse_rfc3339("2026-11-21T10:00:31.5Z").unwrap());
    assert_eq!(unsolvable.first_failed_at, unsolvable.dead_lettered_at);
    assert_eq!(unsolvable.labels.get(SEED_LABEL).map(String::as_str), Some("python"));
    assert_eq!((unsolvable.state, unsolvable.deliveries, unsolvable.replays), (RecordState::Ready, 0, 0));
    assert_eq!(unsolvable.history.len(), 1);
    assert_eq!(unsolvable.history[0].error, "ERROR_CAPTCHA_UNSOLVABLE");

    assert_eq!(timeout.reason, reason::TIMEOUT);
    assert_eq!(timeout.class, ErrorClass::TaskTerminal);
    assert_eq!(timeout.history[0].phase, Phase::Deadline);
    assert_eq!(timeout.history[0].provider_task_id.as_deref(), Some("71823460"));
    assert!(timeout.description.contains("71823460"), "{}", timeout.description);

    assert_eq!(network.reason, reason::NETWORK);
    assert_eq!(network.class, ErrorClass::Transient);
    assert_eq!(network.history[0].provider_task_id.as_deref(), Some("71823470"));
    let exported = export_json(&got);
    assert!(!exported.contains("0123456789abcdef0123456789abcdef"), "the API key leaked into a record");
    assert!(network.description.contains("key=[redacted]&action=get"), "{}", network.description);

    assert_eq!(app.reason, APPLICATION_ERROR);
    assert_eq!(app.class, ErrorClass::Application);
    assert_eq!(app.description, "'NoneType' object is not subscriptable");
    assert_eq!(app.dead_lettered_at, Timestamp::parse_rfc3339("2026-11-21T10:03:21Z").unwrap());

    // Ids are ULIDs carrying the entry's time, and stable across imports.
    for r in &got {
        let ulid = ulid::Ulid::from_string(&r.id).unwrap();
        assert_eq!(ulid.timestamp_ms(), r.dead_lettered_at.as_unix_millis());
    }
    let again = import(PYTHON_SEED, "captchaai", at(999_999)).unwrap();
    assert_eq!(again, got, "re-importing the same file gives the same records");
}

/// `fs.writeFileSync(DLQ_FILE, JSON.stringify(this.queue, null, 2))` of the JS seed.
const JS_SEED: &str = r#"[
  {
    "sitekey": "6Le-SITEKEY",
    "pageurl": "https://example.com/page/2",
    "error": "ERROR_CAPTCHA_UNSOLVABLE",
    "attempts": 4,
    "timestamp": 1795255231500
  },
  {
    "sitekey": "6Le-SITEKEY",
    "pageurl": "https://example.com/page/4",
    "error": "Task 71823460 timed out",
    "attempts": 4,
    "timestamp": 1795255391250
  },
  {
    "sitekey": "6Le-SITEKEY",
    "pageurl": "https://example.com/page/3",
    "error": "connect ECONNREFUSED 127.0.0.1:443",
    "attempts": 4,
    "timestamp": 1795255392000
  },
  {
    "sitekey": "6Le-SITEKEY",
    "pageurl": "https://example.com/page/4",
    "error": "ERROR_WRONG_USER_KEY",
    "attempts": 1,
    "timestamp": 1795255393000
  },
  {
    "sitekey": "6Le-SITEKEY",
    "pageurl": "https://example.com/page/4",
    "error": "ERROR_WRONG_USER_KEY",
    "attempts": 1,
    "timestamp": 1795255393000
  }
]"#;

#[test]
fn javascript_seed_file() {
    let got = import(JS_SEED, "2captcha", at(0)).unwrap();
    assert_eq!(got.len(), 5, "identical entries are both kept");
    assert_eq!(got[0].dead_lettered_at, Timestamp::parse_rfc3339("2026-11-21T10:00:31.5Z").unwrap());
    assert_eq!(got[0].task, sample_task("6Le-SITEKEY", "https://example.com/page/2"));
    assert_eq!(got[0].labels.get(SEED_LABEL).map(String::as_str), Some("javascript"));
    assert_eq!(got[0].provider, "2captcha");
    assert_eq!((got[1].reason.as_str(), got[1].history[0].provider_task_id.as_deref()), ("Timeout", Some("71823460")));
    assert_eq!((got[2].reason.as_str(), got[2].class), (reason::NETWORK, ErrorClass::Transient));
    assert_eq!((got[3].reason.as_str(), got[3].class), ("ERROR_WRONG_USER_KEY", ErrorClass::AccountTerminal));
    assert_ne!(got[3].id, got[4].id, "identical entries get distinct ids");
    // Same content, same instant: the two Python and JS unsolvable entries agree but for the label.
    let py = import(PYTHON_SEED, "2captcha", at(0)).unwrap();
    assert_eq!(py[0].dead_lettered_at, got[0].dead_lettered_at);
    assert_eq!((py[0].reason.as_str(), py[0].class), (got[0].reason.as_str(), got[0].class));
}

#[test]
fn seed_entries_in_jsonl_and_a_missing_timestamp() {
    let line =
        r#"{"sitekey": "6Le-SITEKEY", "pageurl": "https://example.com/p", "error": "socket hang up", "attempts": 2}"#;
    let now = at(42);
    let got = import(&format!("{line}\n"), "captchaai", now).unwrap();
    assert_eq!((got[0].dead_lettered_at, got[0].reason.as_str()), (now, reason::NETWORK));
}

fn err(text: &str) -> String {
    import(text, "captchaai", at(0)).unwrap_err().to_string()
}

#[test]
fn errors_name_the_entry_and_field() {
    let bad_attempts = PYTHON_SEED.replacen("\"attempts\": 1,", "\"attempts\": -1,", 1);
    assert_eq!(err(&bad_attempts), "entry 4: field `attempts`: expected a non-negative integer");
    let e = import(&bad_attempts, "captchaai", at(0)).unwrap_err();
    assert_eq!((e.location, e.field.as_deref()), (Location::Entry(4), Some("attempts")));

    let no_url = r#"[{"sitekey": "k", "error": "x", "attempts": 1}]"#;
    assert!(err(no_url).starts_with("entry 1: field `page_url`: missing"), "{}", err(no_url));
    let no_error = r#"[{"sitekey": "k", "page_url": "https://a.example/", "attempts": 1}]"#;
    assert_eq!(err(no_error), "entry 1: field `error`: missing");
    let wrong_type = r#"[{"sitekey": 7, "page_url": "https://a.example/", "error": "x", "attempts": 1}]"#;
    assert_eq!(err(wrong_type), "entry 1: field `sitekey`: expected a string, found a number");
    let bad_url = r#"[{"sitekey": "k", "page_url": "ftp://a.example/", "error": "x", "attempts": 1}]"#;
    assert_eq!(err(bad_url), "entry 1: field `page_url`: scheme \"ftp\" is not http or https");
    let blank_key = r#"[{"sitekey": " ", "page_url": "https://a.example/", "error": "x", "attempts": 1}]"#;
    assert_eq!(err(blank_key), "entry 1: field `sitekey`: must not be empty");
    let bad_time =
        r#"[{"sitekey": "k", "page_url": "https://a.example/", "error": "x", "attempts": 1, "timestamp": "noon"}]"#;
    assert_eq!(err(bad_time), "entry 1: field `timestamp`: expected a number, found a string");
    let far =
        r#"[{"sitekey": "k", "page_url": "https://a.example/", "error": "x", "attempts": 1, "timestamp": 1e300}]"#;
    assert!(err(far).starts_with("entry 1: field `timestamp`: expected unix seconds"), "{}", err(far));
    assert_eq!(err("[1, 2]"), "entry 1: expected an object, found a number");
    assert!(err("[{\"sitekey\": ").starts_with("document: not a valid JSON array"), "{}", err("[{"));
    assert!(err("{\"a\": 1}\nnot json\n").starts_with("line 2: not valid JSON"), "{}", err("{\"a\": 1}\nnot json\n"));
}

#[test]
fn errors_in_our_own_records_name_the_path() {
    let mut value = serde_json::to_value(&records()[0]).unwrap();
    value["history"][1]["at"] = serde_json::json!("yesterday");
    let text = format!("[{value}]");
    let e = import(&text, "x", at(0)).unwrap_err();
    assert_eq!((e.location, e.field.as_deref()), (Location::Entry(1), Some("history[1].at")), "{e}");

    let mut missing = serde_json::to_value(&records()[0]).unwrap();
    missing.as_object_mut().unwrap().remove("task");
    let e = import(&missing.to_string(), "x", at(0)).unwrap_err();
    assert_eq!(e.to_string(), "entry 1: field `task`: missing field");

    let mut newer = serde_json::to_value(&records()[0]).unwrap();
    newer["schema"] = serde_json::json!(2);
    assert_eq!(
        import(&newer.to_string(), "x", at(0)).unwrap_err().to_string(),
        "entry 1: field `schema`: schema 2 is newer than this build reads (up to 1)"
    );

    let twice = export_jsonl(&[records()[0].clone(), records()[0].clone()]);
    assert_eq!(
        import(&twice, "x", at(0)).unwrap_err().to_string(),
        "line 2: field `id`: 01JD7Z6Q8V3K9R2M4N5P6Q7R01 repeats line 1"
    );
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "\0",
        "[",
        "]",
        "{",
        "}",
        "null",
        "[null]",
        "[[]]",
        "\"str\"",
        "[{\"schema\": null}]",
        "[{\"schema\": -1}]",
        "[{\"schema\": 1}]",
        "{\"schema\": 1, \"id\": \"\"}",
        "[{}]",
        "[{\"sitekey\": \"k\", \"pageurl\": \"\", \"error\": \"\", \"attempts\": 1e400}]",
        "\u{feff}",
        "key=",
        "[{\"sitekey\":\"k\",\"page_url\":\"https://a/\",\"error\":\"key=\",\"attempts\":1,\"timestamp\":-5}]",
    ];
    for text in inputs {
        // Every one of these is an error (or an empty DLQ), never a panic.
        let _ = import(text, "captchaai", at(0));
    }
    for text in inputs {
        for cut in 0..text.len() {
            if let Some(prefix) = text.get(..cut) {
                let _ = import(prefix, "captchaai", at(0));
            }
        }
    }
    assert!(import("[{}]", "captchaai", at(0)).is_err());
    assert_eq!(scrub_secrets("key="), "key=");
}
