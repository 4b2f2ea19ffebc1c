//! `turnstile`: Cloudflare Turnstile (and its challenge-page variant) in each dialect.

use super::*;
use crate::provider::Dialect::*;
use crate::task::Turnstile;

/// The `task` object (written when `building`, else only checked) of a `turnstile` task in `d`, or the field `d` has no place for.
pub(super) fn object(d: Dialect, t: &Turnstile, building: bool) -> Result<Obj, InvalidTask> {
    let ty = match d {
        CapSolver => "AntiTurnstileTaskProxyLess".to_string(),
        _ => type_name(d, "TurnstileTask", t.proxy.is_some()),
    };
    let mut o = Obj::new(d, building, ty);
    o.put_text("websiteURL", &t.page_url);
    o.put_text("websiteKey", &t.sitekey);
    match d {
        AntiCaptcha => {
            // https://anti-captcha.com/apidoc/task-types/TurnstileTask: action, cData, chlPageData.
            // Some translations of the TurnstileTaskProxyless page spell it `turnstileCData`;
            // unresolved, `cData` as on the TurnstileTask page is kept.
            o.opt("action", &t.action);
            o.opt("cData", &t.data);
            o.opt("chlPageData", &t.pagedata);
            o.deny("user_agent", t.user_agent.is_some())?;
        }
        TwoCaptchaV2 => {
            o.opt("action", &t.action);
            o.opt("data", &t.data);
            o.opt("pagedata", &t.pagedata);
            o.opt("userAgent", &t.user_agent);
        }
        CapMonster => {
            // https://docs.capmonster.cloud/docs/captchas/turnstile-challenge-task: a challenge
            // page's `pageData` is the `cloudflareTaskType: "token"` variant, which requires
            // pageAction, data, pageData and userAgent (so does the official client,
            // capmonstercloud_client/requests/TurnstileRequest.py).
            if t.pagedata.is_some() {
                o.put("cloudflareTaskType", "token");
                for (field, value) in [("action", &t.action), ("data", &t.data), ("user_agent", &t.user_agent)] {
                    if value.is_none() {
                        return Err(InvalidTask::new(
                            field,
                            "capmonster solves a Turnstile challenge page (pagedata) only with action, data and user_agent",
                        ));
                    }
                }
            }
            o.opt("pageAction", &t.action);
            o.opt("data", &t.data);
            o.opt("pageData", &t.pagedata);
            o.opt("userAgent", &t.user_agent);
        }
        CapSolver => {
            o.deny("pagedata", t.pagedata.is_some())?;
            o.deny("user_agent", t.user_agent.is_some())?;
            o.deny("proxy", t.proxy.is_some())?;
            let mut meta = Map::new();
            if let Some(a) = &t.action {
                meta.insert("action".into(), a.clone().into());
            }
            if let Some(c) = &t.data {
                meta.insert("cdata".into(), c.clone().into());
            }
            if !meta.is_empty() {
                o.put("metadata", meta);
            }
        }
    }
    with_proxy(&mut o, &t.proxy);
    Ok(o)
}
