//! What the pages' script polls (counts, a replay's progress, the balance, a
//! filter's count, the fleet), the JSON/JSONL export download, and `/metrics`.

use std::time::Instant;

use axum::extract::{Path, RawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use captcha_dlq_client::prometheus;
use captcha_dlq_client::ExportFormat;
use captcha_dlq_core::dlq::{export_json_redacted, export_jsonl_redacted};
use serde_json::{json, Value};

use crate::query::{encode, pairs_of, Selection};
use crate::respond::Failure;
use crate::scan;
use crate::security::RequestContext;
use crate::state::{Shared, BALANCE_FRESH_FOR};
use crate::views::{age, count};

fn json_or_error(result: Result<Value, Failure>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(failure) => failure.json(),
    }
}

/// The counts every page shows live.
pub(crate) async fn summary(State(state): State<Shared>) -> Response {
    let result = async {
        let stats = state.client.dlq().stats().await?;
        let now = state.now();
        let metrics = state.client.metrics();
        let health = state.client.store_health();
        let oldest = stats.oldest_dead_lettered_at.map(|t| age(now.since(t)));
        Ok::<_, Failure>(json!({
            "total": count(stats.total),
            "ready": count(stats.ready),
            "leased": count(stats.leased),
            "parked": count(stats.parked),
            "in_flight": count(stats.in_flight),
            "completed": count(stats.completed),
            "dropped": count(stats.dropped),
            "oldest_age": oldest.unwrap_or_else(|| "–".into()),
            "client_in_flight": metrics.tasks_in_flight.to_string(),
            "circuit_open": metrics.all_circuits_open(),
            "store_available": health.available,
            "overview_at": state.overview.peek().map(|o| o.computed_at.as_unix_millis()),
        }))
    }
    .await;
    json_or_error(result)
}

/// How many records a selection matches (loaded after the records page, which does not wait for it).
pub(crate) async fn count_matching(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    let result = async {
        let selection = Selection::parse(query.as_deref().unwrap_or(""), state.now())?;
        if selection.text.is_some() {
            return Ok(json!({ "count": null, "text": "some" }));
        }
        let n = state.client.dlq().count(&selection.filter).await?;
        Ok(json!({ "count": n, "text": count(n) }))
    }
    .await;
    json_or_error(result)
}

pub(crate) async fn replay_progress(State(state): State<Shared>, Path(id): Path<u64>) -> Response {
    let Some(job) = state.replays.get(id) else {
        return Failure::not_found(format!("no replay request {id}")).json();
    };
    let p = job.progress();
    Json(json!({
        "status": p.status.label(),
        "active": p.status.is_active(),
        "target": p.target.map(count),
        "target_number": p.target,
        "done": count(p.done),
        "done_number": p.done,
        "received": count(p.report.received),
        "retried": count(p.report.retried),
        "recovered": count(p.report.recovered),
        "failed_again": count(p.report.failed_again),
        "parked": count(p.report.parked),
        "skipped": count(p.report.skipped),
        "errors": count(p.error_count),
    }))
    .into_response()
}

/// The account balance, asked of the provider at most once a minute.
pub(crate) async fn balance(State(state): State<Shared>) -> Response {
    if !state.has_key() {
        return Failure::not_found("no API key is configured").json();
    }
    let cached = state.balance.lock().ok().and_then(|b| b.clone()).filter(|(at, _)| at.elapsed() < BALANCE_FRESH_FOR);
    let result = match cached {
        Some((_, result)) => result,
        None => {
            // Error texts never contain the key (the transport and the codecs redact it).
            let result = state.client.balance().await.map_err(|e| e.to_string());
            if let Ok(mut slot) = state.balance.lock() {
                *slot = Some((Instant::now(), result.clone()));
            }
            result
        }
    };
    match result {
        Ok(balance) => Json(json!({ "balance": balance })).into_response(),
        Err(error) => Json(json!({ "error": error })).into_response(),
    }
}

/// The fleet as the Fleet page shows it: `{"ledger": false, "message": …}` when the store
/// keeps no ledger (an answer, not an error), a 503 when it does not answer.
pub(crate) async fn fleet(State(state): State<Shared>) -> Response {
    json_or_error(crate::fleet::FleetRead::of(&state).await.map(|fleet| fleet.json()))
}

/// The records of a selection as a JSON or JSONL download, redacted by the core's one rule
/// (`captcha_dlq_core::dlq::redact`: proxy credentials, cookies, key-like task fields) for
/// everyone. `secrets=1` asks for them as stored: an operator's action (a viewer, or a
/// read-only dashboard, gets 403), entered in the audit trail under the operator's name.
pub(crate) async fn export(
    State(state): State<Shared>,
    Extension(ctx): Extension<RequestContext>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = async {
        let mut format = "json".to_string();
        let mut secrets = false;
        let mut pairs = Vec::new();
        for (k, v) in pairs_of(query.as_deref().unwrap_or("")) {
            match k.as_str() {
                "format" => format = v,
                "secrets" => {
                    secrets = match v.as_str() {
                        "1" | "true" => true,
                        "0" | "false" => false,
                        other => return Err(Failure::bad_request(format!("secrets: {other:?} is not 1 or 0"))),
                    }
                }
                _ => pairs.push((k, v)),
            }
        }
        let Some(chosen) = ExportFormat::parse(&format) else {
            return Err(Failure::bad_request(format!("format: {format:?} is not json or jsonl")));
        };
        let selection = Selection::parse(&encode(&pairs), state.now())?;
        if selection.text.is_some() {
            return Err(Failure::bad_request("q: a text search cannot be exported; narrow the filter instead"));
        }
        let text = if secrets {
            if state.config.read_only || !ctx.identity.may_act() {
                return Err(Failure::forbidden(format!(
                    "secrets: an export with secrets is an operator's action, and {} may not act here; \
                     the export without secrets=1 is redacted",
                    if ctx.identity.name.is_empty() { "this session" } else { ctx.identity.name.as_str() }
                )));
            }
            crate::actions::dlq_of(&state, &ctx)?.export_with_secrets(&selection.filter, chosen).await?.0
        } else {
            let mut records = Vec::new();
            scan::for_each(&state.client.dlq(), &selection.filter, 1000, |r| records.push(r.clone())).await?;
            match chosen {
                ExportFormat::Json => export_json_redacted(&records),
                ExportFormat::Jsonl => export_jsonl_redacted(&records),
            }
        };
        let mime = match chosen {
            ExportFormat::Json => "application/json",
            ExportFormat::Jsonl => "application/x-ndjson",
        };
        let disposition = format!("attachment; filename=\"captcha-dlq-export.{format}\"");
        Ok(([(header::CONTENT_TYPE, mime.to_string()), (header::CONTENT_DISPOSITION, disposition)], text)
            .into_response())
    }
    .await;
    result.unwrap_or_else(Failure::json)
}

/// Prometheus text format: the client's counters, the DLQ's and the fleet ledger's gauges,
/// and the client's spend.
pub(crate) async fn metrics(State(state): State<Shared>) -> Response {
    let text = state.client.prometheus_text().await;
    ([(header::CONTENT_TYPE, prometheus::CONTENT_TYPE)], text).into_response()
}
