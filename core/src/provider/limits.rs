//! What each service documents about its own limits and timing, as the
//! engine's defaults (the engine's `EngineConfig::for_provider` reads them).
//!
//! `docs/providers.md` is the same table with the source of every figure; a
//! test (`core/tests/it/providers_doc.rs`) reads the document and fails when the
//! two differ. Where a service documents nothing, the figure is this project's
//! choice and the document says so.
//!
//! The give-up point of a kind is the service's own working time on it plus a
//! grace (so that its final answer, a solution or its own "unsolvable", comes
//! before the client resubmits and pays again), or the official client's wait
//! where the service names no working time. A kind follows the schedule of the kind it is
//! solved like (`TaskKind::schedule`: a token by a browser as hCaptcha, an image by a worker as
//! a normal image), as the services document working times for those kinds only.

use super::{Dialect, Protocol, Provider};
use crate::task::kind_ms::KindMs;
use crate::task::TaskKind::{Funcaptcha, GeetestV3, GeetestV4, Image, Raw, RecaptchaV2, RecaptchaV3, Text, Turnstile};

/// One service's documented limits.
#[derive(Debug, PartialEq)]
pub struct ServiceLimits {
    /// The preset name (`2captcha`, `capmonster`, ...).
    pub service: &'static str,
    /// Submissions per second at most.
    pub submits_per_second: f64,
    /// The least interval between two polls of one task.
    pub min_poll_interval_ms: u64,
    /// The service's documented limit of polls per task, where it documents one.
    pub poll_limit: Option<u32>,
    /// Polls per submission the engine makes at most (the limit, or half of it for margin).
    pub max_polls: u32,
    /// How long the service keeps a task's result, where it says.
    pub result_kept_ms: Option<u64>,
    /// First poll after submission, per kind.
    pub first_poll_ms: KindMs,
    /// The attempt is given up this long after submission, per kind.
    pub give_up_ms: KindMs,
}

const SECOND: u64 = 1000;

/// First polls of the 2captcha API: "wait at least 5 seconds (10-20 for recaptcha)"; the other
/// token kinds as reCAPTCHA v2 (they take as long).
const TWO_CAPTCHA_FIRST_POLL: KindMs = KindMs::uniform(15 * SECOND)
    .with_family(Image, 5 * SECOND)
    .with_family(Text, 5 * SECOND)
    .with_family(RecaptchaV3, 10 * SECOND)
    .with_family(Turnstile, 10 * SECOND)
    .with_family(Raw, 10 * SECOND);

/// 2captcha works up to 300 s on reCAPTCHA v2 and 90 s on anything else before it answers
/// `ERROR_CAPTCHA_UNSOLVABLE`; 20 s grace. A raw task may be a reCAPTCHA: the longest.
const TWO_CAPTCHA_GIVE_UP: KindMs =
    KindMs::uniform(110 * SECOND).with_family(RecaptchaV2, 320 * SECOND).with_family(Raw, 320 * SECOND);

/// 2captcha and rucaptcha (one API, two front doors): more than 60 `in.php` requests in 3 s is a
/// 10 s `MAX_USER_TURN` ban, i.e. 20/s; 16/s keeps any 3 s window at 49 or fewer. Poll every
/// 5 s, about 20 `res.php` requests per task.
pub const TWO_CAPTCHA: ServiceLimits = ServiceLimits {
    service: "2captcha",
    submits_per_second: 16.0,
    min_poll_interval_ms: 5 * SECOND,
    poll_limit: Some(20),
    max_polls: 20,
    result_kept_ms: None,
    first_poll_ms: TWO_CAPTCHA_FIRST_POLL,
    give_up_ms: TWO_CAPTCHA_GIVE_UP,
};

pub const RUCAPTCHA: ServiceLimits = ServiceLimits { service: "rucaptcha", ..TWO_CAPTCHA };

/// 2captcha's createTask front door (`api.2captcha.com`): the same service and limits.
pub const TWO_CAPTCHA_V2: ServiceLimits = ServiceLimits { service: "2captcha-v2", ..TWO_CAPTCHA };

/// CaptchaAI speaks the 2captcha API and documents no limits of its own besides "poll every
/// 5 seconds": the 2captcha figures.
pub const CAPTCHAAI: ServiceLimits = ServiceLimits { service: "captchaai", ..TWO_CAPTCHA };

/// The createTask services with a 120-poll limit get half of it: the stretched interval stays near
/// the services' own recommendation (3 s) instead of their floor, and a resumed task still has
/// polls left.
const CREATE_TASK_POLLS: u32 = 60;

/// anti-captcha documents no rate or per-task poll limit: the official client's waits per kind
/// (`wait_for_result`: 60 s image and v3, 300 s v2, Turnstile, hCaptcha; 600 s GeeTest and
/// FunCaptcha, held to 300 s here so that a second attempt fits the 10-minute task deadline).
pub const ANTI_CAPTCHA: ServiceLimits = ServiceLimits {
    service: "anti-captcha",
    submits_per_second: 10.0,
    min_poll_interval_ms: 3 * SECOND,
    poll_limit: None,
    max_polls: CREATE_TASK_POLLS,
    result_kept_ms: None,
    first_poll_ms: KindMs::uniform(10 * SECOND).with_family(Image, 3 * SECOND).with_family(Text, 3 * SECOND),
    give_up_ms: KindMs::uniform(300 * SECOND)
        .with_family(Image, 60 * SECOND)
        .with_family(Text, 60 * SECOND)
        .with_family(RecaptchaV3, 60 * SECOND),
};

/// CapSolver: 120 `getTaskResult` per task, results kept 5 minutes, "processing: retry in 3
/// seconds", results in 1 to 30 s, `ERROR_TASK_TIMEOUT` after 120 s (20 s grace). Image tasks
/// answer in `createTask` itself.
pub const CAPSOLVER: ServiceLimits = ServiceLimits {
    service: "capsolver",
    submits_per_second: 10.0,
    min_poll_interval_ms: 3 * SECOND,
    poll_limit: Some(120),
    max_polls: CREATE_TASK_POLLS,
    result_kept_ms: Some(300 * SECOND),
    first_poll_ms: KindMs::uniform(3 * SECOND),
    give_up_ms: KindMs::uniform(140 * SECOND),
};

/// CapMonster Cloud: `getTaskResult` at most once per 2 s and 120 times per task, results kept
/// about 5 minutes; first polls and waits of the official client (`GetResultTimeouts.py`).
pub const CAPMONSTER: ServiceLimits = ServiceLimits {
    service: "capmonster",
    submits_per_second: 10.0,
    min_poll_interval_ms: 2 * SECOND,
    poll_limit: Some(120),
    max_polls: CREATE_TASK_POLLS,
    result_kept_ms: Some(300 * SECOND),
    first_poll_ms: KindMs::uniform(10 * SECOND)
        .with_family(Image, SECOND)
        .with_family(Text, SECOND)
        .with_family(Turnstile, SECOND)
        .with_family(GeetestV3, SECOND)
        .with_family(GeetestV4, SECOND),
    give_up_ms: KindMs::uniform(180 * SECOND)
        .with_family(Image, 10 * SECOND)
        .with_family(Text, 10 * SECOND)
        .with_family(Turnstile, 80 * SECOND)
        .with_family(GeetestV3, 80 * SECOND)
        .with_family(GeetestV4, 80 * SECOND)
        .with_family(Funcaptcha, 80 * SECOND),
};

/// Every service, in the order of `docs/providers.md`.
pub const SERVICES: [&ServiceLimits; 7] =
    [&CAPTCHAAI, &TWO_CAPTCHA, &RUCAPTCHA, &ANTI_CAPTCHA, &CAPSOLVER, &TWO_CAPTCHA_V2, &CAPMONSTER];

/// The defaults of the engine's `EngineConfig::default`: the 2captcha-compatible API, whose
/// per-task poll limit is the strictest.
pub const DEFAULT: &ServiceLimits = &TWO_CAPTCHA;

/// The limits of a preset by name, of a custom service by its protocol (a 2captcha-compatible base
/// URL gets 2captcha's, a createTask one its dialect's).
pub fn for_provider(provider: &Provider) -> &'static ServiceLimits {
    if let Some(limits) = SERVICES.into_iter().find(|l| l.service == provider.name()) {
        return limits;
    }
    match provider.protocol() {
        Protocol::V1 => &TWO_CAPTCHA,
        Protocol::CreateTask(Dialect::AntiCaptcha) => &ANTI_CAPTCHA,
        Protocol::CreateTask(Dialect::CapSolver) => &CAPSOLVER,
        Protocol::CreateTask(Dialect::TwoCaptchaV2) => &TWO_CAPTCHA_V2,
        Protocol::CreateTask(Dialect::CapMonster) => &CAPMONSTER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::PRESETS;
    use crate::task::TaskKind;

    #[test]
    fn every_preset_has_its_row_and_custom_services_their_protocols() {
        for (name, _, _) in PRESETS {
            assert_eq!(for_provider(&Provider::preset(name).unwrap()).service, *name);
        }
        assert_eq!(for_provider(&Provider::custom_v1("http://127.0.0.1:1").unwrap()).service, "2captcha");
        let custom = Provider::custom_create_task("http://127.0.0.1:1", Dialect::CapMonster).unwrap();
        assert_eq!(for_provider(&custom).service, "capmonster");
    }

    /// The schedule fits the service: the first poll comes before the give-up point, the result
    /// is still kept when the attempt is given up, and the polls fit the per-task limit.
    #[test]
    fn schedules_fit_the_services_limits() {
        for l in SERVICES {
            for kind in TaskKind::ALL {
                let (first, give_up) = (l.first_poll_ms.ms(kind), l.give_up_ms.ms(kind));
                assert!(first < give_up, "{} {kind}: first poll {first} ms after give-up {give_up} ms", l.service);
                if let Some(kept) = l.result_kept_ms {
                    assert!(give_up <= kept, "{} {kind}: gives up after the result is gone", l.service);
                }
                let polls_at_floor = (give_up - first) / l.min_poll_interval_ms + 1;
                assert!(polls_at_floor >= 2, "{} {kind}: fewer than two polls fit", l.service);
            }
            if let Some(limit) = l.poll_limit {
                assert!(
                    l.max_polls <= limit,
                    "{}: {} polls per task over the limit of {limit}",
                    l.service,
                    l.max_polls
                );
            }
        }
    }
}
