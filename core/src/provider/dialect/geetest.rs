//! `geetest_v3` and `geetest_v4`: one task type per dialect, with the v4 `captcha_id` where each dialect puts it.

use super::*;
use crate::provider::Dialect::*;
use crate::task::{GeetestV3, GeetestV4};

/// The `task` object (written when `building`, else only checked) of a `geetest_v3` task in `d`, or the field `d` has no place for.
pub(super) fn v3_object(d: Dialect, t: &GeetestV3, building: bool) -> Result<Obj, InvalidTask> {
    let mut o = Obj::new(d, building, geetest_type(d, t.proxy.is_some()));
    o.put_text("websiteURL", &t.page_url);
    o.put_text("gt", &t.gt);
    o.put_text("challenge", &t.challenge);
    o.opt("geetestApiServerSubdomain", &t.api_server);
    if d == CapSolver {
        o.deny("user_agent", t.user_agent.is_some())?;
        o.deny("proxy", t.proxy.is_some())?;
    }
    anti_captcha_proxy_needs_user_agent(d, &t.proxy, &t.user_agent)?;
    o.opt("userAgent", &t.user_agent);
    with_proxy(&mut o, &t.proxy);
    Ok(o)
}

/// The `task` object (written when `building`, else only checked) of a `geetest_v4` task in `d`, or the field `d` has no place for.
pub(super) fn v4_object(d: Dialect, t: &GeetestV4, building: bool) -> Result<Obj, InvalidTask> {
    let mut o = Obj::new(d, building, geetest_type(d, t.proxy.is_some()));
    o.put_text("websiteURL", &t.page_url);
    match d {
        CapSolver => {
            o.deny("user_agent", t.user_agent.is_some())?;
            o.deny("proxy", t.proxy.is_some())?;
            o.put_text("captchaId", &t.captcha_id);
        }
        TwoCaptchaV2 => {
            o.put("version", 4);
            o.put("initParameters", json!({ "captcha_id": t.captcha_id }));
        }
        AntiCaptcha | CapMonster => {
            // Both take the v4 captcha_id in `gt`.
            o.put_text("gt", &t.captcha_id);
            o.put("version", 4);
        }
    }
    anti_captcha_proxy_needs_user_agent(d, &t.proxy, &t.user_agent)?;
    o.opt("userAgent", &t.user_agent);
    with_proxy(&mut o, &t.proxy);
    Ok(o)
}

fn geetest_type(d: Dialect, proxied: bool) -> String {
    match d {
        CapSolver => "GeeTestTaskProxyLess".into(),
        _ => type_name(d, "GeeTestTask", proxied),
    }
}
