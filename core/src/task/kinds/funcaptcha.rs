//! `funcaptcha`: Arkose Labs FunCaptcha (coded wire form).

use super::common::{opt, req, strip, PAGE_URL, PROXY, TOKEN, USER_AGENT};
use super::decl::{FieldDecl, FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Funcaptcha,
    class: strip("FunCaptcha"),
    summary: strip("Arkose Labs FunCaptcha."),
    fields: &[
        FieldDecl { js: Some("publicKey"), ..req("publickey", FieldType::Key, "The site's public key.") },
        PAGE_URL,
        opt("surl", FieldType::Url, "The API's subdomain or URL (`surl`)."),
        opt("data", FieldType::StringMap, "Extra values, sent as `data[key]=value` (e.g. `blob`)."),
        USER_AGENT,
        PROXY,
    ],
    answer: TOKEN,
    wire: Wire::Coded {
        services: &["captchaai", "2captcha", "rucaptcha", "anti-captcha", "2captcha-v2", "capmonster"],
    },
};
