//! Writes the kinds as the `const` tables of `src/task/kinds/decl.rs`: the shared answers and
//! preset lists once each, a `KindDecl` per kind, and `DECLS` in the order of `TaskKind::ALL`.
//! The declared kinds' tables are left out of the browser build (`declared!` stands in).

use std::fmt::Write as _;

use crate::model::{AnswerValue, Answers, Dropped, Kind, Kinds, Life, Services, Source, Wire};

pub fn write(kinds: &Kinds) -> String {
    let mut out = String::from("// Written by core/build.rs from core/kinds/*.toml: edit those.\n");
    for (name, values) in &kinds.answers {
        writeln!(
            out,
            "\n#[cfg_attr(not(feature = \"declared-kinds\"), allow(dead_code))]\nconst ANSWER_{}: &[AnswerDecl] = &[{}];",
            name.to_uppercase(),
            answer_values(values)
        )
        .unwrap();
    }
    for (name, list) in &kinds.services {
        writeln!(
            out,
            "\n#[cfg_attr(not(feature = \"declared-kinds\"), allow(dead_code))]\nconst SERVICES_{}: &[&str] = {};",
            name.to_uppercase(),
            strings(list)
        )
        .unwrap();
    }
    for kind in &kinds.kinds {
        out.push_str(&decl(kind));
    }
    writeln!(out, "\n/// Every declaration, in the order of [`TaskKind::ALL`] (checked by a test).").unwrap();
    writeln!(out, "pub const DECLS: [&KindDecl; TaskKind::ALL.len()] = [").unwrap();
    for kind in &kinds.kinds {
        let name = const_name(kind);
        match kind.wire {
            Wire::Coded(_) => writeln!(out, "    &{name},").unwrap(),
            // The browser's stand-in keeps the life: answers expire there too.
            Wire::Declared { .. } => {
                writeln!(out, "    declared!({name}, {}, {}),", kind.variant, life(&kind.life)).unwrap()
            }
        }
    }
    out.push_str("];\n");
    out
}

pub fn const_name(kind: &Kind) -> String {
    format!("DECL_{}", kind.tag.to_uppercase())
}

fn decl(kind: &Kind) -> String {
    let mut out = String::new();
    let declared = matches!(kind.wire, Wire::Declared { .. });
    writeln!(out, "\n/// `{}`: {}", kind.tag, kind.summary).unwrap();
    if declared {
        out.push_str("#[cfg(feature = \"declared-kinds\")]\n");
    }
    writeln!(out, "const {}: KindDecl = KindDecl {{", const_name(kind)).unwrap();
    writeln!(out, "    kind: TaskKind::{},", kind.variant).unwrap();
    writeln!(out, "    class: strip({:?}),", kind.class).unwrap();
    writeln!(out, "    summary: strip({:?}),", kind.summary).unwrap();
    out.push_str("    fields: &[\n");
    for f in &kind.fields {
        let js = f.js.as_ref().map_or_else(|| "None".to_string(), |js| format!("Some({js:?})"));
        let droppable = f.droppable.as_ref().map_or_else(
            || "None".to_string(),
            |(doc, unless)| format!("Some(Droppable {{ unless: &{unless:?}, doc: strip({doc:?}) }})"),
        );
        writeln!(
            out,
            "        FieldDecl {{ name: {:?}, js: {js}, also: {}, ty: {}, required: {}, doc: strip({:?}), droppable: {droppable} }},",
            f.name, strings(&f.also), f.ty, f.required, f.doc
        )
        .unwrap();
    }
    out.push_str("    ],\n");
    match &kind.answer {
        Answers::Shared(name) => writeln!(out, "    answer: ANSWER_{},", name.to_uppercase()).unwrap(),
        Answers::Own(values) => writeln!(out, "    answer: &[{}],", answer_values(values)).unwrap(),
    }
    writeln!(out, "    life: {},", life(&kind.life)).unwrap();
    writeln!(out, "    dropped: {},", dropped(&kind.dropped)).unwrap();
    match &kind.wire {
        Wire::Coded(services) => {
            writeln!(out, "    wire: Wire::Coded {{ services: {} }},", services_of(services)).unwrap()
        }
        Wire::Declared { v1, create_task } => {
            out.push_str("    wire: Wire::Declared {\n");
            match v1 {
                None => out.push_str("        v1: None,\n"),
                Some(v) => {
                    let (params, fixed, services) = (pairs(&v.params), pairs(&v.fixed), services_of(&v.services));
                    let head = format!("method: {:?}, params: {params}, fixed: {fixed}", v.method);
                    let tail = format!("services: {services}, source: {}", source(&v.source));
                    writeln!(out, "        v1: Some(V1Decl {{ {head}, {tail} }}),").unwrap();
                }
            }
            out.push_str("        create_task: &[\n");
            for c in create_task {
                let types = format!("proxyless: {}, proxied: {}", option(&c.proxyless), option(&c.proxied));
                let at_most: Vec<String> = c.at_most.iter().map(|(f, max)| format!("({f:?}, {max})")).collect();
                let keys = format!(
                    "params: {}, fixed: {}, requires: {}, requires_proxied: {}, at_most: &[{}]",
                    pairs(&c.params),
                    pairs(&c.fixed),
                    strings(&c.requires),
                    strings(&c.requires_proxied),
                    at_most.join(", ")
                );
                let dialect = format!("dialect: Dialect::{}", c.dialect);
                let choice = format!("when: {}, hook: {}", option(&c.when), option(&c.hook));
                writeln!(
                    out,
                    "            CreateTaskDecl {{ {dialect}, {choice}, {types}, {keys}, source: {} }},",
                    source(&c.source)
                )
                .unwrap();
            }
            out.push_str("        ],\n    },\n");
        }
    }
    out.push_str("};\n");
    out
}

/// The `AnswerLife` value of a kind.
fn life(life: &Life) -> String {
    match life {
        Life::Expires { seconds, doc, note } => {
            let note = note.as_ref().map_or_else(|| "None".to_string(), |n| format!("Some(strip({n:?}))"));
            format!("AnswerLife::Expires {{ ms: {}, doc: strip({doc:?}), note: {note} }}", seconds * 1000)
        }
        Life::Never(why) => format!("AnswerLife::Never {{ why: strip({why:?}) }}"),
    }
}

/// The `DroppedDecl` list of a kind.
fn dropped(list: &[Dropped]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|d| {
            format!("DroppedDecl {{ service: {:?}, doc: strip({:?}), note: strip({:?}) }}", d.service, d.doc, d.note)
        })
        .collect();
    format!("&[{}]", items.join(", "))
}

fn answer_values(values: &[AnswerValue]) -> String {
    values
        .iter()
        .map(|a| {
            format!(
                "AnswerDecl {{ name: {:?}, ty: AnswerType::{}, keys: {}, required: {}, doc: strip({:?}) }}",
                a.name,
                a.ty,
                strings(&a.keys),
                a.required,
                a.doc
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn services_of(services: &Services) -> String {
    match services {
        Services::Shared(name) => format!("SERVICES_{}", name.to_uppercase()),
        Services::Own(list) => strings(list),
    }
}

fn source(s: &Source) -> String {
    match s {
        Source::Doc(url) => format!("Source::Doc(strip({url:?}))"),
        Source::Client { repo, file, test } => format!(
            "Source::Client {{ repo: strip({repo:?}), file: strip({file:?}), test: {} }}",
            test.as_ref().map_or_else(|| "None".to_string(), |t| format!("Some(strip({t:?}))"))
        ),
    }
}

fn strings(list: &[String]) -> String {
    format!("&[{}]", list.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", "))
}

fn pairs(list: &[(String, String)]) -> String {
    format!("&[{}]", list.iter().map(|(a, b)| format!("({a:?}, {b:?})")).collect::<Vec<_>>().join(", "))
}

fn option(text: &Option<String>) -> String {
    text.as_ref().map_or_else(|| "None".to_string(), |t| format!("Some({t:?})"))
}
