//! `coordinates`: Click points on an image, as the instructions ask.

use super::common::{strip, two_captcha_test, BODY, IMG_INSTRUCTIONS, LANG, TEXT_INSTRUCTIONS, TWO_CAPTCHA};
use super::decl::{AnswerDecl, AnswerType, CreateTaskDecl, KindDecl, Source, V1Decl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Coordinates,
    class: strip("CoordinatesTask"),
    summary: strip("Click points on an image, as the instructions ask."),
    fields: &[BODY, LANG, TEXT_INSTRUCTIONS, IMG_INSTRUCTIONS],
    answer: &[AnswerDecl {
        name: "points",
        ty: AnswerType::Points,
        keys: &["coordinates"],
        required: true,
        doc: strip("The points, `[{x, y}, ...]`, in image pixels."),
    }],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "base64",
            params: &[
                ("body", "body"),
                ("lang", "lang"),
                ("textinstructions", "textinstructions"),
                ("imginstructions", "imginstructions"),
            ],
            fixed: &[("coordinatescaptcha", "1")],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_coordinates.py", "test_base64_param"),
        }),
        create_task: &[CreateTaskDecl {
            dialect: Dialect::AntiCaptcha,
            proxyless: Some("ImageToCoordinatesTask"),
            proxied: None,
            params: &[("body", "body"), ("textinstructions", "comment")],
            fixed: &[("mode", "points")],
            requires: &[],
            source: Source::Doc(strip("https://anti-captcha.com/apidoc/task-types/ImageToCoordinatesTask")),
        }],
    },
};
