//! A replay as the CLI shows it: one JSON line per record with `--json`, then the report;
//! shared by `dlq replay` and `dlq edit --replay`.

use captcha_dlq::{Client, Error, ReplayOptions, ReplayOutcome};
use futures::StreamExt;
use serde_json::json;

use super::{exit, Global};

/// Replays as the CLI's operator (`--as`), printing each outcome and then the report.
pub(crate) async fn replay_and_print(global: &Global, client: &Client, options: ReplayOptions) -> Result<u8, Error> {
    let mut stream = client.dlq().as_operator(&super::audit::operator_name(global))?.replay_stream(options);
    let mut failure = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(item) => {
                let line = match &item.outcome {
                    ReplayOutcome::Recovered(d) => {
                        json!({ "id": item.id, "ok": true, "labels": item.labels, "solution": d.solution })
                    }
                    ReplayOutcome::FailedAgain { record, parked } => json!({ "id": item.id, "ok": false,
                        "reason": record.reason, "attempts": record.attempts, "parked": parked }),
                    ReplayOutcome::Parked { reason } => {
                        json!({ "id": item.id, "ok": false, "parked": true, "reason": reason })
                    }
                    ReplayOutcome::Skipped { why } => json!({ "id": item.id, "ok": false, "skipped": why }),
                    ReplayOutcome::Error(e) => {
                        json!({ "id": item.id, "ok": false, "code": e.code(), "error": e.to_string() })
                    }
                };
                if global.json {
                    println!("{line}");
                }
                super::flush_stdout()?;
                if let ReplayOutcome::Recovered(d) = item.outcome {
                    d.receipt.ack();
                }
            }
            Err(e) => failure = Some(e),
        }
    }
    let report = stream.report();
    if let Some(e) = failure {
        return Err(e);
    }
    if global.json {
        println!("{}", json!({ "report": report }));
    } else {
        println!(
            "received {} · retried {} · recovered {} · failed again {} · parked {} · skipped {}",
            report.received, report.retried, report.recovered, report.failed_again, report.parked, report.skipped
        );
    }
    Ok(if report.failed_again > 0 { exit::TASKS_FAILED } else { exit::OK })
}
