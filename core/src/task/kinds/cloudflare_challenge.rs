//! `cloudflare_challenge`: Cloudflare's challenge page ("Just a moment..."): the `cf_clearance`
//! cookie, bound to the proxy's IP and the user agent it was solved with.
//!
//! 2captcha's challenge-page mode (`chlPageData`) answers a Turnstile token, not the cookie: it
//! is the `turnstile` kind's `pagedata`.

use super::common::{capmonster_client, opt, strip, PAGE_URL, PROXY_REQUIRED, USER_AGENT};
use super::decl::{AnswerDecl, AnswerType, CreateTaskDecl, FieldType, KindDecl, Source, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::CloudflareChallenge,
    class: strip("CloudflareChallenge"),
    summary: strip(
        "Cloudflare's challenge page: the `cf_clearance` cookie, bound to your proxy's IP and the user agent it was solved with.",
    ),
    fields: &[
        PAGE_URL,
        PROXY_REQUIRED,
        USER_AGENT,
        opt(
            "html",
            FieldType::Page,
            "The challenge page's HTML as your proxy was served it (status 403, \"Just a moment...\"); CapMonster needs it.",
        ),
        opt("sitekey", FieldType::Key, "The Turnstile site key on the challenge page (CapMonster needs it)."),
    ],
    answer: &[
        AnswerDecl {
            name: "cookie",
            ty: AnswerType::Text,
            keys: &["cf_clearance", "cookies.cf_clearance", "token"],
            required: true,
            doc: strip("The `cf_clearance` cookie's value: send it with the same proxy IP and user agent."),
        },
        AnswerDecl {
            name: "user_agent",
            ty: AnswerType::Text,
            keys: &["userAgent"],
            required: false,
            doc: strip(
                "The user agent the cookie is bound to, where the service returns one (CapSolver); elsewhere the one you sent.",
            ),
        },
    ],
    wire: Wire::Declared {
        v1: None,
        create_task: &[
            CreateTaskDecl {
                dialect: Dialect::CapSolver,
                proxyless: None,
                proxied: Some("AntiCloudflareTask"),
                params: &[("page_url", "websiteURL"), ("user_agent", "userAgent"), ("html", "html"), ("sitekey", "")],
                fixed: &[],
                requires: &[],
                source: Source::Doc(strip("https://docs.capsolver.com/guide/captcha/cloudflare_challenge")),
            },
            CreateTaskDecl {
                dialect: Dialect::CapMonster,
                proxyless: None,
                proxied: Some("TurnstileTask"),
                params: &[
                    ("page_url", "websiteURL"),
                    ("sitekey", "websiteKey"),
                    ("html", "base64:htmlPageBase64"),
                    ("user_agent", "userAgent"),
                ],
                fixed: &[("cloudflareTaskType", "cf_clearance")],
                requires: &["sitekey", "html", "user_agent"],
                source: capmonster_client("capmonstercloud_client/requests/TurnstileRequest.py"),
            },
        ],
    },
};
