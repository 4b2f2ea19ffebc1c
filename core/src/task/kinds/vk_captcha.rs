//! `vk_captcha`: VK's captcha (`not_robot_captcha`), through your proxy and user agent.

use super::common::{req, strip, two_captcha_test, PROXY_REQUIRED, TOKEN, TWO_CAPTCHA, USER_AGENT_REQUIRED};
use super::decl::{FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::VkCaptcha,
    class: strip("VkCaptcha"),
    summary: strip("VK's captcha (`not_robot_captcha`), through your proxy and user agent."),
    fields: &[
        req("redirect_uri", FieldType::Url, "The `redirect_uri` of the captcha page."),
        USER_AGENT_REQUIRED,
        PROXY_REQUIRED,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "vkcaptcha",
            params: &[("redirect_uri", "redirect_uri"), ("user_agent", "useragent"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_vkcaptcha.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
