//! Who the `dlq` commands act as, the client they act through, and `captcha-dlq dlq audit`.
//!
//! The actions (`replay`, `purge`, `park`, `unpark`, `import`) go through the client's `Dlq`,
//! which writes their audit entries; they act as `--as NAME` (or `CAPTCHA_DLQ_OPERATOR`), else
//! `cli:$USER@HOST`. Actions other than `replay` need no API key: without one the client gets
//! a stand-in it never sends (none of them submits a task), and it stays out of the fleet
//! (no heartbeat row, no adoption: a command that lasts a second is no fleet member).

use captcha_dlq::core::dlq::audit::{AuditEntry, AuditStage};
use captcha_dlq::core::support::shown_text::escape_for_terminal;
use captcha_dlq::{Client, Dlq, Error};
use serde_json::json;

use super::Global;

/// Stands in for the key of a store-only action: nothing it does sends it.
const NO_KEY: &str = "no-api-key-given";

/// The operator name of this command: `--as`, else `cli:USER@HOST`.
pub fn operator_name(global: &Global) -> String {
    if let Some(name) = &global.operator {
        return name.clone();
    }
    let user = std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).unwrap_or_else(|_| "unknown".into());
    format!("cli:{user}@{}", captcha_dlq::liveness::host())
}

/// A client for a store-only action (see the module documentation) and its DLQ as this
/// command's operator. The caller closes the client.
pub async fn operator_dlq(global: &Global) -> Result<(Client, Dlq), Error> {
    let keyed =
        Global { api_key: Some(global.api_key.clone().unwrap_or_else(|| NO_KEY.to_string())), ..global.clone() };
    let client = super::builder(&keyed)?.option("fleet", json!({"enabled": false})).build().await?;
    let dlq = client.dlq().as_operator(&operator_name(global));
    match dlq {
        Ok(dlq) => Ok((client, dlq)),
        Err(e) => {
            client.close().await;
            Err(e)
        }
    }
}

/// `dlq audit`: the trail, newest first, as a table or (`--json`) one JSON line per entry.
pub async fn print(global: &Global, limit: usize, before: Option<u64>) -> Result<(), Error> {
    let (client, dlq) = operator_dlq(global).await?;
    let entries = dlq.audit(limit, before).await;
    client.close().await;
    let entries = entries?;
    if global.json {
        for entry in &entries {
            println!("{}", serde_json::to_string(entry).map_err(|e| Error::Io(e.to_string()))?);
        }
        return super::flush_stdout();
    }
    println!(
        "{:>5}  {:<24}  {:<24}  {:<14}  {:<6}  {:>6}  filter · detail",
        "id", "at", "operator", "action", "stage", "count"
    );
    for entry in &entries {
        println!("{}", row(entry));
    }
    if entries.is_empty() {
        println!("the audit trail is empty");
    }
    super::flush_stdout()
}

/// One entry as a table row. Every text written by someone else (a name, a park reason, an
/// error, a filter's values) has its control and bidi characters escaped: the trail may hold
/// entries from before they were refused, or from another program, and a terminal would obey them.
fn row(e: &AuditEntry) -> String {
    let stage = match (e.stage, e.intent) {
        (AuditStage::Intent, _) => "intent".to_string(),
        (AuditStage::Result, Some(intent)) => format!("of {intent}"),
        (AuditStage::Result, None) => "result".to_string(),
    };
    let filter = if e.filter.is_null() { "-".to_string() } else { e.filter.to_string() };
    let mut line = format!(
        "{:>5}  {:<24}  {:<24}  {:<14}  {:<6}  {:>6}  {}",
        e.id,
        e.at.to_rfc3339(),
        escape_for_terminal(&e.operator),
        e.action.as_str(),
        stage,
        e.count,
        escape_for_terminal(&filter)
    );
    if !e.detail.is_empty() {
        line.push_str(&format!(" · {}", escape_for_terminal(&e.detail)));
    }
    if let Some(error) = &e.error {
        line.push_str(&format!(" · failed: {}", escape_for_terminal(error)));
    }
    line
}
