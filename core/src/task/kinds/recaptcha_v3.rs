//! `recaptcha_v3`: score-based reCAPTCHA v3 (coded wire form: score queues).

use super::common::{opt, strip, ALL_PRESETS, PAGE_URL, SITEKEY, TOKEN};
use super::decl::{FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::RecaptchaV3,
    class: strip("RecaptchaV3"),
    summary: strip("reCAPTCHA v3 (score based)."),
    fields: &[
        SITEKEY,
        PAGE_URL,
        opt("action", FieldType::Key, "The action the page passes to `grecaptcha.execute`."),
        opt("min_score", FieldType::Number { min_milli: 100, max_milli: 900 }, "The least score wanted (0.1..=0.9)."),
        opt("enterprise", FieldType::Flag, "reCAPTCHA Enterprise."),
        opt("domain", FieldType::Choice(&["google.com", "recaptcha.net"]), "`google.com` or `recaptcha.net`."),
    ],
    answer: TOKEN,
    wire: Wire::Coded { services: ALL_PRESETS },
};
