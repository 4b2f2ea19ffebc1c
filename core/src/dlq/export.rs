//! Export of dead-letter records to JSON / JSONL, and import from those and
//! from the seeds' `captcha-dlq.json` (the Python `FailedTask` dicts and the
//! JavaScript objects), so an existing ad-hoc DLQ file can be moved into a store.
//!
//! Import never panics and never drops an entry silently: the first entry that
//! cannot be read stops the import with an [`ImportError`] naming the entry (or
//! line) and the field. Entries and lines are numbered from 1. A file that is
//! empty or only whitespace imports as an empty list: the seeds treat a missing
//! or empty file as an empty DLQ, and an empty DLQ exports as an empty JSONL file.
//!
//! Imported seed entries get deterministic ULIDs (timestamp of the entry plus
//! 80 bits of a hash of its content), so importing the same file twice upserts
//! the same records instead of duplicating them.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde_json::{Map, Value};

use crate::class::{reason, ErrorClass};
use crate::classify::class_of;
use crate::dlq::record::{DeadLetterRecord, HistoryEntry, Phase, RecordState, SCHEMA};
use crate::dlq::redact::scrub_secrets;
use crate::support::cased;
use crate::support::json_field::json_type;
use crate::support::json_read::{Casing, FromJson};
use crate::support::time::Timestamp;
use crate::task::Task;

/// Reason given to a seed entry whose error is an exception text we cannot
/// classify (the seeds stored `str(e)` without the exception type).
pub const APPLICATION_ERROR: &str = "ApplicationError";

/// Label set on imported seed entries: `python` or `javascript`.
pub const SEED_LABEL: &str = "imported_from";

/// Records as a pretty-printed JSON array.
pub fn export_json(records: &[DeadLetterRecord]) -> String {
    let values = records.iter().map(record_value).collect();
    serde_json::to_string_pretty(&Value::Array(values)).unwrap_or_else(|e| unreachable_serialize(&e))
}

/// Records as JSON Lines: one record per line, each line ending in `\n`.
pub fn export_jsonl(records: &[DeadLetterRecord]) -> String {
    let mut out = String::new();
    for r in records {
        out.push_str(&serde_json::to_string(&record_value(r)).unwrap_or_else(|e| unreachable_serialize(&e)));
        out.push('\n');
    }
    out
}

/// Records as a pretty-printed JSON array, their secrets redacted ([`crate::dlq::redact`]):
/// the export a viewer gets, and every export that does not ask for secrets.
pub fn export_json_redacted(records: &[DeadLetterRecord]) -> String {
    let values = records.iter().map(crate::dlq::redact::redacted_record).collect();
    serde_json::to_string_pretty(&Value::Array(values)).unwrap_or_else(|e| unreachable_serialize(&e))
}

/// Records as JSON Lines, their secrets redacted (see [`export_json_redacted`]).
pub fn export_jsonl_redacted(records: &[DeadLetterRecord]) -> String {
    let mut out = String::new();
    for r in records {
        let value = crate::dlq::redact::redacted_record(r);
        out.push_str(&serde_json::to_string(&value).unwrap_or_else(|e| unreachable_serialize(&e)));
        out.push('\n');
    }
    out
}

/// A record as it is written (snake_case), through the one serializer every value goes out by.
fn record_value(record: &DeadLetterRecord) -> Value {
    cased::to_value(record, Casing::Snake).unwrap_or_else(|e| unreachable_serialize(&e))
}

// A record has only string map keys and infallible `Serialize` impls, so
// it cannot fail to become JSON.
#[cold]
fn unreachable_serialize(e: &dyn fmt::Display) -> ! {
    panic!("a DeadLetterRecord failed to serialize: {e}")
}

/// Where in the input a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// The input as a whole (not JSON, or not an array/lines of objects).
    Document,
    /// The n-th element (from 1) of a JSON array.
    Entry(usize),
    /// The n-th line (from 1) of a JSONL file.
    Line(usize),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Document => f.write_str("document"),
            Location::Entry(n) => write!(f, "entry {n}"),
            Location::Line(n) => write!(f, "line {n}"),
        }
    }
}

/// Why an import failed: where, which field (when one is to blame), and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ImportError {
    pub location: Location,
    /// The field's path inside the entry (`attempts`, `history[0].at`).
    pub field: Option<String>,
    pub problem: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{}: field `{field}`: {}", self.location, self.problem),
            None => write!(f, "{}: {}", self.location, self.problem),
        }
    }
}

impl ImportError {
    fn new(location: Location, field: Option<&str>, problem: impl Into<String>) -> Self {
        ImportError { location, field: field.map(str::to_string), problem: problem.into() }
    }
}

/// Reads records from `text`: our JSON array or JSONL (as [`export_json`] and
/// [`export_jsonl`] write them), or the seeds' `captcha-dlq.json` array. Seed
/// entries get `provider_default` as provider; `now` stands in for a missing
/// seed timestamp.
pub fn import(text: &str, provider_default: &str, now: Timestamp) -> Result<Vec<DeadLetterRecord>, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    let mut entries: Vec<(Location, Value)> = Vec::new();
    let whole: Option<Result<Value, serde_json::Error>> =
        (trimmed.starts_with('[') || trimmed.starts_with('{')).then(|| serde_json::from_str(trimmed));
    match whole {
        Some(Ok(Value::Array(items))) => {
            entries.extend(items.into_iter().enumerate().map(|(i, v)| (Location::Entry(i + 1), v)));
        }
        Some(Ok(object @ Value::Object(_))) => entries.push((Location::Entry(1), object)),
        Some(Err(e)) if trimmed.starts_with('[') => {
            return Err(ImportError::new(Location::Document, None, format!("not a valid JSON array: {e}")));
        }
        // Not one JSON document: JSON Lines.
        _ => {
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let value = serde_json::from_str(line)
                    .map_err(|e| ImportError::new(Location::Line(n + 1), None, format!("not valid JSON: {e}")))?;
                entries.push((Location::Line(n + 1), value));
            }
        }
    }

    let mut out: Vec<DeadLetterRecord> = Vec::with_capacity(entries.len());
    let mut seen_ids: HashMap<String, Location> = HashMap::new();
    let mut seen_hashes: HashMap<u128, u32> = HashMap::new();
    for (location, value) in entries {
        let Value::Object(map) = value else {
            return Err(ImportError::new(location, None, format!("expected an object, found {}", json_type(&value))));
        };
        let record = if map.contains_key("schema") {
            own_record(location, map)?
        } else {
            seed_record(location, map, provider_default, now, &mut seen_hashes)?
        };
        if let Some(first) = seen_ids.insert(record.id.clone(), location) {
            return Err(ImportError::new(location, Some("id"), format!("{} repeats {first}", record.id)));
        }
        out.push(record);
    }
    Ok(out)
}

/// A record in our own schema.
fn own_record(location: Location, map: Map<String, Value>) -> Result<DeadLetterRecord, ImportError> {
    match map.get("schema").and_then(Value::as_u64) {
        Some(n) if n == u64::from(SCHEMA) => {}
        Some(n) if n > u64::from(SCHEMA) => {
            return Err(ImportError::new(
                location,
                Some("schema"),
                format!("schema {n} is newer than this build reads (up to {SCHEMA})"),
            ));
        }
        _ => {
            return Err(ImportError::new(location, Some("schema"), format!("expected {SCHEMA}")));
        }
    }
    let mut record = DeadLetterRecord::from_json(Value::Object(map)).map_err(|e| {
        let field = (!e.field.is_empty()).then_some(e.field.as_str());
        ImportError::new(location, field, e.problem.clone())
    })?;
    if record.id.trim().is_empty() {
        return Err(ImportError::new(location, Some("id"), "must not be empty"));
    }
    if record.state == RecordState::Leased {
        // A lease belongs to the store it was taken from; it does not travel.
        record.state = RecordState::Ready;
    }
    Ok(record)
}

/// Which program wrote a seed entry.
#[derive(Clone, Copy)]
enum Seed {
    /// `FailedTask` dicts: `page_url`, `timestamp` in float seconds, `task_id`.
    Python,
    /// Plain objects: `pageurl`, `timestamp` in milliseconds.
    JavaScript,
}

/// Year 10000: later timestamps are not dates a seed could have written.
const MAX_MILLIS: f64 = 253_402_300_800_000.0;

fn seed_record(
    location: Location,
    map: Map<String, Value>,
    provider_default: &str,
    now: Timestamp,
    seen_hashes: &mut HashMap<u128, u32>,
) -> Result<DeadLetterRecord, ImportError> {
    let err = |field: &str, problem: &str| ImportError::new(location, Some(field), problem);
    let string = |field: &str| -> Result<Option<&str>, ImportError> {
        match map.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(err(field, &format!("expected a string, found {}", json_type(other)))),
        }
    };
    let sitekey = string("sitekey")?.ok_or_else(|| err("sitekey", "missing"))?;
    let (page_url, seed) = match (string("page_url")?, string("pageurl")?) {
        (Some(url), _) => (url, Seed::Python),
        (None, Some(url)) => (url, Seed::JavaScript),
        (None, None) => {
            return Err(err("page_url", "missing (the seeds write `page_url` or `pageurl`)"));
        }
    };
    let error_text = string("error")?.ok_or_else(|| err("error", "missing"))?;
    let attempts = match map.get("attempts") {
        Some(Value::Number(n)) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        _ => None,
    }
    .ok_or_else(|| err("attempts", "expected a non-negative integer"))?;
    let at = match map.get("timestamp") {
        None | Some(Value::Null) => now,
        Some(Value::Number(n)) => {
            // Python wrote `time.time()` (seconds), JavaScript `Date.now()`
            // (milliseconds). Any value under 1e11 is seconds: as milliseconds it
            // would be 1973, as seconds 1e11 is the year 5138.
            let ms = n.as_f64().map(|v| if v < 1.0e11 { v * 1000.0 } else { v });
            match ms {
                Some(ms) if ms.is_finite() && (0.0..MAX_MILLIS).contains(&ms) => Timestamp::from_unix_millis(ms as u64),
                _ => return Err(err("timestamp", "expected unix seconds or milliseconds between 1970 and 9999")),
            }
        }
        Some(other) => {
            return Err(err("timestamp", &format!("expected a number, found {}", json_type(other))));
        }
    };
    let task_id = match map.get("task_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => return Err(err("task_id", &format!("expected a string or null, found {}", json_type(other)))),
    };

    // Checked as any new task is; the seeds call the URL `pageurl` or `page_url`, and our task
    // field names are the contract.
    let task =
        Task::from_json_value(serde_json::json!({"type": "recaptcha_v2", "sitekey": sitekey, "page_url": page_url}))
            .map_err(|e| ImportError::new(location, Some(&e.field), e.problem))?;

    let failure = classify_seed_error(&scrub_secrets(error_text));
    let provider_task_id = failure.provider_task_id.or(task_id);

    // Deterministic id: same entry, same id; identical entries get distinct ones.
    let canonical = serde_json::to_string(&map).unwrap_or_default();
    let mut hash = xxhash_rust::xxh3::xxh3_128(canonical.as_bytes());
    let occurrence = seen_hashes.entry(hash).or_insert(0);
    if *occurrence > 0 {
        hash = xxhash_rust::xxh3::xxh3_128(format!("{canonical}#{occurrence}").as_bytes());
    }
    *occurrence += 1;
    let id = ulid::Ulid::from_parts(at.as_unix_millis(), hash).to_string();

    let origin = match seed {
        Seed::Python => "python",
        Seed::JavaScript => "javascript",
    };
    Ok(DeadLetterRecord {
        schema: SCHEMA,
        id,
        task,
        provider: provider_default.to_string(),
        reason: failure.reason,
        description: failure.description,
        class: failure.class,
        attempts,
        replays: 0,
        history: vec![HistoryEntry {
            at,
            phase: failure.phase,
            error: failure.error,
            provider_task_id,
            http_status: None,
            provider: None,
        }],
        first_failed_at: at,
        dead_lettered_at: at,
        labels: BTreeMap::from([(SEED_LABEL.to_string(), origin.to_string())]),
        state: RecordState::Ready,
        deliveries: 0,
        parked_reason: None,
        solution: None,
    })
}

/// A seed's `error` string, read back into our vocabulary.
#[derive(Debug, PartialEq)]
struct SeedFailure {
    reason: String,
    class: ErrorClass,
    description: String,
    phase: Phase,
    error: String,
    provider_task_id: Option<String>,
}

fn classify_seed_error(text: &str) -> SeedFailure {
    let text = text.trim();
    let failure = |reason: &str, class: ErrorClass, description: String, phase: Phase| SeedFailure {
        reason: reason.to_string(),
        class,
        description,
        phase,
        error: text.to_string(),
        provider_task_id: None,
    };
    // `raise TimeoutError(f"Task {task_id} timed out")` / `new Error(`Task ${taskId} timed out`)`
    if let Some(id) = text.strip_prefix("Task ").and_then(|rest| rest.strip_suffix(" timed out")) {
        if !id.is_empty() && !id.contains(char::is_whitespace) {
            return SeedFailure {
                provider_task_id: Some(id.to_string()),
                ..failure(
                    reason::TIMEOUT,
                    ErrorClass::TaskTerminal,
                    format!("no answer within the polling window (provider task {id})"),
                    Phase::Deadline,
                )
            };
        }
    }
    if is_provider_code(text) {
        let (class, _) = class_of(text);
        return failure(text, class, format!("{text} (imported from a seed DLQ file)"), Phase::Import);
    }
    if looks_like_network_error(text) {
        return failure(reason::NETWORK, ErrorClass::Transient, text.to_string(), Phase::Import);
    }
    // `resp.json()` on the HTML of a 502: "Expecting value: line 1 column 1 (char 0)".
    if text.starts_with("Expecting value") || text.contains("Unexpected token") {
        return failure(reason::UNPARSEABLE, ErrorClass::Transient, text.to_string(), Phase::Import);
    }
    let description = if text.is_empty() { "(empty error message)".to_string() } else { text.to_string() };
    failure(APPLICATION_ERROR, ErrorClass::Application, description, Phase::Import)
}

/// `ERROR_CAPTCHA_UNSOLVABLE`, `MAX_USER_TURN`, `IP_BANNED`, `ERROR: 1005`.
fn is_provider_code(s: &str) -> bool {
    if let Some(n) = s.strip_prefix("ERROR: ") {
        return !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    }
    s.len() >= 3
        && s.contains('_')
        && s.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Connection-level failures as Python `requests` and Node `axios` word them.
fn looks_like_network_error(s: &str) -> bool {
    const MARKERS: [&str; 22] = [
        "connection",
        "connect timeout",
        "read timed out",
        "max retries exceeded",
        "name or service not known",
        "name resolution",
        "getaddrinfo",
        "econnrefused",
        "econnreset",
        "econnaborted",
        "etimedout",
        "enotfound",
        "eai_again",
        "ehostunreach",
        "enetunreach",
        "socket hang up",
        "network error",
        "network is unreachable",
        "broken pipe",
        "remote end closed",
        "ssl",
        "timeout of ",
    ];
    let lower = s.to_ascii_lowercase();
    MARKERS.iter().any(|m| lower.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlq::testkit::{at, sample_record};

    #[test]
    fn network_detection_and_codes() {
        assert!(is_provider_code("ERROR_CAPTCHA_UNSOLVABLE"));
        assert!(is_provider_code("MAX_USER_TURN"));
        assert!(is_provider_code("ERROR: 1005"));
        assert!(!is_provider_code("ERROR: "));
        assert!(!is_provider_code("Task 1 timed out"));
        assert!(!is_provider_code("ERROR"));
        assert!(looks_like_network_error("connect ECONNREFUSED 127.0.0.1:443"));
        assert!(looks_like_network_error("socket hang up"));
        assert!(!looks_like_network_error("division by zero"));
    }

    #[test]
    fn export_round_trip_inside_the_crate() {
        let records = vec![sample_record("a", 0)];
        assert_eq!(import(&export_json(&records), "x", at(0)).unwrap(), records);
        assert_eq!(import(&export_jsonl(&records), "x", at(0)).unwrap(), records);
    }
}
