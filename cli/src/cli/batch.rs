//! `captcha-dlq batch FILE.jsonl`: one task per line in, one JSON line out per task as
//! soon as it ends (completion order; each names its input `line`, `key`, record `id` and
//! labels). A bad line becomes an error line naming the line and the field.
//!
//! Resumable: every line has a key, `batch:<batch id>/<line id>` — the line's `id` field
//! if it has one, else a hash of the line's text (with its occurrence number when the
//! same text repeats). The key travels with the task; when the task ends the store
//! remembers it as settled in the same transaction. Running the same command again skips
//! settled lines, finishes the lines a killed run left in the journal (printing their
//! answers), and submits only the rest: each line is submitted at most once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use captcha_dlq::core::{Task, TaskKind, ValidTask};
use captcha_dlq::{Client, Delivery, Error, Outcome, RecoverOptions};
use clap::Args as ClapArgs;
use futures::stream::FuturesUnordered;
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};

use super::{client, Global, RunVerdict};

#[derive(Debug, ClapArgs)]
pub struct BatchArgs {
    /// JSON lines: a task object per line (`{"type":…}`), or `{"task":{…},"labels":{…}}`;
    /// either may carry an `"id"` naming the line for resuming. `-` reads stdin.
    pub file: PathBuf,
    /// Tasks in flight at once (default: the client's, 100).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Append results to this file instead of writing them to stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Name of this batch for resuming (default: the file's absolute path; a batch read
    /// from stdin is resumable only with a name). A line is known by its `id` field if it
    /// has one, else by a hash of its text.
    #[arg(long)]
    pub batch_id: Option<String>,
    /// Run every line again, forgetting which lines earlier runs finished (tasks a killed
    /// run left in flight stay in the journal for `captcha-dlq recover`).
    #[arg(long)]
    pub restart: bool,
}

/// One line of the input, ready to submit.
struct Line {
    number: usize,
    key: String,
    task: ValidTask,
    labels: BTreeMap<String, String>,
    /// How long the caller still wants it (`ttl_ms`): past it, a dead letter `TTLExpired`.
    ttl_ms: Option<u64>,
}

/// A line as written: its explicit id (if any), task, labels and `ttl_ms`.
type Parsed = (Option<String>, ValidTask, BTreeMap<String, String>, Option<u64>);

/// Parses one line, naming what is wrong.
fn parse_line(line: &str) -> Result<Parsed, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(mut obj) = value else { return Err("expected a JSON object".into()) };
    let id = match obj.remove("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => return Err(format!("id: expected a non-empty string or a number, got {other}")),
    };
    let (task_value, labels_value, ttl) = if obj.contains_key("task") {
        let task = obj.remove("task").unwrap_or(Value::Null);
        let labels = obj.remove("labels");
        let ttl = obj.remove("ttl_ms");
        if let Some(extra) = obj.keys().next() {
            return Err(format!(
                "unknown field `{extra}` (a line is a task, or {{\"task\", \"labels\", \"id\", \"ttl_ms\"}})"
            ));
        }
        (task, labels, ttl)
    } else {
        (Value::Object(obj), None, None)
    };
    let ttl_ms = match ttl {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some_and(|ms| ms >= 1) => n.as_u64(),
        Some(other) => return Err(format!("ttl_ms: expected a whole number of milliseconds, at least 1, got {other}")),
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
    Ok((id, task, labels, ttl_ms))
}

fn hash(text: &str) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}

/// The batch's name: `--batch-id`, else the file's absolute path (hashed: keys stay short).
fn batch_id(args: &BatchArgs) -> Option<String> {
    if let Some(id) = &args.batch_id {
        return Some(id.clone());
    }
    if args.file.as_os_str() == "-" {
        return None;
    }
    let path = std::fs::canonicalize(&args.file).unwrap_or_else(|_| args.file.clone());
    Some(hash(&path.to_string_lossy()))
}

struct Output {
    sink: Box<dyn Write + Send>,
}

impl Output {
    fn open(path: Option<&Path>) -> Result<Output, Error> {
        let sink: Box<dyn Write + Send> = match path {
            // Results hold answers and labels: owner-only, like the DLQ and its exports.
            Some(path) => Box::new(
                captcha_dlq::files::open_private(path, captcha_dlq::files::Private::Append)
                    .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))?,
            ),
            None => Box::new(std::io::stdout()),
        };
        Ok(Output { sink })
    }

    /// Writes and flushes one line: once this returns, the line is out of the process.
    fn emit(&mut self, value: &Value) -> Result<(), Error> {
        writeln!(self.sink, "{value}")
            .and_then(|()| self.sink.flush())
            .map_err(|e| Error::Io(format!("cannot write results: {e}")))
    }
}

/// A solved line: its solution names the provider that solved it and its cost, and `kind`
/// is the task's, so that `captcha-dlq spend` can sum the results.
fn solved_line(line: Option<usize>, key: Option<&str>, kind: Option<TaskKind>, delivery: &Delivery) -> Value {
    json!({ "line": line, "key": key, "ok": true, "id": delivery.id, "kind": kind, "labels": delivery.labels,
            "solution": delivery.solution })
}

fn failed_line(line: Option<usize>, key: Option<&str>, id: Option<&str>, e: &Error) -> Value {
    match e {
        Error::SolveFailed { record, stored } => json!({ "line": line, "key": key, "ok": false, "code": e.code(),
            "id": record.id, "kind": record.task.kind(), "provider": record.provider, "labels": record.labels,
            "reason": record.reason, "class": record.class, "attempts": record.attempts,
            "description": record.description, "stored": stored }),
        other => {
            json!({ "line": line, "key": key, "ok": false, "id": id, "code": other.code(), "error": other.to_string() })
        }
    }
}

pub async fn run(global: &Global, args: BatchArgs) -> Result<u8, Error> {
    let text = if args.file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| Error::Io(format!("cannot read stdin: {e}")))?
    } else {
        std::fs::read_to_string(&args.file)
            .map_err(|e| Error::Io(format!("cannot read {}: {e}", args.file.display())))?
    };
    let mut out = Output::open(args.out.as_deref())?;
    let batch = batch_id(&args);
    let prefix = format!("batch:{}/", batch.clone().unwrap_or_else(|| format!("stdin-{}", fastrand_id())));

    let mut verdict = RunVerdict::default();
    let mut lines = Vec::new();
    let mut seen_ids: HashMap<String, usize> = HashMap::new();
    let mut occurrences: HashMap<String, usize> = HashMap::new();
    for (n, text) in text.lines().enumerate() {
        let number = n + 1;
        if text.trim().is_empty() {
            continue;
        }
        match parse_line(text) {
            Ok((id, task, mut labels, ttl_ms)) => {
                let line_id = match id {
                    Some(id) => {
                        if let Some(first) = seen_ids.insert(id.clone(), number) {
                            verdict.invalid += 1;
                            let problem = format!("line {number}: id {id:?} is already the id of line {first}");
                            out.emit(
                                &json!({ "line": number, "ok": false, "code": "INVALID_TASK", "error": problem }),
                            )?;
                            continue;
                        }
                        format!("id:{id}")
                    }
                    None => {
                        let h = hash(text.trim());
                        let seen = occurrences.entry(h.clone()).or_insert(0);
                        *seen += 1;
                        if *seen == 1 {
                            format!("h:{h}")
                        } else {
                            format!("h:{h}#{seen}")
                        }
                    }
                };
                labels.entry("line".to_string()).or_insert_with(|| number.to_string());
                lines.push(Line { number, key: format!("{prefix}{line_id}"), task, labels, ttl_ms });
            }
            Err(problem) => {
                verdict.invalid += 1;
                let error = format!("line {number}: {problem}");
                out.emit(&json!({ "line": number, "ok": false, "code": "INVALID_TASK", "error": error }))?;
            }
        }
    }

    let client = client(global).await?;
    let result = solve_lines(&client, &args, batch.is_some(), &prefix, lines, &mut out, &mut verdict).await;
    let code = verdict.exit_code(&client).await;
    client.close().await;
    result.map(|()| code)
}

/// A short random id for a batch that cannot be resumed (stdin without `--batch-id`).
fn fastrand_id() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos:x}", std::process::id())
}

async fn solve_lines(
    client: &Client,
    args: &BatchArgs,
    resumable: bool,
    prefix: &str,
    lines: Vec<Line>,
    out: &mut Output,
    verdict: &mut RunVerdict,
) -> Result<(), Error> {
    let number_of: HashMap<String, usize> = lines.iter().map(|l| (l.key.clone(), l.number)).collect();
    let kind_of: HashMap<usize, TaskKind> = lines.iter().map(|l| (l.number, l.task.kind())).collect();
    let mut skip: BTreeSet<String> = BTreeSet::new();
    if resumable && args.restart {
        let cleared = client.dlq().clear_settled(prefix).await?;
        if cleared > 0 {
            eprintln!("--restart: forgot {cleared} finished line(s) of this batch; running every line again");
        }
    } else if resumable {
        let settled = client.dlq().settled(prefix).await?;
        let done = settled.iter().filter(|s| number_of.contains_key(&s.key)).count();
        if done > 0 {
            eprintln!("{done} line(s) already finished by an earlier run: skipped (--restart runs them again)");
        }
        skip.extend(settled.into_iter().map(|s| s.key));
        // What an earlier run left in flight: finished (and printed) here, never resubmitted.
        let journal = client.dlq().journal().await?;
        skip.extend(journal.into_iter().filter_map(|e| e.key).filter(|k| k.starts_with(prefix)));
        let mut recovered = client.recover_stream(RecoverOptions {
            resume: true,
            key_prefix: Some(prefix.to_string()),
            owner: None,
            resolve_expired: false,
        });
        while let Some(item) = recovered.next().await {
            let item = item?;
            let line = item.key.as_ref().and_then(|k| number_of.get(k).copied());
            match item.outcome {
                Ok(delivery) => {
                    let kind = line.and_then(|n| kind_of.get(&n).copied());
                    out.emit(&solved_line(line, item.key.as_deref(), kind, &delivery))?;
                    delivery.receipt.ack();
                }
                Err(e) => {
                    verdict.count(&e);
                    out.emit(&failed_line(line, item.key.as_deref(), Some(&item.id), &e))?;
                }
            }
        }
        let summary = recovered.summary();
        if summary.found > 0 {
            eprintln!("finished {} line(s) an earlier run left in flight", summary.found);
        }
        if summary.skipped_live > 0 {
            eprintln!("{} line(s) are in flight in another live process: left to it", summary.skipped_live);
        }
    }
    let todo: Vec<Line> = lines.into_iter().filter(|l| !skip.contains(&l.key)).collect();
    let concurrency = args.concurrency.unwrap_or(client.options().concurrency).max(1);
    client.ensure_in_flight(concurrency)?;

    let bar = ProgressBar::with_draw_target(Some(todo.len() as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} tasks  {elapsed_precise}  eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut pending = todo.into_iter();
    let mut running = FuturesUnordered::new();
    loop {
        while running.len() < concurrency {
            let Some(line) = pending.next() else { break };
            let client = client.clone();
            running.push(async move {
                let outcome =
                    match client.submit_wanted(line.task, line.labels, Some(line.key.clone()), line.ttl_ms).await {
                        Ok(handle) => {
                            let id = handle.id().to_string();
                            (Some(id), handle.outcome().await)
                        }
                        Err(e) => (None, Err(e)),
                    };
                (line.number, line.key, outcome)
            });
        }
        let Some((number, key, (id, outcome))) = running.next().await else { break };
        bar.inc(1);
        match outcome.and_then(Outcome::into_delivery) {
            Ok(delivery) => {
                out.emit(&solved_line(Some(number), Some(&key), kind_of.get(&number).copied(), &delivery))?;
                delivery.receipt.ack();
            }
            Err(e) => {
                verdict.count(&e);
                out.emit(&failed_line(Some(number), Some(&key), id.as_deref(), &e))?;
            }
        }
    }
    bar.finish_and_clear();
    Ok(())
}
