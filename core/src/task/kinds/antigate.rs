//! `antigate`: an anti-captcha AntiGate template: a worker follows the template's steps on the
//! page, and the browser session (cookies, localStorage, fingerprint) is the answer.

use super::common::{opt, req, strip, PAGE_URL, PROXY};
use super::decl::{AnswerDecl, AnswerType, CreateTaskDecl, FieldType, KindDecl, Source, Wire};
use crate::provider::protocol::Dialect;
use crate::task::TaskKind;

const fn value(name: &'static str, ty: AnswerType, keys: &'static [&'static str], doc: &'static str) -> AnswerDecl {
    AnswerDecl { name, ty, keys, required: false, doc: strip(doc) }
}

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Antigate,
    class: strip("AntiGate"),
    summary: strip("An anti-captcha AntiGate template run by a worker: the browser session it ends with."),
    fields: &[
        PAGE_URL,
        req("template_name", FieldType::Key, "The template's name in anti-captcha's catalogue (or one of yours)."),
        req("variables", FieldType::Object, "The template's variables and their values."),
        opt("domains_of_interest", FieldType::Names { max: 100 }, "Domains whose cookies and localStorage to collect."),
        PROXY,
    ],
    answer: &[
        AnswerDecl {
            name: "url",
            ty: AnswerType::Text,
            keys: &["url"],
            required: true,
            doc: strip("The page the template ended on."),
        },
        value("domain", AnswerType::Text, &["domain"], "That page's domain."),
        value("cookies", AnswerType::Object, &["cookies"], "The cookies of that page."),
        value("local_storage", AnswerType::Object, &["localStorage"], "The localStorage values of that page."),
        value("fingerprint", AnswerType::Object, &["fingerprint"], "The worker's browser fingerprint."),
    ],
    wire: Wire::Declared {
        v1: None,
        create_task: &[CreateTaskDecl {
            dialect: Dialect::AntiCaptcha,
            proxyless: Some("AntiGateTask"),
            proxied: Some("AntiGateTask"),
            params: &[
                ("page_url", "websiteURL"),
                ("template_name", "templateName"),
                ("variables", "variables"),
                ("domains_of_interest", "domainsOfInterest"),
            ],
            fixed: &[],
            requires: &[],
            source: Source::Doc(strip("https://anti-captcha.com/apidoc/task-types/AntiGateTask")),
        }],
    },
};
