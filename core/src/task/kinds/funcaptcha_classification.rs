//! `funcaptcha_classification`: one FunCaptcha (Arkose Labs) image challenge: which of its
//! tiles answers the question.
//!
//! CapMonster alone: CapSolver's `FunCaptchaClassification` is gone from its current docs (see
//! `docs/providers.md`).

use super::common::{capmonster_client, opt, req, strip};
use super::decl::{AnswerDecl, AnswerType, CreateTaskDecl, FieldType, KindDecl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::FuncaptchaClassification,
    class: strip("FuncaptchaClassification"),
    summary: strip("A FunCaptcha image challenge: which of its tiles answers the question."),
    fields: &[
        req("image", FieldType::Image, "The challenge's image (all its tiles), base64."),
        req("question", FieldType::Key, "The question, in English (`Pick the image that is the correct way up`)."),
        opt("page_url", FieldType::Url, "The page the challenge is on, to help the solver."),
        opt("user_agent", FieldType::UserAgent, "The browser's user agent, to help the solver."),
    ],
    answer: &[AnswerDecl {
        name: "cells",
        ty: AnswerType::Indices,
        keys: &["answer", "objects"],
        required: true,
        doc: strip("The 0-based positions of the tiles that answer it."),
    }],
    wire: Wire::Declared {
        v1: None,
        create_task: &[CreateTaskDecl {
            dialect: Dialect::CapMonster,
            proxyless: Some("ComplexImageTask"),
            proxied: None,
            params: &[
                ("image", "imagesBase64[]"),
                ("question", "metadata.Task"),
                ("page_url", "websiteUrl"),
                ("user_agent", "userAgent"),
            ],
            fixed: &[("class", "funcaptcha")],
            requires: &[],
            source: capmonster_client("capmonstercloud_client/requests/FuncaptchaComplexImageTask.py"),
        }],
    },
};
