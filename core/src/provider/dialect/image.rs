//! `image`: ImageToTextTask in each dialect, and the fields each one refuses.

use super::*;
use crate::provider::Dialect::*;
use crate::task::Image;

/// The `task` object (written when `building`, else only checked) of a `image` task in `d`, or the field `d` has no place for.
pub(super) fn object(d: Dialect, t: &Image, building: bool) -> Result<Obj, InvalidTask> {
    let mut o = Obj::new(d, building, "ImageToTextTask".into());
    o.put_text("body", &t.body);
    let numeric = t.numeric.filter(|n| *n != 0);
    o.deny("language", t.language.is_some_and(|l| l != 0))?;
    o.deny("lang", t.lang.is_some())?;
    match d {
        AntiCaptcha | TwoCaptchaV2 => {
            // https://anti-captcha.com/apidoc/task-types/ImageToTextTask and
            // https://2captcha.com/api-docs/normal-captcha: phrase, case, numeric, math,
            // minLength, maxLength, comment (2captcha also imgInstructions).
            o.flag("phrase", t.phrase);
            if d == AntiCaptcha {
                // anti-captcha's `case` defaults to TRUE (ImageToTextTask page); every other
                // service and the v1 API default to case-insensitive, so it is always sent.
                // The official client does the same: anticaptchaofficial/antinetworking.py `case = False`.
                o.put("case", t.regsense);
            } else {
                o.flag("case", t.regsense);
            }
            if let Some(n) = numeric {
                // anti-captcha documents numeric 0..2; 2captcha 0..4.
                o.deny("numeric", d == AntiCaptcha && n > 2)?;
                o.put("numeric", n);
            }
            o.flag("math", t.calc);
            if let Some(n) = t.min_len {
                o.put("minLength", n);
            }
            if let Some(n) = t.max_len {
                o.put("maxLength", n);
            }
            o.opt("comment", &t.textinstructions);
            o.deny("imginstructions", d == AntiCaptcha && t.imginstructions.is_some())?;
            o.opt("imgInstructions", &t.imginstructions);
        }
        CapMonster => {
            // https://docs.capmonster.cloud/docs/captchas/image-to-text: case, numeric (0/1),
            // math. The official client (ZennoLab/capmonstercloud-client-python
            // capmonstercloud_client/requests/ImageToTextRequest.py) sends the case flag as
            // `Case`, and so does this (issue 43).
            o.deny("phrase", t.phrase)?;
            o.deny("min_len", t.min_len.is_some())?;
            o.deny("max_len", t.max_len.is_some())?;
            o.deny("textinstructions", t.textinstructions.is_some())?;
            o.deny("imginstructions", t.imginstructions.is_some())?;
            o.deny("numeric", numeric.is_some_and(|n| n != 1))?;
            o.flag("Case", t.regsense);
            if numeric.is_some() {
                o.put("numeric", 1);
            }
            o.flag("math", t.calc);
        }
        CapSolver => {
            // https://docs.capsolver.com/guide/recognition/ImageToTextTask: body, case, module.
            // The answer comes back in the createTask response itself (see create_task::parse_submit).
            o.deny("phrase", t.phrase)?;
            o.deny("numeric", numeric.is_some())?;
            o.deny("calc", t.calc)?;
            o.deny("min_len", t.min_len.is_some())?;
            o.deny("max_len", t.max_len.is_some())?;
            o.deny("textinstructions", t.textinstructions.is_some())?;
            o.deny("imginstructions", t.imginstructions.is_some())?;
            o.flag("case", t.regsense);
        }
    }
    Ok(o)
}
