//! `cybersiara`: CyberSiARA slider.

use super::common::{req, strip, two_captcha_test, PAGE_URL, PROXY, TOKEN, TWO_CAPTCHA, USER_AGENT_REQUIRED};
use super::decl::{FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Cybersiara,
    class: strip("CyberSiara"),
    summary: strip("CyberSiARA slider."),
    fields: &[
        req(
            "master_url_id",
            FieldType::Key,
            "The `MasterUrlId` of the page's request to `API/CyberSiara/GetCyberSiara`.",
        ),
        PAGE_URL,
        USER_AGENT_REQUIRED,
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "cybersiara",
            params: &[
                ("master_url_id", "master_url_id"),
                ("page_url", "pageurl"),
                ("user_agent", "userAgent"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_cybersiara.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
