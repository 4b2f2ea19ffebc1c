//! The forms of the kind declarations in other languages and documents
//! (`captcha_dlq_core::task::kinds::generate`: `_kinds.py`, `KindMs`'s Python fields, the kinds
//! section of `js-api/index.d.ts`, `docs/kinds.md`) are what the checked-in files hold:
//! a field added to a kind in one place only fails here. `cargo xtask kinds` rewrites them.

use std::path::PathBuf;

use captcha_dlq_core::task::kinds::{self, generate, KindDecl, Wire};
use captcha_dlq_core::task::TaskKind;

fn decls() -> impl Iterator<Item = &'static KindDecl> {
    kinds::DECLS.into_iter()
}

#[test]
fn generated_files_match_the_declarations() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stale = Vec::new();
    for output in generate::outputs().unwrap() {
        if let Some(line) = output.differs(&root).unwrap() {
            stale.push(format!("{} (first at line {line})", output.path));
        }
    }
    assert!(
        stale.is_empty(),
        "differ from the kind declarations: {}; run `cargo xtask kinds` to rewrite them",
        stale.join(", ")
    );
}

#[test]
fn declarations_are_in_the_order_of_the_kinds_and_name_their_fields_once() {
    for (i, d) in decls().enumerate() {
        assert_eq!(d.kind, TaskKind::ALL[i], "DECLS[{i}]");
        let mut names: Vec<&str> = d.fields.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), d.fields.len(), "{}: a field twice", d.kind);
        if let Wire::Declared { v1, create_task } = &d.wire {
            let known = |f: &str| d.field(f).is_some();
            for (f, _) in
                v1.iter().flat_map(|v| v.params.iter()).chain(create_task.iter().flat_map(|c| c.params.iter()))
            {
                assert!(known(f), "{}: the wire names `{f}`, which is not a field", d.kind);
            }
        }
    }
}
