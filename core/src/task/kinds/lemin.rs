//! `lemin`: Lemin cropped captcha.

use super::common::{opt, req, strip, two_captcha_test, PAGE_URL, PROXY, TWO_CAPTCHA};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Lemin,
    class: strip("Lemin"),
    summary: strip("Lemin cropped captcha."),
    fields: &[
        req("captcha_id", FieldType::Key, "The captcha's id."),
        req("div_id", FieldType::Key, "The id of the widget's `div`."),
        PAGE_URL,
        opt("api_server", FieldType::Url, "The Lemin API server the page uses."),
        PROXY,
    ],
    answer: &[
        AnswerDecl { name: "answer", ty: AnswerType::Text, keys: &["answer"], required: true, doc: strip("`answer`.") },
        AnswerDecl {
            name: "challenge_id",
            ty: AnswerType::Text,
            keys: &["challenge_id"],
            required: true,
            doc: strip("`challenge_id`."),
        },
    ],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "lemin",
            params: &[
                ("captcha_id", "captcha_id"),
                ("div_id", "div_id"),
                ("api_server", "api_server"),
                ("page_url", "pageurl"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_lemin.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
