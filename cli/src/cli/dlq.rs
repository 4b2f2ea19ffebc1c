//! `captcha-dlq dlq …`: list, analyse, replay, export, import, purge, park and
//! edit (`edit.rs`) dead-lettered tasks. These open only the store (the global options are
//! checked as for a client, `--config`'s `store` section applies, no key is
//! needed), except `replay`, which needs the solving client too, and `edit`, which
//! goes through the client's `Dlq::edit` (a key only for `--replay`).

use std::path::PathBuf;

use captcha_dlq::core::dlq::analysis::{render_table, Analysis};
use captcha_dlq::core::dlq::export::{export_json, export_jsonl};
use captcha_dlq::core::dlq::{DlqStore, Filter, Page};
use captcha_dlq::core::Timestamp;
use captcha_dlq::{Error, ReplayOptions};
use clap::{Subcommand, ValueEnum};
use serde_json::json;

use super::audit::operator_dlq;
use super::replay_print::replay_and_print;
use super::selection::now;
pub use super::selection::FilterArgs;
use super::{client, exit, Global};

#[derive(Debug, Subcommand)]
pub enum DlqCommand {
    /// List records (oldest first).
    List {
        #[command(flatten)]
        filter: FilterArgs,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
    /// Counts by reason, class, sitekey, page host and hour; age of the oldest; replay throughput.
    Stats {
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// Take records out under a lease and solve them again.
    Replay {
        #[command(flatten)]
        filter: FilterArgs,
        #[arg(long, default_value_t = captcha_dlq::options::DEFAULT_REPLAY_LIMIT)]
        limit: usize,
        /// Start at most this many records per second (default: all at once).
        #[arg(long)]
        per_second: Option<f64>,
    },
    /// Write records to a file.
    Export {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// Read records from a file: our JSON or JSONL, or the seeds' captcha-dlq.json array.
    Import { file: PathBuf },
    /// Delete matching records (not those leased right now). Needs a filter or --all.
    Purge {
        #[command(flatten)]
        filter: FilterArgs,
        /// Delete every record.
        #[arg(long)]
        all: bool,
    },
    /// Set a record aside for review; it is never replayed until unparked.
    Park {
        id: String,
        #[arg(long, default_value = "parked by an operator")]
        reason: String,
    },
    /// Return a parked record to the queue.
    Unpark { id: String },
    /// Apply the `dlq_retention` limits of --config now (for cron): evict the oldest ready or
    /// parked records beyond `max_age_ms` / `max_count`, appending them to `archive` first.
    Retain {
        /// Count what would be evicted; remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Change task fields or labels of matching records (prints the changes; --yes applies).
    Edit(super::edit::EditArgs),
    /// The audit trail: who replayed, purged, parked, unparked or imported what, newest first.
    Audit {
        /// At most this many entries (1 to 1000).
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Only entries older than this entry id (the last id of the page before).
        #[arg(long)]
        before: Option<u64>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Json,
    Jsonl,
}

async fn all_records(
    store: &dyn DlqStore,
    filter: &Filter,
    now: Timestamp,
) -> Result<Vec<captcha_dlq::core::dlq::DeadLetterRecord>, Error> {
    let mut out = Vec::new();
    loop {
        let page = store.peek(filter, Page { offset: out.len(), limit: 1000 }, now).await?;
        let n = page.len();
        out.extend(page);
        if n < 1000 {
            return Ok(out);
        }
    }
}

pub async fn run(global: &Global, cmd: DlqCommand) -> Result<u8, Error> {
    let now = now();
    let cmd = match cmd {
        DlqCommand::Edit(args) => return super::edit::run(global, args).await,
        other => other,
    };
    if let DlqCommand::Replay { filter, limit, per_second } = &cmd {
        let client = client(global).await?;
        let explicit = !filter.reasons.is_empty() || !filter.ids.is_empty() || !filter.classes.is_empty();
        let options = ReplayOptions {
            filter: (!filter.is_empty()).then(|| filter.to_filter(now)),
            limit: Some(*limit),
            explicit,
            per_second: *per_second,
            ..ReplayOptions::default()
        };
        let code = replay_and_print(global, &client, options).await;
        client.close().await;
        return code;
    }
    if let DlqCommand::Audit { limit, before } = cmd {
        super::audit::print(global, limit, before).await?;
        return Ok(exit::OK);
    }
    if matches!(
        cmd,
        DlqCommand::Import { .. } | DlqCommand::Purge { .. } | DlqCommand::Park { .. } | DlqCommand::Unpark { .. }
    ) {
        return act(global, cmd, now).await;
    }
    let store = super::store(global).await?;
    match cmd {
        DlqCommand::List { filter, limit, offset } => {
            let records = store.peek(&filter.to_filter(now), Page { offset, limit }, now).await?;
            if global.json {
                // One JSON line per record, as `dlq export --format jsonl` writes them.
                print!("{}", export_jsonl(&records));
            } else {
                println!(
                    "{:<26}  {:<7}  {:<26}  {:>8}  {:<20}  page",
                    "id", "state", "reason", "attempts", "dead-lettered"
                );
                for r in &records {
                    println!(
                        "{:<26}  {:<7}  {:<26}  {:>8}  {:<20}  {}",
                        r.id,
                        r.state.as_str(),
                        r.reason,
                        r.attempts,
                        r.dead_lettered_at.to_rfc3339(),
                        r.task.page_url().unwrap_or("-")
                    );
                }
                let total = store.count(&filter.to_filter(now), now).await?;
                println!("{} of {total} record(s)", records.len());
            }
        }
        DlqCommand::Stats { filter } => {
            let records = all_records(store.as_ref(), &filter.to_filter(now), now).await?;
            let stats = store.stats(now).await?;
            let analysis = Analysis::compute(&records, &stats, now);
            if global.json {
                println!("{}", json!({ "stats": stats, "analysis": analysis }));
            } else {
                println!("{}", render_table(&analysis));
            }
        }
        DlqCommand::Export { file, format, filter } => {
            let records = all_records(store.as_ref(), &filter.to_filter(now), now).await?;
            let text = match format {
                Format::Json => export_json(&records),
                Format::Jsonl => export_jsonl(&records),
            };
            captcha_dlq::files::write_private(&file, &text)?;
            println!("exported {} record(s) to {}", records.len(), file.display());
        }
        DlqCommand::Retain { dry_run } => {
            let Some(options) = super::retention(global)? else {
                return Err(Error::Io(
                    "retain needs limits: --config '{\"dlq_retention\": {\"max_age_ms\": …, \"max_count\": …, \"archive\": \"FILE\"}}'"
                        .into(),
                ));
            };
            let report = captcha_dlq::retention::apply(&store, &options, now, dry_run, None).await?;
            if global.json {
                println!("{}", json!({ "ok": true, "retention": report }));
            } else {
                let verb = if dry_run { "would evict" } else { "evicted" };
                if report.evictions.is_empty() {
                    println!("{verb} 0 record(s)");
                }
                for e in &report.evictions {
                    let archived = e.archive.as_deref().map_or(String::new(), |a| format!(", archived to {a}"));
                    println!("{verb} {} record(s) ({}){archived}", e.count, e.reason.as_str());
                }
            }
        }
        DlqCommand::Replay { .. }
        | DlqCommand::Edit(_)
        | DlqCommand::Audit { .. }
        | DlqCommand::Import { .. }
        | DlqCommand::Purge { .. }
        | DlqCommand::Park { .. }
        | DlqCommand::Unpark { .. } => {}
    }
    Ok(exit::OK)
}

/// The actions: through the client's `Dlq` as this command's operator, so each leaves its
/// audit entry. Operator writes commit with the durability asked for.
async fn act(global: &Global, cmd: DlqCommand, now: Timestamp) -> Result<u8, Error> {
    if let DlqCommand::Purge { filter, all } = &cmd {
        if filter.is_empty() && !all {
            return Err(Error::Io("purge needs a filter (--reason, --id, --class…) or --all".into()));
        }
    }
    let text = match &cmd {
        DlqCommand::Import { file } => {
            Some(std::fs::read_to_string(file).map_err(|e| Error::Io(format!("cannot read {}: {e}", file.display())))?)
        }
        _ => None,
    };
    let (client, dlq) = operator_dlq(global).await?;
    let done = act_on(&dlq, cmd, text, now).await;
    client.close().await;
    done.map(|()| exit::OK)
}

async fn act_on(dlq: &captcha_dlq::Dlq, cmd: DlqCommand, text: Option<String>, now: Timestamp) -> Result<(), Error> {
    match cmd {
        DlqCommand::Import { file } => {
            let n = dlq.import(text.as_deref().unwrap_or_default()).await.map_err(|e| match e {
                Error::Config(e) => Error::Io(format!("{}: {e}", file.display())),
                other => other,
            })?;
            println!("imported {n} record(s) from {}", file.display());
        }
        DlqCommand::Purge { filter, .. } => {
            let n = dlq.purge(&filter.to_filter(now)).await?;
            println!("purged {n} record(s)");
        }
        DlqCommand::Park { id, reason } => {
            if !dlq.park(&id, &reason).await? {
                return Err(Error::Io(format!("no record with id {id}")));
            }
            println!("parked {id}");
        }
        DlqCommand::Unpark { id } => {
            if !dlq.unpark(&id).await? {
                return Err(Error::Io(format!("no parked record with id {id}")));
            }
            println!("unparked {id}");
        }
        _ => {}
    }
    Ok(())
}
