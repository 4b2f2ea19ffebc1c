//! `hcaptcha_classification`: one hCaptcha image challenge: which of its images match the
//! question.
//!
//! CapMonster alone: CapSolver's `HCaptchaClassification` is gone from its current docs (see
//! `docs/providers.md`).

use super::common::{capmonster_client, opt, req, strip};
use super::decl::{AnswerDecl, AnswerType, CreateTaskDecl, FieldType, KindDecl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::HcaptchaClassification,
    class: strip("HcaptchaClassification"),
    summary: strip("An hCaptcha image challenge: which of its images match the question."),
    fields: &[
        req("images", FieldType::Images { max: 18 }, "The challenge's images, base64, in order (at most 18)."),
        req("question", FieldType::Key, "The question, in English (`Please click each image containing a mountain`)."),
        opt("example_image", FieldType::Image, "The example image shown with the question, base64."),
        opt("page_url", FieldType::Url, "The page the challenge is on, to help the solver."),
        opt("user_agent", FieldType::UserAgent, "The browser's user agent, to help the solver."),
    ],
    answer: &[AnswerDecl {
        name: "cells",
        ty: AnswerType::Indices,
        keys: &["answer", "objects"],
        required: true,
        doc: strip("The 0-based positions of the images that match (`[]`: none)."),
    }],
    wire: Wire::Declared {
        v1: None,
        create_task: &[CreateTaskDecl {
            dialect: Dialect::CapMonster,
            proxyless: Some("ComplexImageTask"),
            proxied: None,
            params: &[
                ("images", "imagesBase64"),
                ("question", "metadata.Task"),
                ("example_image", "exampleImagesBase64[]"),
                ("page_url", "websiteUrl"),
                ("user_agent", "userAgent"),
            ],
            fixed: &[("class", "hcaptcha")],
            requires: &[],
            source: capmonster_client("capmonstercloud_client/requests/HcaptchaComplexImageTask.py"),
        }],
    },
};
