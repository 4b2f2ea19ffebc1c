//! `amazon_waf`: Amazon AWS WAF: the `aws-waf-token` cookie from `window.gokuProps` (`key`, `iv`, `context`).

use super::common::{capmonster_client, opt, req, strip, two_captcha_test, PAGE_URL, PROXY, TWO_CAPTCHA};
use super::decl::{AnswerDecl, AnswerType, CreateTaskDecl, FieldType, KindDecl, Source, V1Decl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::AmazonWaf,
    class: strip("AmazonWaf"),
    summary: strip("Amazon AWS WAF: the `aws-waf-token` cookie from `window.gokuProps` (`key`, `iv`, `context`)."),
    fields: &[
        req("sitekey", FieldType::Token, "The `key` of `window.gokuProps`."),
        PAGE_URL,
        req("iv", FieldType::Token, "The `iv` of `window.gokuProps`."),
        req("context", FieldType::Token, "The `context` of `window.gokuProps`."),
        opt("challenge_script", FieldType::Url, "The `challenge.js` URL on the page."),
        opt("captcha_script", FieldType::Url, "The `captcha.js` URL on the page."),
        PROXY,
    ],
    answer: &[
        AnswerDecl {
            name: "cookie",
            ty: AnswerType::Text,
            keys: &["existing_token", "cookie", "cookies.aws-waf-token", "token"],
            required: true,
            doc: strip("The `aws-waf-token` cookie's value."),
        },
        AnswerDecl {
            name: "captcha_voucher",
            ty: AnswerType::Text,
            keys: &["captcha_voucher"],
            required: false,
            doc: strip("2captcha's `captcha_voucher`, where given."),
        },
    ],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "amazon_waf",
            params: &[
                ("sitekey", "sitekey"),
                ("page_url", "pageurl"),
                ("iv", "iv"),
                ("context", "context"),
                ("challenge_script", "challenge_script"),
                ("captcha_script", "captcha_script"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_amazon_waf.py", "test_all_params"),
        }),
        create_task: &[
            CreateTaskDecl {
                dialect: Dialect::AntiCaptcha,
                proxyless: Some("AmazonTaskProxyless"),
                proxied: Some("AmazonTask"),
                params: &[
                    ("page_url", "websiteURL"),
                    ("sitekey", "websiteKey"),
                    ("iv", "iv"),
                    ("context", "context"),
                    ("captcha_script", "captchaScript"),
                    ("challenge_script", "challengeScript"),
                ],
                fixed: &[],
                requires: &[],
                source: Source::Doc(strip("https://anti-captcha.com/apidoc/task-types/AmazonTaskProxyless")),
            },
            CreateTaskDecl {
                dialect: Dialect::CapSolver,
                proxyless: Some("AntiAwsWafTaskProxyLess"),
                proxied: Some("AntiAwsWafTask"),
                params: &[
                    ("page_url", "websiteURL"),
                    ("sitekey", "awsKey"),
                    ("iv", "awsIv"),
                    ("context", "awsContext"),
                    ("challenge_script", "awsChallengeJS"),
                ],
                fixed: &[],
                requires: &[],
                source: Source::Doc(strip("https://docs.capsolver.com/guide/captcha/awsWaf")),
            },
            CreateTaskDecl {
                dialect: Dialect::CapMonster,
                proxyless: Some("AmazonTask"),
                proxied: Some("AmazonTask"),
                params: &[
                    ("page_url", "websiteURL"),
                    ("challenge_script", "challengeScript"),
                    ("captcha_script", "captchaScript"),
                    ("sitekey", "websiteKey"),
                    ("context", "context"),
                    ("iv", "iv"),
                ],
                fixed: &[],
                requires: &[],
                source: capmonster_client("capmonstercloud_client/requests/AmazonWafRequest.py"),
            },
        ],
    },
};
