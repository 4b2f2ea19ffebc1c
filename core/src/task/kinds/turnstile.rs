//! `turnstile`: Cloudflare Turnstile (coded wire form).

use super::common::{opt, strip, ALL_PRESETS, PAGE_URL, PROXY, SITEKEY, USER_AGENT};
use super::decl::{AnswerDecl, AnswerType, FieldDecl, FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Turnstile,
    class: strip("Turnstile"),
    summary: strip("Cloudflare Turnstile."),
    fields: &[
        SITEKEY,
        PAGE_URL,
        opt("action", FieldType::Key, "The widget's action."),
        opt("data", FieldType::Token, "The widget's `cData`."),
        FieldDecl { js: Some("pageData"), ..opt("pagedata", FieldType::Token, "The challenge page's `chlPageData`.") },
        USER_AGENT,
        PROXY,
    ],
    answer: &[
        AnswerDecl { name: "token", ty: AnswerType::Text, keys: &[], required: true, doc: strip("The token.") },
        AnswerDecl {
            name: "user_agent",
            ty: AnswerType::Text,
            keys: &["userAgent", "useragent"],
            required: false,
            doc: strip("The user agent the token is bound to, where the service says."),
        },
    ],
    wire: Wire::Coded { services: ALL_PRESETS },
};
