//! `geetest_v4`: GeeTest v4 (coded wire form).

use super::common::{req, strip, ALL_PRESETS, PAGE_URL, PROXY, USER_AGENT};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::GeetestV4,
    class: strip("GeeTestV4"),
    summary: strip("GeeTest v4 (`captcha_id`)."),
    fields: &[req("captcha_id", FieldType::Key, "The site's `captcha_id`."), PAGE_URL, USER_AGENT, PROXY],
    answer: &[
        AnswerDecl {
            name: "captcha_id",
            ty: AnswerType::Text,
            keys: &["captcha_id"],
            required: true,
            doc: strip("The site's `captcha_id`."),
        },
        AnswerDecl {
            name: "lot_number",
            ty: AnswerType::Text,
            keys: &["lot_number"],
            required: true,
            doc: strip("`lot_number`."),
        },
        AnswerDecl {
            name: "pass_token",
            ty: AnswerType::Text,
            keys: &["pass_token"],
            required: true,
            doc: strip("`pass_token`."),
        },
        AnswerDecl {
            name: "gen_time",
            ty: AnswerType::Text,
            keys: &["gen_time"],
            required: true,
            doc: strip("`gen_time`."),
        },
        AnswerDecl {
            name: "captcha_output",
            ty: AnswerType::Text,
            keys: &["captcha_output"],
            required: true,
            doc: strip("`captcha_output`."),
        },
    ],
    wire: Wire::Coded { services: ALL_PRESETS },
};
