//! `geetest_v3`: GeeTest v3 (coded wire form).

use super::common::{opt, req, strip, ALL_PRESETS, PAGE_URL, PROXY, USER_AGENT};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::GeetestV3,
    class: strip("GeeTestV3"),
    summary: strip("GeeTest v3 (`gt` and a fresh `challenge`)."),
    fields: &[
        req("gt", FieldType::Key, "The site's `gt`."),
        req("challenge", FieldType::Key, "A fresh `challenge` (each is good once)."),
        PAGE_URL,
        opt("api_server", FieldType::Url, "The GeeTest API server the page uses."),
        USER_AGENT,
        PROXY,
    ],
    answer: &[
        AnswerDecl {
            name: "challenge",
            ty: AnswerType::Text,
            keys: &["challenge", "geetest_challenge"],
            required: true,
            doc: strip("`geetest_challenge`."),
        },
        AnswerDecl {
            name: "validate",
            ty: AnswerType::Text,
            keys: &["validate", "geetest_validate"],
            required: true,
            doc: strip("`geetest_validate`."),
        },
        AnswerDecl {
            name: "seccode",
            ty: AnswerType::Text,
            keys: &["seccode", "geetest_seccode"],
            required: true,
            doc: strip("`geetest_seccode`."),
        },
    ],
    wire: Wire::Coded { services: ALL_PRESETS },
};
