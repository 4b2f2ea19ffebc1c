//! The services' protocols and the presets that name them: plain data that the task kinds'
//! declarations refer to (which dialect a wire form is for) as much as the providers do, kept
//! apart so that neither imports the other for it.

/// The createTask services differ in task type names and fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    AntiCaptcha,
    CapSolver,
    TwoCaptchaV2,
    CapMonster,
}

impl Dialect {
    pub const ALL: [Dialect; 4] =
        [Dialect::AntiCaptcha, Dialect::CapSolver, Dialect::TwoCaptchaV2, Dialect::CapMonster];

    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::AntiCaptcha => "anti-captcha",
            Dialect::CapSolver => "capsolver",
            Dialect::TwoCaptchaV2 => "2captcha-v2",
            Dialect::CapMonster => "capmonster",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Dialect::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

/// Which wire protocol a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// `in.php` / `res.php`.
    V1,
    /// `/createTask`, `/getTaskResult`, `/getBalance`.
    CreateTask(Dialect),
}

/// Known services: name, base URL, protocol.
pub const PRESETS: &[(&str, &str, Protocol)] = &[
    ("captchaai", "https://ocr.captchaai.com", Protocol::V1),
    ("2captcha", "https://2captcha.com", Protocol::V1),
    ("rucaptcha", "https://rucaptcha.com", Protocol::V1),
    ("anti-captcha", "https://api.anti-captcha.com", Protocol::CreateTask(Dialect::AntiCaptcha)),
    ("capsolver", "https://api.capsolver.com", Protocol::CreateTask(Dialect::CapSolver)),
    ("2captcha-v2", "https://api.2captcha.com", Protocol::CreateTask(Dialect::TwoCaptchaV2)),
    ("capmonster", "https://api.capmonster.cloud", Protocol::CreateTask(Dialect::CapMonster)),
];
