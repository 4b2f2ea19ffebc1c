//! `captcha-dlq recover`: finishes what killed runs left in the journal and prints each
//! answer the moment it has it (one JSON line with `--json`), flushing before the task's
//! journal entry is let go — a recover killed half-way loses nothing either.

use captcha_dlq::{Error, RecoverOptions};
use clap::Args as ClapArgs;
use futures::StreamExt;
use serde_json::json;

use super::{client, exit, flush_stdout, Global, RunVerdict};

#[derive(Debug, ClapArgs)]
pub struct RecoverArgs {
    /// Dead-letter the unfinished tasks as `Interrupted` instead of resuming them (answers
    /// already in the journal are still printed).
    #[arg(long)]
    pub interrupt: bool,
    /// Solve again (a new, paid submission) each task whose answer in the journal is past its
    /// life, instead of dead-lettering it as `TTLExpired` with the answer and its cost kept.
    #[arg(long)]
    pub resolve_expired: bool,
}

pub async fn run(global: &Global, args: RecoverArgs) -> Result<u8, Error> {
    let client = client(global).await?;
    let options = RecoverOptions {
        resume: !args.interrupt,
        key_prefix: None,
        owner: None,
        resolve_expired: args.resolve_expired,
    };
    let mut stream = client.recover_stream(options);
    let mut verdict = RunVerdict::default();
    while let Some(item) = stream.next().await {
        let item = match item {
            Ok(item) => item,
            Err(e) => {
                client.close().await;
                return Err(e);
            }
        };
        match item.outcome {
            Ok(delivery) => {
                if global.json {
                    let line = json!({ "ok": true, "id": delivery.id, "key": item.key, "labels": delivery.labels,
                                       "solution": delivery.solution });
                    println!("{line}");
                } else {
                    println!("{}\t{}", delivery.id, delivery.solution.text);
                }
                flush_stdout()?;
                delivery.receipt.ack();
            }
            Err(e) => {
                verdict.count(&e);
                let line = match &e {
                    // An expired answer's dead letter keeps the answer: its cost shows what was paid.
                    Error::SolveFailed { record, stored } => json!({ "ok": false, "id": record.id, "key": item.key,
                        "code": e.code(), "reason": record.reason, "class": record.class, "attempts": record.attempts,
                        "description": record.description, "stored": stored,
                        "cost": record.solution.as_ref().and_then(|s| s.cost) }),
                    other => {
                        json!({ "ok": false, "id": item.id, "key": item.key, "code": other.code(), "error": other.to_string() })
                    }
                };
                if global.json {
                    println!("{line}");
                } else {
                    eprintln!("{}: {e}", item.id);
                }
                flush_stdout()?;
            }
        }
    }
    let summary = stream.summary();
    if global.json {
        println!("{}", json!({ "summary": summary }));
    } else {
        eprintln!(
            "recovered {} task(s): {} solved, {} dead-lettered ({} answers past their life); {} left to live owners",
            summary.found, summary.solved, summary.dead_lettered, summary.expired, summary.skipped_live
        );
    }
    let code = verdict.exit_code(&client).await;
    client.close().await;
    Ok(if code == exit::OK && summary.dead_lettered > 0 { exit::TASKS_FAILED } else { code })
}
