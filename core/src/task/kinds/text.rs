//! `text`: a question a worker answers (coded wire form).

use super::common::{req, strip, LANG, TEXT};
use super::decl::{FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Text,
    class: strip("TextCaptcha"),
    summary: strip("A text question a worker answers (\"Is today Monday?\"), at most 140 characters."),
    fields: &[req("text", FieldType::Text, "The question, as the site shows it."), LANG],
    answer: TEXT,
    wire: Wire::Coded { services: &["captchaai", "2captcha", "rucaptcha", "2captcha-v2"] },
};
