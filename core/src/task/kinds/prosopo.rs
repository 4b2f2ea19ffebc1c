//! `prosopo`: Prosopo Procaptcha.

use super::common::{capmonster_client, strip, two_captcha_test, PAGE_URL, PROXY, SITEKEY, TOKEN, TWO_CAPTCHA};
use super::decl::{CreateTaskDecl, KindDecl, V1Decl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Prosopo,
    class: strip("Prosopo"),
    summary: strip("Prosopo Procaptcha."),
    fields: &[SITEKEY, PAGE_URL, PROXY],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "prosopo",
            params: &[("sitekey", "sitekey"), ("page_url", "pageurl"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_prosopo.py", "test_all_params"),
        }),
        create_task: &[CreateTaskDecl {
            dialect: Dialect::CapMonster,
            proxyless: Some("ProsopoTask"),
            proxied: Some("ProsopoTask"),
            params: &[("page_url", "websiteURL"), ("sitekey", "websiteKey")],
            fixed: &[],
            requires: &[],
            source: capmonster_client("capmonstercloud_client/requests/ProsopoTaskRequest.py"),
        }],
    },
};
