//! `cutcaptcha`: CutCaptcha.

use super::common::{req, strip, two_captcha_test, PAGE_URL, PROXY, TOKEN, TWO_CAPTCHA};
use super::decl::{FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Cutcaptcha,
    class: strip("CutCaptcha"),
    summary: strip("CutCaptcha."),
    fields: &[
        req("misery_key", FieldType::Key, "The page's `CUTCAPTCHA_MISERY_KEY`."),
        req("api_key", FieldType::Key, "The `data-apikey` of the widget."),
        PAGE_URL,
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "cutcaptcha",
            params: &[
                ("misery_key", "misery_key"),
                ("api_key", "api_key"),
                ("page_url", "pageurl"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_cutcaptcha.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
