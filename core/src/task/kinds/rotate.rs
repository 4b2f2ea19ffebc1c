//! `rotate`: Rotate an image upright: the angle to turn it by.

use super::common::{opt, strip, two_captcha_test, BODY, IMG_INSTRUCTIONS, LANG, TEXT_INSTRUCTIONS, TWO_CAPTCHA};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Rotate,
    class: strip("RotateTask"),
    summary: strip("Rotate an image upright: the angle to turn it by."),
    fields: &[
        BODY,
        opt("angle", FieldType::Int { min: 1, max: 359 }, "The step of one turn, in degrees."),
        LANG,
        TEXT_INSTRUCTIONS,
        IMG_INSTRUCTIONS,
    ],
    answer: &[AnswerDecl {
        name: "angle",
        ty: AnswerType::Number,
        keys: &["rotate"],
        required: true,
        doc: strip("The angle, in degrees."),
    }],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "rotatecaptcha",
            params: &[
                ("body", "body"),
                ("angle", "angle"),
                ("lang", "lang"),
                ("textinstructions", "textinstructions"),
                ("imginstructions", "imginstructions"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_rotate.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
