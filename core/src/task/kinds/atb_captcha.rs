//! `atb_captcha`: atbCAPTCHA (aisecurius).

use super::common::{req, strip, two_captcha_test, PAGE_URL, PROXY, TOKEN, TWO_CAPTCHA};
use super::decl::{FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::AtbCaptcha,
    class: strip("AtbCaptcha"),
    summary: strip("atbCAPTCHA (aisecurius)."),
    fields: &[
        req("app_id", FieldType::Key, "The widget's `appId`."),
        req("api_server", FieldType::Url, "The widget's `apiServer`."),
        PAGE_URL,
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "atb_captcha",
            params: &[("app_id", "app_id"), ("api_server", "api_server"), ("page_url", "pageurl"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_atb_captcha.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
