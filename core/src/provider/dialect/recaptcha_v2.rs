//! `recaptcha_v2`: the reCAPTCHA v2 and v2 Enterprise task types of each dialect.

use super::*;
use crate::provider::Dialect::*;
use crate::task::RecaptchaV2;

/// The `task` object (written when `building`, else only checked) of a `recaptcha_v2` task in `d`, or the field `d` has no place for.
pub(super) fn object(d: Dialect, t: &RecaptchaV2, building: bool) -> Result<Obj, InvalidTask> {
    let proxied = t.proxy.is_some();
    // CapSolver's reCAPTCHA v2 page lists ReCaptchaV2TaskProxyLess and the two Enterprise
    // types; the proxied `ReCaptchaV2Task` is from its earlier pages (and
    // AndreiDrang/python3-capsolver's task enum), kept as is.
    let base = match (d, t.enterprise) {
        (CapSolver, false) => "ReCaptchaV2Task",
        (CapSolver, true) => "ReCaptchaV2EnterpriseTask",
        (_, false) => "RecaptchaV2Task",
        (_, true) => "RecaptchaV2EnterpriseTask",
    };
    let mut o = Obj::new(d, building, type_name(d, base, proxied));
    o.put_text("websiteURL", &t.page_url);
    o.put_text("websiteKey", &t.sitekey);
    let domain = t.domain.as_deref().map(|x| api_domain(d, x));
    match d {
        CapSolver => {
            // https://docs.capsolver.com/guide/captcha/ReCaptchaV2: data-s is
            // `recaptchaDataSValue` for the normal version and `enterprisePayload.s` for
            // Enterprise; `pageAction` is the anchor's `sa`.
            if t.enterprise {
                if let Some(s) = &t.data_s {
                    o.put("enterprisePayload", json!({ "s": s }));
                }
            } else {
                o.opt("recaptchaDataSValue", &t.data_s);
            }
            o.flag("isInvisible", t.invisible);
            o.opt("pageAction", &t.action);
            o.deny("cookies", t.cookies.is_some())?;
            o.opt("userAgent", &t.user_agent);
            o.opt("apiDomain", &domain);
        }
        AntiCaptcha if t.enterprise => {
            // https://anti-captcha.com/apidoc/task-types/RecaptchaV2EnterpriseTask
            if let Some(s) = &t.data_s {
                o.put("enterprisePayload", json!({ "s": s }));
            }
            o.deny("invisible", t.invisible)?;
            o.deny("action", t.action.is_some())?;
            o.opt("userAgent", &t.user_agent);
            o.opt("cookies", &t.cookies.as_deref().map(create_task_cookies));
            o.opt("apiDomain", &domain);
        }
        TwoCaptchaV2 => {
            o.opt("recaptchaDataSValue", &t.data_s);
            o.flag("isInvisible", t.invisible);
            o.opt("userAgent", &t.user_agent);
            o.opt("cookies", &t.cookies.as_deref().map(create_task_cookies));
            o.opt("apiDomain", &domain);
            // No pageAction found in 2captcha's API v2 reCAPTCHA v2 task; the v1 API takes `action`.
            o.deny("action", t.action.is_some())?;
        }
        CapMonster if t.enterprise => {
            // https://docs.capmonster.cloud/docs/captchas/recaptcha-v2-enterprise-task and the
            // official client (capmonstercloud_client/requests/RecaptchaV2EnterpiseRequest.py):
            // `enterprisePayload: {s}`, `pageAction`, `apiDomain`; no isInvisible.
            if let Some(s) = &t.data_s {
                o.put("enterprisePayload", json!({ "s": s }));
            }
            o.deny("invisible", t.invisible)?;
            o.opt("pageAction", &t.action);
            o.opt("userAgent", &t.user_agent);
            o.opt("cookies", &t.cookies.as_deref().map(create_task_cookies));
            o.opt("apiDomain", &domain);
        }
        AntiCaptcha | CapMonster => {
            // The non-Enterprise types take recaptchaDataSValue, isInvisible, userAgent and
            // cookies, and no apiDomain or action: anti-captcha
            // (https://anti-captcha.com/apidoc/task-types/RecaptchaV2TaskProxyless) and CapMonster
            // (https://docs.capmonster.cloud/docs/captchas/no-captcha-task).
            o.opt("recaptchaDataSValue", &t.data_s);
            o.flag("isInvisible", t.invisible);
            o.opt("userAgent", &t.user_agent);
            o.opt("cookies", &t.cookies.as_deref().map(create_task_cookies));
            o.deny("domain", t.domain.is_some())?;
            o.deny("action", t.action.is_some())?;
        }
    }
    with_proxy(&mut o, &t.proxy);
    Ok(o)
}
