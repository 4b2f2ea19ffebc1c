//! The hooks of the declared kinds: the few wire forms the kind files cannot say as data, each a
//! small function that adjusts the task object a `[[create_task]]` form built
//! (docs/decisions/0078-one-task-model.md). A form names its hook (`hook = "name"`); `HOOKS` is
//! the one table of them, which `core/build.rs` reads to refuse a name not in it, naming the file.
//!
//! A hook only adjusts values: what a dialect refuses is said by the tables (a field with no
//! key, `requires`, a form for a proxy), so that the check routing asks of every lane needs no hook.

use serde_json::{Map, Value};

use super::Dialect;
use crate::task::Declared;

/// A hook: the dialect, the declared task and the object built from its form.
type Hook = fn(Dialect, &Declared, &mut Map<String, Value>);

/// Every hook, by the name a kind file gives it.
const HOOKS: &[(&str, Hook)] = &[("score_queue", score_queue), ("api_domain", api_domain)];

/// Runs the hook named `name` (one of [`HOOKS`]: the build refused any other name).
pub(super) fn run(name: &str, d: Dialect, t: &Declared, object: &mut Map<String, Value>) {
    if let Some((_, hook)) = HOOKS.iter().find(|(n, _)| *n == name) {
        hook(d, t, object);
    }
}

/// The reCAPTCHA v3 worker queues anti-captcha and 2captcha API v2 document: `minScore` is
/// required and one of these (https://anti-captcha.com/apidoc/task-types/RecaptchaV3TaskProxyless,
/// https://2captcha.com/api-docs/recaptcha-v3). Unset asks for the lowest, the queue with most
/// workers; a value between two queues takes the next one up, so the token is at least as good as
/// asked. (The official anti-captcha client, anticaptchaofficial/recaptchav3proxyless.py, offers
/// 0.5/0.7/0.9; the documentation wins.) The form maps `min_score` to no key; this writes `minScore`.
const SCORE_QUEUES: [f64; 3] = [0.3, 0.7, 0.9];

fn score_queue(_: Dialect, t: &Declared, object: &mut Map<String, Value>) {
    let wanted = t.get("min_score").and_then(Value::as_f64).unwrap_or(SCORE_QUEUES[0]);
    let queue = SCORE_QUEUES.into_iter().find(|q| wanted <= *q).unwrap_or(SCORE_QUEUES[2]);
    object.insert("minScore".into(), queue.into());
}

/// The task's `domain` (`google.com` | `recaptcha.net`, a declared choice), sent under
/// `apiDomain`, as each dialect documents it:
/// - anti-captcha and CapMonster: `www.google.com` / `www.recaptcha.net`
///   (https://anti-captcha.com/apidoc/task-types/RecaptchaV2EnterpriseTask,
///   https://docs.capmonster.cloud/docs/captchas/recaptcha-v2-enterprise-task);
/// - CapSolver: `http://www.google.com/` / `http://www.recaptcha.net/`
///   (https://docs.capsolver.com/guide/captcha/ReCaptchaV2);
/// - 2captcha API v2: `google.com` / `recaptcha.net` as given (https://2captcha.com/api-docs/recaptcha-v3).
fn api_domain(d: Dialect, _: &Declared, object: &mut Map<String, Value>) {
    let Some(Value::String(domain)) = object.get_mut("apiDomain") else { return };
    *domain = match d {
        Dialect::AntiCaptcha | Dialect::CapMonster => format!("www.{domain}"),
        Dialect::CapSolver => format!("http://www.{domain}/"),
        Dialect::TwoCaptchaV2 => return,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every hook a kind file names is in the table (the build checks the names; this, that
    /// `run` finds each).
    #[test]
    fn every_named_hook_is_registered() {
        for d in crate::task::kinds::DECLS {
            let crate::task::kinds::Wire::Declared { create_task, .. } = &d.wire else { continue };
            for name in create_task.iter().filter_map(|c| c.hook) {
                assert!(HOOKS.iter().any(|(n, _)| *n == name), "{}: hook {name}", d.kind);
            }
        }
    }
}
