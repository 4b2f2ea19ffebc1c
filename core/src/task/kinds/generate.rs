//! The forms of the kind declarations ([`DECLS`]) in other languages and documents, and where each
//! goes (docs/decisions/0078-one-task-model.md). `cargo xtask kinds` writes them; the test
//! `kinds_generated` (`core/tests/it`) compares the checked-in files with [`outputs`] and fails on
//! drift. Feature `kinds-gen`, which only those two enable.
//!
//! - `bindings-python/python/captcha_dlq/_kinds.py`: a dataclass per kind, and `KindMs`'s fields;
//! - the `kinds` section of `js-api/index.d.ts` (the types of both npm packages);
//! - `docs/kinds.md`: the table of kinds, their fields, answers, services and sources.

use std::fmt::Write as _;
use std::path::Path;

use super::{services_of, AnswerLife, AnswerType, FieldDecl, FieldType, KindDecl, Source, Wire, DECLS};
use crate::protocol::Dialect;
use crate::task::TaskKind;

/// One generated text and where it goes: a whole file, or the part of one between two marker lines.
#[derive(Debug)]
pub struct Output {
    /// The file, from the repository's root.
    pub path: &'static str,
    /// The markers the text goes between (kept), or `None` for the whole file.
    pub section: Option<(&'static str, &'static str)>,
    pub text: String,
}

impl Output {
    /// What the file at `root`/`path` should hold: `text`, or the file with `text` between its markers.
    pub fn wanted(&self, root: &Path) -> Result<String, String> {
        let Some((begin, end)) = self.section else { return Ok(self.text.clone()) };
        let current = self.current(root)?;
        let start = current.find(begin).ok_or_else(|| format!("{}: no line {begin:?}", self.path))? + begin.len();
        let stop = current.find(end).ok_or_else(|| format!("{}: no line {end:?}", self.path))?;
        if stop < start {
            return Err(format!("{}: {end:?} comes before {begin:?}", self.path));
        }
        Ok(format!("{}\n{}{}", &current[..start], self.text, &current[stop..]))
    }

    /// The file as it is.
    pub fn current(&self, root: &Path) -> Result<String, String> {
        std::fs::read_to_string(root.join(self.path)).map_err(|e| format!("{}: {e}", self.path))
    }

    /// `None` when the file holds what it should, or the first line (from 1) where it differs.
    pub fn differs(&self, root: &Path) -> Result<Option<usize>, String> {
        let (current, wanted) = (self.current(root)?, self.wanted(root)?);
        if current == wanted {
            return Ok(None);
        }
        let line = current.lines().zip(wanted.lines()).position(|(a, b)| a != b);
        Ok(Some(line.unwrap_or_else(|| current.lines().count().min(wanted.lines().count())) + 1))
    }

    /// Writes what the file should hold; `true` if that changed it.
    pub fn write(&self, root: &Path) -> Result<bool, String> {
        let wanted = self.wanted(root)?;
        if self.current(root).ok().as_deref() == Some(wanted.as_str()) {
            return Ok(false);
        }
        std::fs::write(root.join(self.path), wanted).map_err(|e| format!("{}: {e}", self.path))?;
        Ok(true)
    }
}

/// Every generated text, with where it goes.
pub fn outputs() -> Result<Vec<Output>, String> {
    Ok(vec![
        Output { path: "bindings-python/python/captcha_dlq/_kinds.py", section: None, text: python()? },
        Output {
            path: "bindings-python/python/captcha_dlq/_config.py",
            section: Some(("    # <generated: kind_ms fields>", "# </generated: kind_ms fields>")),
            text: python_kind_ms(),
        },
        Output {
            path: "js-api/index.d.ts",
            section: Some(("// <generated: kinds>", "// </generated: kinds>")),
            text: typescript(),
        },
        Output { path: "docs/kinds.md", section: None, text: docs() },
    ])
}

fn decls() -> impl Iterator<Item = &'static KindDecl> {
    DECLS.into_iter()
}

fn py_type(f: &FieldDecl) -> (String, Option<&'static str>) {
    let optional = |t: &str| if f.required { t.to_string() } else { format!("Optional[{t}]") };
    match f.ty {
        FieldType::Flag => ("bool".into(), Some("False")),
        FieldType::Int { .. } => (optional("int"), (!f.required).then_some("None")),
        FieldType::Number { .. } => (optional("float"), (!f.required).then_some("None")),
        FieldType::Proxy => (optional("Proxy"), (!f.required).then_some("None")),
        FieldType::StringMap => ("Mapping[str, str]".into(), Some("field(default_factory=dict)")),
        FieldType::Object => (optional("Mapping[str, Any]"), (!f.required).then_some("None")),
        FieldType::Images { .. } | FieldType::Names { .. } => {
            (optional("Sequence[str]"), (!f.required).then_some("None"))
        }
        _ => (optional("str"), (!f.required).then_some("None")),
    }
}

fn python() -> Result<String, String> {
    let mut out = String::from(
        "# Generated from core/kinds/*.toml by `cargo xtask kinds`: do not edit.\n\
         \"\"\"The task classes, one per kind, and the per-kind fields of ``KindMs``.\"\"\"\n\n\
         from __future__ import annotations\n\n\
         from dataclasses import dataclass, field\n\
         from typing import Any, ClassVar, Mapping, Optional, Sequence, Tuple\n\n\
         from ._task_base import Proxy, Task\n\n",
    );
    let classes: Vec<&str> = decls().map(|d| d.class).collect();
    writeln!(out, "__all__ = [").unwrap();
    for c in &classes {
        writeln!(out, "    \"{c}\",").unwrap();
    }
    writeln!(out, "    \"KIND_NAMES\",\n    \"KIND_CLASSES\",\n]\n").unwrap();
    writeln!(out, "#: Every kind's name: its task ``type`` and its key in per-kind options.").unwrap();
    writeln!(out, "KIND_NAMES: Tuple[str, ...] = (").unwrap();
    for k in TaskKind::ALL {
        writeln!(out, "    \"{k}\",").unwrap();
    }
    writeln!(out, ")\n").unwrap();
    for d in decls() {
        writeln!(out, "\n@dataclass(frozen=True)\nclass {}(Task):", d.class).unwrap();
        writeln!(out, "    \"\"\"{}\"\"\"\n", d.summary.replace('`', "``")).unwrap();
        writeln!(out, "    TYPE: ClassVar[str] = \"{}\"", d.kind).unwrap();
        let mut seen_optional = false;
        for f in d.fields {
            let (ty, default) = py_type(f);
            writeln!(out, "    #: {}", f.doc.replace('`', "``")).unwrap();
            match default {
                Some(def) => {
                    seen_optional = true;
                    writeln!(out, "    {}: {ty} = {def}", f.name).unwrap();
                }
                None if seen_optional => {
                    // A dataclass field without a default cannot follow one with a default.
                    return Err(format!("{}: the required field `{}` comes after an optional one", d.kind, f.name));
                }
                None => writeln!(out, "    {}: {ty}", f.name).unwrap(),
            }
        }
        out.push('\n');
    }
    writeln!(out, "\n#: The class of each kind, by name.").unwrap();
    writeln!(out, "KIND_CLASSES: Mapping[str, type] = {{cls.TYPE: cls for cls in ({},)}}", classes.join(", ")).unwrap();
    Ok(out)
}

fn python_kind_ms() -> String {
    let mut out = String::new();
    for k in TaskKind::ALL {
        writeln!(out, "    {k}: Optional[int] = None").unwrap();
    }
    out.push_str("    ");
    out
}

fn ts_type(f: &FieldDecl) -> String {
    match f.ty {
        FieldType::Flag => "boolean".into(),
        FieldType::Int { .. } | FieldType::Number { .. } => "number".into(),
        FieldType::Proxy => "TaskProxy".into(),
        FieldType::StringMap => "Record<string, string>".into(),
        FieldType::Object => "Record<string, unknown>".into(),
        FieldType::Images { .. } | FieldType::Names { .. } => "string[]".into(),
        FieldType::Choice(names) => names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(" | "),
        _ => "string".into(),
    }
}

fn ts_name(d: &KindDecl) -> String {
    if d.class.ends_with("Task") {
        d.class.to_string()
    } else {
        format!("{}Task", d.class)
    }
}

fn typescript() -> String {
    let mut out = String::from("// Generated from core/kinds/*.toml by `cargo xtask kinds`: do not edit.\n\n");
    out.push_str("/** Task kinds, as `type`; also the keys of per-kind options (`firstPollMs`, `price`). */\nexport type TaskType =\n");
    for k in TaskKind::ALL {
        writeln!(out, "  | '{k}'").unwrap();
    }
    out.pop();
    out.push_str(";\n\n");
    out.push_str("/** A proxy the solving service uses for the task (not the client's own traffic: see `ClientOptions.proxy`). */\nexport interface TaskProxy {\n  type: 'http' | 'https' | 'socks4' | 'socks5';\n  host: string;\n  port: number;\n  login?: string;\n  password?: string;\n}\n");
    for d in decls() {
        writeln!(out, "\n/** {} */\nexport interface {} {{\n  type: '{}';", d.summary, ts_name(d), d.kind).unwrap();
        for f in d.fields {
            let q = if f.required { "" } else { "?" };
            writeln!(out, "  /** {} */\n  {}{q}: {};", f.doc, f.js_name(), ts_type(f)).unwrap();
        }
        out.push_str("}\n");
        let answer: Vec<String> = d
            .answer
            .iter()
            .map(|a| {
                let ty = match a.ty {
                    AnswerType::Text => "string",
                    AnswerType::Number => "number",
                    AnswerType::Points => "Array<{ x: number; y: number }>",
                    AnswerType::Object => "Record<string, unknown>",
                    AnswerType::Indices => "number[]",
                };
                let q = if a.required { "" } else { "?" };
                format!("  /** {} */\n  {}{q}: {ty};\n", a.doc, json_camel(a.name))
            })
            .collect();
        writeln!(
            out,
            "\n/** The answer of a `{}` task, by name (`Solution.answer`). */\nexport interface {}Answer {{\n{}}}",
            d.kind,
            d.class,
            answer.concat()
        )
        .unwrap();
    }
    out.push_str("\n/**\n * A task. The core checks it and names the bad field (`InvalidTask.field`); field names may also be\n * written in snake_case (`page_url`).\n */\nexport type Task =\n");
    for d in decls() {
        writeln!(out, "  | {}", ts_name(d)).unwrap();
    }
    out.pop();
    out.push_str(";\n\n/** The camelCase spelling of the kinds whose name has an underscore, also taken as per-kind option keys. */\nexport type TaskTypeCamel =\n");
    for k in TaskKind::ALL.into_iter().filter(|k| json_camel(k.as_str()) != k.as_str()) {
        writeln!(out, "  | '{}'", json_camel(k.as_str())).unwrap();
    }
    out.pop();
    out.push_str(";\n\n/** One duration (ms) per task kind: an object of kinds (those left out keep their value) or one number for all. Keys are the kinds' names (`recaptcha_v2`); their camelCase spelling (`recaptchaV2`) is taken too. */\nexport type KindMs = number | Partial<Record<TaskType | TaskTypeCamel, number>>;\n");
    out
}

fn json_camel(name: &str) -> String {
    crate::support::json_field::camel(name)
}

fn source_text(s: &Source) -> String {
    match s {
        Source::Doc(url) => format!("<{url}>"),
        Source::Client { repo, file, test: Some(test) } => format!("{repo} `{file}` `{test}`"),
        Source::Client { repo, file, test: None } => format!("{repo} `{file}`"),
    }
}

fn dialect_preset(d: Dialect) -> &'static str {
    d.as_str()
}

fn docs() -> String {
    let mut out = String::from(
        "# Task kinds\n\n<!-- Generated from core/kinds/*.toml by `cargo xtask kinds`: do not edit. -->\n\n",
    );
    out.push_str("Every kind the core types, declared once in `core/kinds/<kind>.toml`: its fields (required in **bold**), the values of its answer, where each service takes it and the source of that wire form. A kind goes only to the services listed for it; the others refuse it on `type` before anything is sent. The polling schedule column names the kind whose documented schedule it follows (see `docs/providers.md`).\n\n");
    out.push_str("| kind | fields | answer | services | schedule |\n|---|---|---|---|---|\n");
    for d in decls() {
        let fields: Vec<String> =
            d.fields.iter().map(|f| if f.required { format!("**{}**", f.name) } else { f.name.to_string() }).collect();
        let answer: Vec<&str> = d.answer.iter().map(|a| a.name).collect();
        let services = services_of(d.kind).join(", ");
        writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            d.kind,
            fields.join(", "),
            answer.join(", "),
            services,
            d.kind.schedule()
        )
        .unwrap();
    }
    let coded: Vec<String> =
        decls().filter(|d| matches!(d.wire, Wire::Coded { .. })).map(|d| format!("`{}`", d.kind)).collect();
    write!(out, "\n## Wire forms and sources\n\nThe kinds written as code ({}: the escape hatch, sent as the user wrote it) are in `core/src/provider/v1.rs` and `core/src/provider/dialect/mod.rs`. The declared ones:\n\n| kind | service | type / method | source |\n|---|---|---|---|\n", coded.join(", ")).unwrap();
    for d in decls() {
        let Wire::Declared { v1, create_task } = &d.wire else { continue };
        if let Some(v) = v1 {
            writeln!(
                out,
                "| `{}` | {} (v1) | `{}` | {} |",
                d.kind,
                v.services.join(", "),
                v.method,
                source_text(&v.source)
            )
            .unwrap();
        }
        for c in *create_task {
            let types: Vec<&str> = [c.proxyless, c.proxied].into_iter().flatten().collect();
            let mut types = types;
            types.dedup();
            let preset = dialect_preset(c.dialect);
            // A form kept for custom endpoints of the dialect (`custom_only`): the preset dropped the kind.
            let custom_only = if d.dropped_by(preset).is_some() { " (custom endpoints only)" } else { "" };
            // A form chosen by a field (`when`): reCAPTCHA Enterprise's own types.
            let when = c.when.map_or_else(String::new, |field| format!(" (with `{field}`)"));
            writeln!(
                out,
                "| `{}` | {preset}{custom_only}{when} | `{}` | {} |",
                d.kind,
                types.join("` / `"),
                source_text(&c.source)
            )
            .unwrap();
        }
    }
    out.push_str("\n## Services that dropped a kind\n\nA service that took a kind and no longer does (`[dropped]` in the kind file): the kind is not sent there, and a task routed there is refused on `type`, naming the source below and the services that still take it.\n\n| kind | service | what the source shows | source |\n|---|---|---|---|\n");
    let mut any = false;
    for d in decls() {
        for x in d.dropped {
            any = true;
            writeln!(out, "| `{}` | {} | {} | <{}> |", d.kind, x.service, x.note, x.doc).unwrap();
        }
    }
    if !any {
        out.push_str("| — | — | none | — |\n");
    }
    out.push_str("\n## Answer life\n\nHow long each kind's answer is good for after it was solved (`answer_life`; `solved_at` and `expires_at` on every solution). Past it, an answer is never handed over as good: it is a dead letter `TTLExpired` that keeps the answer and its cost, or solved again with `recover --resolve-expired`.\n\n| kind | life | source |\n|---|---|---|\n");
    for d in decls() {
        let (life, source) = match d.life {
            AnswerLife::Expires { ms, doc, note } => {
                let source = match note {
                    Some(note) => format!("{doc} ({note})"),
                    None => doc.to_string(),
                };
                (format!("{} s", ms / 1000), source)
            }
            AnswerLife::Never { why } => ("does not expire".to_string(), why.to_string()),
        };
        writeln!(out, "| `{}` | {life} | {source} |", d.kind).unwrap();
    }
    out
}
