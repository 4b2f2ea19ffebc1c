//! `audio`: An audio CAPTCHA: the words in an mp3 clip.

use super::common::{req, strip, TEXT, TWO_CAPTCHA};
use super::decl::{FieldType, KindDecl, Source, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Audio,
    class: strip("AudioTask"),
    summary: strip("An audio CAPTCHA: the words in an mp3 clip."),
    fields: &[
        req("body", FieldType::Image, "The clip (mp3), base64."),
        req("lang", FieldType::Choice(&["en", "ru", "de", "el", "pt", "fr"]), "The clip's language."),
    ],
    answer: TEXT,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "audio",
            params: &[("body", "body"), ("lang", "lang")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: Source::Client {
                repo: strip("2captcha/2captcha-python"),
                file: strip("twocaptcha/solver.py"),
                test: None,
            },
        }),
        create_task: &[],
    },
};
