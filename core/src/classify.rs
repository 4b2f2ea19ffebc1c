//! The error table of docs/decisions/0064-error-classes.md: provider code → class, minimum delay and a
//! human description.
//!
//! One table holds the 2captcha-compatible (v1) codes and the createTask
//! dialects' codes (anti-captcha, CapSolver, 2captcha v2, CapMonster), mapped
//! onto the same classes. Per-provider overrides (CaptchaAI's
//! `ERROR_ZERO_BALANCE`) live with each provider's facts (the `provider` module, which reads
//! this table).
//!
//! Unknown `ERROR_*` codes are `fix_input`: a code we do not understand is a
//! refusal we cannot reason about, and retrying it automatically could burn
//! money or get the account banned; an operator looks at it instead. Anything
//! else we do not recognise is treated as a garbled answer: `transient`.

use core::time::Duration;

use crate::class::ErrorClass;

use ErrorClass::{AccountTerminal as Account, FixInput as Fix, NotReady, RetryAfter, TaskTerminal as Task, Transient};

/// One row: code, class, minimum wait in seconds, description.
type Row = (&'static str, ErrorClass, Option<u64>, &'static str);

const MIN: u64 = 60;

/// Every code this client knows, in one place.
pub const TABLE: &[Row] = &[
    // not ready
    ("CAPCHA_NOT_READY", NotReady, None, "the solver is still working on the task"),
    ("CAPTCHA_NOT_READY", NotReady, None, "the solver is still working on the task"),
    ("processing", NotReady, None, "the solver is still working on the task"),
    ("idle", NotReady, None, "the task is queued at the service"),
    // retry after
    ("ERROR_NO_SLOT_AVAILABLE", RetryAfter, Some(5), "no free worker at the service (queue full or bid too low)"),
    ("MAX_USER_TURN", RetryAfter, Some(10), "too many submissions in a short time; the service paused this client"),
    ("ERROR: 1001", RetryAfter, Some(10 * MIN), "too many ERROR_NO_SLOT_AVAILABLE answers; banned for 10 minutes"),
    ("ERROR: 1002", RetryAfter, Some(5 * MIN), "too many ERROR_ZERO_BALANCE answers; banned for 5 minutes"),
    ("ERROR: 1003", RetryAfter, Some(30), "too many ERROR_NO_SLOT_AVAILABLE answers; banned for 30 seconds"),
    (
        "ERROR: 1004",
        RetryAfter,
        Some(10 * MIN),
        "this IP is blocked for too many wrong API keys; banned for 10 minutes",
    ),
    // 10 minutes, as 2captcha's request-limits table says (https://2captcha.com/api-docs/limits).
    ("ERROR: 1005", RetryAfter, Some(10 * MIN), "too many result polls; banned for 10 minutes"),
    ("IP_BANNED", RetryAfter, Some(5 * MIN), "this IP is banned for too many wrong API keys; banned for 5 minutes"),
    // CapMonster: a temporary block for too many wrong-key requests, lifted after 10 minutes
    // (https://docs.capmonster.cloud/docs/api/api-errors, .../api/block-reason).
    ("ERROR_IP_BANNED", RetryAfter, Some(10 * MIN), "this IP is blocked for too many bad requests; for 10 minutes"),
    ("ERROR_RATE_LIMIT", RetryAfter, Some(5), "the service's request rate limit was hit"),
    ("ERROR_TOO_MUCH_REQUESTS", RetryAfter, Some(10), "too many requests; the service asks to slow down"),
    // CaptchaAI: "server errors (ERROR_SERVER_ERROR, ERROR_INTERNAL_SERVER_ERROR): retry after 10
    // seconds with exponential backoff" (https://blog.captchaai.com/captchaai-error-codes-reference).
    ("ERROR_SERVER_ERROR", RetryAfter, Some(10), "the service had an internal error; retrying after 10 s"),
    ("ERROR_INTERNAL_SERVER_ERROR", RetryAfter, Some(10), "the service had an internal error; retrying after 10 s"),
    // transient (the service's own trouble)
    ("ERROR_SERVICE_UNAVALIABLE", Transient, None, "the service is temporarily unavailable"),
    ("ERROR_SERVICE_UNAVAILABLE", Transient, None, "the service is temporarily unavailable"),
    // task terminal, resubmittable
    ("ERROR_CAPTCHA_UNSOLVABLE", Task, None, "the solver could not solve the challenge"),
    ("ERROR_BAD_DUPLICATES", Task, None, "the workers could not agree on an answer (100% recognition mode)"),
    ("ERROR_NO_SUCH_CAPCHA_ID", Task, None, "the service no longer knows this task (expired); submit it again"),
    // CapMonster's other spelling of the same (https://docs.capmonster.cloud/docs/api/api-errors).
    // Not retried: repeated polls of a wrong id get the account blocked (.../api/block-reason).
    ("WRONG_CAPTCHA_ID", Task, None, "the service does not know this task id (expired); submit it again"),
    ("ERROR_TASKID_INVALID", Task, None, "the service no longer knows this task id; submit it again"),
    ("ERROR_TASK_TIMEOUT", Task, None, "the service gave up on the task in its own time limit"),
    ("ERROR_RECAPTCHA_TIMEOUT", Task, None, "the solver timed out loading the reCAPTCHA"),
    ("ERROR_FAILED_LOADING_WIDGET", Task, None, "the solver could not load the widget"),
    ("ERROR_TASK_CANCELED", Task, None, "the service cancelled the task"),
    ("ERROR_UNKNOWN_QUESTION", Task, None, "the solver did not recognise the challenge's question"),
    // fix input: the task's parameters
    ("ERROR_PAGEURL", Fix, None, "pageurl is missing or invalid"),
    ("ERROR_GOOGLEKEY", Fix, None, "the sitekey (googlekey) is missing or malformed"),
    ("ERROR_WRONG_GOOGLEKEY", Fix, None, "the sitekey (googlekey) is missing or malformed"),
    ("ERROR_BAD_TOKEN_OR_PAGEURL", Fix, None, "the sitekey and page URL do not match the challenge"),
    ("ERROR_BAD_PARAMETERS", Fix, None, "required parameters are missing or malformed"),
    ("ERROR_WRONG_CAPTCHA_ID", Fix, None, "the task id is malformed"),
    ("ERROR_WRONG_ID_FORMAT", Fix, None, "the task id is malformed"),
    ("ERROR_EMPTY_ACTION", Fix, None, "the request had no action"),
    ("ERROR_TOKEN_EXPIRED", Fix, None, "the challenge's token (e.g. GeeTest challenge) expired; fetch a fresh one"),
    ("ERROR_METHOD_CALL", Fix, None, "the method or its parameters are wrong for this service"),
    // Terminal for the report: sending it again cannot succeed (https://2captcha.com/h/how-to-submit-reports).
    ("ERROR_REPORT_NOT_RECORDED", Fix, None, "the report was refused (too late, or too many reports)"),
    ("REPORT_NOT_RECORDED", Fix, None, "the report was refused (too late, or too many reports)"),
    ("ERROR_DUPLICATE_REPORT", Fix, None, "this task was already reported"),
    ("ERROR_IP_ADDRES", Fix, None, "the pingback IP address is not registered"),
    ("ERROR_RECAPTCHA_INVALID_SITEKEY", Fix, None, "the sitekey is not valid for reCAPTCHA"),
    ("ERROR_RECAPTCHA_INVALID_DOMAIN", Fix, None, "the sitekey is not valid for this domain"),
    ("ERROR_RECAPTCHA_OLD_BROWSER", Fix, None, "the challenge rejects old browsers; send a recent userAgent"),
    ("ERROR_INVISIBLE_RECAPTCHA", Fix, None, "the reCAPTCHA is invisible; set invisible"),
    ("ERROR_VISIBLE_RECAPTCHA", Fix, None, "the reCAPTCHA is visible; unset invisible"),
    ("ERROR_INCORRECT_SESSION_DATA", Fix, None, "the task's session data (cookies, userAgent, data) is inconsistent"),
    ("ERROR_INVALID_TASK_DATA", Fix, None, "the task data is invalid for this service"),
    ("ERROR_BAD_REQUEST", Fix, None, "the service rejected the request as malformed"),
    ("ERROR_TASK_ABSENT", Fix, None, "the request has no task object"),
    ("ERROR_TEMPLATE_NOT_FOUND", Fix, None, "no solving template exists for this challenge"),
    ("ERROR_ALL_WORKERS_FILTERED", Fix, None, "every worker is filtered out by this request's restrictions"),
    // image errors
    ("ERROR_ZERO_CAPTCHA_FILESIZE", Fix, None, "the image is smaller than 100 bytes"),
    ("ERROR_TOO_BIG_CAPTCHA_FILESIZE", Fix, None, "the image is too big"),
    ("ERROR_WRONG_FILE_EXTENSION", Fix, None, "the image type is not accepted"),
    ("ERROR_IMAGE_TYPE_NOT_SUPPORTED", Fix, None, "the image format could not be recognised"),
    ("ERROR_UPLOAD", Fix, None, "the image upload was malformed"),
    ("ERROR_CAPTCHAIMAGE_BLOCKED", Fix, None, "this image is blocked by the service"),
    ("TOO_MANY_BAD_IMAGES", Fix, None, "too many unrecognisable images were sent"),
    ("ERROR_INVALID_IMAGE", Fix, None, "the image is invalid"),
    ("ERROR_PARSE_IMAGE_FAIL", Fix, None, "the image could not be decoded"),
    ("ERROR_PROXY_HAS_NO_IMAGE_SUPPORT", Fix, None, "the proxy cannot load the captcha image"),
    // proxy errors
    ("ERROR_BAD_PROXY", Fix, None, "the proxy is invalid or unreachable"),
    ("ERROR_PROXY_CONNECTION_FAILED", Fix, None, "the solver could not connect through the proxy"),
    ("ERROR_PROXY_CONNECT_REFUSED", Fix, None, "the proxy refused the connection"),
    ("ERROR_PROXY_CONNECT_TIMEOUT", Fix, None, "the proxy connection timed out"),
    ("ERROR_PROXY_READ_TIMEOUT", Fix, None, "reading through the proxy timed out"),
    ("ERROR_PROXY_BANNED", Fix, None, "the proxy is banned by the target site"),
    ("ERROR_PROXY_TRANSPARENT", Fix, None, "the proxy is transparent (reveals the client IP)"),
    ("ERROR_PROXY_NOT_AUTHORISED", Fix, None, "the proxy login or password is wrong"),
    ("ERROR_PROXY_INCOMPATIBLE_HTTP_VERSION", Fix, None, "the proxy does not support the needed HTTP version"),
    // refusals of a kind (hCaptcha and others the service no longer solves)
    ("ERROR_NO_SUCH_METHOD", Fix, None, "the service does not support this task kind"),
    ("ERROR_METHOD_DOES_NOT_EXIST", Fix, None, "the service does not support this task kind"),
    ("ERROR_TASK_NOT_SUPPORTED", Fix, None, "the service does not support this task type"),
    ("ERROR_HCAPTCHA_NOT_SUPPORTED", Fix, None, "the service no longer solves hCaptcha"),
    // account terminal
    ("ERROR_WRONG_USER_KEY", Account, None, "the API key is malformed"),
    ("ERROR_KEY_DOES_NOT_EXIST", Account, None, "the API key does not exist"),
    ("ERROR_ZERO_BALANCE", Account, None, "the account has no money left"),
    ("ERROR_IP_NOT_ALLOWED", Account, None, "this IP address is not in the account's allowed list"),
    ("IP_BLOCKED", Account, None, "this IP address is blocked by the service"),
    ("ERROR_IP_BLOCKED", Account, None, "this IP address is blocked by the service"),
    ("ERROR_KEY_DENIED_ACCESS", Account, None, "the API key is denied access"),
    ("ERROR_ACCOUNT_SUSPENDED", Account, None, "the account is suspended"),
    ("ERROR_SETTLEMENT_FAILED", Account, None, "the account could not be charged"),
];

/// Codes every table test and vector file must cover.
pub fn known_codes() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|r| r.0)
}

fn row(code: &str) -> Option<&'static Row> {
    TABLE.iter().find(|r| r.0 == code)
}

/// Whether `text` is a code of the table (as opposed to an answer or garbage).
pub fn is_known(code: &str) -> bool {
    row(code).is_some()
}

/// Whether `text` looks like a provider error code, known or not.
pub fn looks_like_error(text: &str) -> bool {
    text.starts_with("ERROR") || is_known(text)
}

/// Class and minimum wait for a provider code, before per-provider overrides.
pub fn class_of(code: &str) -> (ErrorClass, Option<Duration>) {
    match row(code) {
        Some(&(_, class, secs, _)) => (class, secs.map(Duration::from_secs)),
        // See the module doc: never auto-retry a refusal we do not understand.
        None if code.starts_with("ERROR") => (Fix, None),
        None => (Transient, None),
    }
}

/// Codes that say the service has no free worker right now: the answer to them is fewer
/// tasks at once, not a pause of the whole provider (see `Failure::congestion`).
pub const CONGESTION: &[&str] = &["ERROR_NO_SLOT_AVAILABLE"];

/// Human text for a code (never containing the key: it only knows the code).
pub fn describe(code: &str) -> &'static str {
    match row(code) {
        Some(r) => r.3,
        None if code.starts_with("ERROR") => "the service answered an error code this client does not know",
        None => "the service answered something this client could not understand",
    }
}

/// Whether `code` is a service's refusal of a task *type* rather than of a task: it does not
/// solve that kind at all (no longer, or not on this account). Nothing was paid, and another
/// service may well solve the same task, so the engine moves it there
/// (`engine::reaction`, `Reaction::KindUnsupported`) instead of dead-lettering it as an input to fix.
pub fn says_kind_unsupported(code: &str) -> bool {
    matches!(code, "ERROR_TASK_NOT_SUPPORTED" | "ERROR_HCAPTCHA_NOT_SUPPORTED")
}

/// Whether `code` says the account has no money left (as opposed to a key or IP error): a top-up
/// fixes it, so by default the engine holds the tasks for it (`circuit.account_hold_ms`)
/// rather than dead-lettering them. CaptchaAI's `ERROR_ZERO_BALANCE` ("no free thread") is
/// reclassed by its provider before this is asked.
pub fn says_no_money(code: &str) -> bool {
    matches!(code, "ERROR_ZERO_BALANCE")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_no_duplicates_and_matches_design() {
        let mut codes: Vec<&str> = known_codes().collect();
        codes.sort_unstable();
        let before = codes.len();
        codes.dedup();
        assert_eq!(before, codes.len(), "duplicate code in TABLE");
        assert_eq!(class_of("ERROR: 1003"), (RetryAfter, Some(Duration::from_secs(30))));
        assert_eq!(class_of("ERROR_CAPTCHA_UNSOLVABLE"), (Task, None));
        assert_eq!(class_of("ERROR_ZERO_BALANCE"), (Account, None));
        assert_eq!(class_of("ERROR_SOMETHING_NEW"), (Fix, None));
        assert_eq!(class_of("<html>"), (Transient, None));
        assert!(looks_like_error("MAX_USER_TURN"));
        assert!(!looks_like_error("03AGdBq26"));
    }
}
