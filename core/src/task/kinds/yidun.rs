//! `yidun`: NetEase Yidun.

use super::common::{
    capmonster_client, opt, strip, two_captcha_test, PAGE_URL, PROXY, SITEKEY, TOKEN, TWO_CAPTCHA, USER_AGENT,
};
use super::decl::{CreateTaskDecl, FieldType, KindDecl, V1Decl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Yidun,
    class: strip("Yidun"),
    summary: strip("NetEase Yidun."),
    fields: &[
        SITEKEY,
        PAGE_URL,
        opt("yidun_get_lib", FieldType::Url, "The `load.min.js` URL of the page."),
        opt("yidun_api_server_subdomain", FieldType::Key, "The API server's host."),
        opt("challenge", FieldType::Key, "The Enterprise `challenge`."),
        opt("hcg", FieldType::Key, "The Enterprise `hcg`."),
        opt(
            "hct",
            FieldType::Key,
            "The Enterprise `hct` (a timestamp in ms, as text: JavaScript numbers cannot hold every one exactly).",
        ),
        USER_AGENT,
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "yidun",
            params: &[
                ("sitekey", "sitekey"),
                ("page_url", "pageurl"),
                ("yidun_get_lib", "yidun_get_lib"),
                ("yidun_api_server_subdomain", "yidun_api_server_subdomain"),
                ("challenge", "challenge"),
                ("hcg", "hcg"),
                ("hct", "hct"),
                ("user_agent", "useragent"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_yidun.py", "test_all_params"),
        }),
        create_task: &[CreateTaskDecl {
            dialect: Dialect::CapMonster,
            proxyless: Some("YidunTask"),
            proxied: Some("YidunTask"),
            params: &[("page_url", "websiteURL"), ("sitekey", "websiteKey"), ("user_agent", "userAgent")],
            fixed: &[],
            requires: &[],
            source: capmonster_client("capmonstercloud_client/requests/YidunRequest.py"),
        }],
    },
};
