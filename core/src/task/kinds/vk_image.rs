//! `vk_image`: VK's image captcha: the steps of the slider.

use super::common::{req, strip, two_captcha_test, BODY, TEXT, TWO_CAPTCHA};
use super::decl::{FieldType, KindDecl, V1Decl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::VkImage,
    class: strip("VkImage"),
    summary: strip("VK's image captcha: the steps of the slider."),
    fields: &[BODY, req("steps", FieldType::Token, "The `steps` array of the captcha, as JSON text.")],
    answer: TEXT,
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "vkimage",
            params: &[("body", "body"), ("steps", "steps")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_vkimage.py", "test_base64_body"),
        }),
        create_task: &[],
    },
};
