//! `altcha`: ALTCHA proof of work: its challenge as JSON, or the URL it is fetched from.

use super::common::{opt, strip, two_captcha_test, PAGE_URL, PROXY, TOKEN, TWO_CAPTCHA};
use super::decl::{FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Altcha,
    class: strip("Altcha"),
    summary: strip("ALTCHA proof of work: its challenge as JSON, or the URL it is fetched from."),
    fields: &[
        PAGE_URL,
        opt("challenge_json", FieldType::Token, "The challenge object, as JSON text."),
        opt("challenge_url", FieldType::Url, "The URL the widget fetches its challenge from."),
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "altcha",
            params: &[
                ("page_url", "pageurl"),
                ("challenge_json", "challenge_json"),
                ("challenge_url", "challenge_url"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_altcha.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
