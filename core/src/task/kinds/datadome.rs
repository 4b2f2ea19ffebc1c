//! `datadome`: DataDome's slider or interstitial: the `datadome` cookie, through your proxy and user agent.

use super::common::{
    capmonster_client, opt, req, strip, two_captcha_test, PAGE_URL, PROXY_REQUIRED, TWO_CAPTCHA, USER_AGENT_REQUIRED,
};
use super::decl::{AnswerDecl, AnswerType, CreateTaskDecl, FieldType, KindDecl, Source, V1Decl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Datadome,
    class: strip("DataDome"),
    summary: strip("DataDome's slider or interstitial: the `datadome` cookie, through your proxy and user agent."),
    fields: &[
        req("captcha_url", FieldType::Url, "The `src` of the captcha's iframe (its `t` must be `fe`)."),
        PAGE_URL,
        USER_AGENT_REQUIRED,
        PROXY_REQUIRED,
        opt("cookie", FieldType::Token, "Your current `datadome=...` cookie (CapMonster needs it)."),
    ],
    answer: &[AnswerDecl {
        name: "cookie",
        ty: AnswerType::Text,
        keys: &["cookie", "cookies.datadome"],
        required: true,
        doc: strip("The `datadome` cookie to send."),
    }],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "datadome",
            params: &[
                ("captcha_url", "captcha_url"),
                ("page_url", "pageurl"),
                ("user_agent", "userAgent"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_datadome.py", "test_all_params"),
        }),
        create_task: &[
            CreateTaskDecl {
                dialect: Dialect::CapSolver,
                proxyless: None,
                proxied: Some("DatadomeSliderTask"),
                params: &[("page_url", "websiteURL"), ("captcha_url", "captchaUrl"), ("user_agent", "userAgent")],
                fixed: &[],
                requires: &[],
                source: Source::Doc(strip("https://docs.capsolver.com/guide/captcha/datadome")),
            },
            CreateTaskDecl {
                dialect: Dialect::CapMonster,
                proxyless: Some("CustomTask"),
                proxied: Some("CustomTask"),
                params: &[
                    ("page_url", "websiteURL"),
                    ("captcha_url", "metadata.captchaUrl"),
                    ("cookie", "metadata.datadomeCookie"),
                    ("user_agent", "userAgent"),
                ],
                fixed: &[("class", "DataDome")],
                requires: &["cookie"],
                source: capmonster_client("capmonstercloud_client/requests/DataDomeCustomTaskRequest.py"),
            },
        ],
    },
};
