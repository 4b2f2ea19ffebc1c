//! Reads the kind declarations, one data file per kind (`kinds/<kind>.toml`, with what they share
//! in `kinds/_shared.toml`), and writes them as Rust into `$OUT_DIR` (docs/decisions/0051-every-kind-declared-once.md):
//!
//! - `task_kind.rs`: the `TaskKind` enum (variants, names, `ALL`, schedules), included by
//!   `src/task/mod.rs` (docs/decisions/0078-one-task-model.md);
//! - `kind_tables.rs`: the `const` [`KindDecl`] tables and `DECLS`, included by
//!   `src/task/kinds/mod.rs`; descriptions and sources go through `strip` and the declared kinds
//!   through the `declared!` macro, so that the browser build carries what it did before;
//! - `kind_typed.rs`: a typed task per declared kind and a typed answer per kind, included by
//!   `src/task/kinds/typed.rs` outside the browser build.
//!
//! Bad data (an unknown key, field type or shared name, two kinds at one position or a gap, a
//! schedule that is not a kind's) stops the build with a message naming the file and the key.

#[path = "build/model.rs"]
mod model;
#[path = "build/tables.rs"]
mod tables;
#[path = "build/task_kind.rs"]
mod task_kind;
#[path = "build/typed.rs"]
mod typed;

use std::path::{Path, PathBuf};

fn main() {
    let dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("kinds");
    println!("cargo:rerun-if-changed=kinds");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=src/provider/hooks.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    if let Err(problem) = generate(&dir, &out) {
        eprintln!("error: the kind declarations: {problem}");
        std::process::exit(1);
    }
}

fn generate(dir: &Path, out: &Path) -> Result<(), String> {
    let hooks = model::hook_names(&dir.join("../src/provider/hooks.rs"))?;
    let kinds = model::load(dir, &hooks)?;
    write(&out.join("task_kind.rs"), &task_kind::write(&kinds))?;
    write(&out.join("kind_tables.rs"), &tables::write(&kinds))?;
    write(&out.join("kind_typed.rs"), &typed::write(&kinds))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
