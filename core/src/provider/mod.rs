//! Providers: a wire codec plus a table of facts about one solving service.
//!
//! OWNED BY THE CODEC WORK (helper A). The engine relies on this contract:
//! `Provider::{name, supports_batch_poll, max_batch, submit_request,
//! parse_submit, poll_request, parse_poll}` and the outcome types below.
//! The bodies here are a minimal v1/json placeholder to be replaced.

use crate::class::{ErrorClass, Failure};
use crate::error::{ConfigError, InvalidTask};
use crate::http::{HttpRequest, HttpResponse, Method, Secret};
use crate::solution::Solution;
use crate::task::Task;

/// Options sent with every submission.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubmitOptions {
    pub soft_id: Option<String>,
    pub pingback: Option<String>,
    /// Ask v1 providers for `Access-Control-Allow-Origin: *` (browser drivers).
    pub header_acao: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provider {
    name: String,
    base_url: String,
}

/// The provider's answer to a submission.
#[derive(Clone, Debug, PartialEq)]
pub enum SubmitOutcome {
    Accepted { provider_task_id: String },
    Failed(Failure),
}

/// The provider's answer to a poll for `ids` (one entry per id, in order),
/// or a failure of the whole exchange.
#[derive(Clone, Debug, PartialEq)]
pub enum PollOutcome {
    PerTask(Vec<TaskPoll>),
    Failed(Failure),
}

#[derive(Clone, Debug, PartialEq)]
pub enum TaskPoll {
    NotReady,
    Ready(Solution),
    Failed(Failure),
}

impl Provider {
    pub fn preset(name: &str) -> Result<Self, ConfigError> {
        match name {
            "captchaai" => Ok(Provider { name: name.into(), base_url: "https://ocr.captchaai.com".into() }),
            _ => Err(ConfigError::new("provider", format!("unknown provider {name:?}"))),
        }
    }

    pub fn with_base_url(mut self, base_url: &str) -> Result<Self, ConfigError> {
        self.base_url = base_url.trim_end_matches('/').to_string();
        Ok(self)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn supports_batch_poll(&self) -> bool {
        true
    }

    pub fn max_batch(&self) -> usize {
        100
    }

    pub fn submit_request(&self, key: &Secret, task: &Task, _opts: &SubmitOptions) -> Result<HttpRequest, InvalidTask> {
        let Task::RecaptchaV2(t) = task;
        let body =
            format!("key={}&method=userrecaptcha&googlekey={}&pageurl={}&json=1", key.expose(), t.sitekey, t.page_url);
        Ok(HttpRequest::new(Method::Post, format!("{}/in.php", self.base_url), key).with_body(body.into_bytes()))
    }

    pub fn parse_submit(&self, resp: &HttpResponse) -> SubmitOutcome {
        match serde_json::from_slice::<serde_json::Value>(&resp.body) {
            Ok(v) if v["status"] == 1 => {
                SubmitOutcome::Accepted { provider_task_id: v["request"].as_str().unwrap_or_default().to_string() }
            }
            Ok(v) => SubmitOutcome::Failed(self.failure(v["request"].as_str().unwrap_or_default())),
            Err(_) => SubmitOutcome::Failed(Failure::new("UnparseableResponse", ErrorClass::Transient, "bad body")),
        }
    }

    pub fn poll_request(&self, key: &Secret, ids: &[&str]) -> HttpRequest {
        let url = if ids.len() == 1 {
            format!("{}/res.php?key={}&action=get&id={}&json=1", self.base_url, key.expose(), ids[0])
        } else {
            format!("{}/res.php?key={}&action=get&ids={}", self.base_url, key.expose(), ids.join(","))
        };
        HttpRequest::new(Method::Get, url, key)
    }

    pub fn parse_poll(&self, resp: &HttpResponse, ids: &[&str]) -> PollOutcome {
        let text = resp.text();
        if resp.status >= 500 {
            return PollOutcome::Failed(Failure::new("HTTP 5xx", ErrorClass::Transient, "server error"));
        }
        if ids.len() > 1 {
            let parts: Vec<&str> = text.split('|').collect();
            if parts.len() != ids.len() {
                return PollOutcome::Failed(Failure::new("UnparseableResponse", ErrorClass::Transient, "count"));
            }
            return PollOutcome::PerTask(parts.into_iter().map(|p| self.one(p)).collect());
        }
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(v) if v["status"] == 1 => {
                PollOutcome::PerTask(vec![TaskPoll::Ready(Solution::text(v["request"].as_str().unwrap_or_default()))])
            }
            Ok(v) => PollOutcome::PerTask(vec![self.one(v["request"].as_str().unwrap_or_default())]),
            Err(_) => PollOutcome::Failed(Failure::new("UnparseableResponse", ErrorClass::Transient, "bad body")),
        }
    }

    fn one(&self, p: &str) -> TaskPoll {
        if p == "CAPCHA_NOT_READY" {
            TaskPoll::NotReady
        } else if p.starts_with("ERROR") {
            TaskPoll::Failed(self.failure(p))
        } else {
            TaskPoll::Ready(Solution::text(p))
        }
    }

    fn failure(&self, code: &str) -> Failure {
        let class = match code {
            "ERROR_CAPTCHA_UNSOLVABLE" => ErrorClass::TaskTerminal,
            "ERROR_WRONG_USER_KEY" | "ERROR_KEY_DOES_NOT_EXIST" => ErrorClass::AccountTerminal,
            "ERROR_NO_SLOT_AVAILABLE" => {
                return Failure::new(code, ErrorClass::RetryAfter, code)
                    .with_retry_after(core::time::Duration::from_secs(5))
            }
            _ => ErrorClass::FixInput,
        };
        Failure::new(code, class, code)
    }
}
