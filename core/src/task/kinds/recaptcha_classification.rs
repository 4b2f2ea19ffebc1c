//! `recaptcha_classification`: one reCAPTCHA v2 image challenge (a 3x3 or 4x4 grid, or one
//! tile): which cells show the object reCAPTCHA names.

use super::common::{capmonster_client, opt, req, strip};
use super::decl::{AnswerDecl, AnswerType, CreateTaskDecl, FieldType, KindDecl, Source, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::RecaptchaClassification,
    class: strip("RecaptchaClassification"),
    summary: strip("A reCAPTCHA v2 image challenge: which cells of the grid show the object it names."),
    fields: &[
        req("image", FieldType::Image, "The challenge's image (the whole grid, or one tile), base64."),
        req(
            "question",
            FieldType::Key,
            "The object's code as reCAPTCHA names it in the challenge (`/m/015qff`: traffic lights).",
        ),
        opt("grid", FieldType::Choice(&["3x3", "4x4", "1x1"]), "The grid the image is cut into (CapMonster needs it)."),
        opt("page_url", FieldType::Url, "The page the challenge is on, to help the solver."),
    ],
    answer: &[AnswerDecl {
        name: "cells",
        ty: AnswerType::Indices,
        keys: &["answer", "objects", "hasObject"],
        required: true,
        doc: strip("The 0-based cells that show the object, left to right, top to bottom (`[]`: none)."),
    }],
    wire: Wire::Declared {
        v1: None,
        create_task: &[
            CreateTaskDecl {
                dialect: Dialect::CapSolver,
                proxyless: Some("ReCaptchaV2Classification"),
                proxied: None,
                params: &[("image", "image"), ("question", "question"), ("page_url", "websiteURL"), ("grid", "")],
                fixed: &[],
                requires: &[],
                source: Source::Doc(strip("https://docs.capsolver.com/guide/recognition/ReCaptchaClassification")),
            },
            CreateTaskDecl {
                dialect: Dialect::CapMonster,
                proxyless: Some("ComplexImageTask"),
                proxied: None,
                params: &[
                    ("image", "imagesBase64[]"),
                    ("question", "metadata.TaskDefinition"),
                    ("grid", "metadata.Grid"),
                    ("page_url", "websiteUrl"),
                ],
                fixed: &[("class", "recaptcha")],
                requires: &["grid"],
                source: capmonster_client("capmonstercloud_client/requests/RecaptchaComplexImageTask.py"),
            },
        ],
    },
};
