//! `captchafox`: CaptchaFox, through your proxy and user agent.

use super::common::{
    strip, two_captcha_test, PAGE_URL, PROXY_REQUIRED, SITEKEY, TOKEN, TWO_CAPTCHA, USER_AGENT_REQUIRED,
};
use super::decl::{KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Captchafox,
    class: strip("CaptchaFox"),
    summary: strip("CaptchaFox, through your proxy and user agent."),
    fields: &[SITEKEY, PAGE_URL, USER_AGENT_REQUIRED, PROXY_REQUIRED],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "captchafox",
            params: &[("sitekey", "sitekey"), ("page_url", "pageurl"), ("user_agent", "useragent"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_captchafox.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
