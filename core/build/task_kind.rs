//! Writes [`TaskKind`] from the kind files (docs/decisions/0078-one-task-model.md): a variant per
//! file in the order of their `position`s, `ALL`, each kind's name (`as_str`) and the kind whose
//! polling schedule it follows (`schedule`). Included by `src/task/mod.rs`.

use std::fmt::Write as _;

use crate::model::Kinds;

pub fn write(kinds: &Kinds) -> String {
    let mut out = String::from("// Written by core/build.rs from core/kinds/*.toml: edit those.\n\n");
    out.push_str("/// The kind of a task, for polling schedules and analysis: one per `core/kinds/<kind>.toml`.\n");
    out.push_str("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\npub enum TaskKind {\n");
    for kind in &kinds.kinds {
        writeln!(out, "    #[doc = {:?}]\n    {},", format!("`{}`: {}", kind.tag, kind.summary), kind.variant).unwrap();
    }
    out.push_str("}\n\nimpl TaskKind {\n");
    out.push_str("    /// Every kind, in the order of the kind files' `position`s.\n");
    writeln!(out, "    pub const ALL: [TaskKind; {}] = [", kinds.kinds.len()).unwrap();
    for kind in &kinds.kinds {
        writeln!(out, "        TaskKind::{},", kind.variant).unwrap();
    }
    out.push_str("    ];\n\n");
    out.push_str(
        "    /// The `type` tag of the kind (its file's name), also the key of per-kind options in every language.\n",
    );
    out.push_str("    pub const fn as_str(self) -> &'static str {\n        match self {\n");
    for kind in &kinds.kinds {
        writeln!(out, "            TaskKind::{} => {:?},", kind.variant, kind.tag).unwrap();
    }
    out.push_str("        }\n    }\n\n");
    out.push_str(
        "    /// The kind whose default polling schedule (first poll, give-up point) this one\n    \
         /// follows (`schedule` in its kind file): the providers document working times for a few\n    \
         /// kinds, and the newer kinds are solved as those are (a token by a browser, an image by a worker).\n",
    );
    out.push_str("    pub const fn schedule(self) -> TaskKind {\n        match self {\n");
    for kind in &kinds.kinds {
        writeln!(out, "            TaskKind::{} => TaskKind::{},", kind.variant, kind.schedule).unwrap();
    }
    out.push_str("        }\n    }\n}\n");
    out
}
