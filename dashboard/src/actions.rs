//! The POST handlers: replay (one, selected, a group, a filter) at a rate,
//! cancel a replay, park, unpark, purge with a typed confirmation, recover a
//! dead owner's journal, end an account hold (the Fleet page), and log in. The
//! guard has already checked the token, the CSRF token, the origin and read-only
//! mode; each form's fields are read here, unknown ones refused.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Extension;
use captcha_dlq_client::replay::{start_interval, MAX_PER_SECOND, MIN_PER_SECOND};
use captcha_dlq_core::dlq::Filter;

use crate::query::Selection;
use crate::replays::Target;
use crate::respond::{chrome, html, Failure};
use crate::security::{session_cookie, RequestContext, CSRF_FIELD};
use crate::state::Shared;
use crate::views::{self, Chrome};

type Ctx = Extension<RequestContext>;

/// The fields of a submitted form.
struct Form {
    pairs: Vec<(String, String)>,
}

impl Form {
    /// Reads the body; a field not in `known` (or the CSRF field) is an error naming it.
    fn read(body: &Bytes, known: &[&str]) -> Result<Form, Failure> {
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        if let Some((unknown, _)) = pairs.iter().find(|(k, _)| k != CSRF_FIELD && !known.contains(&k.as_str())) {
            return Err(Failure::bad_request(format!("{unknown}: unknown form field; known: {}", known.join(", "))));
        }
        Ok(Form { pairs })
    }

    fn one(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.trim()).filter(|v| !v.is_empty())
    }

    fn all(&self, name: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, v)| k == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_string())
            .collect()
    }

    /// Records per second: empty means as fast as the client allows.
    fn rate(&self) -> Result<Option<f64>, Failure> {
        match self.one("per_second") {
            None => Ok(None),
            // The client's bounds, checked here too so that the form answers 400 at once.
            Some(text) => match text.parse::<f64>() {
                Ok(r) if start_interval(Some(r)).is_ok() => Ok(Some(r)),
                _ => Err(Failure::bad_request(format!(
                    "per_second: {text:?} is not a rate between one record a day ({MIN_PER_SECOND:e}) and \
                     {MAX_PER_SECOND} records per second"
                ))),
            },
        }
    }

    /// A dashboard path to go back to (never another site).
    fn back(&self, chrome: &Chrome) -> String {
        let fallback = chrome.url("/records");
        match self.one("back") {
            // A path of this dashboard only: browsers read `//host` and `/\host` as another site.
            Some(back)
                if back.starts_with(&format!("{}/", chrome.base))
                    && !back.starts_with("//")
                    && !back.contains('\\')
                    && !back.contains("://") =>
            {
                back.to_string()
            }
            _ => fallback,
        }
    }

    /// What a form selects: `id` fields, or a `filter` query (`""` selects everything).
    fn target(&self, state: &Shared) -> Result<(Target, String), Failure> {
        let ids = self.all("id");
        if !ids.is_empty() {
            let what =
                if ids.len() == 1 { format!("record {}", ids[0]) } else { format!("{} selected records", ids.len()) };
            return Ok((Target::Ids(ids), what));
        }
        let Some((_, query)) = self.pairs.iter().find(|(k, _)| k == "filter") else {
            return Err(Failure::bad_request("nothing selected: tick records, or act on the filter"));
        };
        let selection = Selection::parse(query, state.now())?;
        if selection.text.is_some() {
            return Err(Failure::bad_request(
                "filter: a text search cannot select records for an action; tick the records found instead",
            ));
        }
        Ok((Target::Filter(selection.filter.clone()), selection.describe()))
    }
}

/// Replays and recovery talk to the provider: refused when the client has no key.
fn needs_solving(state: &Shared) -> Result<(), Failure> {
    if state.config.solving {
        Ok(())
    } else {
        Err(Failure::conflict(
            "this dashboard was started without an API key: replays and recovery need one (--api-key or CAPTCHA_DLQ_API_KEY)",
        ))
    }
}

fn fail(chrome: &Chrome, result: Result<Response, Failure>) -> Response {
    result.unwrap_or_else(|failure| failure.page(chrome))
}

fn see_other(to: &str) -> Response {
    Redirect::to(to).into_response()
}

pub(crate) async fn replay(State(state): State<Shared>, Extension(ctx): Ctx, body: Bytes) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = (|| {
        needs_solving(&state)?;
        let form = Form::read(&body, &["id", "filter", "per_second"])?;
        let (target, what) = form.target(&state)?;
        let job = state.replays.start(&state.client, operator_of(&ctx)?, what, target, form.rate()?, state.changed());
        Ok(see_other(&chrome.url(&format!("/replays/{}", job.id))))
    })();
    fail(&chrome, result)
}

pub(crate) async fn selected(State(state): State<Shared>, Extension(ctx): Ctx, body: Bytes) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let form = Form::read(&body, &["id", "action", "per_second", "back"])?;
        let ids = form.all("id");
        if ids.is_empty() {
            return Err(Failure::bad_request("nothing selected: tick the records to act on"));
        }
        match form.one("action") {
            Some("replay") => {
                needs_solving(&state)?;
                let what = format!("{} selected records", ids.len());
                let operator = operator_of(&ctx)?;
                let job =
                    state.replays.start(&state.client, operator, what, Target::Ids(ids), form.rate()?, state.changed());
                Ok(see_other(&chrome.url(&format!("/replays/{}", job.id))))
            }
            Some("park") => {
                park_all(&state, &ctx, &ids, "parked from the dashboard").await?;
                Ok(see_other(&form.back(&chrome)))
            }
            Some("unpark") => {
                unpark_all(&state, &ctx, &ids).await?;
                Ok(see_other(&form.back(&chrome)))
            }
            other => Err(Failure::bad_request(format!("action: {other:?} is not one of replay, park, unpark"))),
        }
    }
    .await;
    fail(&chrome, result)
}

/// The DLQ as the request's token holder acts on it (the audit trail names them).
pub(crate) fn dlq_of(state: &Shared, ctx: &RequestContext) -> Result<captcha_dlq_client::Dlq, Failure> {
    Ok(state.client.dlq().as_operator(&ctx.identity.name)?)
}

pub(crate) fn operator_of(ctx: &RequestContext) -> Result<captcha_dlq_client::Operator, Failure> {
    captcha_dlq_client::Operator::new(&ctx.identity.name).map_err(|e| Failure::bad_request(e.to_string()))
}

async fn park_all(state: &Shared, ctx: &RequestContext, ids: &[String], reason: &str) -> Result<(), Failure> {
    let dlq = dlq_of(state, ctx)?;
    for id in ids {
        dlq.park(id, reason).await?;
    }
    state.overview.invalidate();
    Ok(())
}

async fn unpark_all(state: &Shared, ctx: &RequestContext, ids: &[String]) -> Result<(), Failure> {
    let dlq = dlq_of(state, ctx)?;
    for id in ids {
        dlq.unpark(id).await?;
    }
    state.overview.invalidate();
    Ok(())
}

pub(crate) async fn park(State(state): State<Shared>, Extension(ctx): Ctx, body: Bytes) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let form = Form::read(&body, &["id", "reason", "back"])?;
        let ids = form.all("id");
        if ids.is_empty() {
            return Err(Failure::bad_request("id: which record to park"));
        }
        park_all(&state, &ctx, &ids, form.one("reason").unwrap_or("parked from the dashboard")).await?;
        Ok(see_other(&form.back(&chrome)))
    }
    .await;
    fail(&chrome, result)
}

pub(crate) async fn unpark(State(state): State<Shared>, Extension(ctx): Ctx, body: Bytes) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let form = Form::read(&body, &["id", "back"])?;
        let ids = form.all("id");
        if ids.is_empty() {
            return Err(Failure::bad_request("id: which record to unpark"));
        }
        unpark_all(&state, &ctx, &ids).await?;
        Ok(see_other(&form.back(&chrome)))
    }
    .await;
    fail(&chrome, result)
}

/// Purges what the form selects once `confirm` is the number of records it selects now,
/// or the word `purge` (Azure Service Bus Explorer's typed confirmation).
pub(crate) async fn purge(State(state): State<Shared>, Extension(ctx): Ctx, body: Bytes) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let form = Form::read(&body, &["id", "filter", "confirm"])?;
        let (target, what) = form.target(&state)?;
        let filter = match target {
            Target::Ids(ids) => Filter { ids, ..Filter::default() },
            Target::Filter(filter) => filter,
        };
        let dlq = dlq_of(&state, &ctx)?;
        let matching = dlq.count(&filter).await?;
        let typed = form.one("confirm").unwrap_or("");
        if typed != "purge" && typed != matching.to_string() {
            return Err(Failure::conflict(format!(
                "nothing purged: {matching} records match {what} now; type {matching} or purge to confirm (you typed {typed:?})"
            )));
        }
        let purged = dlq.purge(&filter).await?;
        state.overview.invalidate();
        let text = format!(
            "Purged {purged} of the {matching} records matching {what}.{}",
            if purged < matching { " Records under a live lease (being replayed) were left." } else { "" }
        );
        Ok(html(views::message(&chrome, "Purged", &text, Some(&chrome.url("/records")))))
    }
    .await;
    fail(&chrome, result)
}

pub(crate) async fn cancel_replay(State(state): State<Shared>, Extension(ctx): Ctx, Path(id): Path<u64>) -> Response {
    let chrome = chrome(&state, &ctx);
    let Some(job) = state.replays.get(id) else {
        return Failure::not_found(format!("no replay request {id}")).page(&chrome);
    };
    // Cancelling stops records from being tried: an operator's action, in the audit trail.
    let result = async {
        let dlq = dlq_of(&state, &ctx)?;
        let detail = format!("replay request {id} of this dashboard");
        dlq.cancel_replay(serde_json::json!({ "replay_request": id }), detail, || job.cancel()).await?;
        Ok(see_other(&chrome.url(&format!("/replays/{id}"))))
    }
    .await;
    fail(&chrome, result)
}

pub(crate) async fn recover(State(state): State<Shared>, Extension(ctx): Ctx, body: Bytes) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = (|| {
        needs_solving(&state)?;
        let form = Form::read(&body, &["owner", "resume"])?;
        let owner = form.one("owner").ok_or_else(|| Failure::bad_request("owner: whose entries to recover"))?;
        let resume = match form.one("resume") {
            Some("true") | None => true,
            Some("false") => false,
            Some(other) => return Err(Failure::bad_request(format!("resume: {other:?} is not true or false"))),
        };
        state.recoveries.start(&state.client, operator_of(&ctx)?, owner.to_string(), resume, state.changed());
        Ok(see_other(&chrome.url("/journal")))
    })();
    fail(&chrome, result)
}

/// Ends an account hold at once (`Client::resume_accounts`, audited under the operator's name):
/// the provider named by `provider`, or every provider without it.
pub(crate) async fn resume_accounts(State(state): State<Shared>, Extension(ctx): Ctx, body: Bytes) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let form = Form::read(&body, &["provider"])?;
        let operator = operator_of(&ctx)?;
        state.client.resume_accounts(form.one("provider"), &operator).await?;
        Ok(see_other(&chrome.url("/fleet")))
    }
    .await;
    fail(&chrome, result)
}

pub(crate) async fn login(State(state): State<Shared>, Extension(ctx): Ctx, body: Bytes) -> Response {
    let chrome = chrome(&state, &ctx);
    if !state.roles.required() {
        return see_other(&chrome.url("/"));
    }
    let given = form_urlencoded::parse(&body).find(|(k, _)| k == "token").map(|(_, v)| v.into_owned());
    if let Some(who) = given.and_then(|given| state.roles.holder(&given)) {
        let session = match state.roles.open_session(who) {
            Ok(id) => id,
            Err(e) => return Failure::conflict(e.to_string()).page(&chrome),
        };
        let mut response = see_other(&chrome.url("/"));
        let cookie = session_cookie(&session, &chrome.base, state.roles.max_session(), state.config.https);
        if let Ok(cookie) = cookie.parse() {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
        response
    } else {
        tracing::warn!(target: "captcha_dlq", "dashboard: a login with a wrong token was refused");
        (StatusCode::UNAUTHORIZED, html(views::login(&chrome, Some("That is not the token.")))).into_response()
    }
}

/// `POST /logout` (CSRF-checked like every action, allowed to viewers): ends the session of the
/// request's cookie, tells the browser to forget the cookie, and goes to the login page.
pub(crate) async fn logout(
    State(state): State<Shared>,
    Extension(ctx): Ctx,
    headers: axum::http::HeaderMap,
) -> Response {
    let chrome = chrome(&state, &ctx);
    if let Some(given) = crate::security::cookie(&headers, crate::security::SESSION_COOKIE) {
        if state.roles.close_session(&given) {
            tracing::info!(target: "captcha_dlq", who = %ctx.identity.name, "dashboard: logged out");
        }
    }
    let to = if state.roles.required() { "/login" } else { "/" };
    let mut response = see_other(&chrome.url(to));
    if let Ok(cookie) = crate::security::cleared_cookie(&chrome.base, state.config.https).parse() {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}
