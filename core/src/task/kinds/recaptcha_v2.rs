//! `recaptcha_v2`: reCAPTCHA v2, checkbox or invisible, optionally Enterprise (coded wire form).

use super::common::{opt, strip, ALL_PRESETS, PAGE_URL, PROXY, SITEKEY, TOKEN, USER_AGENT};
use super::decl::{FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::RecaptchaV2,
    class: strip("RecaptchaV2"),
    summary: strip("reCAPTCHA v2 (checkbox or invisible, optionally Enterprise)."),
    fields: &[
        SITEKEY,
        PAGE_URL,
        opt("invisible", FieldType::Flag, "The widget is invisible."),
        opt("enterprise", FieldType::Flag, "reCAPTCHA Enterprise."),
        opt("data_s", FieldType::Token, "The widget's `data-s` value."),
        opt("cookies", FieldType::Cookies, "Cookies for the page."),
        USER_AGENT,
        PROXY,
        opt("domain", FieldType::Choice(&["google.com", "recaptcha.net"]), "`google.com` or `recaptcha.net`."),
        opt("action", FieldType::Key, "The widget's action, where the site sets one."),
    ],
    answer: TOKEN,
    wire: Wire::Coded { services: ALL_PRESETS },
};
