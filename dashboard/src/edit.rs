//! Editing records before a replay: the form (`GET /edit?<selection>`, for one record or a
//! filtered set), its preview showing each record's diff, then "Apply" or "Apply and replay"
//! (`POST /actions/edit`, guarded like every action: CSRF, origin, refused when read-only).
//! The edit is the client's `Dlq::edit`; "Apply and replay" replays exactly the records it
//! changed, as a replay request of the replays page.

use crate::edit_request::EditRequest;
use crate::query::Selection;
use crate::replays::Target;
use crate::respond::{chrome, html, Failure};
use crate::security::{RequestContext, CSRF_FIELD};
use crate::state::Shared;
use crate::views::{self, Chrome};
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Extension;

type Ctx = Extension<RequestContext>;

/// The fields of the edit form.
const FIELDS: [&str; 4] = ["filter", "task", "labels", "step"];

/// `GET /edit?<selection>`: the form.
pub(crate) async fn form(State(state): State<Shared>, Extension(ctx): Ctx, RawQuery(query): RawQuery) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        refuse_read_only(&chrome)?;
        let selection = selection(&state, query.as_deref().unwrap_or(""))?;
        let matching = state.client.dlq().count(&selection.filter).await?;
        let request = EditRequest { selection, task_text: String::new(), labels_text: String::new() };
        Ok::<_, Failure>(html(views::edit::form(&chrome, &request, matching, None)))
    }
    .await;
    result.unwrap_or_else(|f| f.page(&chrome))
}

/// `POST /actions/edit`: `step` = `preview`, `apply` or `apply_replay`.
pub(crate) async fn act(State(state): State<Shared>, Extension(ctx): Ctx, body: Bytes) -> Response {
    let chrome = chrome(&state, &ctx);
    let result = async {
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(&body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        if let Some((unknown, _)) = pairs.iter().find(|(k, _)| k != CSRF_FIELD && !FIELDS.contains(&k.as_str())) {
            return Err(Failure::bad_request(format!("{unknown}: unknown form field; known: {}", FIELDS.join(", "))));
        }
        let field = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let Some(filter) = field("filter") else {
            return Err(Failure::bad_request("filter: which records to edit (empty: every record)"));
        };
        let request = EditRequest {
            selection: selection(&state, &filter)?,
            task_text: field("task").unwrap_or_default(),
            labels_text: field("labels").unwrap_or_default(),
        };
        let edit = match request.edit() {
            Ok(edit) => edit,
            Err(failure) => {
                // Back to the form, with what was typed and what is wrong with it.
                let matching = state.client.dlq().count(&request.selection.filter).await?;
                let page = views::edit::form(&chrome, &request, matching, Some(&failure.message));
                return Ok((failure.status, html(page)).into_response());
            }
        };
        // Edits are entered in the audit trail under the token holder's name.
        let dlq = crate::actions::dlq_of(&state, &ctx)?;
        match field("step").as_deref() {
            Some("preview") => {
                let report = dlq.edit(&request.selection.filter, &edit, true).await?;
                Ok(html(views::edit::preview(&chrome, &request, &report)))
            }
            Some("apply") => {
                let report = dlq.edit(&request.selection.filter, &edit, false).await?;
                state.overview.invalidate();
                Ok(html(views::edit::applied(&chrome, &request, &report)))
            }
            Some("apply_replay") => {
                if !chrome.solving {
                    return Err(Failure::conflict(
                        "this dashboard was started without an API key: replays need one; apply the edit alone",
                    ));
                }
                let report = dlq.edit(&request.selection.filter, &edit, false).await?;
                state.overview.invalidate();
                match report.edited_filter() {
                    Some(edited) => {
                        let what = format!("{} edited records", edited.ids.len());
                        let job = state.replays.start(
                            &state.client,
                            crate::actions::operator_of(&ctx)?,
                            what,
                            Target::Ids(edited.ids),
                            None,
                            state.changed(),
                        );
                        Ok(Redirect::to(&chrome.url(&format!("/replays/{}", job.id))).into_response())
                    }
                    None => Ok(html(views::edit::applied(&chrome, &request, &report))),
                }
            }
            other => Err(Failure::bad_request(format!("step: {other:?} is not one of preview, apply, apply_replay"))),
        }
    }
    .await;
    result.unwrap_or_else(|f| f.page(&chrome))
}

/// A read-only dashboard shows no edit form (its actions are refused by the guard too).
fn refuse_read_only(chrome: &Chrome) -> Result<(), Failure> {
    if chrome.read_only {
        return Err(Failure::conflict("this dashboard is read-only: records cannot be edited here"));
    }
    Ok(())
}

/// The records an edit selects; a text search cannot select records for an action.
fn selection(state: &Shared, query: &str) -> Result<Selection, Failure> {
    let selection = Selection::parse(query, state.now())?;
    if selection.text.is_some() {
        return Err(Failure::bad_request(
            "q: a text search cannot select records for an edit; filter by reason, sitekey, host, label or id",
        ));
    }
    Ok(selection)
}
