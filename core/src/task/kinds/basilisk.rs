//! `basilisk`: Basilisk (FaucetPay's captcha).

use super::common::{
    capmonster_client, strip, two_captcha_test, PAGE_URL, PROXY, SITEKEY, TOKEN, TWO_CAPTCHA, USER_AGENT,
};
use super::decl::{CreateTaskDecl, KindDecl, V1Decl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Basilisk,
    class: strip("Basilisk"),
    summary: strip("Basilisk (FaucetPay's captcha)."),
    fields: &[SITEKEY, PAGE_URL, USER_AGENT, PROXY],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "basilisk",
            params: &[("page_url", "pageurl"), ("sitekey", "sitekey"), ("user_agent", "useragent"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_basilisk.py", "test_all_params"),
        }),
        create_task: &[CreateTaskDecl {
            dialect: Dialect::CapMonster,
            proxyless: Some("CustomTask"),
            proxied: Some("CustomTask"),
            params: &[("page_url", "websiteURL"), ("sitekey", "websiteKey"), ("user_agent", "userAgent")],
            fixed: &[("class", "Basilisk")],
            requires: &[],
            source: capmonster_client("capmonstercloud_client/requests/BasiliskCustomTaskRequest.py"),
        }],
    },
};
