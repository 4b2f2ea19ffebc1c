//! Fields, answers and sources several kinds share, so that a user agent or a
//! page URL reads and checks the same in every kind.

use super::decl::{AnswerDecl, AnswerType, FieldDecl, FieldType, Source, Text};

/// `text` outside the browser build, nothing in it ([`super::decl::Text`]).
#[cfg(not(target_arch = "wasm32"))]
pub(super) const fn strip(text: &'static str) -> Text {
    text
}

/// `text` outside the browser build, nothing in it ([`super::decl::Text`]).
#[cfg(target_arch = "wasm32")]
pub(super) const fn strip(_text: &'static str) -> Text {}

pub(super) const fn req(name: &'static str, ty: FieldType, doc: &'static str) -> FieldDecl {
    FieldDecl { name, js: None, ty, required: true, doc: strip(doc) }
}

pub(super) const fn opt(name: &'static str, ty: FieldType, doc: &'static str) -> FieldDecl {
    FieldDecl { name, js: None, ty, required: false, doc: strip(doc) }
}

pub(super) const PAGE_URL: FieldDecl = req("page_url", FieldType::Url, "The page the challenge is on.");
pub(super) const SITEKEY: FieldDecl = req("sitekey", FieldType::Key, "The site's key for the widget.");
pub(super) const USER_AGENT: FieldDecl =
    opt("user_agent", FieldType::UserAgent, "The browser's user agent, where the answer is bound to it.");
pub(super) const USER_AGENT_REQUIRED: FieldDecl =
    req("user_agent", FieldType::UserAgent, "The browser's user agent: the answer is bound to it.");
pub(super) const PROXY: FieldDecl =
    opt("proxy", FieldType::Proxy, "A proxy the service's workers load the page through.");
pub(super) const PROXY_REQUIRED: FieldDecl =
    req("proxy", FieldType::Proxy, "The proxy the service loads the page through: the answer is bound to its IP.");
pub(super) const BODY: FieldDecl = req("body", FieldType::Image, "The image, base64.");
pub(super) const LANG: FieldDecl = opt("lang", FieldType::Key, "Language code of the instructions (`en`, `ru`, ...).");
pub(super) const TEXT_INSTRUCTIONS: FieldDecl =
    opt("textinstructions", FieldType::Text, "Instructions shown to the worker.");
pub(super) const IMG_INSTRUCTIONS: FieldDecl =
    opt("imginstructions", FieldType::Image, "An image (base64) with instructions shown to the worker.");

/// The answer of a token kind: the token, as the answer's text.
pub(super) const TOKEN: &[AnswerDecl] = &[AnswerDecl {
    name: "token",
    ty: AnswerType::Text,
    keys: &[],
    required: true,
    doc: strip("The token to submit with the form."),
}];

/// The answer of a recognition kind: the text.
pub(super) const TEXT: &[AnswerDecl] = &[AnswerDecl {
    name: "text",
    ty: AnswerType::Text,
    keys: &[],
    required: true,
    doc: strip("The answer as the worker typed it."),
}];

/// Every preset (`provider::PRESETS`).
pub(super) const ALL_PRESETS: &[&str] =
    &["captchaai", "2captcha", "rucaptcha", "anti-captcha", "capsolver", "2captcha-v2", "capmonster"];

/// The 2captcha-compatible presets that document every method of 2captcha's API
/// (rucaptcha is the same API); CaptchaAI documents a subset.
pub(super) const TWO_CAPTCHA: &[&str] = &["2captcha", "rucaptcha"];

/// A test of the official 2captcha Python client that sends the method's parameters.
pub(super) const fn two_captcha_test(file: &'static str, test: &'static str) -> Source {
    Source::Client { repo: strip("2captcha/2captcha-python"), file: strip(file), test: Some(strip(test)) }
}

/// A request class of the official CapMonster Cloud Python client.
pub(super) const fn capmonster_client(file: &'static str) -> Source {
    Source::Client { repo: strip("ZennoLab/capmonstercloud-client-python"), file: strip(file), test: None }
}
