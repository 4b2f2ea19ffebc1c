//! `canvas`: Draw around an object on an image (a bounding line), as the instructions ask.

use super::common::{opt, req, strip, two_captcha_test, BODY, IMG_INSTRUCTIONS, LANG, TWO_CAPTCHA};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Canvas,
    class: strip("CanvasTask"),
    summary: strip("Draw around an object on an image (a bounding line), as the instructions ask."),
    fields: &[
        BODY,
        req("textinstructions", FieldType::Text, "Instructions shown to the worker."),
        opt("can_skip", FieldType::Flag, "The worker may answer that nothing matches."),
        LANG,
        IMG_INSTRUCTIONS,
    ],
    answer: &[AnswerDecl {
        name: "points",
        ty: AnswerType::Points,
        keys: &["coordinates"],
        required: true,
        doc: strip("The line's points."),
    }],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "base64",
            params: &[
                ("body", "body"),
                ("textinstructions", "textinstructions"),
                ("can_skip", "can_no_answer"),
                ("lang", "lang"),
                ("imginstructions", "imginstructions"),
            ],
            fixed: &[("canvas", "1"), ("recaptcha", "1")],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_canvas.py", "test_base64_param"),
        }),
        create_task: &[],
    },
};
