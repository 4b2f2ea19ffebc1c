//! The dashboard's own secrets (the CSRF token, and the session ids of `crate::roles`, drawn
//! from the OS's randomness), and how any secret is compared: in constant time (`subtle`), so response
//! timing does not tell an attacker how much of a guess was right.

use base64::Engine as _;
use subtle::ConstantTimeEq;

use crate::error::DashboardError;

/// Per-instance secrets, drawn from the OS's randomness when the router is built.
pub(crate) struct Secrets {
    /// Required on every mutating request; embedded in the pages.
    pub(crate) csrf: String,
}

impl Secrets {
    pub(crate) fn new() -> Result<Secrets, DashboardError> {
        Ok(Secrets { csrf: random_text(32)? })
    }
}

/// `n` random bytes as URL-safe base64.
pub(crate) fn random_text(n: usize) -> Result<String, DashboardError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| {
        DashboardError::Config(format!("the OS could not provide random bytes for the dashboard's secrets: {e}"))
    })?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Equal, in time that depends only on the lengths.
pub(crate) fn same_secret(given: &str, expected: &str) -> bool {
    given.as_bytes().ct_eq(expected.as_bytes()).into()
}
