//! `text`: a text question (TextCaptchaTask), which only 2captcha's API v2 documents.

use super::*;
use crate::provider::Dialect::*;
use crate::task::TextCaptcha;

/// The `task` object of a `text` task in `d`, or the field `d` has no place for.
pub(super) fn object(d: Dialect, t: &TextCaptcha) -> Result<Map<String, Value>, InvalidTask> {
    // Only 2captcha (and rucaptcha, the same API) document text questions: TextCaptchaTask
    // with the question in `comment`.
    if d != TwoCaptchaV2 {
        return Err(unsupported(d, TaskKind::Text));
    }
    let mut o = Obj::new(d, "TextCaptchaTask".into());
    o.put("comment", t.text.clone());
    o.deny("lang", t.lang.is_some())?;
    Ok(o.done())
}
