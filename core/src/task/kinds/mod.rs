//! Every task kind, declared once: its fields with their types and checks, its
//! answer's shape, its wire form per protocol and dialect, and the source of
//! each wire fact (DESIGN §28).
//!
//! One file per kind holds its [`KindDecl`]. The Rust reader, validator and
//! encoders of the declared kinds work from these tables; the kinds whose wire
//! form needs more than renames ([`Wire::Coded`]) keep their typed structs and
//! encoders, checked against their declarations by tests. The Python classes
//! and stubs, the TypeScript types, the CLI's list of kinds and the docs table
//! are written from the same tables by `core/tests/kinds_generated.rs`, which
//! fails when a checked-in copy differs.

mod common;
pub mod decl;
mod declared;

mod amazon_waf;
mod audio;
mod canvas;
mod coordinates;
mod datadome;
mod funcaptcha;
mod geetest_v3;
mod geetest_v4;
mod grid;
mod hcaptcha;
mod image;
mod raw;
mod recaptcha_v2;
mod recaptcha_v3;
mod rotate;
mod temu;
mod text;
mod turnstile;
mod vk_image;
mod altcha;
mod mtcaptcha;
mod friendly_captcha;
mod prosopo;
mod tencent;
mod cutcaptcha;
mod lemin;
mod keycaptcha;
mod capy;
mod cybersiara;
mod yandex_smart;
mod captchafox;
mod atb_captcha;
mod vk_captcha;
mod binance;
mod yidun;
mod basilisk;
mod tspd;
mod alibaba;
mod hunt;

pub mod answer;

use serde_json::Value;

pub use decl::{
    AnswerDecl, AnswerType, CreateTaskDecl, FieldDecl, FieldType, KindDecl, Source, V1Decl, Wire,
};
pub(crate) use declared::cookie_pairs;
pub use declared::Declared;

use super::TaskKind;
use crate::provider::{Dialect, Protocol, Provider};

/// Every declaration, in the order of [`TaskKind::ALL`] (checked by a test).
pub const DECLS: [&KindDecl; TaskKind::ALL.len()] = [
    &image::DECL,
    &recaptcha_v2::DECL,
    &recaptcha_v3::DECL,
    &turnstile::DECL,
    &geetest_v3::DECL,
    &geetest_v4::DECL,
    &funcaptcha::DECL,
    &hcaptcha::DECL,
    &text::DECL,
    &raw::DECL,
    &amazon_waf::DECL,
    &datadome::DECL,
    &mtcaptcha::DECL,
    &friendly_captcha::DECL,
    &prosopo::DECL,
    &altcha::DECL,
    &tencent::DECL,
    &cutcaptcha::DECL,
    &lemin::DECL,
    &keycaptcha::DECL,
    &capy::DECL,
    &cybersiara::DECL,
    &yandex_smart::DECL,
    &captchafox::DECL,
    &atb_captcha::DECL,
    &vk_captcha::DECL,
    &binance::DECL,
    &yidun::DECL,
    &basilisk::DECL,
    &tspd::DECL,
    &alibaba::DECL,
    &hunt::DECL,
    &temu::DECL,
    &grid::DECL,
    &coordinates::DECL,
    &canvas::DECL,
    &rotate::DECL,
    &audio::DECL,
    &vk_image::DECL,
];

/// The declaration of `kind`.
pub fn decl(kind: TaskKind) -> &'static KindDecl {
    DECLS[kind.index()]
}

/// The v1 form of a declared kind for `provider`: `None` when the kind is coded, `Some(None)`
/// when the provider does not solve it.
pub(crate) fn v1_form(kind: TaskKind, provider: &Provider) -> Option<Option<&'static V1Decl>> {
    let Wire::Declared { v1, .. } = &decl(kind).wire else { return None };
    let custom = provider.name() == "custom";
    Some(v1.as_ref().filter(|v| custom || v.services.contains(&provider.name())))
}

/// The createTask form of a declared kind in `dialect`: as [`v1_form`].
pub(crate) fn create_task_form(kind: TaskKind, dialect: Dialect) -> Option<Option<&'static CreateTaskDecl>> {
    let Wire::Declared { create_task, .. } = &decl(kind).wire else { return None };
    Some(create_task.iter().find(|c| c.dialect == dialect))
}

/// The presets that solve a declared kind, for the error that says where it can go.
pub fn services_of(kind: TaskKind) -> Vec<&'static str> {
    let mut out = Vec::new();
    for (name, _, protocol) in crate::provider::PRESETS {
        let provider = Provider::preset(name).expect("a preset");
        let solves = match protocol {
            Protocol::V1 => v1_form(kind, &provider).is_none_or(|f| f.is_some()),
            Protocol::CreateTask(d) => create_task_form(kind, *d).is_none_or(|f| f.is_some()),
        };
        if solves {
            out.push(*name);
        }
    }
    out
}

/// A value of a declared task as a form parameter: text as is, a flag as `1`, a number in decimal.
pub(crate) fn param_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(true) => Some("1".into()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
