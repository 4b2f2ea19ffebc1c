//! `image`: text recognition from an image (the wire form is coded in `provider::v1` and `provider::dialect`).

use super::common::{opt, strip, ALL_PRESETS, BODY, IMG_INSTRUCTIONS, LANG, TEXT, TEXT_INSTRUCTIONS};
use super::decl::{FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Image,
    class: strip("ImageTask"),
    summary: strip("A normal image CAPTCHA: recognise the text in `body`."),
    fields: &[
        BODY,
        opt("phrase", FieldType::Flag, "The answer contains at least two words."),
        opt("regsense", FieldType::Flag, "The answer is case-sensitive (also taken as `caseSensitive`)."),
        opt(
            "numeric",
            FieldType::Int { min: 0, max: 4 },
            "0 any, 1 digits only, 2 letters only, 3 digits or letters, 4 both.",
        ),
        opt("calc", FieldType::Flag, "The image shows arithmetic to compute."),
        opt("min_len", FieldType::Int { min: 0, max: u32::MAX as u64 }, "The answer's least length."),
        opt("max_len", FieldType::Int { min: 1, max: u32::MAX as u64 }, "The answer's greatest length."),
        opt("language", FieldType::Int { min: 0, max: 2 }, "0 any, 1 Cyrillic, 2 Latin."),
        LANG,
        TEXT_INSTRUCTIONS,
        IMG_INSTRUCTIONS,
    ],
    answer: TEXT,
    wire: Wire::Coded { services: ALL_PRESETS },
};
