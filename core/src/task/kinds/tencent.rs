//! `tencent`: Tencent (TenDI) captcha, by its `app_id`.

use super::common::{capmonster_client, req, strip, two_captcha_test, PAGE_URL, PROXY, TWO_CAPTCHA, USER_AGENT};
use super::decl::{AnswerDecl, AnswerType, CreateTaskDecl, FieldType, KindDecl, V1Decl, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Tencent,
    class: strip("Tencent"),
    summary: strip("Tencent (TenDI) captcha, by its `app_id`."),
    fields: &[req("app_id", FieldType::Key, "The widget's `appId`."), PAGE_URL, USER_AGENT, PROXY],
    answer: &[
        AnswerDecl {
            name: "ticket",
            ty: AnswerType::Text,
            keys: &["ticket", "data.ticket"],
            required: true,
            doc: strip("`ticket`."),
        },
        AnswerDecl {
            name: "randstr",
            ty: AnswerType::Text,
            keys: &["randstr", "data.randstr"],
            required: true,
            doc: strip("`randstr`."),
        },
    ],
    wire: Wire::Declared {
        v1: Some(V1Decl {
            method: "tencent",
            params: &[("app_id", "app_id"), ("page_url", "pageurl"), ("proxy", "proxy")],
            fixed: &[],
            services: TWO_CAPTCHA,
            source: two_captcha_test("tests/sync/test_tencent.py", "test_all_params"),
        }),
        create_task: &[CreateTaskDecl {
            dialect: Dialect::CapMonster,
            proxyless: Some("CustomTask"),
            proxied: Some("CustomTask"),
            params: &[("page_url", "websiteURL"), ("app_id", "websiteKey"), ("user_agent", "userAgent")],
            fixed: &[("class", "TenDI")],
            requires: &[],
            source: capmonster_client("capmonstercloud_client/requests/TenDiCustomTaskRequest.py"),
        }],
    },
};
