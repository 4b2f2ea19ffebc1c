//! The shape of a kind's declaration: its fields, its answer, its wire mapping
//! per protocol and dialect, and where each fact comes from.
//!
//! A declaration is data (`const` tables, written by `core/build.rs` from
//! `core/kinds/<kind>.toml`), not code: the browser build carries
//! one reader, one validator and one encoder for every declared kind, and
//! `generate` (`cargo xtask kinds`) writes the Python, TypeScript and docs
//! forms of the same tables.

use crate::protocol::Dialect;

/// A description or a source: text with feature `declared-kinds`, nothing without it (only the
/// generated files and documents read them; the `.wasm` carries the tables without them).
#[cfg(feature = "declared-kinds")]
pub type Text = &'static str;
/// A description or a source: nothing without feature `declared-kinds` (the browser build).
#[cfg(not(feature = "declared-kinds"))]
pub type Text = ();

/// `text` with feature `declared-kinds`, nothing without it ([`Text`]).
#[cfg(feature = "declared-kinds")]
pub(super) const fn strip(text: &'static str) -> Text {
    text
}

/// `text` with feature `declared-kinds`, nothing without it ([`Text`]).
#[cfg(not(feature = "declared-kinds"))]
pub(super) const fn strip(_text: &'static str) -> Text {}
use crate::task::TaskKind;

/// Everything about one kind of task.
#[derive(Debug)]
pub struct KindDecl {
    pub kind: TaskKind,
    /// The class name in Python, TypeScript and Rust (`AmazonWaf`).
    pub class: Text,
    /// One line: what the kind is.
    pub summary: Text,
    pub fields: &'static [FieldDecl],
    /// The answer's values, by name, and where a provider puts each.
    pub answer: &'static [AnswerDecl],
    /// How long its answer is good for after it was solved (`answer_life` in the kind file).
    pub life: AnswerLife,
    pub wire: Wire,
    /// The services that took the kind and dropped it (`[dropped]` in the kind file), each with
    /// its source: the kind is not sent there, and a refusal names why.
    pub dropped: &'static [DroppedDecl],
}

/// A service that dropped a kind: its preset name, the source that shows it and what it shows.
#[derive(Debug)]
pub struct DroppedDecl {
    pub service: &'static str,
    pub doc: Text,
    pub note: Text,
}

/// How long a kind's answer is good for after it was solved: a token or a cookie expires, a
/// recognised text does not. Past its life an answer is never handed over as good
/// (docs/decisions/0060-answers-expire-task-ttl.md: it becomes a dead letter `TTLExpired`, or is
/// solved again when asked).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AnswerLife {
    /// Good for `ms` after it was solved: as `doc` says, or (`note`) as assumed where no page
    /// says.
    Expires { ms: u64, doc: Text, note: Option<Text> },
    /// It does not expire: why.
    Never { why: Text },
}

impl AnswerLife {
    /// Its life in milliseconds; `None` when it does not expire.
    pub fn ms(self) -> Option<u64> {
        match self {
            AnswerLife::Expires { ms, .. } => Some(ms),
            AnswerLife::Never { .. } => None,
        }
    }
}

/// One field of a task.
#[derive(Debug)]
pub struct FieldDecl {
    /// snake_case: the Rust, Python and record spelling.
    pub name: &'static str,
    /// The JavaScript spelling where it is not the camelCase of `name` (`publicKey`).
    pub js: Option<&'static str>,
    /// Other spellings taken on input (`caseSensitive`, the official 2captcha clients' name
    /// for `regsense`); one value under one spelling only.
    pub also: &'static [&'static str],
    pub ty: FieldType,
    pub required: bool,
    pub doc: Text,
    /// Set where the answer is not bound to the field: a service with no place for it may leave
    /// it out when the page added it (`provider::page_context`).
    pub droppable: Option<Droppable>,
}

/// A field a service may leave out when the page (not the user) added it: the answer is not
/// bound to it (`droppable` in the kind file; docs/decisions/0077-page-context-a-service-may-drop.md).
#[derive(Debug)]
pub struct Droppable {
    /// Fields whose presence binds the answer to it after all (a Turnstile challenge page's
    /// `pagedata`: the token is bound to the user agent that loaded the page).
    pub unless: &'static [&'static str],
    /// Why the answer is not bound to it.
    pub doc: Text,
}

/// What a field holds, which sets its checks (see `kinds::declared`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldType {
    /// A site key, app id or challenge id: one line, at most 256 characters.
    Key,
    /// An http(s) URL.
    Url,
    /// An opaque page value (a token, a script's data): one line, at most 64 KiB.
    Token,
    /// Free text over lines (a page's HTML as base64 is a Token), of at most `max_chars`
    /// characters where the services set a bound (`max` in the kind file).
    Text {
        max_chars: Option<u32>,
    },
    /// A browser user agent.
    UserAgent,
    /// Cookies, written `name=value; name2=value2` (each protocol's form is made when sent).
    Cookies,
    /// A base64 image (or audio clip): decodable, at most `MAX_IMAGE_BYTES`.
    Image,
    /// A list of 1 to `max` base64 images, each checked as an [`FieldType::Image`].
    Images {
        max: u32,
    },
    /// A list of 1 to `max` names (domains and the like), each checked as a [`FieldType::Key`].
    Names {
        max: u32,
    },
    /// A page's HTML as it was served: text over lines, at most 512 KiB.
    Page,
    /// A whole number in `min..=max`. `default`: the value the services take when none is
    /// given (`numeric` 0, "any"), the same as none, so not kept: no form sends it and none
    /// refuses it. `not_above`: another whole-number field it may not exceed (`min_len` and
    /// `max_len`).
    Int {
        min: u32,
        max: u64,
        default: Option<u32>,
        not_above: Option<&'static str>,
    },
    /// A number in `min_milli / 1000 ..= max_milli / 1000` (thousandths keep the table small).
    Number {
        min_milli: u32,
        max_milli: u32,
    },
    Flag,
    /// One of a few names.
    Choice(&'static [&'static str]),
    Proxy,
    /// An object of strings.
    StringMap,
    /// Any JSON object.
    Object,
}

/// One value of the answer.
#[derive(Debug)]
pub struct AnswerDecl {
    /// snake_case, as for fields.
    pub name: &'static str,
    pub ty: AnswerType,
    /// The provider keys it may come under in a ready answer, in order of preference; an
    /// empty list is the answer's text itself.
    pub keys: &'static [&'static str],
    pub required: bool,
    pub doc: Text,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerType {
    Text,
    /// Points clicked on an image: `[{x, y}, ...]` (2captcha's `coordinates:x=1,y=2;...`).
    Points,
    Number,
    /// A JSON object, as the provider sent it.
    Object,
    /// The 0-based positions of the images or grid cells that match: `[1, 4]`, from a list of
    /// flags (`[false, true, ...]`, CapMonster's `answer`), of positions (CapSolver's `objects`)
    /// or one flag for a single image (CapSolver's `hasObject`). May be empty: nothing matches.
    Indices,
}

/// How a kind goes on the wire.
#[derive(Debug)]
pub enum Wire {
    /// Written as code in `provider::v1` and `provider::dialect`: only `raw`, the escape hatch
    /// (docs/decisions/0078-one-task-model.md); `services`: the presets it goes to (checked
    /// against the vectors by `core/tests/it/vectors.rs`).
    Coded { services: &'static [&'static str] },
    /// Renames and fixed values, per protocol.
    Declared { v1: Option<V1Decl>, create_task: &'static [CreateTaskDecl] },
}

/// The `in.php` form of a kind.
#[derive(Debug)]
pub struct V1Decl {
    pub method: &'static str,
    /// `(field, parameter)`; a proxy field becomes `proxy` + `proxytype`.
    pub params: &'static [(&'static str, &'static str)],
    /// Parameters sent with every task of the kind (`recaptcha=1` for a grid).
    pub fixed: &'static [(&'static str, &'static str)],
    /// The presets that solve it (a custom v1 URL is taken to be 2captcha-compatible).
    pub services: &'static [&'static str],
    pub source: Source,
}

/// One createTask dialect's form of a kind.
#[derive(Debug)]
pub struct CreateTaskDecl {
    pub dialect: Dialect,
    /// A field whose presence selects this form over the dialect's form without `when`
    /// (`enterprise`: reCAPTCHA Enterprise's own task type and keys).
    pub when: Option<&'static str>,
    /// The name of a function in `provider::hooks::HOOKS` that adjusts the built object where
    /// the tables cannot say it (a per-dialect value form); the build refuses a name not there.
    pub hook: Option<&'static str>,
    /// The task type without a proxy; `None`: this dialect needs one.
    pub proxyless: Option<&'static str>,
    /// The task type with a proxy; `None`: this dialect takes none.
    pub proxied: Option<&'static str>,
    /// `(field, key)`; a dotted key (`metadata.captchaUrl`) is nested; a key ending in `[]`
    /// takes the value as a list of one (`imagesBase64[]`); `base64:` before a key sends the
    /// text base64-encoded (`base64:htmlPageBase64`), `json:` the value as one JSON string
    /// (`json:data`), `host:` a URL's host (`host:funcaptchaApiJSSubdomain`); an empty key: the dialect does without
    /// the field, which is not sent (a hint that only other services use).
    pub params: &'static [(&'static str, &'static str)],
    /// Keys sent with every task of the kind (`class: "DataDome"`); `int:` before a key sends
    /// the value as a JSON number (`int:version`, `4`), `bool:` as `true`/`false`. A field given
    /// under the same key replaces it (anti-captcha's `case`: `false` unless `regsense`).
    pub fixed: &'static [(&'static str, &'static str)],
    /// Fields optional for the kind that this dialect cannot do without.
    pub requires: &'static [&'static str],
    /// `(field, max)`: a whole-number field this dialect takes only up to `max`, where the
    /// kind allows more (anti-captcha's `numeric` 0..=2 of the kind's 0..=4); more is refused
    /// naming the field.
    pub at_most: &'static [(&'static str, u64)],
    /// Fields this dialect cannot do without when the task has a proxy: anti-captcha solves a
    /// proxied GeeTest, FunCaptcha or hCaptcha in a browser that must look like the one behind
    /// the proxy; its official client sends `userAgent` with every one
    /// (anti-captcha/anticaptcha-python `anticaptchaofficial/geetestproxyon.py`,
    /// `funcaptchaproxyon.py`, `hcaptchaproxyon.py`) and the task pages list it as required
    /// (https://anti-captcha.com/apidoc/task-types/GeeTestTask, FunCaptchaTask, HCaptchaTask; issue 43).
    pub requires_proxied: &'static [&'static str],
    pub source: Source,
}

/// Where a wire fact is written.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    /// A provider's documentation page.
    Doc(Text),
    /// An official client's file and test.
    Client { repo: Text, file: Text, test: Option<Text> },
}

impl KindDecl {
    /// Whether the wire form is declared (not coded).
    pub fn wire_is_declared(&self) -> bool {
        matches!(self.wire, Wire::Declared { .. })
    }

    /// The presets of a coded kind (`None` for a declared one: see `kinds::services_of`).
    pub fn coded_services(&self) -> Option<&'static [&'static str]> {
        match self.wire {
            Wire::Coded { services } => Some(services),
            Wire::Declared { .. } => None,
        }
    }

    /// Why `service` no longer takes this kind, where the kind file says it dropped it.
    pub fn dropped_by(&self, service: &str) -> Option<&'static DroppedDecl> {
        self.dropped.iter().find(|d| d.service == service)
    }

    pub fn field(&self, name: &str) -> Option<&FieldDecl> {
        self.fields.iter().find(|f| f.name == name)
    }
}

impl FieldDecl {
    /// The JavaScript spelling.
    pub fn js_name(&self) -> String {
        self.js.map_or_else(|| crate::support::json_field::camel(self.name), str::to_string)
    }
}
