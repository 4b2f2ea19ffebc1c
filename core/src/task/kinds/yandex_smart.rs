//! `yandex_smart`: Yandex SmartCaptcha.

use super::common::{strip, two_captcha_test, PAGE_URL, PROXY, SITEKEY, TOKEN, TWO_CAPTCHA};
use super::decl::{KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::YandexSmart,
    class: strip("YandexSmart"),
    summary: strip("Yandex SmartCaptcha."),
    fields: &[SITEKEY, PAGE_URL, PROXY],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "yandex",
            params: &[("sitekey", "sitekey"), ("page_url", "pageurl"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_yandex_smart_captcha.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
