//! `hcaptcha`: hCaptcha (coded wire form). Most services now refuse it; their refusal is terminal.

use super::common::{opt, strip, PAGE_URL, PROXY, SITEKEY, USER_AGENT};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Hcaptcha,
    class: strip("HCaptcha"),
    summary: strip("hCaptcha. Most services now refuse it; their refusal is a terminal error."),
    fields: &[
        SITEKEY,
        PAGE_URL,
        opt("invisible", FieldType::Flag, "The widget is invisible."),
        opt("data", FieldType::Token, "Enterprise `rqdata`."),
        USER_AGENT,
        PROXY,
    ],
    answer: &[
        AnswerDecl { name: "token", ty: AnswerType::Text, keys: &[], required: true, doc: strip("The token.") },
        AnswerDecl {
            name: "resp_key",
            ty: AnswerType::Text,
            keys: &["respKey"],
            required: false,
            doc: strip("`respKey`, where the service gives it."),
        },
        AnswerDecl {
            name: "user_agent",
            ty: AnswerType::Text,
            keys: &["userAgent", "useragent"],
            required: false,
            doc: strip("The user agent the token is bound to."),
        },
    ],
    wire: Wire::Coded {
        services: &["captchaai", "2captcha", "rucaptcha", "anti-captcha", "2captcha-v2", "capmonster"],
    },
};
