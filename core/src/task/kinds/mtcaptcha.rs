//! `mtcaptcha`: MTCaptcha.

use super::common::{
    capmonster_client, strip, two_captcha_test, PAGE_URL, PROXY, SITEKEY, TOKEN, TWO_CAPTCHA, USER_AGENT,
};
use super::decl::{CreateTaskDecl, KindDecl, V1Decl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Mtcaptcha,
    class: strip("MtCaptcha"),
    summary: strip("MTCaptcha."),
    fields: &[SITEKEY, PAGE_URL, USER_AGENT, PROXY],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "mt_captcha",
            params: &[("sitekey", "sitekey"), ("page_url", "pageurl"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_mtcaptcha.py", "test_all_params"),
        }),
        create_task: &[CreateTaskDecl {
            dialect: Dialect::CapMonster,
            proxyless: Some("MTCaptchaTask"),
            proxied: Some("MTCaptchaTask"),
            params: &[("page_url", "websiteURL"), ("sitekey", "websiteKey"), ("user_agent", "userAgent")],
            fixed: &[],
            requires: &[],
            source: capmonster_client("capmonstercloud_client/requests/MTCaptchaRequest.py"),
        }],
    },
};
