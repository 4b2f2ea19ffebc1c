//! captcha-dlq's operator dashboard: a web UI over a client's dead-letter
//! queue and a Prometheus `/metrics` endpoint, secure by default.
//!
//! Pages: an overview (counts by state, reason, class, provider, sitekey and
//! page host; failures over time; oldest age; the circuit and the balance),
//! records (filter, search, paging that stays fast on large queues), groups
//! with actions on a whole group (ServicePulse), a record's timeline, the
//! journal with recovery of a dead owner's tasks, the fleet (every client
//! sharing the store and each provider account's shared limits, from the
//! store's fleet ledger), replay requests at a chosen rate with live
//! progress and cancel (the SQS console's redrive), and the audit trail (who
//! replayed, parked, unparked, purged or imported what).
//! Purges need the number of records typed (Service Bus Explorer).
//!
//! Security: [`serve`] listens on loopback unless given a token; every
//! mutating request needs the page's CSRF token and the same origin; every
//! response carries a CSP with a nonce, `nosniff` and `no-store`;
//! [`DashboardConfig::read_only`] hides and refuses every action, and so does
//! a viewer's token ([`roles`]). The API key
//! is in no page, response or log.
//!
//! Two ways in: [`router`] is an `axum::Router` a Rust service nests under a
//! path of its own; [`serve`] runs it on its own address (the CLI's
//! `captcha-dlq dashboard`, and what the Python and Node bindings call).

mod actions;
mod api;
mod assets;
mod audit;
pub mod config;
mod edit;
mod edit_request;
mod error;
mod fleet;
mod overview;
mod pages;
mod query;
mod recoveries;
mod replays;
mod respond;
pub mod roles;
mod scan;
mod secrets;
mod security;
mod server;
mod state;
mod views;

use axum::routing::{get, post};
use axum::Router;
use captcha_dlq_client::Client;

pub use config::{
    parse_listen, DashboardConfig, DashboardOptions, TlsFiles, DEFAULT_LISTEN, DEFAULT_SESSION_IDLE_MS,
    DEFAULT_SESSION_MAX_MS, MIN_SESSION_MS, TOKEN_ENV,
};
pub use error::DashboardError;
pub use roles::{NamedToken, Role, MIN_TOKEN_LEN};
pub use server::{serve, DashboardHandle};

/// The dashboard as a router over `client` (its DLQ, journal and metrics), to serve or to
/// nest in a service (`Router::nest("/dlq", router)`: links follow the mount path).
///
/// Without a token (and with `loopback_only`, the default), serve it with
/// `into_make_service_with_connect_info::<SocketAddr>()`: the loopback rule needs the
/// peer's address, and every request is refused without it.
/// Nested in a service that listens beyond loopback, either set a token, or put the
/// router behind the service's own authentication and turn `loopback_only` off.
pub fn router(client: Client, config: DashboardConfig) -> Result<Router, DashboardError> {
    let state = state::AppState::new(client, config)?;
    let router = Router::new()
        .route("/", get(pages::overview))
        .route("/records", get(pages::records))
        .route("/records/{id}", get(pages::record))
        .route("/groups", get(pages::groups))
        .route("/journal", get(pages::journal))
        .route("/fleet", get(pages::fleet))
        .route("/replays", get(pages::replays))
        .route("/replays/{id}", get(pages::replay))
        .route("/audit", get(audit::page))
        .route("/api/audit", get(audit::api))
        .route("/login", get(pages::login_page).post(actions::login))
        .route("/logout", post(actions::logout))
        .route("/export", get(api::export))
        .route("/metrics", get(api::metrics))
        .route("/api/summary", get(api::summary))
        .route("/api/count", get(api::count_matching))
        .route("/api/balance", get(api::balance))
        .route("/api/fleet", get(api::fleet))
        .route("/api/replays/{id}", get(api::replay_progress))
        .route("/edit", get(edit::form))
        .route("/actions/edit", post(edit::act))
        .route("/actions/replay", post(actions::replay))
        .route("/actions/selected", post(actions::selected))
        .route("/actions/park", post(actions::park))
        .route("/actions/unpark", post(actions::unpark))
        .route("/actions/purge", post(actions::purge))
        .route("/actions/recover", post(actions::recover))
        .route("/actions/resume-accounts", post(actions::resume_accounts))
        .route("/actions/replays/{id}/cancel", post(actions::cancel_replay))
        .route("/assets/app.css", get(assets::css))
        .route("/assets/app.js", get(assets::js))
        .layer(axum::middleware::from_fn_with_state(state.clone(), security::guard))
        .with_state(state);
    Ok(router)
}
