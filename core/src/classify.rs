//! The error table of DESIGN §3: provider code → class and minimum delay.
//!
//! OWNED BY THE CODEC WORK (helper A); this placeholder keeps the signature.

use core::time::Duration;

use crate::class::ErrorClass;

/// Class and minimum wait for a provider code, before per-provider overrides.
pub fn class_of(code: &str) -> (ErrorClass, Option<Duration>) {
    match code {
        "CAPCHA_NOT_READY" => (ErrorClass::NotReady, None),
        "ERROR_CAPTCHA_UNSOLVABLE" => (ErrorClass::TaskTerminal, None),
        "ERROR_NO_SLOT_AVAILABLE" => (ErrorClass::RetryAfter, Some(Duration::from_secs(5))),
        "ERROR_WRONG_USER_KEY" | "ERROR_KEY_DOES_NOT_EXIST" => (ErrorClass::AccountTerminal, None),
        _ => (ErrorClass::FixInput, None),
    }
}
