//! `recaptcha_v3`: the reCAPTCHA v3 task types of each dialect and their score queues.

use super::*;
use crate::provider::Dialect::*;
use crate::task::RecaptchaV3;

/// The `task` object (written when `building`, else only checked) of a `recaptcha_v3` task in `d`, or the field `d` has no place for.
pub(super) fn object(d: Dialect, t: &RecaptchaV3, building: bool) -> Result<Obj, InvalidTask> {
    let ty = match (d, t.enterprise) {
        (CapSolver, false) => "ReCaptchaV3TaskProxyLess",
        (CapSolver, true) => "ReCaptchaV3EnterpriseTaskProxyLess",
        // The official client's RecaptchaV3EnterpriseRequest (ZennoLab/capmonstercloud-client-python
        // capmonstercloud_client/requests/RecaptchaV3EnterpriseRequest.py), issue 43.
        (CapMonster, true) => "RecaptchaV3EnterpriseTask",
        (_, _) => "RecaptchaV3TaskProxyless",
    };
    let mut o = Obj::new(d, building, ty.into());
    o.put_text("websiteURL", &t.page_url);
    o.put_text("websiteKey", &t.sitekey);
    o.opt("pageAction", &t.action);
    let domain = t.domain.as_deref().map(|x| api_domain(d, x));
    match d {
        AntiCaptcha => {
            // https://anti-captcha.com/apidoc/task-types/RecaptchaV3TaskProxyless (minScore
            // required) and .../RecaptchaV3Enterprise (`isEnterprise: true`); no apiDomain.
            o.put("minScore", score_queue(t.min_score));
            o.flag("isEnterprise", t.enterprise);
            o.deny("domain", t.domain.is_some())?;
        }
        TwoCaptchaV2 => {
            // https://2captcha.com/api-docs/recaptcha-v3: minScore required (0.3/0.7/0.9),
            // isEnterprise, apiDomain.
            o.put("minScore", score_queue(t.min_score));
            o.flag("isEnterprise", t.enterprise);
            o.opt("apiDomain", &domain);
        }
        CapSolver => {
            // https://docs.capsolver.com/guide/captcha/ReCaptchaV3: no minScore.
            o.deny("min_score", t.min_score.is_some())?;
            o.opt("apiDomain", &domain);
        }
        CapMonster => {
            // https://docs.capmonster.cloud/docs/captchas/recaptcha-v3-task: minScore 0.1..0.9
            // as asked; no apiDomain. Enterprise is its own type (`RecaptchaV3EnterpriseTask`,
            // websiteURL, websiteKey, minScore, pageAction), as the official client sends it.
            o.deny("domain", t.domain.is_some())?;
            if let Some(s) = t.min_score {
                o.put("minScore", s);
            }
        }
    }
    Ok(o)
}

/// The reCAPTCHA v3 worker queues anti-captcha and 2captcha API v2 document: `minScore` is
/// required and one of these (https://anti-captcha.com/apidoc/task-types/RecaptchaV3TaskProxyless,
/// https://2captcha.com/api-docs/recaptcha-v3). Unset asks for the lowest, the queue with most
/// workers; a value between two queues takes the next one up, so the token is at least as good as
/// asked. (The official anti-captcha client, anticaptchaofficial/recaptchav3proxyless.py, offers
/// 0.5/0.7/0.9; the documentation wins.)
const SCORE_QUEUES: [f64; 3] = [0.3, 0.7, 0.9];

fn score_queue(requested: Option<f64>) -> f64 {
    let wanted = requested.unwrap_or(SCORE_QUEUES[0]);
    SCORE_QUEUES.into_iter().find(|q| wanted <= *q).unwrap_or(SCORE_QUEUES[2])
}
