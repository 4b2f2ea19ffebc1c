//! `hcaptcha`: hCaptcha in each dialect, with `rqdata` where each dialect puts it (CapSolver does not list it).

use super::*;
use crate::provider::Dialect::*;
use crate::task::Hcaptcha;

/// The `task` object (written when `building`, else only checked) of a `hcaptcha` task in `d`, or the field `d` has no place for.
pub(super) fn object(d: Dialect, t: &Hcaptcha, building: bool) -> Result<Obj, InvalidTask> {
    // CapSolver lists no hCaptcha token task (https://docs.capsolver.com/guide/support).
    // The 2captcha v2 and CapMonster presets dropped hCaptcha (`[dropped]` in
    // core/kinds/hcaptcha.toml), so only a custom endpoint speaking their dialect reaches the
    // forms below for them: CapMonster's is HCaptchaTask with rqdata in `data` (a plain string)
    // and optional proxy fields, as its official client still writes it
    // (capmonstercloud_client/requests/HcaptchaRequest.py).
    if d == CapSolver {
        return Err(unsupported(d, TaskKind::Hcaptcha));
    }
    let mut o = Obj::new(d, building, type_name(d, "HCaptchaTask", t.proxy.is_some()));
    o.put_text("websiteURL", &t.page_url);
    o.put_text("websiteKey", &t.sitekey);
    o.flag("isInvisible", t.invisible);
    if let Some(r) = &t.data {
        if d == CapMonster {
            o.put_text("data", r);
        } else {
            o.put("enterprisePayload", json!({ "rqdata": r }));
        }
    }
    anti_captcha_proxy_needs_user_agent(d, &t.proxy, &t.user_agent)?;
    o.opt("userAgent", &t.user_agent);
    with_proxy(&mut o, &t.proxy);
    Ok(o)
}
