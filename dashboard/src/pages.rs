//! The GET handlers of the HTML pages.

use core::time::Duration;
use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::response::{Redirect, Response};
use axum::Extension;
use captcha_dlq_core::dlq::{DeadLetterRecord, Filter, Page};
use captcha_dlq_core::JournalEntry;

use crate::overview::Dimension;
use crate::query::{pairs_of, RecordsQuery};
use crate::respond::{chrome, html, Failure};
use crate::scan::{self, Cursor};
use crate::security::RequestContext;
use crate::state::{Shared, OVERVIEW_WAIT};
use crate::views::{self, Chrome};

/// Records a text search looks at per page before it stops and offers to go on.
const SEARCH_BUDGET: u64 = 1000;
const SEARCH_BATCH: usize = 500;

type Ctx = Extension<RequestContext>;

fn page_or_error(chrome: &Chrome, result: Result<Response, Failure>) -> Response {
    result.unwrap_or_else(|failure| failure.page(chrome))
}

pub(crate) async fn overview(State(state): State<Shared>, Extension(ctx): Ctx) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let dlq = state.client.dlq();
        let stats = dlq.stats().await?;
        let snapshot = state.overview.get(&dlq, state.now(), OVERVIEW_WAIT).await;
        let status = state.client.status().await.ok();
        let metrics = state.client.metrics();
        let health = state.client.store_health();
        let page = views::overview::OverviewPage {
            stats: &stats,
            overview: &snapshot,
            status: status.as_ref(),
            metrics: &metrics,
            health: &health,
            has_key: state.has_key(),
        };
        Ok::<_, Failure>(html(views::overview::render(&chrome, &page)))
    }
    .await;
    page_or_error(&chrome, result)
}

pub(crate) async fn records(State(state): State<Shared>, Extension(ctx): Ctx, RawQuery(query): RawQuery) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let mut q = RecordsQuery::parse(query.as_deref().unwrap_or(""), state.now())?;
        // A search for a whole record id looks it up instead of scanning.
        if let Some(text) = q.selection.text.clone() {
            if looks_like_id(&text) {
                q.selection.filter.ids.push(text);
                q.selection.text = None;
            }
        }
        let dlq = state.client.dlq();
        let (records, next, search) = match &q.selection.text {
            None => {
                let (records, next) = scan::page(&dlq, &q.selection.filter, q.cursor, q.size).await?;
                (records, next, None)
            }
            Some(text) => {
                let found = search(&dlq, &q.selection.filter, text, q.cursor, q.size).await?;
                let info = views::records::SearchInfo { scanned: found.scanned, budget_hit: found.budget_hit };
                (found.records, found.next, Some(info))
            }
        };
        let hints = state.overview.peek();
        let page = views::records::RecordsPage {
            query: &q,
            records: &records,
            next: next.map(|c| q.next_page(c)),
            search,
            hints: hints.as_deref(),
        };
        Ok(html(views::records::render(&chrome, &page)))
    }
    .await;
    page_or_error(&chrome, result)
}

/// A ULID: 26 Crockford base-32 characters.
fn looks_like_id(text: &str) -> bool {
    text.len() == 26 && text.chars().all(|c| c.is_ascii_alphanumeric())
}

struct Found {
    records: Vec<DeadLetterRecord>,
    next: Option<Cursor>,
    scanned: u64,
    budget_hit: bool,
}

/// The records of `filter` containing `text` (any case) from `cursor`, up to `limit`,
/// looking at no more than [`SEARCH_BUDGET`] records.
async fn search(
    dlq: &captcha_dlq_client::Dlq,
    filter: &Filter,
    text: &str,
    cursor: Option<Cursor>,
    limit: usize,
) -> Result<Found, Failure> {
    let needle = text.to_lowercase();
    let mut found = Found { records: Vec::new(), next: None, scanned: 0, budget_hit: false };
    let mut position = cursor;
    loop {
        let (batch, more) = scan::page(dlq, filter, position, SEARCH_BATCH).await?;
        for record in batch {
            found.scanned += 1;
            position = Some(step(position, &record));
            if contains_text(&record, &needle) {
                found.records.push(record);
                if found.records.len() == limit {
                    found.next = position;
                    return Ok(found);
                }
            }
            if found.scanned >= SEARCH_BUDGET {
                found.budget_hit = true;
                found.next = position;
                return Ok(found);
            }
        }
        if more.is_none() {
            return Ok(found);
        }
    }
}

/// The cursor just past `record`, coming from `cursor`.
fn step(cursor: Option<Cursor>, record: &DeadLetterRecord) -> Cursor {
    match cursor {
        Some(c) if c.after == record.dead_lettered_at => Cursor { after: c.after, skip: c.skip + 1 },
        _ => Cursor { after: record.dead_lettered_at, skip: 1 },
    }
}

fn contains_text(r: &DeadLetterRecord, needle: &str) -> bool {
    let has = |s: &str| s.to_lowercase().contains(needle);
    has(&r.id)
        || has(&r.reason)
        || has(&r.description)
        || has(&r.provider)
        || r.task.sitekey().is_some_and(has)
        || r.task.page_url().is_some_and(has)
        || r.labels.iter().any(|(k, v)| has(&format!("{k}={v}")))
        || r.history.iter().any(|h| has(&h.error) || h.provider_task_id.as_deref().is_some_and(has))
}

pub(crate) async fn record(State(state): State<Shared>, Extension(ctx): Ctx, Path(id): Path<String>) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let filter = Filter { ids: vec![id.clone()], ..Filter::default() };
        let mut found = state.client.dlq().peek(&filter, Page { offset: 0, limit: 1 }).await?;
        let record = found
            .pop()
            .ok_or_else(|| Failure::not_found(format!("no record {id} in the DLQ (replayed or purged?)")))?;
        Ok(html(views::record::render(&chrome, &record)))
    }
    .await;
    page_or_error(&chrome, result)
}

pub(crate) async fn groups(State(state): State<Shared>, Extension(ctx): Ctx, RawQuery(query): RawQuery) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let mut by = Dimension::Reason;
        for (key, value) in pairs_of(query.as_deref().unwrap_or("")) {
            match key.as_str() {
                "by" => {
                    by = Dimension::parse(&value).ok_or_else(|| {
                        let known: Vec<_> = Dimension::ALL.iter().map(|d| d.name()).collect();
                        Failure::bad_request(format!("by: {value:?} is not a grouping ({})", known.join(", ")))
                    })?;
                }
                other => return Err(Failure::bad_request(format!("{other}: unknown parameter; known: by"))),
            }
        }
        let snapshot = state.overview.get(&state.client.dlq(), state.now(), OVERVIEW_WAIT).await;
        Ok(html(views::groups::render(&chrome, &snapshot, by)))
    }
    .await;
    page_or_error(&chrome, result)
}

pub(crate) async fn journal(State(state): State<Shared>, Extension(ctx): Ctx) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let entries = state.client.dlq().journal().await?;
        let mut by_owner: BTreeMap<Option<String>, Vec<JournalEntry>> = BTreeMap::new();
        for entry in entries {
            by_owner.entry(entry.owner.clone()).or_default().push(entry);
        }
        let client = &state.client;
        let liveness = client.backends().liveness.clone();
        let grace = Duration::from_millis(client.options().engine().retry.task_deadline_ms);
        let now = state.now();
        let mut owners = Vec::new();
        for (owner, entries) in by_owner {
            let mine = owner.as_deref() == Some(client.owner());
            let updated = entries.iter().map(|e| e.updated_at).max().unwrap_or(now);
            let gone = match owner.as_deref() {
                None => true,
                Some(_) if mine => false,
                Some(o) => liveness.is_gone(o, updated, now, grace).await,
            };
            owners.push(views::journal::OwnerEntries { owner, gone, mine, entries });
        }
        Ok(html(views::journal::render(&chrome, &owners, &state.recoveries.list())))
    }
    .await;
    page_or_error(&chrome, result)
}

pub(crate) async fn fleet(State(state): State<Shared>, Extension(ctx): Ctx) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = crate::fleet::FleetRead::of(&state).await.map(|fleet| html(views::fleet::render(&chrome, &fleet)));
    page_or_error(&chrome, result)
}

pub(crate) async fn replays(State(state): State<Shared>, Extension(ctx): Ctx) -> Response {
    let chrome = chrome(&state, &ctx);
    html(views::replays::list(&chrome, &state.replays.list()))
}

pub(crate) async fn replay(State(state): State<Shared>, Extension(ctx): Ctx, Path(id): Path<u64>) -> Response {
    let chrome = chrome(&state, &ctx);
    match state.replays.get(id) {
        Some(job) => html(views::replays::detail(&chrome, &job)),
        None => Failure::not_found(format!("no replay request {id} (only the last {} are kept)", crate::replays::KEPT))
            .page(&chrome),
    }
}

pub(crate) async fn login_page(State(state): State<Shared>, Extension(ctx): Ctx) -> Response {
    let chrome = chrome(&state, &ctx);
    if !state.roles.required() {
        return axum::response::IntoResponse::into_response(Redirect::to(&chrome.url("/")));
    }
    html(views::login(&chrome, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use captcha_dlq_core::Timestamp;

    #[test]
    fn stepping_counts_records_at_the_same_millisecond() {
        let mut r = captcha_dlq_core::dlq::testkit::sample_record("a", 0);
        r.dead_lettered_at = Timestamp::from_unix_millis(9);
        let c = step(None, &r);
        assert_eq!(c, Cursor { after: Timestamp::from_unix_millis(9), skip: 1 });
        assert_eq!(step(Some(c), &r).skip, 2);
    }

    #[test]
    fn text_matches_labels_history_and_urls_in_any_case() {
        let mut r = captcha_dlq_core::dlq::testkit::sample_record("01ARZ3NDEKTSV4RRFFQ69G5FAV", 0);
        r.labels.insert("job".into(), "Nightly".into());
        assert!(contains_text(&r, "job=nightly"));
        assert!(contains_text(&r, "01arz3"));
        assert!(!contains_text(&r, "no such text anywhere"));
        assert!(looks_like_id("01ARZ3NDEKTSV4RRFFQ69G5FAV"));
        assert!(!looks_like_id("timeout"));
    }
}
