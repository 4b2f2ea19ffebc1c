//! Editing a dead letter before it is replayed (docs/decisions/0053-edit-then-replay.md): an [`Edit`] changes a
//! record's task (a JSON merge patch, RFC 7396, on the task's own JSON object) and its labels
//! (set or remove), and yields the new record with the list of what changed.
//!
//! The new task is read by [`Task::from_json_value`], the reader and validator every new task
//! goes through, so an edit can never produce a task a solve would refuse (changing `type` is
//! allowed when the result is a valid task of the new kind). Accounting stays: attempts,
//! replays, deliveries, state and times are the record's; the edit appends one history entry
//! (phase `edit`) stating the changes. Secrets are shown as `[redacted]` in the changes and in
//! that entry, by the one rule of [`redact`](crate::dlq::redact): a member with a secret's name
//! (a proxy's `login` and `password`, `cookies`, `api_key`…) and credentials inside a text
//! (`login:pass@host`, a URL's user info).
//!
//! An edit that moves a proxy (its host or port, or a raw createTask object's `proxyAddress` or
//! `proxyPort`) must give its credentials again, or `null` to drop them: the merge patch would
//! otherwise keep the old login and password and send them to the new host (issue 44,
//! finding 2). Such an edit is refused, naming the proxy and what to give.
//!
//! Applying an edit to a stored record is the client's `Dlq::edit`, which writes through
//! [`DlqStore::replace_edited`](crate::dlq::DlqStore::replace_edited) so that an edit never
//! races a replayer.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::dlq::record::{DeadLetterRecord, HistoryEntry, Phase};
use crate::dlq::redact::{is_secret_name, redact_value, REDACTED};
use crate::error::InvalidTask;
use crate::support::json_read::{deserialize_from_json, FieldError, Fields, FromJson};
use crate::support::time::Timestamp;
use crate::task::Task;

/// Longest value text an edit's history entry quotes; longer ones are cut with `…`.
const HISTORY_VALUE_CHARS: usize = 60;

/// Changes to a record's task and labels.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Edit {
    /// A JSON merge patch (RFC 7396) on the task's JSON object (snake_case field names, as
    /// records show the task): a field's new value, or `null` to remove it.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub task: Map<String, Value>,
    /// Labels to set (a value) or remove (`None`, `null` in JSON).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, Option<String>>,
}

/// One changed value: a dotted path (`task.sitekey`, `task.proxy.port`, `labels.env`) with
/// its value before and after (`None`: absent).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// A record with an edit applied, and what changed (empty: the edit changes nothing here,
/// and `record` is the record as it was, without a history entry). A store writes it with
/// `DlqStore::replace_edited` only while the stored record is still `before`.
#[derive(Clone, Debug, PartialEq)]
pub struct Edited {
    /// The record as it was read, which the edit was applied to.
    pub before: DeadLetterRecord,
    pub record: DeadLetterRecord,
    pub changes: Vec<Change>,
}

impl Edit {
    /// Whether the edit asks for no change at all (refused by `Dlq::edit`: nothing to do).
    pub fn is_empty(&self) -> bool {
        self.task.is_empty() && self.labels.is_empty()
    }

    /// `record` with this edit applied, at `now`. The error names the field of the new task
    /// that is wrong (`task.sitekey: must not be empty`) or the label.
    pub fn apply(&self, record: &DeadLetterRecord, now: Timestamp) -> Result<Edited, InvalidTask> {
        let before = task_object(&record.task)?;
        let mut after = before.clone();
        let patch = Value::Object(self.task.clone());
        merge_patch(&mut after, &patch);
        check_proxy_moves("task", &before, &after, Some(&patch))?;
        let task = if after == before {
            record.task.clone()
        } else {
            Task::from_json_value(after.clone())
                .map_err(|e| InvalidTask::new(format!("task.{}", e.field), e.problem))?
        };
        // The task as the core wrote it back (defaults dropped, spellings settled) is what changed.
        let after = if after == before { before.clone() } else { task_object(&task)? };
        let mut changes = Vec::new();
        diff_values("task", Some(&before), Some(&after), &mut changes);
        let mut labels = record.labels.clone();
        for (name, value) in &self.labels {
            if name.is_empty() {
                return Err(InvalidTask::new("labels", "a label name must not be empty"));
            }
            let old = match value {
                Some(v) => labels.insert(name.clone(), v.clone()),
                None => labels.remove(name),
            };
            if old.as_ref() != value.as_ref() {
                let path = format!("labels.{name}");
                changes.push(Change::new(path, old.map(Value::String), value.clone().map(Value::String)));
            }
        }
        if changes.is_empty() {
            return Ok(Edited { before: record.clone(), record: record.clone(), changes });
        }
        let mut edited = record.clone();
        edited.task = task;
        edited.labels = labels;
        edited.history.push(HistoryEntry {
            at: now,
            phase: Phase::Edit,
            error: describe(&changes),
            provider_task_id: None,
            http_status: None,
            provider: None,
        });
        Ok(Edited { before: record.clone(), record: edited, changes })
    }
}

impl Change {
    /// A change, its values redacted by the one rule (`crate::dlq::redact`): the whole value
    /// when a part of its path names a secret (`task.proxy.password`, `labels.token`), else the
    /// credentials written inside it (`login:pass@host`).
    fn new(path: String, before: Option<Value>, after: Option<Value>) -> Change {
        let secret = path.split('.').skip(1).any(is_secret_name);
        let hide = |v: Option<Value>| {
            v.map(|mut v| {
                if secret {
                    Value::String(REDACTED.into())
                } else {
                    redact_value(&mut v);
                    v
                }
            })
        };
        Change { before: hide(before), after: hide(after), path }
    }
}

/// The address and credential members of a proxy, as the typed tasks spell them and as a raw
/// createTask object does (camelCase and snake_case).
const PROXY_SHAPES: [([&str; 2], [&str; 2]); 3] = [
    (["host", "port"], ["login", "password"]),
    (["proxyAddress", "proxyPort"], ["proxyLogin", "proxyPassword"]),
    (["proxy_address", "proxy_port"], ["proxy_login", "proxy_password"]),
];

/// Refuses an edit that moves a proxy somewhere else while keeping its old credentials (see the
/// module documentation): walks the objects of `before` and `after` together, with the part of
/// the patch that applies there.
fn check_proxy_moves(path: &str, before: &Value, after: &Value, patch: Option<&Value>) -> Result<(), InvalidTask> {
    let (Value::Object(b), Value::Object(a)) = (before, after) else { return Ok(()) };
    let patch = patch.and_then(Value::as_object);
    for (address, credentials) in PROXY_SHAPES {
        let moved: Vec<&str> =
            address.iter().copied().filter(|k| a.contains_key(*k) && a.get(*k) != b.get(*k)).collect();
        if moved.is_empty() {
            continue;
        }
        // Credentials the edit leaves as they were: present after, and not named by the patch.
        let kept: Vec<&str> = credentials
            .iter()
            .copied()
            .filter(|k| a.get(*k).is_some_and(|v| !v.is_null()) && b.get(*k) == a.get(*k))
            .filter(|k| !patch.is_some_and(|p| p.contains_key(*k)))
            .collect();
        if !kept.is_empty() {
            return Err(InvalidTask::new(
                path.to_string(),
                format!(
                    "the edit changes the proxy's {} but keeps its {}: give {} again for the new address, or null \
                     to drop {} (the old credentials are never sent to another proxy)",
                    moved.join(" and "),
                    kept.join(" and "),
                    kept.join(" and "),
                    if kept.len() == 1 { "it" } else { "them" },
                ),
            ));
        }
    }
    for (name, member) in a {
        if let Some(old) = b.get(name) {
            let sub = patch.and_then(|p| p.get(name));
            check_proxy_moves(&format!("{path}.{name}"), old, member, sub)?;
        }
    }
    Ok(())
}

/// The task as a JSON object (its serde form, the shape records store).
fn task_object(task: &Task) -> Result<Value, InvalidTask> {
    serde_json::to_value(task).map_err(|e| InvalidTask::new("task", format!("cannot be written as JSON: {e}")))
}

/// RFC 7396 section 2, as written there: objects merge member by member, `null` removes a
/// member, anything else replaces the target.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(members) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(target) = target {
        for (name, value) in members {
            if value.is_null() {
                target.remove(name);
            } else {
                merge_patch(target.entry(name.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// The leaves that differ between `before` and `after` under `path` (objects are walked, an
/// absent one as empty, so an added proxy shows as its fields and its password stays redacted;
/// arrays and scalars are compared whole).
fn diff_values(path: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<Change>) {
    let empty = Map::new();
    match (object_or_empty(before, &empty), object_or_empty(after, &empty)) {
        (Some(b), Some(a)) if before.is_some() || after.is_some() => {
            let mut names: Vec<&String> = b.keys().chain(a.keys()).collect();
            names.sort_unstable();
            names.dedup();
            for name in names {
                diff_values(&format!("{path}.{name}"), b.get(name), a.get(name), out);
            }
        }
        _ if before != after => out.push(Change::new(path.to_string(), before.cloned(), after.cloned())),
        _ => {}
    }
}

/// The members of an object value, or of `empty` for an absent one; `None` for other values.
fn object_or_empty<'a>(value: Option<&'a Value>, empty: &'a Map<String, Value>) -> Option<&'a Map<String, Value>> {
    match value {
        Some(Value::Object(m)) => Some(m),
        None => Some(empty),
        Some(_) => None,
    }
}

/// The changes in brief, for the record's history: `edited task.sitekey "a" → "b"; labels.env (none) → "x"`.
pub fn describe(changes: &[Change]) -> String {
    let shown = |v: &Option<Value>| match v {
        None => "(none)".to_string(),
        Some(v) => {
            let text = v.to_string();
            match text.char_indices().nth(HISTORY_VALUE_CHARS) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text,
            }
        }
    };
    let parts: Vec<String> =
        changes.iter().map(|c| format!("{} {} → {}", c.path, shown(&c.before), shown(&c.after))).collect();
    format!("edited {}", parts.join("; "))
}

/// `{"task": {...}, "labels": {...}}`; unknown fields are refused, and so is an edit that
/// changes nothing.
impl FromJson for Edit {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let edit = Edit { task: f.or_default("task")?, labels: f.or_default("labels")? };
        f.finish()?;
        if edit.is_empty() {
            return Err(FieldError::whole("the edit changes nothing: give task fields and/or labels"));
        }
        Ok(edit)
    }
}

deserialize_from_json!(Edit);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dlq::testkit::{at, sample_record};

    fn edit(value: Value) -> Edit {
        Edit::from_json(value).expect("a valid edit")
    }

    #[test]
    fn a_merge_patch_changes_the_named_fields_and_keeps_accounting() {
        let record = sample_record("a", 1);
        let e = edit(json!({"task": {"sitekey": "6Le-RIGHT", "invisible": true}, "labels": {"fix": "1", "job": null}}));
        let out = e.apply(&record, at(900)).expect("applies");
        assert_eq!(out.record.task.sitekey(), Some("6Le-RIGHT"));
        assert_eq!(out.record.labels.get("fix").map(String::as_str), Some("1"));
        assert!(!out.record.labels.contains_key("job"));
        let paths: Vec<&str> = out.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["task.invisible", "task.sitekey", "labels.fix", "labels.job"]);
        assert_eq!(out.changes[1].before, Some(json!("6Le-SITEKEY")));
        assert_eq!(out.changes[0].before, None, "a field added by the patch was absent before");
        assert_eq!((out.record.attempts, out.record.replays), (record.attempts, record.replays));
        assert_eq!(out.record.history.len(), record.history.len() + 1);
        let entry = out.record.history.last().expect("an edit entry");
        assert_eq!((entry.phase, entry.at), (Phase::Edit, at(900)));
        assert!(entry.error.contains(r#"task.sitekey "6Le-SITEKEY" → "6Le-RIGHT""#), "{}", entry.error);
        assert!(entry.error.contains(r#"labels.job "scrape-42" → (none)"#), "{}", entry.error);
    }

    #[test]
    fn the_new_task_is_validated_as_a_new_task_naming_the_field() {
        let record = sample_record("a", 1);
        let err = edit(json!({"task": {"sitekey": ""}})).apply(&record, at(900)).expect_err("empty sitekey");
        assert_eq!(err.field, "task.sitekey");
        let err = edit(json!({"task": {"page_url": null}})).apply(&record, at(900)).expect_err("removed url");
        assert_eq!(err.field, "task.page_url");
        let err = edit(json!({"task": {"sitekeyy": "x"}})).apply(&record, at(900)).expect_err("unknown field");
        assert!(err.field.starts_with("task"), "{err}");
        assert!(err.to_string().contains("sitekeyy"), "{err}");
        // A change of kind is allowed when the result is a valid task of that kind.
        let err = edit(json!({"task": {"type": "image"}})).apply(&record, at(900)).expect_err("not an image");
        assert!(err.field.starts_with("task"), "{err}");
        let ok = edit(json!({"task": {"type": "hcaptcha"}})).apply(&record, at(900)).expect("valid hcaptcha");
        assert_eq!(ok.record.task.kind().as_str(), "hcaptcha");
    }

    #[test]
    fn an_edit_that_changes_nothing_leaves_the_record_as_it_was() {
        let record = sample_record("a", 1);
        let out = edit(json!({"task": {"sitekey": "6Le-SITEKEY"}, "labels": {"job": "scrape-42", "gone": null}}))
            .apply(&record, at(900))
            .expect("applies");
        assert!(out.changes.is_empty());
        assert_eq!(out.record, record);
    }

    #[test]
    fn passwords_never_show_in_changes_or_history() {
        let record = sample_record("a", 1);
        let proxy = json!({"type": "http", "host": "10.0.0.1", "port": 3128, "login": "u", "password": "hunter2"});
        let out = edit(json!({"task": {"proxy": proxy}})).apply(&record, at(900)).expect("applies");
        let entry = &out.record.history.last().expect("entry").error;
        assert!(!entry.contains("hunter2"), "{entry}");
        assert!(!serde_json::to_string(&out.changes).expect("json").contains("hunter2"));
        let password = out.changes.iter().find(|c| c.path == "task.proxy.password").expect("a password change");
        assert_eq!(password.after, Some(json!(REDACTED)));
    }

    /// Issue 44, finding 2: an edit of `proxy.host` kept the login and password, and "Apply
    /// and replay" sent them to the new host; only paths ending in `password` were redacted.
    #[test]
    fn finding_2_an_edit_moving_a_proxy_must_give_its_credentials_again() {
        let mut record = sample_record("a", 1);
        let proxy = json!({"type": "http", "host": "10.0.0.1", "port": 3128, "login": "alice", "password": "hunter2"});
        record = edit(json!({"task": {"proxy": proxy}})).apply(&record, at(800)).expect("a proxy").record;
        for moved in [json!({"host": "evil.test"}), json!({"port": 8080}), json!({"host": "evil.test", "login": "bob"})]
        {
            let err = edit(json!({"task": {"proxy": moved}})).apply(&record, at(900)).expect_err("credentials kept");
            assert_eq!(err.field, "task.proxy", "{err}");
            assert!(err.problem.contains("give") && err.problem.contains("password"), "{err}");
            assert!(!err.to_string().contains("hunter2"), "{err}");
        }
        // Given again, or dropped with null: applied, and no secret shows in the changes.
        let fresh = edit(json!({"task": {"proxy": {"host": "p2.test", "login": "bob", "password": "s3cret-2"}}}))
            .apply(&record, at(900))
            .expect("new credentials");
        let shown = serde_json::to_string(&fresh.changes).expect("json") + &fresh.record.history.last().unwrap().error;
        for secret in ["hunter2", "s3cret-2", "alice", "bob"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        let dropped = edit(json!({"task": {"proxy": {"host": "p2.test", "login": null, "password": null}}}))
            .apply(&record, at(900))
            .expect("credentials dropped");
        let proxy = &serde_json::to_value(&dropped.record.task).expect("json")["proxy"];
        assert_eq!((proxy["host"].as_str(), proxy.get("login"), proxy.get("password")), (Some("p2.test"), None, None));
        // Credentials changed at the same address need nothing more.
        edit(json!({"task": {"proxy": {"password": "rotated"}}})).apply(&record, at(900)).expect("same host");
        // A raw createTask object is held to the same rule.
        let raw = json!({"type": "raw", "sitekey": null, "page_url": null, "task": {"type": "RecaptchaV2Task", "proxyAddress": "1.2.3.4", "proxyPort": 80,
                          "proxyLogin": "alice", "proxyPassword": "hunter2"}});
        let raw_record = edit(json!({"task": raw})).apply(&sample_record("b", 1), at(800)).expect("raw").record;
        let err = edit(json!({"task": {"task": {"proxyAddress": "evil.test"}}}))
            .apply(&raw_record, at(900))
            .expect_err("raw credentials kept");
        assert_eq!(err.field, "task.task", "{err}");
        // A raw `login:pass@host` string is redacted in the changes too.
        let params = edit(json!({"task": {"type": "raw", "sitekey": null, "page_url": null, "method": "userrecaptcha",
                                             "params": {"proxy": "alice:hunter2@1.2.3.4:80"}}}))
        .apply(&sample_record("c", 1), at(900))
        .expect("raw params");
        let shown = serde_json::to_string(&params.changes).expect("json");
        assert!(!shown.contains("hunter2") && shown.contains("[redacted]@1.2.3.4:80"), "{shown}");
    }

    #[test]
    fn edits_are_read_strictly() {
        assert!(Edit::from_json(json!({})).is_err(), "an empty edit");
        let err = Edit::from_json(json!({"task": {"sitekey": "x"}, "label": {}})).expect_err("unknown field");
        assert!(err.to_string().contains("label"), "{err}");
        let err = Edit::from_json(json!({"task": "x"})).expect_err("a task patch is an object");
        assert_eq!(err.field, "task");
        let err = Edit::from_json(json!({"labels": {"a": 1}})).expect_err("label values are strings");
        assert_eq!(err.field, "labels.a");
    }

    #[test]
    fn merge_patch_follows_rfc_7396_appendix_a() {
        // A selection of the RFC's own examples.
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (json!({"a": "b"}), json!({"b": "c"}), json!({"a": "b", "b": "c"})),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (json!({"a": [{"b": "c"}]}), json!({"a": [1]}), json!({"a": [1]})),
            (json!({"e": null}), json!({"a": 1}), json!({"e": null, "a": 1})),
            (json!([1, 2]), json!({"a": "b", "c": null}), json!({"a": "b"})),
            (json!({}), json!({"a": {"bb": {"ccc": null}}}), json!({"a": {"bb": {}}})),
        ];
        for (target, patch, want) in cases {
            let mut got = target.clone();
            merge_patch(&mut got, &patch);
            assert_eq!(got, want, "{target} patched with {patch}");
        }
    }
}
