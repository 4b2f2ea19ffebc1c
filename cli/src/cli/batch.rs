//! `captcha-dlq batch FILE.jsonl`: one task per line in, one JSON line out per
//! task as soon as it ends (each names its input `line`, its `id` and labels),
//! with a progress bar on stderr. Streaming means a killed run has already
//! printed every answer it got; the rest are in the journal or the DLQ. A bad
//! line becomes an error line naming the line and the field, never a silent skip.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use captcha_dlq::core::Task;
use captcha_dlq::{Error, JobOutcome};
use clap::Args as ClapArgs;
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};

use super::{client, exit, Global};

#[derive(Debug, ClapArgs)]
pub struct BatchArgs {
    /// JSON lines: a task object per line (`{"type":…}`), or `{"task":{…},"labels":{…}}`. `-` reads stdin.
    pub file: PathBuf,
    /// Tasks in flight at once.
    #[arg(long, default_value_t = 50)]
    pub concurrency: usize,
    /// Write results here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Parses one line into a task and its labels, naming what is wrong.
fn parse_line(line: &str) -> Result<(Task, BTreeMap<String, String>), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let (task_value, labels_value) = match value {
        Value::Object(mut obj) if obj.contains_key("task") => {
            (obj.remove("task").unwrap_or(Value::Null), obj.remove("labels"))
        }
        other => (other, None),
    };
    let task = Task::from_json_value(task_value).map_err(|e| e.to_string())?;
    let labels = match labels_value {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                other => Err(format!("labels.{k}: expected a string, got {other}")),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("labels: expected an object of strings, got {other}")),
    };
    Ok((task, labels))
}

pub async fn run(global: &Global, args: BatchArgs) -> Result<u8, Error> {
    let text = if args.file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| Error::Io(format!("cannot read stdin: {e}")))?
    } else {
        std::fs::read_to_string(&args.file)
            .map_err(|e| Error::Io(format!("cannot read {}: {e}", args.file.display())))?
    };
    let mut sink: Box<dyn Write + Send> = match &args.out {
        Some(path) => Box::new(
            std::fs::File::create(path).map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))?,
        ),
        None => Box::new(std::io::stdout()),
    };
    let mut emit = |value: Value| -> Result<(), Error> {
        writeln!(sink, "{value}")
            .and_then(|()| sink.flush())
            .map_err(|e| Error::Io(format!("cannot write results: {e}")))
    };

    let mut tasks = Vec::new();
    let mut invalid = 0usize;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line) {
            Ok((task, mut labels)) => {
                labels.entry("line".to_string()).or_insert_with(|| (n + 1).to_string());
                tasks.push((n + 1, task, labels));
            }
            Err(problem) => {
                invalid += 1;
                emit(
                    json!({ "line": n + 1, "ok": false, "code": "INVALID_TASK", "error": format!("line {}: {problem}", n + 1) }),
                )?;
            }
        }
    }

    let client = client(global).await?;
    let bar = ProgressBar::with_draw_target(Some(tasks.len() as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} tasks  {elapsed_precise}  eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut running = futures::stream::iter(tasks.into_iter().map(|(line, task, labels)| {
        let client = client.clone();
        async move {
            let outcome = match client.submit(task, labels).await {
                Ok(handle) => handle.wait_outcome().await,
                Err(e) => Err(e),
            };
            (line, outcome)
        }
    }))
    .buffer_unordered(args.concurrency.max(1));

    let (mut failed, mut account) = (0usize, false);
    while let Some((line, outcome)) = running.next().await {
        bar.inc(1);
        let value = match outcome {
            Ok(JobOutcome::Solved { id, labels, solution }) => {
                json!({ "line": line, "ok": true, "id": id, "labels": labels, "solution": solution })
            }
            Ok(JobOutcome::DeadLettered { record, stored }) => {
                failed += 1;
                account |= record.class == captcha_dlq::core::ErrorClass::AccountTerminal;
                json!({ "line": line, "ok": false, "code": "SOLVE_FAILED", "id": record.id, "labels": record.labels,
                        "reason": record.reason, "class": record.class, "attempts": record.attempts,
                        "description": record.description, "stored": stored })
            }
            Err(e) => {
                failed += 1;
                json!({ "line": line, "ok": false, "code": e.code(), "error": e.to_string() })
            }
        };
        emit(value)?;
    }
    bar.finish_and_clear();
    drop(running);
    client.close().await;
    Ok(if account {
        exit::ACCOUNT
    } else if failed > 0 {
        exit::TASKS_FAILED
    } else if invalid > 0 {
        exit::USAGE
    } else {
        exit::OK
    })
}
