//! Who is using the dashboard: named tokens, each a `viewer` (sees every page, changes
//! nothing: every mutating request is refused with 403 and no action is shown) or an
//! `operator` (acts; the audit trail names them by the token's name). A login maps a fresh,
//! random session id to the token's name and role; the token itself is never stored in a
//! cookie, logged or rendered. A session ends when it has not been used for the idle limit,
//! at the absolute limit after its login however much it is used (`DashboardConfig`'s
//! `session_idle_ms` and `session_max_ms`), or at logout.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use captcha_dlq_client::Operator;
use captcha_dlq_core::support::json_read::{FieldError, Fields, FromJson};

use crate::error::DashboardError;
use crate::secrets::{random_text, same_secret};

/// Tokens shorter than this are refused: they could be guessed.
pub const MIN_TOKEN_LEN: usize = 16;

/// The name the single `token` option is known by.
pub const DEFAULT_TOKEN_NAME: &str = "default";
/// The name of whoever uses a dashboard that has no token (loopback only).
pub const LOCAL_NAME: &str = "local";
/// Sessions kept at most; the oldest login is forgotten first.
const MAX_SESSIONS: usize = 1000;

/// What a token lets its holder do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sees everything, changes nothing.
    Viewer,
    /// Sees everything and acts (replay, park, unpark, purge, recover).
    Operator,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
        }
    }
}

/// One token of the dashboard.
#[derive(Clone)]
pub struct NamedToken {
    /// Who holds it: shown on the pages and written in the audit trail.
    pub name: String,
    /// At least [`MIN_TOKEN_LEN`] characters; never shown.
    pub token: String,
    pub role: Role,
}

impl core::fmt::Debug for NamedToken {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NamedToken").field("name", &self.name).field("token", &"***").field("role", &self.role).finish()
    }
}

impl FromJson for Role {
    fn from_json(value: serde_json::Value) -> Result<Self, FieldError> {
        captcha_dlq_core::support::json_read::unit_variant(value, &[Role::Viewer, Role::Operator], Role::as_str)
    }
}

impl FromJson for NamedToken {
    fn from_json(value: serde_json::Value) -> Result<Self, FieldError> {
        let mut f = Fields::new(value)?;
        let token = NamedToken { name: f.req("name")?, token: f.req("token")?, role: f.req("role")? };
        f.finish()?;
        Ok(token)
    }
}

/// The tokens a dashboard takes: the single `token` (an operator named
/// [`DEFAULT_TOKEN_NAME`]) and the named ones. Checked: each long enough, no two alike, names
/// unique and usable as an operator's name. Errors name the token by its name, never its value.
pub fn all_tokens(token: Option<&str>, tokens: &[NamedToken]) -> Result<Vec<NamedToken>, DashboardError> {
    let single = token.map(|t| NamedToken { name: DEFAULT_TOKEN_NAME.into(), token: t.into(), role: Role::Operator });
    let all: Vec<NamedToken> = single.into_iter().chain(tokens.iter().cloned()).collect();
    for (i, t) in all.iter().enumerate() {
        let which = if t.name == DEFAULT_TOKEN_NAME && i == 0 && token.is_some() {
            "token".to_string()
        } else {
            format!("tokens: {:?}", t.name)
        };
        Operator::new(&t.name).map_err(|e| DashboardError::Config(format!("{which}: name: {}", e.problem)))?;
        if t.token.chars().count() < MIN_TOKEN_LEN {
            return Err(DashboardError::Config(format!(
                "{which}: must be at least {MIN_TOKEN_LEN} characters (a short token can be guessed)"
            )));
        }
        if let Some(other) = all[..i].iter().find(|o| o.name == t.name) {
            return Err(DashboardError::Config(format!("{which}: the name is given twice ({:?})", other.name)));
        }
        if let Some(other) = all[..i].iter().find(|o| o.token == t.token) {
            return Err(DashboardError::Config(format!(
                "{which}: has the same token as {:?}: each holder needs their own",
                other.name
            )));
        }
    }
    Ok(all)
}

/// Who a request comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) role: Role,
}

impl Identity {
    /// A dashboard without a token: whoever can reach loopback acts, as `local`.
    pub(crate) fn local() -> Identity {
        Identity { name: LOCAL_NAME.into(), role: Role::Operator }
    }

    pub(crate) fn may_act(&self) -> bool {
        self.role == Role::Operator
    }
}

/// One login's session.
struct Session {
    who: Identity,
    opened: Instant,
    last_used: Instant,
}

/// How long sessions last: unused, and at most.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SessionLimits {
    pub(crate) idle: Duration,
    pub(crate) max: Duration,
}

/// The tokens, and the sessions logins opened.
pub(crate) struct Roles {
    tokens: Vec<NamedToken>,
    limits: SessionLimits,
    /// Session id → its session, and the ids in login order (the oldest is forgotten first).
    sessions: Mutex<(HashMap<String, Session>, Vec<String>)>,
}

impl Roles {
    pub(crate) fn new(tokens: Vec<NamedToken>, limits: SessionLimits) -> Roles {
        Roles { tokens, limits, sessions: Mutex::new((HashMap::new(), Vec::new())) }
    }

    /// The absolute limit (the cookie's `Max-Age`).
    pub(crate) fn max_session(&self) -> Duration {
        self.limits.max
    }

    /// Whether any token is required.
    pub(crate) fn required(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// The holder of `given`. Every token is compared, in constant time, so timing tells
    /// nothing about which came close.
    pub(crate) fn holder(&self, given: &str) -> Option<Identity> {
        let mut found = None;
        for t in &self.tokens {
            if same_secret(given, &t.token) && found.is_none() {
                found = Some(Identity { name: t.name.clone(), role: t.role });
            }
        }
        found
    }

    /// Opens a session for `who`; its id goes in the cookie.
    pub(crate) fn open_session(&self, who: Identity) -> Result<String, DashboardError> {
        let id = random_text(32)?;
        let mut sessions = self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (by_id, order) = &mut *sessions;
        if order.len() >= MAX_SESSIONS {
            let oldest = order.remove(0);
            by_id.remove(&oldest);
        }
        let now = Instant::now();
        by_id.insert(id.clone(), Session { who, opened: now, last_used: now });
        order.push(id.clone());
        Ok(id)
    }

    /// Who the session `given` belongs to (compared in constant time with each), while it
    /// lasts; a session past a limit is forgotten here, and a live one counts as used now.
    pub(crate) fn session(&self, given: &str) -> Option<Identity> {
        let mut sessions = self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (by_id, order) = &mut *sessions;
        let id = by_id.keys().find(|id| same_secret(given, id))?.clone();
        let now = Instant::now();
        let session = by_id.get_mut(&id)?;
        let ended = now.duration_since(session.last_used) > self.limits.idle
            || now.duration_since(session.opened) > self.limits.max;
        if ended {
            by_id.remove(&id);
            order.retain(|o| *o != id);
            return None;
        }
        session.last_used = now;
        Some(session.who.clone())
    }

    /// Ends the session `given` (a logout); whether there was one.
    pub(crate) fn close_session(&self, given: &str) -> bool {
        let mut sessions = self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (by_id, order) = &mut *sessions;
        let Some(id) = by_id.keys().find(|id| same_secret(given, id)).cloned() else { return false };
        by_id.remove(&id);
        order.retain(|o| *o != id);
        true
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn limits() -> SessionLimits {
        SessionLimits { idle: Duration::from_secs(60), max: Duration::from_secs(600) }
    }

    fn named(name: &str, token: &str, role: Role) -> NamedToken {
        NamedToken { name: name.into(), token: token.into(), role }
    }

    #[test]
    fn tokens_are_long_distinct_and_uniquely_named_and_errors_never_show_them() {
        let ok = all_tokens(
            Some("the-single-operator-token"),
            &[
                named("alice", "alice-token-0123456789", Role::Operator),
                named("vic", "viewer-token-0123456789", Role::Viewer),
            ],
        )
        .unwrap();
        assert_eq!(ok.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["default", "alice", "vic"]);
        let short = all_tokens(None, &[named("bob", "short-secret", Role::Viewer)]).unwrap_err().to_string();
        assert!(short.contains("\"bob\"") && short.contains("16") && !short.contains("short-secret"), "{short}");
        let twice = all_tokens(
            None,
            &[named("a", "same-token-0123456789", Role::Viewer), named("b", "same-token-0123456789", Role::Operator)],
        )
        .unwrap_err()
        .to_string();
        assert!(twice.contains("same token as \"a\"") && !twice.contains("same-token-0123"), "{twice}");
        let names = all_tokens(
            Some("the-single-operator-token"),
            &[named("default", "another-token-0123456789", Role::Viewer)],
        )
        .unwrap_err()
        .to_string();
        assert!(names.contains("given twice"), "{names}");
        let empty = all_tokens(None, &[named("", "a-long-enough-token-0123", Role::Viewer)]).unwrap_err().to_string();
        assert!(empty.contains("name"), "{empty}");
    }

    #[test]
    fn a_session_maps_to_its_holder_and_nothing_else() {
        let roles = Roles::new(vec![named("vic", "viewer-token-0123456789", Role::Viewer)], limits());
        assert_eq!(roles.holder("viewer-token-0123456789").map(|i| i.role), Some(Role::Viewer));
        assert_eq!(roles.holder("viewer-token-012345678"), None);
        let id = roles.open_session(roles.holder("viewer-token-0123456789").unwrap()).unwrap();
        assert_eq!(roles.session(&id).map(|i| i.name), Some("vic".to_string()));
        assert_eq!(roles.session("not-a-session"), None);
    }
}
