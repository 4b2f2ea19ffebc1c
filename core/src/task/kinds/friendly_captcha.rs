//! `friendly_captcha`: Friendly Captcha.

use super::common::{strip, two_captcha_test, PAGE_URL, PROXY, SITEKEY, TOKEN, TWO_CAPTCHA};
use super::decl::{KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::FriendlyCaptcha,
    class: strip("FriendlyCaptcha"),
    summary: strip("Friendly Captcha."),
    fields: &[SITEKEY, PAGE_URL, PROXY],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "friendly_captcha",
            params: &[("sitekey", "sitekey"), ("page_url", "pageurl"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_friendly_captcha.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
