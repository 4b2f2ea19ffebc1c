//! Page context a service may leave out: the one rule for every service and kind
//! (docs/decisions/0077-page-context-a-service-may-drop.md).
//!
//! A widget found on a page becomes a task carrying what the browser had: its user agent, cookies,
//! proxy (`task::context`), named in the task's `page_context`. Some services have no place for some
//! of them (anti-captcha's and CapSolver's Turnstile forms take no user agent; CapSolver's
//! reCAPTCHA v2 form no cookies), and their codecs refuse such a task naming the field, rightly
//! for a field the user gave: a value silently dropped can make an answer the site rejects. A
//! field the page added is different where the answer is not bound to it: the kind file says so
//! (`droppable`, with `unless` the fields that bind it after all, such as a Turnstile challenge
//! page's `pagedata`). Such a field, refused by a service, is left out for that service and the
//! task sent without it; the answer names what was left out (`Solution::left_out`). A proxy is
//! never droppable (an answer is bound to the IP it was solved from; the kind files cannot say
//! otherwise, `core/build`), nor is anything the user gave.

use std::borrow::Cow;

use serde_json::Value;

use crate::error::InvalidTask;
use crate::task::{kinds, Task, ValidTask};

/// Runs `attempt` (a codec's build or check) on `task`; where it refuses a field the page added
/// that the kind lets a service leave out, runs it again without that field. Answers what the
/// attempt gave and the fields left out, or the refusal that no leaving out answers.
pub(super) fn leaving_out<T>(
    task: &ValidTask,
    mut attempt: impl FnMut(&Task) -> Result<T, InvalidTask>,
) -> Result<(T, Vec<&'static str>), InvalidTask> {
    let mut current = Cow::Borrowed(task.as_task());
    let mut left_out = Vec::new();
    loop {
        let refusal = match attempt(&current) {
            Ok(done) => return Ok((done, left_out)),
            Err(refusal) => refusal,
        };
        // Each turn removes a field the task held, so this ends.
        let Some(field) = droppable(task, &current, &refusal.field) else { return Err(refusal) };
        current = Cow::Owned(without(&current, field).map_err(|_| refusal)?);
        left_out.push(field);
    }
}

/// `field` (as a refusal names it) if `current` holds it, the page added it to `task` and the
/// kind lets a service leave it out with the fields `current` holds.
pub fn droppable(task: &ValidTask, current: &Task, field: &str) -> Option<&'static str> {
    if !task.page_context().contains(field) {
        return None;
    }
    let decl = kinds::decl(task.kind()).field(field)?;
    let rule = decl.droppable.as_ref()?;
    let held = serde_json::to_value(current).ok()?;
    let holds = |name: &str| held.get(name).is_some_and(|v| !v.is_null());
    (holds(decl.name) && !rule.unless.iter().any(|bound_by| holds(bound_by))).then_some(decl.name)
}

/// `task` without `field` (checked again: the result is a task as a user could have written it).
fn without(task: &Task, field: &str) -> Result<Task, InvalidTask> {
    let mut value = serde_json::to_value(task).map_err(|e| InvalidTask::new("task", e.to_string()))?;
    if let Value::Object(obj) = &mut value {
        obj.remove(field);
    }
    Task::from_json_value(value).map(ValidTask::into_task)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskKind;
    use serde_json::json;

    fn task(value: Value) -> ValidTask {
        Task::from_json_value(value).unwrap()
    }

    /// The task's user agent, if it has one.
    fn user_agent(t: &Task) -> Option<String> {
        serde_json::to_value(t).ok()?.get("user_agent")?.as_str().map(str::to_string)
    }

    /// A codec that has no place for a user agent.
    fn refuses_user_agent(t: &Task) -> Result<(), InvalidTask> {
        match user_agent(t) {
            Some(_) => Err(InvalidTask::new("user_agent", "no place for it")),
            None => Ok(()),
        }
    }

    #[test]
    fn a_user_agent_the_page_added_to_a_turnstile_widget_is_left_out() {
        let t = task(json!({
            "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/", "user_agent": "UA/1",
            "page_context": ["user_agent"],
        }));
        assert_eq!(t.page_context().fields(), ["user_agent"]);
        let (sent, left_out) = leaving_out(&t, |t| refuses_user_agent(t).map(|()| t.clone())).unwrap();
        assert_eq!(left_out, ["user_agent"]);
        assert_eq!((sent.kind(), user_agent(&sent), sent.sitekey()), (TaskKind::Turnstile, None, Some("k")));
        // A service that takes it leaves nothing out.
        let (_, left_out) = leaving_out(&t, |_| Ok(())).unwrap();
        assert!(left_out.is_empty());
    }

    #[test]
    fn a_user_agent_the_user_gave_or_a_challenge_page_binds_is_kept() {
        // Given by the user: the refusal stands.
        let mine = task(
            json!({ "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/", "user_agent": "UA/1" }),
        );
        assert_eq!(leaving_out(&mine, refuses_user_agent).unwrap_err().field, "user_agent");
        // A challenge page (`pagedata`): the token is bound to the user agent.
        let challenge = task(json!({
            "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/", "user_agent": "UA/1",
            "pagedata": "p", "page_context": ["user_agent"],
        }));
        assert_eq!(leaving_out(&challenge, refuses_user_agent).unwrap_err().field, "user_agent");
    }

    #[test]
    fn a_proxy_and_a_field_the_kind_does_not_mark_are_never_left_out() {
        let t = task(json!({
            "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/",
            "proxy": { "type": "http", "host": "10.0.0.1", "port": 3128 }, "page_context": ["proxy"],
        }));
        let refuses_proxy = |_: &Task| -> Result<(), InvalidTask> { Err(InvalidTask::new("proxy", "no proxy here")) };
        assert_eq!(leaving_out(&t, refuses_proxy).unwrap_err().field, "proxy");
        // hCaptcha's user agent is not marked droppable.
        let h = task(json!({
            "type": "hcaptcha", "sitekey": "k", "page_url": "https://a.example/", "user_agent": "UA/1",
            "page_context": ["user_agent"],
        }));
        assert_eq!(droppable(&h, h.as_task(), "user_agent"), None);
        // reCAPTCHA v2's cookies are.
        let r = task(json!({
            "type": "recaptcha_v2", "sitekey": "k", "page_url": "https://a.example/", "cookies": "a=1",
            "page_context": ["cookies"],
        }));
        assert_eq!(droppable(&r, r.as_task(), "cookies"), Some("cookies"));
    }

    #[test]
    fn the_list_is_checked_and_kept_in_the_task_json() {
        let e = Task::from_json_value(json!({
            "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/", "page_context": ["colour"],
        }))
        .unwrap_err();
        assert_eq!(e.field, "page_context[0]");
        let e = Task::from_json_value(json!({
            "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/", "page_context": ["user_agent"],
        }))
        .unwrap_err();
        assert!(e.problem.contains("no \"user_agent\""), "{e:?}");
        let e = Task::from_json_value(json!({
            "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/", "page_context": "user_agent",
        }))
        .unwrap_err();
        assert_eq!(e.field, "page_context");
        // Written back as read (a record or a journal entry keeps it), and absent for a user's task.
        let value = json!({
            "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/", "user_agent": "UA/1",
            "page_context": ["user_agent"],
        });
        assert_eq!(serde_json::to_value(task(value.clone())).unwrap(), value);
        let plain = json!({ "type": "turnstile", "sitekey": "k", "page_url": "https://a.example/" });
        assert_eq!(serde_json::to_value(task(plain.clone())).unwrap(), plain);
    }
}
