//! The reader of the kind files (`core/build/model.rs`, run by `core/build.rs`) over broken
//! copies of `core/kinds`: each kind of bad data stops the build with a message naming the file
//! and the key, and the checked-in files read.

#[path = "../build/model.rs"]
#[allow(dead_code)]
mod model;

use std::path::{Path, PathBuf};

fn kinds_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kinds")
}

/// The problem `load` reports for a copy of the kind files changed by `edit`.
fn problem(name: &str, edit: impl FnOnce(&Path)) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kind_files").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(kinds_dir()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    edit(&dir);
    match model::load(&dir) {
        Ok(_) => panic!("{name}: the broken files were read"),
        Err(problem) => problem,
    }
}

/// Replaces `from` by `to` in `file`, which must hold it.
fn replace(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} holds no {from:?}");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn the_checked_in_kind_files_read_in_the_order_of_task_kinds() {
    let kinds = model::load(&kinds_dir()).unwrap();
    let tags: Vec<&str> = kinds.kinds.iter().map(|k| k.tag.as_str()).collect();
    let all: Vec<&str> = captcha_dlq_core::task::TaskKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(tags, all);
}

#[test]
fn bad_data_is_refused_naming_the_file_and_the_key() {
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "unknown key",
            problem("unknown_key", |d| replace(d, "amazon_waf.toml", "\nsummary =", "\nsumary =")),
            "unknown field `sumary`",
        ),
        (
            "unknown key in a field",
            problem("unknown_field_key", |d| replace(d, "amazon_waf.toml", "doc = \"The `iv`", "docs = \"The `iv`")),
            "fields[2]: unknown field `docs`",
        ),
        (
            "unknown field type",
            problem("unknown_type", |d| replace(d, "amazon_waf.toml", "type = \"token\"", "type = \"tokn\"")),
            "fields[0] (`sitekey`): `type` = `tokn` is not one of",
        ),
        (
            "a setting of another type",
            problem("wrong_setting", |d| {
                replace(d, "amazon_waf.toml", "type = \"token\",", "type = \"token\", max = 3,")
            }),
            "fields[0] (`sitekey`): `max` is not a setting of type `token`",
        ),
        (
            "unknown shared field",
            problem("unknown_shared", |d| replace(d, "amazon_waf.toml", "\"page_url\",", "\"page_uri\",")),
            "fields[1]: `page_uri` is not a field of [fields] in _shared.toml",
        ),
        (
            "unknown shared answer",
            problem("unknown_answer", |d| replace(d, "recaptcha_v3.toml", "answer = \"token\"", "answer = \"tokens\"")),
            "answer: `tokens` is not an answer of [answers]",
        ),
        (
            "unknown preset list",
            problem("unknown_services", |d| {
                replace(d, "amazon_waf.toml", "services = \"two_captcha\"", "services = \"two\"")
            }),
            "v1.services: `two` is not a list of [services]",
        ),
        (
            "unknown dialect",
            problem("unknown_dialect", |d| replace(d, "amazon_waf.toml", "\"capsolver\"", "\"capsolv\"")),
            "create_task[1].dialect: `capsolv` is not one of",
        ),
        (
            "a parameter of no field",
            problem("unknown_param", |d| replace(d, "amazon_waf.toml", "[\"iv\", \"awsIv\"]", "[\"ivv\", \"awsIv\"]")),
            "create_task[1].params: `ivv` is not a field of the kind",
        ),
        (
            "a kind left out of the order",
            problem("not_in_order", |d| replace(d, "_shared.toml", "\"antigate\",", "")),
            "antigate.toml: the kind `antigate` is not in `order`",
        ),
        (
            "an ordered kind without a file",
            problem("no_file", |d| std::fs::remove_file(d.join("temu.toml")).unwrap()),
            "`order` lists `temu`, which has no temu.toml",
        ),
        (
            "a kind file without its TaskKind",
            problem("no_kind", |d| replace(d, "datadome.toml", "kind = \"Datadome\"\n", "")),
            "missing field `kind`",
        ),
        (
            "a kind file naming another TaskKind",
            problem("other_kind", |d| replace(d, "datadome.toml", "kind = \"Datadome\"", "kind = \"DataDome\"")),
            "datadome.toml: `kind` is `DataDome`, but the TaskKind of `datadome` is `Datadome`",
        ),
    ];
    for (what, problem, wanted) in cases {
        assert!(problem.contains(wanted), "{what}: {problem:?} does not say {wanted:?}");
        assert!(problem.contains(".toml"), "{what}: {problem:?} names no file");
    }
}
