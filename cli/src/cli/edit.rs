//! `captcha-dlq dlq edit`: change the task fields or labels of the records a filter
//! selects, then (`--replay`) replay exactly those. Without `--yes` it only prints what
//! would change. The edit itself is the client's `Dlq::edit`, as in the dashboard and the
//! bindings; this module only reads the flags and prints the report.

use std::collections::BTreeMap;

use captcha_dlq::core::dlq::Edit;
use captcha_dlq::core::ConfigError;
use captcha_dlq::{EditReport, Error, ReplayOptions};
use clap::Args as ClapArgs;
use serde_json::{json, Map, Value};

use super::selection::{now, FilterArgs};
use super::{exit, Global};

/// Stands in for the key of a client that only edits: an edit never sends a task.
const NO_KEY: &str = "no-api-key-given";

#[derive(Debug, ClapArgs)]
pub struct EditArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Edit every record (instead of a filter).
    #[arg(long)]
    pub all: bool,
    /// Set a task field: PATH=VALUE, the path dotted (`sitekey`, `proxy.port`), the value JSON
    /// or else taken as a string (`--set sitekey=6Le…`; quote a number meant as text: `'"123"'`).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Remove a task field (dotted path).
    #[arg(long = "unset", value_name = "PATH")]
    pub unset: Vec<String>,
    /// Set a label: NAME=VALUE.
    #[arg(long = "label", value_name = "NAME=VALUE")]
    pub label: Vec<String>,
    /// Remove a label.
    #[arg(long = "unlabel", value_name = "NAME")]
    pub unlabel: Vec<String>,
    /// Apply the edit (without it, only the changes are printed).
    #[arg(long)]
    pub yes: bool,
    /// After applying, replay exactly the edited records (needs --yes and an API key).
    #[arg(long)]
    pub replay: bool,
}

impl EditArgs {
    /// The edit the flags describe; a path given twice, or set and removed, is an error.
    fn edit(&self) -> Result<Edit, Error> {
        let mut task = Map::new();
        let mut seen = Vec::new();
        for given in &self.set {
            let (path, text) =
                given.split_once('=').ok_or_else(|| usage("--set", format!("{given:?} is not PATH=VALUE")))?;
            let value = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()));
            put(&mut task, "--set", path, value, &mut seen)?;
        }
        for path in &self.unset {
            put(&mut task, "--unset", path, Value::Null, &mut seen)?;
        }
        let mut labels = BTreeMap::new();
        for given in &self.label {
            let (name, value) =
                given.split_once('=').ok_or_else(|| usage("--label", format!("{given:?} is not NAME=VALUE")))?;
            if labels.insert(name.to_string(), Some(value.to_string())).is_some() {
                return Err(usage("--label", format!("label {name:?} is given twice")));
            }
        }
        for name in &self.unlabel {
            if labels.insert(name.clone(), None).is_some() {
                return Err(usage("--unlabel", format!("label {name:?} is also set or removed elsewhere")));
            }
        }
        let edit = Edit { task, labels };
        if edit.is_empty() {
            return Err(usage("edit", "nothing to change: give --set, --unset, --label or --unlabel".to_string()));
        }
        Ok(edit)
    }
}

fn usage(flag: &str, problem: String) -> Error {
    Error::Config(ConfigError::new(flag, problem))
}

/// Puts `value` at the dotted `path` of the patch `task`.
fn put(
    task: &mut Map<String, Value>,
    flag: &str,
    path: &str,
    value: Value,
    seen: &mut Vec<String>,
) -> Result<(), Error> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(usage(flag, format!("{path:?} is not a field path (names joined by dots)")));
    }
    if seen.iter().any(|s| s == path || s.starts_with(&format!("{path}.")) || path.starts_with(&format!("{s}."))) {
        return Err(usage(flag, format!("{path:?} overlaps another --set or --unset")));
    }
    seen.push(path.to_string());
    let (last, parents) = parts.split_last().unwrap_or((&"", &[]));
    let mut at = task;
    for part in parents {
        let next = at.entry(part.to_string()).or_insert_with(|| Value::Object(Map::new()));
        at = match next {
            Value::Object(m) => m,
            _ => return Err(usage(flag, format!("{path:?} overlaps another --set or --unset"))),
        };
    }
    at.insert(last.to_string(), value);
    Ok(())
}

pub async fn run(global: &Global, args: EditArgs) -> Result<u8, Error> {
    if args.filter.is_empty() && !args.all {
        return Err(Error::Io("edit needs a filter (--reason, --id, --sitekey…) or --all".into()));
    }
    if args.replay && !args.yes {
        return Err(usage("--replay", "replays the edited records, so it needs --yes".into()));
    }
    let edit = args.edit()?;
    let client = match (&global.api_key, args.replay) {
        (Some(_), _) => super::client(global).await?,
        (None, true) => return Err(usage("--replay", "needs an API key (--api-key or CAPTCHA_DLQ_API_KEY)".into())),
        (None, false) => super::client(&Global { api_key: Some(NO_KEY.to_string()), ..global.clone() }).await?,
    };
    let filter = args.filter.to_filter(now());
    let result = client.dlq().edit(&filter, &edit, !args.yes).await;
    let report = match result {
        Ok(report) => report,
        Err(e) => {
            client.close().await;
            return Err(e);
        }
    };
    print_report(global, &report);
    let code = if report.refused.is_empty() { exit::OK } else { exit::USAGE };
    if args.replay {
        if let Some(edited) = report.edited_filter() {
            let options = ReplayOptions {
                limit: Some(edited.ids.len()),
                filter: Some(edited),
                explicit: true,
                ..ReplayOptions::default()
            };
            let replayed = super::replay_print::replay_and_print(global, &client, options).await;
            client.close().await;
            return replayed.map(|c| c.max(code));
        }
        if !global.json {
            println!("nothing was edited, so nothing is replayed");
        }
    }
    client.close().await;
    Ok(code)
}

fn print_report(global: &Global, report: &EditReport) {
    if global.json {
        println!("{}", json!({ "edit": report }));
        return;
    }
    let shown = |v: &Option<Value>| v.as_ref().map_or_else(|| "(none)".to_string(), Value::to_string);
    for diff in &report.diffs {
        println!("{}", diff.id);
        for c in &diff.changes {
            println!("  {}: {} → {}", c.path, shown(&c.before), shown(&c.after));
        }
    }
    for refused in &report.refused {
        println!("{}: not edited: {}", refused.id, refused.error);
    }
    let verb = if report.preview { "would change" } else { "changed" };
    println!(
        "matched {} · {verb} {} · unchanged {} · refused {}",
        report.matched,
        report.changed,
        report.unchanged,
        report.refused.len()
    );
    if report.preview && report.changed > 0 {
        println!("nothing was written: run the same command with --yes to apply (and --replay to replay them)");
    }
}
