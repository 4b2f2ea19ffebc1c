//! `raw`: the escape hatch, sent as given (coded wire form).

use super::common::{opt, strip, ALL_PRESETS, TEXT};
use super::decl::{FieldType, KindDecl, Wire};
use crate::task::TaskKind;

pub(super) const DECL: KindDecl = KindDecl {
    kind: TaskKind::Raw,
    class: strip("RawTask"),
    summary: strip("`method` + `params` for 2captcha-compatible services, or a whole createTask `task` object."),
    fields: &[
        opt("method", FieldType::Key, "The v1 `method`."),
        opt("params", FieldType::StringMap, "The v1 parameters besides `key` and `method`."),
        opt("task", FieldType::Object, "A createTask `task` object, with its `type`."),
    ],
    answer: TEXT,
    wire: Wire::Coded { services: ALL_PRESETS },
};
