//! `client.dlq.*`: the store operations Python reaches, as JSON in and JSON out.
//!
//! Arguments arrive as one JSON object per call (built by `captcha_dlq._dlq`); results are
//! plain JSON values (records, counts, stats, the analysis) that become dicts and lists.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use captcha_dlq::Error;
use captcha_dlq_core::dlq::{self, Analysis, DeadLetterRecord, DlqStore, Filter, Page};
use captcha_dlq_core::json_read::FromJson;
use captcha_dlq_core::{ConfigError, Timestamp};
use serde_json::{json, Value};

/// Records read per page when a whole selection is needed (analysis, export).
const PAGE: usize = 1000;

pub(crate) fn now() -> Timestamp {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    Timestamp::from_unix_millis(u64::try_from(ms).unwrap_or(u64::MAX))
}

fn arg<T: FromJson>(args: &Value, name: &str) -> Result<T, Error> {
    let value = args.get(name).cloned().unwrap_or(Value::Null);
    T::from_json(value).map_err(|e| Error::Config(ConfigError::new(e.field_under(name), e.problem)))
}

fn filter(args: &Value) -> Result<Filter, Error> {
    match args.get("filter") {
        None | Some(Value::Null) => Ok(Filter::all()),
        Some(_) => arg(args, "filter"),
    }
}

async fn all_records(store: &Arc<dyn DlqStore>, filter: &Filter) -> Result<Vec<DeadLetterRecord>, Error> {
    let mut out = Vec::new();
    loop {
        let page = store.peek(filter, Page { offset: out.len(), limit: PAGE }, now()).await?;
        let n = page.len();
        out.extend(page);
        if n < PAGE {
            return Ok(out);
        }
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<Value, Error> {
    serde_json::to_value(v).map_err(|e| Error::Io(format!("could not encode the result: {e}")))
}

pub(crate) async fn run(store: Arc<dyn DlqStore>, provider: String, op: String, args: Value) -> Result<Value, Error> {
    match op.as_str() {
        "count" => Ok(json!(store.count(&filter(&args)?, now()).await?)),
        "peek" => {
            let offset: Option<usize> = arg(&args, "offset")?;
            let limit: Option<usize> = arg(&args, "limit")?;
            let page = Page { offset: offset.unwrap_or(0), limit: limit.unwrap_or(100) };
            to_json(&store.peek(&filter(&args)?, page, now()).await?)
        }
        "stats" => to_json(&store.stats(now()).await?),
        "analysis" => {
            let records = all_records(&store, &filter(&args)?).await?;
            let stats = store.stats(now()).await?;
            to_json(&Analysis::compute(&records, &stats, now()))
        }
        "export" => {
            let path: String = arg(&args, "path")?;
            let format: String = arg(&args, "format")?;
            let records = all_records(&store, &filter(&args)?).await?;
            let text = match format.as_str() {
                "json" => dlq::export_json(&records),
                "jsonl" => dlq::export_jsonl(&records),
                other => {
                    return Err(Error::Config(ConfigError::new(
                        "format",
                        format!("{other:?} is not an export format (json, jsonl)"),
                    )))
                }
            };
            let n = records.len();
            tokio::task::spawn_blocking(move || {
                std::fs::write(&path, text).map_err(|e| format!("writing {path}: {e}"))
            })
            .await
            .map_err(|e| Error::Io(format!("export interrupted: {e}")))?
            .map_err(Error::Io)?;
            Ok(json!(n))
        }
        "import" => {
            let path: String = arg(&args, "path")?;
            let text = tokio::task::spawn_blocking(move || {
                std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))
            })
            .await
            .map_err(|e| Error::Io(format!("import interrupted: {e}")))?
            .map_err(Error::Io)?;
            let records = dlq::import(&text, &provider, now()).map_err(|e| {
                Error::Config(ConfigError::new(e.field.clone().unwrap_or_else(|| "file".into()), e.to_string()))
            })?;
            let n = records.len();
            for record in records {
                store.push(record).await?;
            }
            Ok(json!(n))
        }
        "purge" => Ok(json!(store.purge(&filter(&args)?, now()).await?)),
        "park" => {
            let id: String = arg(&args, "id")?;
            let reason: String = arg(&args, "reason")?;
            Ok(json!(store.park(&id, &reason, now()).await?))
        }
        "unpark" => {
            let id: String = arg(&args, "id")?;
            Ok(json!(store.unpark(&id, now()).await?))
        }
        "journal" => to_json(&store.journal_entries().await?),
        other => Err(Error::Config(ConfigError::new("op", format!("unknown DLQ operation {other:?}")))),
    }
}
