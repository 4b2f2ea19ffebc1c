//! `keycaptcha`: KeyCaptcha, by the page's four `s_s_c_*` values.

use super::common::{req, strip, two_captcha_test, PAGE_URL, PROXY, TOKEN, TWO_CAPTCHA};
use super::decl::{FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Keycaptcha,
    class: strip("KeyCaptcha"),
    summary: strip("KeyCaptcha, by the page's four `s_s_c_*` values."),
    fields: &[
        req("s_s_c_user_id", FieldType::Int { min: 0, max: u64::MAX }, "`s_s_c_user_id`, a number."),
        req("s_s_c_session_id", FieldType::Key, "`s_s_c_session_id`."),
        req("s_s_c_web_server_sign", FieldType::Key, "`s_s_c_web_server_sign`."),
        req("s_s_c_web_server_sign2", FieldType::Key, "`s_s_c_web_server_sign2`."),
        PAGE_URL,
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "keycaptcha",
            params: &[
                ("s_s_c_user_id", "s_s_c_user_id"),
                ("s_s_c_session_id", "s_s_c_session_id"),
                ("s_s_c_web_server_sign", "s_s_c_web_server_sign"),
                ("s_s_c_web_server_sign2", "s_s_c_web_server_sign2"),
                ("page_url", "pageurl"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_keycaptcha.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
