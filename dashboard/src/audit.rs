//! The audit trail: `/audit` (a page, newest first, paged with `before`) and `/api/audit`
//! (the same entries as JSON). Both read `Dlq::audit`; what they show was written by the client
//! when each action ended, whoever applied it (this dashboard, the CLI, an API caller).

use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Json, Response};
use axum::Extension;
use captcha_dlq_core::dlq::audit::{AuditEntry, MAX_AUDIT_LIMIT};

use crate::respond::{chrome, html, Failure};
use crate::security::RequestContext;
use crate::state::Shared;
use crate::views;

/// Entries on one page.
pub(crate) const PAGE: usize = 50;

/// `limit` (1 to 1000, default 50) and `before` (an entry id) from the query; anything else is
/// refused, naming it.
fn paging(query: Option<&str>) -> Result<(usize, Option<u64>), Failure> {
    let mut limit = PAGE;
    let mut before = None;
    for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        let number = || v.parse::<u64>().map_err(|_| Failure::bad_request(format!("{k}: {v:?} is not a whole number")));
        match k.as_ref() {
            "limit" => {
                limit = usize::try_from(number()?).unwrap_or(usize::MAX);
                if limit == 0 || limit > MAX_AUDIT_LIMIT {
                    return Err(Failure::bad_request(format!("limit: must be 1 to {MAX_AUDIT_LIMIT}")));
                }
            }
            "before" => before = Some(number()?),
            other => return Err(Failure::bad_request(format!("{other}: unknown parameter; known: limit, before"))),
        }
    }
    Ok((limit, before))
}

async fn entries(state: &Shared, query: Option<&str>) -> Result<(Vec<AuditEntry>, usize), Failure> {
    let (limit, before) = paging(query)?;
    Ok((state.client.dlq().audit(limit, before).await?, limit))
}

pub(crate) async fn page(
    State(state): State<Shared>,
    Extension(ctx): Extension<RequestContext>,
    RawQuery(query): RawQuery,
) -> Response {
    let chrome = chrome(&state, &ctx);
    match entries(&state, query.as_deref()).await {
        Ok((entries, limit)) => html(views::audit::page_of(&chrome, &entries, limit)),
        Err(failure) => failure.page(&chrome),
    }
}

pub(crate) async fn api(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    match entries(&state, query.as_deref()).await {
        Ok((entries, _)) => Json(serde_json::json!({ "entries": entries })).into_response(),
        Err(failure) => failure.json(),
    }
}
