//! `captcha-dlq spend FILE…`: what was spent, by provider, task kind and label, summed from
//! saved `batch` results (each solved line names its provider, its kind and its cost;
//! each dead-lettered line its provider and kind). `--with-dlq` adds the DLQ's records the
//! files do not hold, as dead-lettered tasks. A task found twice (a line printed again by a
//! resumed run) counts once, by its record id.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use captcha_dlq::core::dlq::Filter;
use captcha_dlq::core::spend::{render_table, Outcome, SpendEntry, SpendReport};
use captcha_dlq::core::{ConfigError, TaskKind};
use captcha_dlq::Error;
use clap::Args as ClapArgs;
use serde_json::{json, Value};

use super::{exit, Global};

#[derive(Debug, ClapArgs)]
pub struct SpendArgs {
    /// Result files written by `batch` (`-` reads stdin).
    pub files: Vec<PathBuf>,
    /// Also count the DLQ's records (as dead-lettered tasks) that the files do not hold.
    #[arg(long)]
    pub with_dlq: bool,
}

pub async fn run(global: &Global, args: SpendArgs) -> Result<u8, Error> {
    if args.files.is_empty() && !args.with_dlq {
        return Err(Error::Config(ConfigError::new("FILE", "give the result files of `batch` (or --with-dlq)")));
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut entries = Vec::new();
    for file in &args.files {
        let text = if file.as_os_str() == "-" {
            std::io::read_to_string(std::io::stdin()).map_err(|e| Error::Io(format!("cannot read stdin: {e}")))?
        } else {
            std::fs::read_to_string(file).map_err(|e| Error::Io(format!("cannot read {}: {e}", file.display())))?
        };
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let value: Value = serde_json::from_str(line)
                .map_err(|e| Error::Io(format!("{}:{}: not a JSON line: {e}", file.display(), n + 1)))?;
            let entry =
                entry_of(&value).map_err(|problem| Error::Io(format!("{}:{}: {problem}", file.display(), n + 1)))?;
            if let Some((id, entry)) = entry {
                if seen.insert(id) {
                    entries.push(entry);
                }
            }
        }
    }
    if args.with_dlq {
        let store = super::store(global).await?;
        let now = captcha_dlq::runtime::now();
        let mut offset = 0;
        loop {
            let page = captcha_dlq::core::dlq::Page { offset, limit: 1000 };
            let records = store.peek(&Filter::all(), page, now).await?;
            if records.is_empty() {
                break;
            }
            offset += records.len();
            for r in records {
                if !seen.insert(r.id.clone()) {
                    continue;
                }
                entries.push(SpendEntry {
                    provider: Some(r.provider),
                    kind: Some(r.task.kind()),
                    labels: r.labels,
                    outcome: Outcome::DeadLettered,
                });
            }
        }
    }
    let report = SpendReport::from_entries(&entries);
    if global.json {
        println!("{}", json!({ "ok": true, "spend": report }));
    } else {
        print!("{}", render_table(&report));
    }
    Ok(exit::OK)
}

/// The task a result line is about, with its id; `None` for lines that are not a task's end
/// (a line refused as invalid, an error that is not a dead letter).
fn entry_of(line: &Value) -> Result<Option<(String, SpendEntry)>, String> {
    let Some(obj) = line.as_object() else { return Err("expected a JSON object".into()) };
    let Some(id) = obj.get("id").and_then(Value::as_str) else { return Ok(None) };
    let kind = match obj.get("kind") {
        None | Some(Value::Null) => None,
        Some(k) => Some(k.as_str().and_then(TaskKind::parse).ok_or_else(|| format!("kind: unknown task kind {k}"))?),
    };
    let labels: BTreeMap<String, String> = match obj.get("labels") {
        Some(Value::Object(m)) => m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect(),
        _ => BTreeMap::new(),
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let entry = match obj.get("ok").and_then(Value::as_bool) {
        Some(true) => {
            let solution = obj.get("solution").ok_or("a solved line without its solution")?;
            let cost = match solution.get("cost") {
                None | Some(Value::Null) => None,
                Some(c) => Some(c.as_f64().filter(|c| c.is_finite() && *c >= 0.0).ok_or("solution.cost: not a cost")?),
            };
            SpendEntry { provider: text(solution.get("provider")), kind, labels, outcome: Outcome::Solved(cost) }
        }
        Some(false) if obj.contains_key("reason") => {
            SpendEntry { provider: text(obj.get("provider")), kind, labels, outcome: Outcome::DeadLettered }
        }
        _ => return Ok(None),
    };
    Ok(Some((id.to_string(), entry)))
}
