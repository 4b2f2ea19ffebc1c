//! `temu`: Temu's puzzle: the background image and its three pieces.

use super::common::{req, strip, two_captcha_test, BODY, TWO_CAPTCHA};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Temu,
    class: strip("TemuImage"),
    summary: strip("Temu's puzzle: the background image and its three pieces."),
    fields: &[
        BODY,
        req("part1", FieldType::Image, "The first piece, base64."),
        req("part2", FieldType::Image, "The second piece, base64."),
        req("part3", FieldType::Image, "The third piece, base64."),
    ],
    answer: &[AnswerDecl {
        name: "points",
        ty: AnswerType::Points,
        keys: &[],
        required: true,
        doc: strip("Where each piece goes."),
    }],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "temuimage",
            params: &[("body", "body"), ("part1", "part1"), ("part2", "part2"), ("part3", "part3")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_temu.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
