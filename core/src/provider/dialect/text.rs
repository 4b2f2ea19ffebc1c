//! `text`: a text question (TextCaptchaTask), which only 2captcha's API v2 documents.

use super::*;
use crate::provider::Dialect::*;
use crate::task::TextCaptcha;

/// The `task` object (written when `building`, else only checked) of a `text` task in `d`, or the field `d` has no place for.
pub(super) fn object(d: Dialect, t: &TextCaptcha, building: bool) -> Result<Obj, InvalidTask> {
    // Only 2captcha (and rucaptcha, the same API) document text questions: TextCaptchaTask
    // with the question in `comment`.
    if d != TwoCaptchaV2 {
        return Err(unsupported(d, TaskKind::Text));
    }
    let mut o = Obj::new(d, building, "TextCaptchaTask".into());
    o.put_text("comment", &t.text);
    o.deny("lang", t.lang.is_some())?;
    Ok(o)
}
