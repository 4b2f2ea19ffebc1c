//! `tspd`: F5 TSPD (Shape) interstitial, through your proxy.

use super::common::{req, strip, two_captcha_test, PAGE_URL, PROXY_REQUIRED, TWO_CAPTCHA, USER_AGENT};
use super::decl::{AnswerDecl, AnswerType, FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Tspd,
    class: strip("Tspd"),
    summary: strip("F5 TSPD (Shape) interstitial, through your proxy."),
    fields: &[
        PAGE_URL,
        req("tspd_cookie", FieldType::Token, "The `TS...` cookies the page set, as sent."),
        req("html_page_base64", FieldType::Token, "The challenge page's HTML, base64."),
        PROXY_REQUIRED,
        USER_AGENT,
    ],
    answer: &[AnswerDecl {
        name: "cookie",
        ty: AnswerType::Text,
        keys: &["cookie", "cookies"],
        required: true,
        doc: strip("The cookies to send."),
    }],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "tspd",
            params: &[
                ("page_url", "pageurl"),
                ("tspd_cookie", "tspd_cookie"),
                ("html_page_base64", "html_page_base64"),
                ("user_agent", "useragent"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_tspd.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
