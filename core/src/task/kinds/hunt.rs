//! `hunt`: HUMAN (HUNT) challenge.

use super::common::{opt, req, strip, two_captcha_test, PAGE_URL, PROXY, TOKEN, TWO_CAPTCHA, USER_AGENT};
use super::decl::{FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Hunt,
    class: strip("Hunt"),
    summary: strip("HUMAN (HUNT) challenge."),
    fields: &[
        PAGE_URL,
        req("api_get_lib", FieldType::Url, "The `api.js` URL of the page."),
        opt("data", FieldType::Token, "The page's meta token."),
        USER_AGENT,
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "hunt",
            params: &[
                ("page_url", "pageurl"),
                ("api_get_lib", "api_get_lib"),
                ("data", "data"),
                ("user_agent", "useragent"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_hunt.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
