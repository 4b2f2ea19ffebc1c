//! Writes the typed Rust forms of the kinds (`src/task/kinds/typed.rs` includes them): a struct
//! per declared kind that becomes a [`Task`] through the one reader (`Task::from_json_value`), an
//! answer struct per kind read from a `Solution` through the one answer reader
//! (`kinds::answer::typed`), and `AnyTask`, any declared kind's typed task by its `type`.

use std::fmt::Write as _;

use crate::model::{camel, AnswerValue, Answers, Field, Holds, Kind, Kinds, Wire};

pub fn write(kinds: &Kinds) -> String {
    let mut out = String::from("// Written by core/build.rs from core/kinds/*.toml: edit those.\n");
    let declared: Vec<&Kind> = kinds.kinds.iter().filter(|k| matches!(k.wire, Wire::Declared { .. })).collect();
    for kind in &declared {
        task(&mut out, kind);
    }
    for kind in &kinds.kinds {
        let values = match &kind.answer {
            Answers::Shared(name) => &kinds.answers[name],
            Answers::Own(values) => values,
        };
        answer(&mut out, kind, values);
    }
    any_task(&mut out, &declared);
    out
}

fn task(out: &mut String, kind: &Kind) {
    let class = &kind.class;
    writeln!(out, "\n/// {}\n///", kind.summary).unwrap();
    writeln!(
        out,
        "/// A task of kind `{}`, typed: [`ValidTask::try_from`] checks it as the JSON form is checked.",
        kind.tag
    )
    .unwrap();
    out.push_str("#[derive(Clone, Debug, PartialEq, serde::Deserialize)]\n#[serde(deny_unknown_fields)]\n");
    writeln!(out, "pub struct {class} {{").unwrap();
    for f in &kind.fields {
        writeln!(out, "    /// {}", f.doc).unwrap();
        let mut attrs = Vec::new();
        if !f.required || f.holds == Holds::Flag {
            attrs.push("default".to_string());
        }
        let js = f.js.clone().unwrap_or_else(|| lower_camel(&f.name));
        if js != f.name {
            attrs.push(format!("alias = {js:?}"));
        }
        attrs.extend(f.also.iter().map(|also| format!("alias = {also:?}")));
        if !attrs.is_empty() {
            writeln!(out, "    #[serde({})]", attrs.join(", ")).unwrap();
        }
        writeln!(out, "    pub {}: {},", ident(&f.name), rust_type(f)).unwrap();
    }
    out.push_str("}\n");

    writeln!(out, "\nimpl TryFrom<{class}> for ValidTask {{").unwrap();
    out.push_str("    type Error = InvalidTask;\n\n");
    writeln!(out, "    /// The task, read and checked by the kind's declaration as its JSON form is.").unwrap();
    writeln!(out, "    fn try_from(typed: {class}) -> Result<ValidTask, InvalidTask> {{").unwrap();
    writeln!(out, "        let mut json = Map::new();").unwrap();
    writeln!(out, "        json.insert(\"type\".into(), TaskKind::{}.as_str().into());", kind.variant).unwrap();
    for f in &kind.fields {
        let id = ident(&f.name);
        if f.holds == Holds::Flag {
            writeln!(out, "        if typed.{id} {{\n            put(&mut json, {:?}, true)?;\n        }}", f.name)
                .unwrap();
        } else if f.required {
            writeln!(out, "        put(&mut json, {:?}, typed.{id})?;", f.name).unwrap();
        } else {
            writeln!(
                out,
                "        if let Some(value) = typed.{id} {{\n            put(&mut json, {:?}, value)?;\n        }}",
                f.name
            )
            .unwrap();
        }
    }
    out.push_str("        Task::from_json_value(Value::Object(json))\n    }\n}\n");

    writeln!(out, "\nimpl TryFrom<&Task> for {class} {{").unwrap();
    out.push_str("    type Error = InvalidTask;\n\n");
    writeln!(out, "    /// The typed form of a task of kind `{}`; another kind is an error on `type`.", kind.tag)
        .unwrap();
    out.push_str("    fn try_from(task: &Task) -> Result<Self, InvalidTask> {\n");
    writeln!(out, "        let task = declared(task, TaskKind::{})?;", kind.variant).unwrap();
    writeln!(out, "        Ok({class} {{").unwrap();
    for f in &kind.fields {
        let id = ident(&f.name);
        let read = match (f.holds, f.required) {
            (Holds::Proxy, true) => "task.proxy().cloned().ok_or_else(|| missing(\"proxy\"))?".to_string(),
            (Holds::Proxy, false) => "task.proxy().cloned()".to_string(),
            (Holds::Flag, _) => format!("value(task, {:?})?.unwrap_or(false)", f.name),
            (_, true) => format!("value(task, {:?})?.ok_or_else(|| missing({:?}))?", f.name, f.name),
            (_, false) => format!("value(task, {:?})?", f.name),
        };
        writeln!(out, "            {id}: {read},").unwrap();
    }
    out.push_str("        })\n    }\n}\n");
}

fn answer(out: &mut String, kind: &Kind, values: &[AnswerValue]) {
    let name = answer_name(kind);
    writeln!(out, "\n/// The answer of a task of kind `{}`, by name (`Solution::answer`, typed).", kind.tag).unwrap();
    out.push_str("#[derive(Clone, Debug, PartialEq)]\n");
    writeln!(out, "pub struct {name} {{").unwrap();
    for a in values {
        let ty = answer_type(a.ty);
        let ty = if a.required { ty.to_string() } else { format!("Option<{ty}>") };
        writeln!(out, "    /// {}\n    pub {}: {ty},", a.doc, ident(&a.name)).unwrap();
    }
    out.push_str("}\n");
    writeln!(out, "\nimpl TryFrom<&Solution> for {name} {{").unwrap();
    out.push_str("    type Error = AnswerError;\n\n");
    out.push_str("    /// The declared values of the answer; the error names the first required one it lacks.\n");
    out.push_str("    fn try_from(solution: &Solution) -> Result<Self, AnswerError> {\n");
    writeln!(out, "        let mut values = answer_values(TaskKind::{}, solution)?;", kind.variant).unwrap();
    writeln!(out, "        Ok({name} {{").unwrap();
    for a in values {
        let take = format!("take::<{}>(&mut values, {:?})", answer_type(a.ty), a.name);
        let read = if a.required {
            format!("{take}.ok_or_else(|| AnswerError::missing(TaskKind::{}, {:?}))?", kind.variant, a.name)
        } else {
            take
        };
        writeln!(out, "            {}: {read},", ident(&a.name)).unwrap();
    }
    out.push_str("        })\n    }\n}\n");
}

fn any_task(out: &mut String, declared: &[&Kind]) {
    out.push_str(
        "\n/// The typed task of any declared kind, by its `type` (`{\"type\": \"amazon_waf\", ...}` reads as\n",
    );
    out.push_str("/// [`AnyTask::AmazonWaf`]).\n");
    out.push_str("#[derive(Clone, Debug, PartialEq, serde::Deserialize)]\n#[serde(tag = \"type\")]\n");
    out.push_str("pub enum AnyTask {\n");
    for k in declared {
        writeln!(out, "    #[serde(rename = {:?})]\n    {}({}),", k.tag, k.variant, k.class).unwrap();
    }
    out.push_str("}\n\nimpl TryFrom<AnyTask> for ValidTask {\n    type Error = InvalidTask;\n\n");
    out.push_str("    fn try_from(typed: AnyTask) -> Result<ValidTask, InvalidTask> {\n        match typed {\n");
    for k in declared {
        writeln!(out, "            AnyTask::{}(t) => ValidTask::try_from(t),", k.variant).unwrap();
    }
    out.push_str("        }\n    }\n}\n\nimpl TryFrom<&Task> for AnyTask {\n    type Error = InvalidTask;\n\n");
    out.push_str("    /// The typed form of a task of a declared kind; a coded kind is an error on `type`.\n");
    out.push_str("    fn try_from(task: &Task) -> Result<Self, InvalidTask> {\n        match task.kind() {\n");
    for k in declared {
        writeln!(
            out,
            "            TaskKind::{} => {}::try_from(task).map(AnyTask::{}),",
            k.variant, k.class, k.variant
        )
        .unwrap();
    }
    out.push_str("            other => Err(not_declared(other)),\n        }\n    }\n}\n");
}

/// `TsAnswer` form: the class with `Answer` after it (`AmazonWafAnswer`), as in TypeScript.
fn answer_name(kind: &Kind) -> String {
    format!("{}Answer", kind.class)
}

fn rust_type(f: &Field) -> String {
    let ty = match f.holds {
        Holds::Flag => return "bool".into(),
        Holds::List => "Vec<String>",
        Holds::Whole => "u64",
        Holds::Number => "f64",
        Holds::Proxy => "Proxy",
        Holds::StringMap => "std::collections::BTreeMap<String, String>",
        Holds::Object => "Map<String, Value>",
        Holds::Text => "String",
    };
    if f.required {
        ty.to_string()
    } else {
        format!("Option<{ty}>")
    }
}

fn answer_type(ty: &str) -> &'static str {
    match ty {
        "Points" => "Vec<Point>",
        "Number" => "f64",
        "Object" => "Map<String, Value>",
        "Indices" => "Vec<u64>",
        _ => "String",
    }
}

/// `page_url` -> `pageUrl`: the JavaScript spelling the reader also takes (`json_field::camel`).
fn lower_camel(name: &str) -> String {
    let upper = camel(name);
    let mut chars = upper.chars();
    chars.next().map(|c| c.to_ascii_lowercase().to_string() + chars.as_str()).unwrap_or_default()
}

/// A field's name as a Rust identifier (`type` -> `r#type`).
fn ident(name: &str) -> String {
    const KEYWORDS: [&str; 12] =
        ["type", "match", "mod", "ref", "static", "struct", "fn", "use", "loop", "move", "self", "where"];
    if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}
