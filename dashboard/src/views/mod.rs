//! Server-rendered pages (maud): the layout every page shares and small
//! formatting helpers. Pages carry no inline script or style: the CSP allows
//! only the embedded `app.js` and `app.css`, by nonce.

pub(crate) mod audit;
pub(crate) mod edit;
pub(crate) mod fleet;
pub(crate) mod groups;
pub(crate) mod journal;
pub(crate) mod overview;
pub(crate) mod record;
pub(crate) mod records;
pub(crate) mod replays;

use core::time::Duration;

use captcha_dlq_core::Timestamp;
use maud::{html, Markup, DOCTYPE};

use crate::security::CSRF_FIELD;

/// What the layout and every form need from the request and the configuration.
#[derive(Clone, Debug)]
pub(crate) struct Chrome {
    pub(crate) base: String,
    pub(crate) nonce: String,
    pub(crate) csrf: String,
    /// No action is shown: the dashboard is read-only, or its user a viewer.
    pub(crate) read_only: bool,
    /// Who is logged in, with their role (a dashboard with tokens); the login page has `""`.
    pub(crate) user: Option<(String, crate::roles::Role)>,
    /// Replays and recovery are possible (the client has a key).
    pub(crate) solving: bool,
    pub(crate) live_ms: u64,
    pub(crate) now: Timestamp,
}

impl Chrome {
    /// A dashboard URL (`path` starts with `/`).
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A dashboard URL with a query string (left out when empty).
    pub(crate) fn url_q(&self, path: &str, query: &str) -> String {
        if query.is_empty() {
            self.url(path)
        } else {
            format!("{}{path}?{query}", self.base)
        }
    }

    /// The hidden field every mutating form carries.
    pub(crate) fn csrf_field(&self) -> Markup {
        html! { input type="hidden" name=(CSRF_FIELD) value=(self.csrf); }
    }
}

/// Which navigation entry is current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nav {
    Overview,
    Records,
    Groups,
    Journal,
    Fleet,
    Replays,
    Audit,
    None,
}

pub(crate) fn page(chrome: &Chrome, title: &str, nav: Nav, body: Markup) -> Markup {
    let link = |target: Nav, path: &str, text: &str| {
        html! { a href=(chrome.url(path)) aria-current=[(nav == target).then_some("page")] { (text) } }
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="csrf-token" content=(chrome.csrf);
                meta name="dashboard-base" content=(chrome.base);
                title { (title) " · captcha-dlq" }
                link rel="stylesheet" href=(chrome.url("/assets/app.css")) nonce=(chrome.nonce);
                script src=(chrome.url("/assets/app.js")) nonce=(chrome.nonce) defer {}
            }
            body data-live-ms=(chrome.live_ms) {
                header {
                    a.brand href=(chrome.url("/")) { "captcha-dlq" }
                    nav {
                        (link(Nav::Overview, "/", "Overview"))
                        (link(Nav::Records, "/records", "Records"))
                        (link(Nav::Groups, "/groups", "Groups"))
                        (link(Nav::Journal, "/journal", "Journal"))
                        (link(Nav::Fleet, "/fleet", "Fleet"))
                        (link(Nav::Replays, "/replays", "Replays"))
                        (link(Nav::Audit, "/audit", "Audit"))
                    }
                    span.pill #dlq-total title="records in the DLQ (live)" { "DLQ: " span data-stat="total" { "…" } }
                    @if let Some((name, role)) = chrome.user.as_ref().filter(|(name, _)| !name.is_empty()) {
                        span.pill #whoami title="the token you logged in with: actions are recorded in the audit trail under its name" {
                            (name) " · " (role.as_str())
                        }
                        form.inline.logout method="post" action=(chrome.url("/logout")) {
                            (chrome.csrf_field())
                            button type="submit" title="end this session" { "Log out" }
                        }
                    }
                    @if chrome.read_only { span.pill.readonly title="actions are hidden and refused" { "read-only" } }
                    @else if !chrome.solving { span.pill.readonly title="start the dashboard with an API key to replay and recover" { "no API key: no replays" } }
                    label.live title="refresh counts and progress without reloading" {
                        input #live-toggle type="checkbox" checked;
                        " Live"
                    }
                }
                main { (body) }
                footer { "captcha-dlq dashboard · " a href=(chrome.url("/metrics")) { "/metrics" } " · the API key is never shown here" }
            }
        }
    }
}

/// A message page (errors, refusals, confirmations).
pub(crate) fn message(chrome: &Chrome, title: &str, text: &str, back: Option<&str>) -> Markup {
    page(
        chrome,
        title,
        Nav::None,
        html! {
            h1 { (title) }
            p.message { (text) }
            @if let Some(back) = back { p { a href=(back) { "Back" } } }
        },
    )
}

pub(crate) fn login(chrome: &Chrome, error: Option<&str>) -> Markup {
    page(
        chrome,
        "Log in",
        Nav::None,
        html! {
            h1 { "Log in" }
            p { "This dashboard needs its token (the one given to " code { "--token" } " or the environment)." }
            @if let Some(e) = error { p.error { (e) } }
            form method="post" action=(chrome.url("/login")) {
                (chrome.csrf_field())
                label { "Token " input type="password" name="token" autocomplete="current-password" required autofocus; }
                button type="submit" { "Log in" }
            }
        },
    )
}

/// `2026-11-21 10:00:06 UTC`.
pub(crate) fn when(t: Timestamp) -> String {
    let s = t.to_rfc3339();
    let s = s.split('.').next().unwrap_or(&s).trim_end_matches('Z');
    format!("{} UTC", s.replacen('T', " ", 1))
}

/// `3d 4h`, `12m 5s`, `40s`.
pub(crate) fn age(d: Duration) -> String {
    let secs = d.as_secs();
    let (days, hours, minutes, seconds) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, _) => format!("{minutes}m {seconds}s"),
        (0, _, _) => format!("{hours}h {minutes}m"),
        _ => format!("{days}d {hours}h"),
    }
}

/// A timestamp with its age as a tooltip-free pair: `12m 5s ago`.
pub(crate) fn ago(chrome: &Chrome, t: Timestamp) -> Markup {
    html! { time datetime=(t.to_rfc3339()) title=(when(t)) { (age(chrome.now.since(t))) " ago" } }
}

/// `12,345`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The replay-rate field of replay forms (records per second; empty: as fast as allowed).
pub(crate) fn rate_field() -> Markup {
    html! {
        label.rate title="records started per second; empty: as fast as the client's limits allow" {
            "at " input type="number" name="per_second" min="0.01" step="any" value="5" size="4"; " /s"
        }
    }
}

/// A purge form needing the number of records (or the word purge) typed.
pub(crate) fn purge_form(chrome: &Chrome, hidden: Markup, expected: Option<u64>, label: &str) -> Markup {
    let hint = match expected {
        Some(n) => format!("type {n} or purge to confirm"),
        None => "type the number of records or purge to confirm".to_string(),
    };
    html! {
        form.purge method="post" action=(chrome.url("/actions/purge")) data-expected=[expected] {
            (chrome.csrf_field())
            (hidden)
            input type="text" name="confirm" placeholder=(hint) autocomplete="off" aria-label=(hint) required;
            button.danger type="submit" { (label) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_ages_read_well() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(age(Duration::from_secs(42)), "42s");
        assert_eq!(age(Duration::from_secs(3 * 86_400 + 4 * 3600 + 5)), "3d 4h");
        assert_eq!(when(Timestamp::from_unix_millis(1_500)), "1970-01-01 00:00:01 UTC");
    }
}
