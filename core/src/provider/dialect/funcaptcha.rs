//! `funcaptcha`: Arkose Labs FunCaptcha in each dialect (CapSolver does not list it).

use super::*;
use crate::provider::Dialect::*;
use crate::task::Funcaptcha;

/// The `task` object (written when `building`, else only checked) of a `funcaptcha` task in `d`, or the field `d` has no place for.
pub(super) fn object(d: Dialect, t: &Funcaptcha, building: bool) -> Result<Obj, InvalidTask> {
    // CapSolver lists no FunCaptcha task (https://docs.capsolver.com/guide/support).
    // CapMonster: https://docs.capmonster.cloud/docs/captchas/funcaptcha-task, FunCaptchaTask
    // with optional proxy fields, as the official client
    // (capmonstercloud_client/requests/FuncaptchaRequest.py).
    if d == CapSolver {
        return Err(unsupported(d, TaskKind::Funcaptcha));
    }
    let mut o = Obj::new(d, building, type_name(d, "FunCaptchaTask", t.proxy.is_some()));
    o.put_text("websiteURL", &t.page_url);
    o.put_text("websitePublicKey", &t.publickey);
    if let Some(s) = &t.surl {
        o.put("funcaptchaApiJSSubdomain", subdomain(s));
    }
    if !t.data.is_empty() {
        o.put("data", funcaptcha_data(&t.data));
    }
    anti_captcha_proxy_needs_user_agent(d, &t.proxy, &t.user_agent)?;
    o.opt("userAgent", &t.user_agent);
    with_proxy(&mut o, &t.proxy);
    Ok(o)
}

/// The funcaptcha JS subdomain from a `surl` that may be a full URL.
fn subdomain(surl: &str) -> String {
    crate::support::weburl::host_of(surl).unwrap_or_else(|| surl.to_string())
}

/// FunCaptcha's extra values as the createTask APIs take them: one JSON string
/// (`"data": "{\"blob\":\"...\"}"`, CapMonster docs captchas/funcaptcha-task and
/// anti-captcha task-types/FunCaptchaTaskProxyless).
fn funcaptcha_data(data: &std::collections::BTreeMap<String, String>) -> String {
    // Inserted one by one, not `collect()`ed: `Map::from_iter` brings a stable sort's code into the .wasm.
    let mut object = Map::new();
    for (k, v) in data {
        object.insert(k.clone(), v.clone().into());
    }
    Value::Object(object).to_string()
}
