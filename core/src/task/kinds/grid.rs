//! `grid`: An image grid: which cells match the instructions (reCAPTCHA-style).

use super::common::{opt, strip, two_captcha_test, BODY, IMG_INSTRUCTIONS, LANG, TEXT_INSTRUCTIONS, TWO_CAPTCHA};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Grid,
    class: strip("GridTask"),
    summary: strip("An image grid: which cells match the instructions (reCAPTCHA-style)."),
    fields: &[
        BODY,
        opt("rows", FieldType::Int { min: 1, max: 10 }, "Rows of the grid."),
        opt("cols", FieldType::Int { min: 1, max: 10 }, "Columns of the grid."),
        opt("can_skip", FieldType::Flag, "The worker may answer that no cell matches."),
        LANG,
        TEXT_INSTRUCTIONS,
        IMG_INSTRUCTIONS,
    ],
    answer: &[AnswerDecl {
        name: "cells",
        ty: AnswerType::Text,
        keys: &[],
        required: true,
        doc: strip("The matching cells, as the service lists them (`click:3/1/6`)."),
    }],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "base64",
            params: &[
                ("body", "body"),
                ("rows", "recaptcharows"),
                ("cols", "recaptchacols"),
                ("can_skip", "can_no_answer"),
                ("lang", "lang"),
                ("textinstructions", "textinstructions"),
                ("imginstructions", "imginstructions"),
            ],
            fixed: &[("recaptcha", "1")],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_grid.py", "test_base64_param"),
        }),
        create_task: &[],
    },
};
