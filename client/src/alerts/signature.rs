//! Webhook signatures, both sides: `X-Captcha-Dlq-Signature: t=<unix seconds>,v1=<hex>`,
//! the hex being the HMAC-SHA256, under the webhook's secret, of `<t>.<body>` (Stripe's
//! scheme). The time is signed with the body, so a captured request cannot be played again
//! once it is older than the receiver's tolerance, which a signature of the body alone allowed.
//!
//! [`verify_webhook`] is the receiver's check, here once: the Python and Node packages call it
//! rather than carry their own. It compares in constant time (`hmac`'s `verify_slice`), so the
//! answer's timing does not tell a forger how much of a guess was right.

use core::time::Duration;
use std::time::{SystemTime, UNIX_EPOCH};

use captcha_dlq_core::Secret;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The header that carries the signature.
pub const SIGNATURE_HEADER: &str = "X-Captcha-Dlq-Signature";

/// How far from the receiver's clock a signature's time may be, unless the receiver says.
pub const DEFAULT_WEBHOOK_TOLERANCE: Duration = Duration::from_secs(300);

/// Why a webhook request is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    #[error("malformed {SIGNATURE_HEADER} header: {0} (expected t=<unix seconds>,v1=<hex HMAC-SHA256>)")]
    Malformed(String),
    #[error(
        "the webhook's signature is {age_s} s away from this clock, more than the tolerance of {tolerance_s} s: \
         a stale or replayed request"
    )]
    Stale { age_s: u64, tolerance_s: u64 },
    #[error("the webhook's signature does not match its body under this secret")]
    Mismatch,
    #[error("the webhook secret is empty: give the `secret` the webhook was configured with")]
    EmptySecret,
}

/// The header's value for `body` sent at `at_unix_s`.
pub(crate) fn sign(secret: &Secret, at_unix_s: u64, body: &[u8]) -> String {
    let digest = mac(secret.expose().as_bytes(), at_unix_s, body).finalize().into_bytes();
    let mut out = format!("t={at_unix_s},v1=");
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Checks that `header` (the [`SIGNATURE_HEADER`]'s value) signs `body` under `secret` at a
/// time within `tolerance` of this machine's clock. A header may carry several `v1=` (a secret
/// being rotated): one matching is enough; other keys are ignored (a later scheme's).
pub fn verify_webhook(body: &[u8], header: &str, secret: &str, tolerance: Duration) -> Result<(), WebhookError> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    verify_webhook_at(body, header, secret, tolerance, now)
}

/// [`verify_webhook`] as if the clock read `now_unix_s`.
pub fn verify_webhook_at(
    body: &[u8],
    header: &str,
    secret: &str,
    tolerance: Duration,
    now_unix_s: u64,
) -> Result<(), WebhookError> {
    if secret.is_empty() {
        return Err(WebhookError::EmptySecret);
    }
    let (t, tags) = parse(header)?;
    let age_s = now_unix_s.abs_diff(t);
    if age_s > tolerance.as_secs() {
        return Err(WebhookError::Stale { age_s, tolerance_s: tolerance.as_secs() });
    }
    let expected = mac(secret.as_bytes(), t, body);
    if tags.iter().any(|tag| expected.clone().verify_slice(tag).is_ok()) {
        Ok(())
    } else {
        Err(WebhookError::Mismatch)
    }
}

fn mac(secret: &[u8], t: u64, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length: this cannot fail.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// The header's time and its `v1` tags (32 bytes each).
fn parse(header: &str) -> Result<(u64, Vec<Vec<u8>>), WebhookError> {
    let malformed = |why: String| WebhookError::Malformed(why);
    let mut t = None;
    let mut tags = Vec::new();
    for part in header.split(',').map(str::trim) {
        let (key, value) = part.split_once('=').ok_or_else(|| malformed(format!("{part:?} is not key=value")))?;
        match key {
            "t" if t.is_some() => return Err(malformed("two t= values".into())),
            "t" => t = Some(seconds(value).ok_or_else(|| malformed(format!("t={value:?} is not unix seconds")))?),
            "v1" => tags.push(unhex(value).ok_or_else(|| malformed(format!("v1={value:?} is not 64 hex digits")))?),
            _ => {}
        }
    }
    let t = t.ok_or_else(|| malformed("no t=".into()))?;
    if tags.is_empty() {
        return Err(malformed("no v1=".into()));
    }
    Ok((t, tags))
}

/// Decimal digits only (`u64`'s parser would take a `+` too).
fn seconds(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| text.get(i..i + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: u64 = 1_700_000_000;
    const TOLERANCE: Duration = DEFAULT_WEBHOOK_TOLERANCE;

    #[test]
    fn the_tag_is_the_hmac_sha256_of_the_time_a_dot_and_the_body() {
        // RFC 4231's test case 2 (key "Jefe"), its message prefixed with "<t>."; the value is
        // Python's hmac.new(b"Jefe", b"1700000000.what do ya want for nothing?", sha256).
        let header = sign(&Secret::new("Jefe"), AT, b"what do ya want for nothing?");
        assert_eq!(header, "t=1700000000,v1=1cdd0650c8be1cb0974b1788d458b1e781206cfef59b85faafc582d2e182c57e");
    }

    #[test]
    fn webhook_signatures_cover_the_time_a_genuine_one_verifies() {
        let header = sign(&Secret::new("s3cret"), AT, b"{\"event\":\"x\"}");
        assert_eq!(verify_webhook_at(b"{\"event\":\"x\"}", &header, "s3cret", TOLERANCE, AT + 299), Ok(()));
        assert_eq!(verify_webhook_at(b"{\"event\":\"x\"}", &header, "s3cret", TOLERANCE, AT - 299), Ok(()));
        let rotated = format!("{header},v1={}", "0".repeat(64));
        assert_eq!(verify_webhook_at(b"{\"event\":\"x\"}", &rotated, "s3cret", TOLERANCE, AT), Ok(()));
        let later_scheme = format!("v2=abc,{header}");
        assert_eq!(verify_webhook_at(b"{\"event\":\"x\"}", &later_scheme, "s3cret", TOLERANCE, AT), Ok(()));
    }

    #[test]
    fn webhook_signatures_refuse_tampering_stale_times_and_malformed_headers() {
        let body = b"{\"event\":\"x\"}";
        let header = sign(&Secret::new("s3cret"), AT, body);
        let check =
            |body: &[u8], header: &str, secret: &str, now: u64| verify_webhook_at(body, header, secret, TOLERANCE, now);
        assert_eq!(check(b"{\"event\":\"y\"}", &header, "s3cret", AT), Err(WebhookError::Mismatch));
        assert_eq!(check(body, &header, "other", AT), Err(WebhookError::Mismatch));
        // The body's signature moved to another time: the time is signed too.
        let moved = header.replacen(&format!("t={AT}"), &format!("t={}", AT + 100), 1);
        assert_eq!(check(body, &moved, "s3cret", AT), Err(WebhookError::Mismatch));
        assert_eq!(check(body, &header, "s3cret", AT + 301), Err(WebhookError::Stale { age_s: 301, tolerance_s: 300 }));
        assert_eq!(check(body, &header, "s3cret", AT - 301), Err(WebhookError::Stale { age_s: 301, tolerance_s: 300 }));
        assert_eq!(check(body, &header, "", AT), Err(WebhookError::EmptySecret));
        let v1 = header.split_once(",v1=").unwrap().1;
        let old_form = format!("sha256={v1}");
        for bad in [
            "",
            old_form.as_str(),
            &format!("v1={v1}"),
            &format!("t={AT}"),
            &format!("t=+{AT},v1={v1}"),
            &format!("t={AT},t={AT},v1={v1}"),
            &format!("t={AT},v1={}", &v1[..62]),
            &format!("t={AT},v1={}zz", &v1[..62]),
            &format!("t={AT},v1"),
        ] {
            let refused = check(body, bad, "s3cret", AT).unwrap_err();
            assert!(matches!(refused, WebhookError::Malformed(_)), "{bad:?}: {refused:?}");
            assert!(refused.to_string().contains("t=<unix seconds>,v1="), "{refused}");
        }
    }
}
