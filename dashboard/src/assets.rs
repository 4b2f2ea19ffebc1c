//! The stylesheet and script, embedded in the binary: the dashboard works
//! offline and loads nothing from elsewhere (no CDN, no build step).

use axum::http::header;
use axum::response::{IntoResponse, Response};

const APP_CSS: &str = include_str!("../assets/app.css");
const APP_JS: &str = include_str!("../assets/app.js");

pub(crate) async fn css() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS).into_response()
}

pub(crate) async fn js() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], APP_JS).into_response()
}
