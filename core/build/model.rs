//! The kind files as read (`serde`, every table `deny_unknown_fields`) and resolved: shared
//! names replaced by what they stand for, types checked, the kinds in the order of their
//! `position`s (docs/decisions/0078-one-task-model.md).

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use toml::Value;

/// `_shared.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SharedFile {
    fields: BTreeMap<String, Value>,
    answers: BTreeMap<String, Vec<Value>>,
    services: BTreeMap<String, Vec<String>>,
    clients: BTreeMap<String, String>,
}

/// `<kind>.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KindFile {
    position: usize,
    schedule: String,
    class: String,
    summary: String,
    fields: Vec<Value>,
    answer: Value,
    answer_life: LifeFile,
    coded: Option<CodedFile>,
    v1: Option<V1File>,
    #[serde(default)]
    create_task: Vec<CreateTaskFile>,
    #[serde(default)]
    dropped: BTreeMap<String, DroppedFile>,
}

/// `[dropped.<service>]`: a service that took the kind and no longer does, with the page (or the
/// official client's commit) that shows it and what it shows.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DroppedFile {
    doc: String,
    note: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldFile {
    name: Option<String>,
    js: Option<String>,
    /// Other spellings taken on input.
    #[serde(default)]
    also: Vec<String>,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    required: bool,
    doc: String,
    min: Option<Value>,
    max: Option<Value>,
    /// `int`: the services' default, the same as no value.
    default: Option<Value>,
    /// `int`: a whole-number field of the kind this one may not exceed.
    not_above: Option<String>,
    names: Option<Vec<String>>,
    droppable: Option<DroppableFile>,
}

/// `droppable`: the answer is not bound to the field, so a service with no place for it may leave
/// it out when the page (not the user) added it (docs/decisions/0077-page-context-a-service-may-drop.md);
/// `unless`: fields whose presence makes the answer bound to it (a challenge page's `pagedata`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DroppableFile {
    doc: String,
    #[serde(default)]
    unless: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerFile {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    keys: Vec<String>,
    #[serde(default)]
    required: bool,
    doc: String,
}

/// `answer_life`: `{ seconds, doc, note? }` (the answer is good for `seconds` after it was
/// solved, as `doc` says, or as `note` explains where no page says), or `{ none = why }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LifeFile {
    seconds: Option<u64>,
    doc: Option<String>,
    note: Option<String>,
    none: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CodedFile {
    services: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct V1File {
    method: String,
    params: Vec<(String, String)>,
    #[serde(default)]
    fixed: Vec<(String, String)>,
    services: Value,
    source: SourceFile,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateTaskFile {
    dialect: String,
    proxyless: Option<String>,
    proxied: Option<String>,
    params: Vec<(String, String)>,
    #[serde(default)]
    fixed: Vec<(String, String)>,
    #[serde(default)]
    requires: Vec<String>,
    #[serde(default)]
    requires_proxied: Vec<String>,
    /// `[field, max]`: a whole-number field this dialect takes only up to `max`.
    #[serde(default)]
    at_most: Vec<(String, u64)>,
    /// The form is kept for custom endpoints that speak the dialect: its preset dropped the kind.
    #[serde(default)]
    custom_only: bool,
    /// A field whose presence selects this form over the dialect's form without `when`
    /// (reCAPTCHA Enterprise, a Turnstile challenge page: another task type and keys).
    when: Option<String>,
    /// A function of `src/provider/hooks.rs` (by its name in `HOOKS`) that adjusts the built object.
    hook: Option<String>,
    source: SourceFile,
}

/// `{ doc = URL }`, or `{ client = NAME | repo = REPO, file = PATH, test = NAME? }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceFile {
    doc: Option<String>,
    client: Option<String>,
    repo: Option<String>,
    file: Option<String>,
    test: Option<String>,
}

/// One kind, resolved.
pub struct Kind {
    /// The `type` tag and file stem (`amazon_waf`).
    pub tag: String,
    /// The `TaskKind` variant (`AmazonWaf`).
    pub variant: String,
    /// The `TaskKind` variant whose polling schedule the kind follows (its own, or a kind's that
    /// follows its own).
    pub schedule: String,
    pub class: String,
    pub summary: String,
    pub fields: Vec<Field>,
    pub answer: Answers,
    pub life: Life,
    pub wire: Wire,
    /// The services that dropped the kind, by preset name, in name order.
    pub dropped: Vec<Dropped>,
}

/// A service that dropped a kind: the source (`doc`, an https URL) and what it shows (`note`).
pub struct Dropped {
    pub service: String,
    pub doc: String,
    pub note: String,
}

/// How long a kind's answer is good for after it was solved.
pub enum Life {
    /// `seconds`, with the page that says so and, where no page does, why this number.
    Expires { seconds: u64, doc: String, note: Option<String> },
    /// It does not expire: why.
    Never(String),
}

#[derive(Clone)]
pub struct Field {
    pub name: String,
    pub js: Option<String>,
    /// Other spellings taken on input.
    pub also: Vec<String>,
    /// The `decl::FieldType` value, as Rust (`FieldType::Int { min: 0, max: 4 }`).
    pub ty: String,
    pub holds: Holds,
    pub required: bool,
    pub doc: String,
    /// `droppable`: why the answer is not bound to it, and the fields that make it bound.
    pub droppable: Option<(String, Vec<String>)>,
    /// `int`: the whole-number field it may not exceed (checked to be one by `kind`).
    pub not_above: Option<String>,
}

/// What a field holds in a typed task (`build/typed.rs` gives each its Rust type).
#[derive(Clone, Copy, PartialEq)]
pub enum Holds {
    Text,
    List,
    Whole,
    Number,
    Flag,
    Proxy,
    StringMap,
    Object,
}

/// A kind's answer: a shared one by name, or its own values.
pub enum Answers {
    Shared(String),
    Own(Vec<AnswerValue>),
}

pub struct AnswerValue {
    pub name: String,
    /// The `decl::AnswerType` variant.
    pub ty: &'static str,
    pub keys: Vec<String>,
    pub required: bool,
    pub doc: String,
}

/// A list of presets: a shared one by name, or its own.
pub enum Services {
    Shared(String),
    Own(Vec<String>),
}

pub enum Wire {
    Coded(Services),
    Declared { v1: Option<V1>, create_task: Vec<CreateTask> },
}

pub struct V1 {
    pub method: String,
    pub params: Vec<(String, String)>,
    pub fixed: Vec<(String, String)>,
    pub services: Services,
    pub source: Source,
}

pub struct CreateTask {
    /// The `Dialect` variant.
    pub dialect: &'static str,
    pub proxyless: Option<String>,
    pub proxied: Option<String>,
    pub params: Vec<(String, String)>,
    pub fixed: Vec<(String, String)>,
    pub requires: Vec<String>,
    pub requires_proxied: Vec<String>,
    pub at_most: Vec<(String, u64)>,
    pub custom_only: bool,
    pub when: Option<String>,
    pub hook: Option<String>,
    pub source: Source,
}

pub enum Source {
    Doc(String),
    Client { repo: String, file: String, test: Option<String> },
}

/// Everything read: the shared answers and lists (written once as named consts) and the kinds.
pub struct Kinds {
    pub answers: BTreeMap<String, Vec<AnswerValue>>,
    pub services: BTreeMap<String, Vec<String>>,
    pub kinds: Vec<Kind>,
}

/// The preset names a dialect goes by in the files, and its `Dialect` variant.
const DIALECTS: [(&str, &str); 4] = [
    ("anti-captcha", "AntiCaptcha"),
    ("capsolver", "CapSolver"),
    ("2captcha-v2", "TwoCaptchaV2"),
    ("capmonster", "CapMonster"),
];

const ANSWER_TYPES: [(&str, &str); 5] =
    [("text", "Text"), ("points", "Points"), ("number", "Number"), ("object", "Object"), ("indices", "Indices")];

/// The names of the hooks registered in `HOOKS` of `hooks_rs` (`src/provider/hooks.rs`): each
/// `("name", function)` entry, which a `hook = "name"` in a kind file may name.
pub fn hook_names(hooks_rs: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(hooks_rs).map_err(|e| format!("{}: {e}", hooks_rs.display()))?;
    let table = text
        .split_once("const HOOKS")
        .and_then(|(_, rest)| rest.split_once("];"))
        .map(|(table, _)| table)
        .ok_or_else(|| format!("{}: no `const HOOKS: ... = &[...];` table", hooks_rs.display()))?;
    Ok(table.split("(\"").skip(1).filter_map(|entry| entry.split_once('"').map(|(name, _)| name.to_string())).collect())
}

/// Reads `_shared.toml` and every `<kind>.toml` of `dir`; `hooks` are the names a kind file may
/// give as a `[[create_task]]`'s `hook` ([`hook_names`]).
pub fn load(dir: &Path, hooks: &[String]) -> Result<Kinds, String> {
    let shared_path = dir.join("_shared.toml");
    let shared: SharedFile = parse(&shared_path)?;
    let shared_name = shared_path.display().to_string();
    let mut shared_fields = BTreeMap::new();
    for (key, value) in &shared.fields {
        let at = format!("{shared_name}: fields.{key}");
        shared_fields.insert(key.clone(), field(&at, value.clone(), Some(key))?);
    }
    let mut answers = BTreeMap::new();
    for (key, values) in &shared.answers {
        let at = format!("{shared_name}: answers.{key}");
        answers.insert(key.clone(), answer_values(&at, values)?);
    }

    let mut files = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else { continue };
        if path.extension().is_some_and(|e| e == "toml") && !stem.starts_with('_') {
            files.insert(stem.to_string(), path);
        }
    }
    // Each file at its `position`: every number from 0 once, so that a kind's place in
    // `TaskKind::ALL` (which stored records and per-kind tables depend on) is written down and
    // a new kind cannot move another.
    let mut placed: Vec<Option<(String, KindFile)>> = Vec::new();
    placed.resize_with(files.len(), || None);
    for (tag, path) in &files {
        let name = path.display().to_string();
        let file: KindFile = parse(path)?;
        let slot = placed.get_mut(file.position).ok_or_else(|| {
            format!(
                "{name}: `position` = {}: there are {} kind files, so the positions are 0 to {} (a new kind takes the next)",
                file.position,
                files.len(),
                files.len() - 1
            )
        })?;
        if let Some((other, _)) = slot {
            return Err(format!("{name}: `position` = {} is also {other}.toml's", file.position));
        }
        *slot = Some((tag.clone(), file));
    }
    let placed: Vec<(String, KindFile)> = placed.into_iter().map(|p| p.expect("n files fill n slots")).collect();
    for (tag, file) in &placed {
        let name = files[tag].display().to_string();
        let follows = placed.iter().find(|(t, _)| *t == file.schedule).ok_or_else(|| {
            format!("{name}: `schedule` = `{}` is not a kind (a <kind>.toml of {})", file.schedule, dir.display())
        })?;
        if follows.1.schedule != follows.0 {
            return Err(format!(
                "{name}: `schedule` = `{}`, which follows `{}`'s: name a kind that follows its own",
                file.schedule, follows.1.schedule
            ));
        }
    }

    let mut kinds = Vec::new();
    for (tag, file) in placed {
        let name = files[&tag].display().to_string();
        kinds.push(kind(&name, &tag, file, &shared, &shared_fields, &answers, hooks)?);
    }
    Ok(Kinds { answers, services: shared.services, kinds })
}

fn parse<T: DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A table of a file, read as `T`; the error says where (`file: fields[2]`).
fn table<T: DeserializeOwned>(at: &str, value: Value) -> Result<T, String> {
    value.try_into().map_err(|e: toml::de::Error| format!("{at}: {}", e.message()))
}

fn kind(
    name: &str,
    tag: &str,
    file: KindFile,
    shared: &SharedFile,
    shared_fields: &BTreeMap<String, Field>,
    answers: &BTreeMap<String, Vec<AnswerValue>>,
    hooks: &[String],
) -> Result<Kind, String> {
    // The name becomes a Rust variant (`camel`) and a `type` tag: snake_case only.
    let snake = tag.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !snake || !tag.starts_with(|c: char| c.is_ascii_lowercase()) || tag.contains("__") || tag.ends_with('_') {
        return Err(format!("{name}: a kind's name (the file's) is snake_case: a lowercase letter, then lowercase letters, digits and single `_`"));
    }
    let variant = camel(tag);
    let mut fields = Vec::new();
    for (i, value) in file.fields.into_iter().enumerate() {
        let at = format!("{name}: fields[{i}]");
        let f = match value {
            Value::String(shared_name) => {
                let f = shared_fields
                    .get(&shared_name)
                    .ok_or_else(|| format!("{at}: `{shared_name}` is not a field of [fields] in _shared.toml"))?;
                f.clone()
            }
            table => field(&at, table, None)?,
        };
        if fields.iter().any(|g: &Field| g.name == f.name) {
            return Err(format!("{at}: `{}` is declared twice", f.name));
        }
        fields.push(f);
    }
    for f in &fields {
        for bound_by in f.droppable.iter().flat_map(|(_, unless)| unless) {
            if !fields.iter().any(|g| &g.name == bound_by) {
                return Err(format!("{name}: `{}`: droppable unless `{bound_by}`, which is not a field", f.name));
            }
        }
    }
    for f in &fields {
        if let Some(other) = &f.not_above {
            if !fields.iter().any(|g| &g.name == other && g.holds == Holds::Whole && g.name != f.name) {
                return Err(format!("{name}: `{}`: not_above `{other}`, which is not another int field", f.name));
            }
        }
    }
    let answer = match file.answer {
        Value::String(shared_name) if answers.contains_key(&shared_name) => Answers::Shared(shared_name),
        Value::String(shared_name) => {
            return Err(format!("{name}: answer: `{shared_name}` is not an answer of [answers] in _shared.toml"))
        }
        Value::Array(values) => Answers::Own(answer_values(&format!("{name}: answer"), &values)?),
        _ => return Err(format!("{name}: answer: a shared answer's name or [[answer]] tables")),
    };
    let life = life(&format!("{name}: answer_life"), file.answer_life)?;
    let wire = match (file.coded, file.v1, file.create_task.is_empty()) {
        (Some(coded), None, true) => Wire::Coded(services(&format!("{name}: coded.services"), coded.services, shared)?),
        (Some(_), _, _) => return Err(format!("{name}: [coded]: a coded kind has no [v1] or [[create_task]]")),
        (None, None, true) => {
            return Err(format!("{name}: no wire form: [coded], or [v1] and/or [[create_task]]"));
        }
        (None, v1, _) => {
            let check_params = |at: &str, params: &[(String, String)]| {
                for (field, _) in params {
                    if !fields.iter().any(|f| &f.name == field) {
                        return Err(format!("{name}: {at}.params: `{field}` is not a field of the kind"));
                    }
                }
                Ok(())
            };
            let v1 = match v1 {
                Some(v) => {
                    check_params("v1", &v.params)?;
                    Some(V1 {
                        services: services(&format!("{name}: v1.services"), v.services, shared)?,
                        source: source(&format!("{name}: v1.source"), v.source, shared)?,
                        method: v.method,
                        params: v.params,
                        fixed: v.fixed,
                    })
                }
                None => None,
            };
            let mut create_task = Vec::new();
            for (i, c) in file.create_task.into_iter().enumerate() {
                let at = format!("create_task[{i}]");
                check_params(&at, &c.params)?;
                for (key, names) in [("requires", &c.requires), ("requires_proxied", &c.requires_proxied)] {
                    if let Some(unknown) = names.iter().find(|n| !fields.iter().any(|f| &f.name == *n)) {
                        return Err(format!("{name}: {at}.{key}: `{unknown}` is not a field of the kind"));
                    }
                }
                if let Some((key, value)) =
                    c.fixed.iter().find(|(k, v)| k.starts_with("bool:") && v != "true" && v != "false")
                {
                    return Err(format!("{name}: {at}.fixed: `{key}` = `{value}`: a `bool:` key is `true` or `false`"));
                }
                for (field, max) in &c.at_most {
                    let decl = fields.iter().find(|f| &f.name == field && f.holds == Holds::Whole);
                    if decl.is_none() || !c.params.iter().any(|(f, key)| f == field && !key.is_empty()) {
                        return Err(format!("{name}: {at}.at_most: `{field}` is not an int field this form sends"));
                    }
                    if *max == 0 {
                        return Err(format!(
                            "{name}: {at}.at_most: `{field}` up to 0: leave it out of `params` instead"
                        ));
                    }
                }
                let dialect = DIALECTS.iter().find(|(n, _)| *n == c.dialect).map(|(_, v)| *v).ok_or_else(|| {
                    let known: Vec<&str> = DIALECTS.iter().map(|(n, _)| *n).collect();
                    format!("{name}: {at}.dialect: `{}` is not one of {}", c.dialect, known.join(", "))
                })?;
                if let Some(when) = c.when.as_ref().filter(|w| !fields.iter().any(|f| &f.name == *w)) {
                    return Err(format!("{name}: {at}.when: `{when}` is not a field of the kind"));
                }
                if let Some(other) =
                    create_task.iter().position(|o: &CreateTask| o.dialect == dialect && o.when == c.when)
                {
                    return Err(format!(
                        "{name}: {at}: create_task[{other}] is already the `{}` form{}: one form per dialect and `when`",
                        c.dialect,
                        c.when.as_ref().map_or_else(String::new, |w| format!(" when `{w}`"))
                    ));
                }
                if let Some(hook) = c.hook.as_ref().filter(|h| !hooks.contains(h)) {
                    return Err(format!(
                        "{name}: {at}.hook: `{hook}` is not a hook of src/provider/hooks.rs (one of {})",
                        hooks.join(", ")
                    ));
                }
                create_task.push(CreateTask {
                    dialect,
                    source: source(&format!("{name}: {at}.source"), c.source, shared)?,
                    proxyless: c.proxyless,
                    proxied: c.proxied,
                    params: c.params,
                    fixed: c.fixed,
                    requires: c.requires,
                    requires_proxied: c.requires_proxied,
                    at_most: c.at_most,
                    custom_only: c.custom_only,
                    when: c.when,
                    hook: c.hook,
                });
            }
            Wire::Declared { v1, create_task }
        }
    };
    let dropped = dropped(name, file.dropped, &wire, shared)?;
    Ok(Kind {
        tag: tag.to_string(),
        variant,
        schedule: camel(&file.schedule),
        class: file.class,
        summary: file.summary,
        fields,
        answer,
        life,
        wire,
        dropped,
    })
}

/// The `[dropped]` entries: each a preset (of `all_presets`) the kind is no longer sent to, with
/// an https source and a note. A service both sent the kind and listed as dropping it is refused,
/// so that the file cannot say both.
fn dropped(
    name: &str,
    entries: BTreeMap<String, DroppedFile>,
    wire: &Wire,
    shared: &SharedFile,
) -> Result<Vec<Dropped>, String> {
    let presets = shared.services.get("all_presets").map(Vec::as_slice).unwrap_or_default();
    let listed = |s: &Services| -> Vec<String> {
        match s {
            Services::Shared(list) => shared.services.get(list).cloned().unwrap_or_default(),
            Services::Own(list) => list.clone(),
        }
    };
    let sent: Vec<String> = match wire {
        Wire::Coded(s) => listed(s),
        Wire::Declared { v1, create_task } => {
            let mut sent = v1.as_ref().map(|v| listed(&v.services)).unwrap_or_default();
            for c in create_task {
                let preset = DIALECTS.iter().find(|(_, v)| *v == c.dialect).map_or("", |(n, _)| *n);
                // A form kept for custom endpoints only: its preset must be one that dropped the kind.
                if c.custom_only && !entries.contains_key(preset) {
                    return Err(format!(
                        "{name}: the `{preset}` [[create_task]] is custom_only, but `{preset}` is not in [dropped]: \
                         a form for a preset that still takes the kind is not custom_only"
                    ));
                }
                if !c.custom_only {
                    sent.push(preset.to_string());
                }
            }
            sent
        }
    };
    let mut out = Vec::new();
    for (service, d) in entries {
        let at = format!("{name}: dropped.{service}");
        if !presets.contains(&service) {
            return Err(format!("{at}: `{service}` is not one of `all_presets` in _shared.toml"));
        }
        if sent.contains(&service) {
            return Err(format!(
                "{at}: the kind is still sent to `{service}`: drop it from the services, or this entry"
            ));
        }
        if !d.doc.starts_with("https://") {
            return Err(format!("{at}.doc: {:?} is not an https:// URL", d.doc));
        }
        if d.note.trim().is_empty() {
            return Err(format!("{at}.note: say what the source shows"));
        }
        out.push(Dropped { service, doc: d.doc, note: d.note });
    }
    Ok(out)
}

fn life(at: &str, l: LifeFile) -> Result<Life, String> {
    match (l.seconds, l.doc, l.note, l.none) {
        (Some(0), ..) => Err(format!("{at}: `seconds` = 0: an answer that expires lives at least a second")),
        (Some(seconds), Some(doc), note, None) if doc.starts_with("https://") => {
            Ok(Life::Expires { seconds, doc, note })
        }
        (Some(_), Some(doc), _, None) => Err(format!("{at}: `doc` = {doc:?} is not an https:// URL")),
        (None, None, None, Some(why)) if !why.trim().is_empty() => Ok(Life::Never(why)),
        _ => Err(format!(
            "{at}: `{{ seconds = N, doc = URL, note? }}` (the page that says how long the answer lives), or \
             `{{ none = WHY }}` for an answer that does not expire"
        )),
    }
}

/// A field's table; `shared_key`: the key of a shared field, its name unless `name` is given.
fn field(at: &str, value: Value, shared_key: Option<&str>) -> Result<Field, String> {
    let f: FieldFile = table(at, value)?;
    let name = match (f.name, shared_key) {
        (Some(name), _) => name,
        (None, Some(key)) => key.to_string(),
        (None, None) => return Err(format!("{at}: missing field `name`")),
    };
    let at = format!("{at} (`{name}`)");
    let int = |key: &str, v: &Option<Value>| -> Result<u64, String> {
        match v {
            Some(Value::Integer(n)) => u64::try_from(*n).map_err(|_| format!("{at}: `{key}` is negative")),
            Some(_) => Err(format!("{at}: `{key}` must be a whole number")),
            None => Err(format!("{at}: type `{}` needs `{key}`", f.ty)),
        }
    };
    let u32_of = |key: &str, v: &Option<Value>| -> Result<u32, String> {
        u32::try_from(int(key, v)?).map_err(|_| format!("{at}: `{key}` is over {}", u32::MAX))
    };
    // A number in thousandths, as `decl::FieldType::Number` keeps it.
    let milli = |key: &str, v: &Option<Value>| -> Result<u32, String> {
        let n = match v {
            Some(Value::Float(x)) => *x,
            Some(Value::Integer(n)) => *n as f64,
            Some(_) => return Err(format!("{at}: `{key}` must be a number")),
            None => return Err(format!("{at}: type `number` needs `{key}`")),
        };
        let thousandths = (n * 1000.0).round();
        if (n * 1000.0 - thousandths).abs() > 1e-6 || !(0.0..=f64::from(u32::MAX)).contains(&thousandths) {
            return Err(format!("{at}: `{key}` = {n}: a number of at most three decimals, 0 or more"));
        }
        Ok(thousandths as u32)
    };
    let (ty, holds, takes): (String, Holds, &[&str]) = match f.ty.as_str() {
        // Free text, with at most `max` characters where the services say so (a text question).
        "text" => {
            let max = if f.max.is_some() { format!("Some({})", u32_of("max", &f.max)?) } else { "None".into() };
            (format!("FieldType::Text {{ max_chars: {max} }}"), Holds::Text, &["max"])
        }
        "key" | "url" | "token" | "user_agent" | "cookies" | "image" | "page" => {
            (format!("FieldType::{}", camel(&f.ty)), Holds::Text, &[])
        }
        "images" | "names" => {
            (format!("FieldType::{} {{ max: {} }}", camel(&f.ty), u32_of("max", &f.max)?), Holds::List, &["max"])
        }
        // Without `max`, any whole number from `min` up (a u64 is more than TOML writes).
        "int" => {
            let (min, max) = (u32_of("min", &f.min)?, if f.max.is_some() { int("max", &f.max)? } else { u64::MAX });
            let default = match &f.default {
                Some(_) => {
                    let default = u32_of("default", &f.default)?;
                    if !(u64::from(min)..=max).contains(&u64::from(default)) {
                        return Err(format!("{at}: `default` = {default} is outside {min}..={max}"));
                    }
                    format!("Some({default})")
                }
                None => "None".into(),
            };
            let not_above = f.not_above.as_ref().map_or_else(|| "None".into(), |n| format!("Some({n:?})"));
            let ty = format!("FieldType::Int {{ min: {min}, max: {max}, default: {default}, not_above: {not_above} }}");
            (ty, Holds::Whole, &["min", "max", "default", "not_above"])
        }
        "number" => {
            let (min, max) = (milli("min", &f.min)?, milli("max", &f.max)?);
            (format!("FieldType::Number {{ min_milli: {min}, max_milli: {max} }}"), Holds::Number, &["min", "max"])
        }
        "flag" => ("FieldType::Flag".into(), Holds::Flag, &[]),
        "choice" => {
            let names = f.names.as_ref().ok_or_else(|| format!("{at}: type `choice` needs `names`"))?;
            let names: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
            (format!("FieldType::Choice(&[{}])", names.join(", ")), Holds::Text, &["names"])
        }
        "proxy" => ("FieldType::Proxy".into(), Holds::Proxy, &[]),
        "string_map" => ("FieldType::StringMap".into(), Holds::StringMap, &[]),
        "object" => ("FieldType::Object".into(), Holds::Object, &[]),
        other => {
            return Err(format!(
                "{at}: `type` = `{other}` is not one of key, url, token, text, user_agent, cookies, image, images, \
                 names, page, int, number, flag, choice, proxy, string_map, object"
            ))
        }
    };
    let settings = [
        ("min", f.min.is_some()),
        ("max", f.max.is_some()),
        ("default", f.default.is_some()),
        ("not_above", f.not_above.is_some()),
        ("names", f.names.is_some()),
    ];
    for (key, given) in settings {
        if given && !takes.contains(&key) {
            return Err(format!("{at}: `{key}` is not a setting of type `{}`", f.ty));
        }
    }
    let droppable = match f.droppable {
        Some(_) if f.required => return Err(format!("{at}: a required field is not `droppable`")),
        Some(_) if holds == Holds::Proxy => {
            return Err(format!("{at}: a proxy is not `droppable` (an answer is bound to the IP it was solved from)"))
        }
        Some(d) => Some((d.doc, d.unless)),
        None => None,
    };
    let (js, also, not_above) = (f.js, f.also, f.not_above);
    Ok(Field { name, js, also, ty, holds, required: f.required, doc: f.doc, droppable, not_above })
}

fn answer_values(at: &str, values: &[Value]) -> Result<Vec<AnswerValue>, String> {
    let mut out = Vec::new();
    for (i, value) in values.iter().enumerate() {
        let at = format!("{at}[{i}]");
        let a: AnswerFile = table(&at, value.clone())?;
        let ty =
            ANSWER_TYPES.iter().find(|(n, _)| *n == a.ty).map(|(_, v)| *v).ok_or_else(|| {
                format!("{at}: `type` = `{}` is not one of text, points, number, object, indices", a.ty)
            })?;
        out.push(AnswerValue { name: a.name, ty, keys: a.keys, required: a.required, doc: a.doc });
    }
    Ok(out)
}

fn services(at: &str, value: Value, shared: &SharedFile) -> Result<Services, String> {
    match value {
        Value::String(name) if shared.services.contains_key(&name) => Ok(Services::Shared(name)),
        Value::String(name) => Err(format!("{at}: `{name}` is not a list of [services] in _shared.toml")),
        value => table(at, value).map(Services::Own),
    }
}

fn source(at: &str, s: SourceFile, shared: &SharedFile) -> Result<Source, String> {
    match (s.doc, s.client, s.repo, s.file) {
        (Some(doc), None, None, None) if s.test.is_none() => Ok(Source::Doc(doc)),
        (None, Some(client), None, Some(file)) => {
            let repo = shared
                .clients
                .get(&client)
                .ok_or_else(|| format!("{at}: client `{client}` is not one of [clients] in _shared.toml"))?;
            Ok(Source::Client { repo: repo.clone(), file, test: s.test })
        }
        (None, None, Some(repo), Some(file)) => Ok(Source::Client { repo, file, test: s.test }),
        _ => Err(format!("{at}: `{{ doc = URL }}`, or `client` (or `repo`) with `file` and maybe `test`")),
    }
}

/// `amazon_waf` -> `AmazonWaf`: a kind's `TaskKind` variant.
pub fn camel(tag: &str) -> String {
    tag.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}
