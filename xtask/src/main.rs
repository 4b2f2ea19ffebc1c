//! The repository's own tasks, run as `cargo xtask <task>` (the alias in `.cargo/config.toml`).
//!
//! - `kinds`: writes the files generated from the kind declarations (`core/kinds/*.toml`, through
//!   `captcha_dlq_core::task::kinds::generate`): the Python classes, `KindMs`'s Python fields, the
//!   TypeScript types and `docs/kinds.md`. `kinds --check` only compares, as the test
//!   `kinds_generated` does (docs/decisions/0078-one-task-model.md).

use std::path::PathBuf;
use std::process::ExitCode;

use captcha_dlq_core::task::kinds::generate;

const USAGE: &str = "usage: cargo xtask kinds [--check]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["kinds"] => kinds(false),
        ["kinds", "--check"] => kinds(true),
        [] => Err(format!("no task given\n{USAGE}")),
        other => Err(format!("unknown task or option {:?}\n{USAGE}", other.join(" "))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("error: {problem}");
            ExitCode::FAILURE
        }
    }
}

/// Writes (or with `check`, compares) every generated file, saying which changed.
fn kinds(check: bool) -> Result<(), String> {
    // The repository's root: this crate's parent folder.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stale = Vec::new();
    for output in generate::outputs()? {
        if check {
            if let Some(line) = output.differs(&root)? {
                stale.push(format!("{} (first at line {line})", output.path));
            }
        } else if output.write(&root)? {
            println!("wrote {}", output.path);
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!("differ from the kind declarations: {}; run `cargo xtask kinds`", stale.join(", ")))
    }
}
