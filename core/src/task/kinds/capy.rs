//! `capy`: Capy puzzle.

use super::common::{req, strip, two_captcha_test, PAGE_URL, PROXY, TWO_CAPTCHA};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Capy,
    class: strip("Capy"),
    summary: strip("Capy puzzle."),
    fields: &[req("sitekey", FieldType::Key, "The `captchakey` of the page."), PAGE_URL, PROXY],
    answer: &[
        AnswerDecl {
            name: "captchakey",
            ty: AnswerType::Text,
            keys: &["captchakey"],
            required: true,
            doc: strip("`captchakey`."),
        },
        AnswerDecl {
            name: "challengekey",
            ty: AnswerType::Text,
            keys: &["challengekey"],
            required: true,
            doc: strip("`challengekey`."),
        },
        AnswerDecl { name: "answer", ty: AnswerType::Text, keys: &["answer"], required: true, doc: strip("`answer`.") },
    ],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "capy",
            params: &[("sitekey", "captchakey"), ("page_url", "pageurl"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_capy.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
