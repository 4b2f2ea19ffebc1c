//! How handlers answer: the page chrome of a request, and errors as HTML
//! pages (or JSON for `/api`) with the status that says what went wrong.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use captcha_dlq_client::Error;
use maud::Markup;

use crate::query::QueryError;
use crate::security::RequestContext;
use crate::state::Shared;
use crate::views::{self, Chrome};

pub(crate) fn chrome(state: &Shared, ctx: &RequestContext) -> Chrome {
    Chrome {
        base: ctx.base.clone(),
        nonce: ctx.nonce.clone(),
        csrf: state.secrets.csrf.clone(),
        read_only: state.config.read_only || !ctx.identity.may_act(),
        user: state.roles.required().then(|| (ctx.identity.name.clone(), ctx.identity.role)),
        solving: state.config.solving,
        live_ms: state.config.live_interval_ms,
        now: state.now(),
    }
}

pub(crate) fn html(markup: Markup) -> Response {
    Html(markup.into_string()).into_response()
}

/// A failed page: what to tell the operator, and the status.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: StatusCode,
    pub(crate) title: &'static str,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn bad_request(message: impl Into<String>) -> Failure {
        Failure { status: StatusCode::BAD_REQUEST, title: "Bad request", message: message.into() }
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> Failure {
        Failure { status: StatusCode::FORBIDDEN, title: "Not allowed", message: message.into() }
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Failure {
        Failure { status: StatusCode::NOT_FOUND, title: "Not found", message: message.into() }
    }

    pub(crate) fn conflict(message: impl Into<String>) -> Failure {
        Failure { status: StatusCode::CONFLICT, title: "Not done", message: message.into() }
    }

    /// As an HTML page in the dashboard's chrome.
    pub(crate) fn page(self, chrome: &Chrome) -> Response {
        let body = views::message(chrome, self.title, &self.message, Some(&chrome.url("/")));
        (self.status, Html(body.into_string())).into_response()
    }

    /// As `{"error": …}`.
    pub(crate) fn json(self) -> Response {
        (self.status, axum::Json(serde_json::json!({ "error": self.message }))).into_response()
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        match e {
            Error::Store(_) | Error::Closed => Failure {
                status: StatusCode::SERVICE_UNAVAILABLE,
                title: "The DLQ store did not answer",
                message: e.to_string(),
            },
            Error::Config(_) | Error::InvalidTask(_) => Failure::bad_request(e.to_string()),
            _ => Failure { status: StatusCode::BAD_GATEWAY, title: "Failed", message: e.to_string() },
        }
    }
}

impl From<QueryError> for Failure {
    fn from(e: QueryError) -> Failure {
        Failure::bad_request(e.to_string())
    }
}
