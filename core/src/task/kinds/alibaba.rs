//! `alibaba`: Alibaba Cloud (Aliyun) captcha.

use super::common::{opt, req, strip, two_captcha_test, PAGE_URL, PROXY, TOKEN, TWO_CAPTCHA, USER_AGENT};
use super::decl::{FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Alibaba,
    class: strip("Alibaba"),
    summary: strip("Alibaba Cloud (Aliyun) captcha."),
    fields: &[
        PAGE_URL,
        req("scene_id", FieldType::Key, "The widget's `SceneId`."),
        req("prefix", FieldType::Key, "The widget's `prefix`."),
        opt("user_id", FieldType::Key, "`UserId`."),
        opt("user_user_id", FieldType::Key, "`UserUserId`."),
        opt("verify_type", FieldType::Key, "`verifyType`."),
        opt("region", FieldType::Key, "`region`."),
        opt("user_certify_id", FieldType::Key, "`UserCertifyId`."),
        opt("api_get_lib", FieldType::Url, "The `AliyunCaptcha.js` URL."),
        USER_AGENT,
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "alibaba",
            params: &[
                ("page_url", "pageurl"),
                ("scene_id", "scene_id"),
                ("prefix", "prefix"),
                ("user_id", "user_id"),
                ("user_user_id", "user_user_id"),
                ("verify_type", "verify_type"),
                ("region", "region"),
                ("user_certify_id", "user_certify_id"),
                ("api_get_lib", "api_get_lib"),
                ("user_agent", "useragent"),
                ("proxy", "proxy"),
            ],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_alibaba.py", "test_all_params"),
        }),
        create_task: &[],
    },
};
