//! `/siteverify`: what a site's backend asks the CAPTCHA vendor about a token it was sent, answered for the tokens
//! this mock issued. The page tests' fixture site calls it, so a token injected into the wrong field or frame (or
//! one the page made up) fails there, as it would at Google, hCaptcha or Cloudflare.
//!
//! Request (form or query, as the vendors take it): `response` (the token, recognised text, GeeTest v3 `validate`
//! or v4 `pass_token`) and optionally `sitekey`. Answer, in the vendors' shape: `{"success": true, "hostname",
//! "challenge_ts"}` or `{"success": false, "error-codes": [...]}`, plus what a test needs to check the task was
//! built right: `kind`, `sitekey`, and `params` (every value submitted with the task). A token verifies once
//! (`timeout-or-duplicate` after), as at the vendors.

use std::collections::{HashMap, VecDeque};

use serde_json::{json, Value};

use crate::tokens::Kind;

/// Answers handed out this mock's life (since the last reset), at most this many.
const MAX_ISSUED: usize = 100_000;

#[derive(Debug)]
struct Answer {
    kind: Kind,
    site_key: Option<String>,
    page_url: Option<String>,
    values: Vec<String>,
    verified: bool,
}

/// The answers the mock handed out, by the response a site would verify.
#[derive(Debug, Default)]
pub(crate) struct Issued {
    answers: HashMap<String, Answer>,
    order: VecDeque<String>,
}

impl Issued {
    pub fn issue(
        &mut self,
        response: String,
        kind: Kind,
        site_key: &Option<String>,
        page_url: &Option<String>,
        values: &[String],
    ) {
        let answer = Answer {
            kind,
            site_key: site_key.clone(),
            page_url: page_url.clone(),
            values: values.to_vec(),
            verified: false,
        };
        if self.answers.insert(response.clone(), answer).is_none() {
            self.order.push_back(response);
        }
        while self.order.len() > MAX_ISSUED {
            if let Some(old) = self.order.pop_front() {
                self.answers.remove(&old);
            }
        }
    }

    /// The vendor's verdict on `response`, for a widget of `site_key` when given.
    pub fn verify(&mut self, response: Option<&str>, site_key: Option<&str>) -> Value {
        let refuse = |code: &str| json!({ "success": false, "error-codes": [code] });
        let Some(response) = response.filter(|r| !r.is_empty()) else {
            return refuse("missing-input-response");
        };
        let Some(answer) = self.answers.get_mut(response) else {
            return refuse("invalid-input-response");
        };
        if let (Some(asked), Some(issued)) = (site_key, &answer.site_key) {
            if asked != issued {
                return json!({ "success": false, "error-codes": ["sitekey-secret-mismatch"], "sitekey": issued });
            }
        }
        if answer.verified {
            return refuse("timeout-or-duplicate");
        }
        answer.verified = true;
        let hostname = answer
            .page_url
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok())
            .and_then(|u| u.host_str().map(str::to_string));
        json!({
            "success": true,
            "hostname": hostname,
            "kind": answer.kind.name(),
            "sitekey": answer.site_key,
            "page_url": answer.page_url,
            "params": answer.values,
        })
    }
}
