//! The reader of the kind files (`core/build/model.rs`, run by `core/build.rs`) over broken
//! copies of `core/kinds`: each kind of bad data stops the build with a message naming the file
//! and the key, and the checked-in files read.

#[path = "../../build/model.rs"]
#[allow(dead_code)]
mod model;

use std::path::{Path, PathBuf};

fn kinds_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kinds")
}

/// The hook names of `src/provider/hooks.rs`, as the build reads them.
fn hooks() -> Vec<String> {
    model::hook_names(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/provider/hooks.rs")).unwrap()
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
    match model::load(&dir, &hooks()) {
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
    let kinds = model::load(&kinds_dir(), &hooks()).unwrap();
    let tags: Vec<&str> = kinds.kinds.iter().map(|k| k.tag.as_str()).collect();
    let all: Vec<&str> = captcha_dlq_core::task::TaskKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(tags, all);
}

/// Broken copies: in `<file>.toml`, the first `from` replaced by `to`; what the error must say.
const EDITS: &[(&str, &str, &str, &str)] = &[
    (
        "recaptcha_v3",
        "hook = \"score_queue\"",
        "hook = \"score_queu\"",
        "recaptcha_v3.toml: create_task[0].hook: `score_queu` is not a hook of src/provider/hooks.rs",
    ),
    (
        "recaptcha_v3",
        "when = \"enterprise\"",
        "when = \"enterprize\"",
        "create_task[3].when: `enterprize` is not a field",
    ),
    (
        "recaptcha_v3",
        "when = \"enterprise\"\n",
        "",
        "recaptcha_v3.toml: create_task[3]: create_task[2] is already the `capsolver` form: one form per dialect",
    ),
    ("amazon_waf", "\nsummary =", "\nsumary =", "amazon_waf.toml: TOML parse error"),
    ("amazon_waf", "\nsummary =", "\nsumary =", "unknown field `sumary`"),
    ("amazon_waf", "doc = \"The `iv`", "docs = \"The `iv`", "amazon_waf.toml: fields[2]: unknown field `docs`"),
    ("amazon_waf", r#"type = "token""#, r#"type = "tokn""#, "fields[0] (`sitekey`): `type` = `tokn` is not one of"),
    ("amazon_waf", r#"type = "token","#, r#"type = "token", max = 3,"#, "`max` is not a setting of type `token`"),
    ("amazon_waf", r#""page_url","#, r#""page_uri","#, "fields[1]: `page_uri` is not a field of [fields]"),
    ("recaptcha_v3", r#"answer = "token""#, r#"answer = "tokens""#, "`tokens` is not an answer of [answers]"),
    ("amazon_waf", r#"services = "two_captcha""#, r#"services = "two""#, "v1.services: `two` is not a list"),
    ("amazon_waf", r#""capsolver""#, r#""capsolv""#, "create_task[1].dialect: `capsolv` is not one of"),
    ("amazon_waf", r#"["iv", "awsIv"]"#, r#"["ivv", "awsIv"]"#, "create_task[1].params: `ivv` is not a field"),
    // The kind list is the files': each at a `position` of its own, none skipped, and a
    // `schedule` naming a kind that follows its own.
    ("datadome", "position = 11\n", "", "datadome.toml: TOML parse error"),
    ("datadome", "position = 11\n", "", "missing field `position`"),
    ("datadome", "position = 11", "position = 12", "`position` = 12 is also"),
    (
        "datadome",
        "position = 11",
        "position = 44",
        "`position` = 44: there are 44 kind files, so the positions are 0 to 43",
    ),
    ("datadome", "schedule = \"hcaptcha\"\n", "", "missing field `schedule`"),
    ("datadome", "schedule = \"hcaptcha\"", "schedule = \"hcapcha\"", "`schedule` = `hcapcha` is not a kind"),
    ("datadome", "schedule = \"hcaptcha\"", "schedule = \"amazon_waf\"", "which follows `hcaptcha`'s: name a kind"),
    (
        "geetest_v4",
        r#"requires_proxied = ["user_agent"]"#,
        r#"requires_proxied = ["user_agnt"]"#,
        "geetest_v4.toml: create_task[0].requires_proxied: `user_agnt` is not a field",
    ),
    ("datadome", "\nclass =", "\nkind = \"Datadome\"\nclass =", "unknown field `kind`"),
    // `image`'s forms: a default within the bounds, `not_above` another int field, `at_most` an int
    // field the form sends, and a `bool:` fixed key true or false.
    (
        "image",
        "default = 0, doc = \"0 any, 1 Cyrillic",
        "default = 3, doc = \"0 any, 1 Cyrillic",
        "`default` = 3 is outside 0..=2",
    ),
    (
        "image",
        "not_above = \"max_len\"",
        "not_above = \"lang\"",
        "`min_len`: not_above `lang`, which is not another int field",
    ),
    (
        "image",
        "at_most = [[\"numeric\", 2]]",
        "at_most = [[\"phrase\", 2]]",
        "create_task[0].at_most: `phrase` is not an int field this form sends",
    ),
    ("image", "at_most = [[\"numeric\", 1]]", "at_most = [[\"numeric\", 0]]", "`numeric` up to 0"),
    (
        "image",
        "[\"bool:case\", \"false\"]",
        "[\"bool:case\", \"no\"]",
        "`bool:case` = `no`: a `bool:` key is `true` or `false`",
    ),
    (
        "image",
        "also = [\"caseSensitive\"], type = \"flag\"",
        "type = \"flag\", default = 0",
        "`default` is not a setting of type `flag`",
    ),
    // `[dropped.<service>]`: only `doc` and `note`, a preset, an https source, and never a
    // service the kind is still sent to (coded or declared).
    ("hcaptcha", "[dropped.capmonster]\ndoc =", "[dropped.capmonster]\ndocs =", "unknown field `docs`"),
    (
        "hcaptcha",
        "[dropped.capsolver]",
        "[dropped.capsolvr]",
        "dropped.capsolvr: `capsolvr` is not one of `all_presets`",
    ),
    (
        "hcaptcha",
        r#"services = ["captchaai"]"#,
        r#"services = ["captchaai", "2captcha"]"#,
        "hcaptcha.toml: dropped.2captcha: the kind is still sent to `2captcha`",
    ),
    // A form kept for custom endpoints (`custom_only`) only where its preset dropped the kind.
    (
        "hcaptcha",
        "dialect = \"capmonster\"\ncustom_only = true\n",
        "dialect = \"capmonster\"\n",
        "hcaptcha.toml: dropped.capmonster: the kind is still sent to `capmonster`",
    ),
    (
        "hcaptcha",
        "dialect = \"anti-captcha\"\n",
        "dialect = \"anti-captcha\"\ncustom_only = true\n",
        "the `anti-captcha` [[create_task]] is custom_only, but `anti-captcha` is not in [dropped]",
    ),
    (
        "hcaptcha",
        "doc = \"https://github.com/capsolver/",
        "doc = \"http://github.com/capsolver/",
        "is not an https:// URL",
    ),
    ("funcaptcha", "note = \"CapSolver's", "note = \" \"\nn = \"CapSolver's", "unknown field `n`"),
    (
        "amazon_waf",
        "[[create_task]]\ndialect = \"capsolver\"",
        "[dropped.capsolver]\ndoc = \"https://example.com/\"\nnote = \"n\"\n\n[[create_task]]\ndialect = \"capsolver\"",
        "amazon_waf.toml: dropped.capsolver: the kind is still sent to `capsolver`",
    ),
    (
        "amazon_waf",
        "[[create_task]]\ndialect = \"capsolver\"",
        "[dropped.2captcha]\ndoc = \"https://example.com/\"\nnote = \"n\"\n\n[[create_task]]\ndialect = \"capsolver\"",
        "amazon_waf.toml: dropped.2captcha: the kind is still sent to `2captcha`",
    ),
    (
        "amazon_waf",
        "[[create_task]]\ndialect = \"capsolver\"",
        "[dropped.captchaai]\ndoc = \"https://example.com/\"\nnote = \" \"\n\n[[create_task]]\ndialect = \"capsolver\"",
        "amazon_waf.toml: dropped.captchaai.note: say what the source shows",
    ),
];

#[test]
fn bad_data_is_refused_naming_the_file_and_the_key() {
    for (i, (file, from, to, wanted)) in EDITS.iter().enumerate() {
        let problem = problem(&format!("edit{i}"), |d| replace(d, &format!("{file}.toml"), from, to));
        assert!(problem.contains(wanted), "{file}: {from:?} -> {to:?}: {problem:?} does not say {wanted:?}");
    }
    // A file gone leaves its position empty: the last kind's number is then one too many.
    let no_file = problem("no_file", |d| std::fs::remove_file(d.join("temu.toml")).unwrap());
    assert!(no_file.contains("antigate.toml: `position` = 43: there are 43 kind files"), "{no_file}");
    let bad_name = problem("bad_name", |d| std::fs::rename(d.join("temu.toml"), d.join("Temu.toml")).unwrap());
    assert!(bad_name.contains("Temu.toml: a kind's name (the file's) is snake_case"), "{bad_name}");
}
