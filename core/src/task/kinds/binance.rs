//! `binance`: Binance's captcha, by its `bizId` and `validateId`.

use super::common::{capmonster_client, req, strip, two_captcha_test, PAGE_URL, PROXY, TOKEN, TWO_CAPTCHA, USER_AGENT};
use super::decl::{CreateTaskDecl, FieldType, KindDecl, V1Decl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Binance,
    class: strip("Binance"),
    summary: strip("Binance's captcha, by its `bizId` and `validateId`."),
    fields: &[
        req("sitekey", FieldType::Key, "The `bizId` (e.g. `register`)."),
        PAGE_URL,
        req("validate_id", FieldType::Key, "The `validateId` of the page."),
        USER_AGENT,
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "binance",
            params: &[
                ("sitekey", "sitekey"),
                ("page_url", "pageurl"),
                ("validate_id", "validate_id"),
                ("user_agent", "useragent"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_binance.py", "test_all_params"),
        }),
        create_task: &[CreateTaskDecl {
            dialect: Dialect::CapMonster,
            proxyless: Some("BinanceTask"),
            proxied: Some("BinanceTask"),
            params: &[
                ("validate_id", "validateId"),
                ("page_url", "websiteURL"),
                ("sitekey", "websiteKey"),
                ("user_agent", "userAgent"),
            ],
            fixed: &[],
            requires: &[],
            source: capmonster_client("capmonstercloud_client/requests/BinanceTaskRequest.py"),
        }],
    },
};
