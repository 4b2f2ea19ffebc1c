//! A service that answers in the submission itself (CapSolver's recognition
//! tasks, https://docs.capsolver.com/guide/api-createtask): the engine takes
//! the answer without a poll and never submits the task again.

use std::collections::BTreeMap;
use std::time::Duration;

use captcha_dlq_core::engine::{Action, Event};
use captcha_dlq_core::{Engine, EngineConfig, HttpResponse, JobId, Provider, Secret, Task, Timestamp, ValidTask};
use serde_json::json;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// Submits `task`, confirming its journal write as a driver would.
fn submit(engine: &mut Engine, task: ValidTask, now: Timestamp) -> JobId {
    let job = engine.submit(task, BTreeMap::new(), None, now).unwrap();
    assert!(drain(engine, now).iter().any(|a| matches!(a, Action::Journal { gates: Some(j), .. } if *j == job)));
    assert!(engine.journaled(job, now));
    job
}

/// Every action the engine has at `now`.
fn drain(engine: &mut Engine, now: Timestamp) -> Vec<Action> {
    std::iter::from_fn(|| engine.poll_action(now)).collect()
}

fn image_task() -> ValidTask {
    Task::from_json_value(json!({"type": "image", "body": PNG})).unwrap()
}

#[test]
fn a_solution_in_the_create_task_answer_ends_the_job_without_a_poll() {
    let provider = Provider::preset("capsolver").unwrap();
    let mut engine = Engine::new(provider.clone(), Secret::new("k"), EngineConfig::for_provider(&provider));
    let now = Timestamp::from_unix_millis(1_700_000_000_000);
    let job = submit(&mut engine, image_task(), now);
    let actions = drain(&mut engine, now);
    let sends: Vec<_> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { request_id, request } => Some((*request_id, request.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(sends.len(), 1);
    assert!(sends[0].1.url.ends_with("/createTask"), "{}", sends[0].1.url);

    let body = r#"{"errorId":0,"errorCode":"","errorDescription":"","status":"ready","solution":{"text":"44795sds"},"taskId":"2376919c-1863-11ec-a012-94e6f7355a0b"}"#;
    let later = now.add(Duration::from_millis(800));
    engine.handle_response(sends[0].0, Ok(HttpResponse::new(200, body)), later);
    let actions = drain(&mut engine, later);
    let solved = actions.iter().find_map(|a| match a {
        Action::Solved { job: j, solution, persist, .. } if *j == job => Some((solution.clone(), persist.clone())),
        _ => None,
    });
    let (solution, persist) = solved.expect("solved from the createTask answer");
    assert_eq!(solution.text, "44795sds");
    assert_eq!(solution.provider_task_id.as_deref(), Some("2376919c-1863-11ec-a012-94e6f7355a0b"));
    assert_eq!(persist.and_then(|e| e.solution).as_ref(), Some(&solution), "kept in the journal until handed over");
    assert!(actions.iter().any(|a| matches!(a, Action::Event(Event::Submitted { attempt: 1, .. }))));
    assert!(!actions.iter().any(|a| matches!(a, Action::Send { .. } | Action::DeadLetter { .. })));
    assert_eq!((engine.job_count(), engine.in_flight()), (0, 0));
    // Nothing left to do, ever: no poll, no second submission.
    assert!(engine.poll_timeout().is_none());
    assert!(drain(&mut engine, later.add(Duration::from_secs(600))).is_empty());
}

#[test]
fn an_asynchronous_create_task_answer_is_still_polled() {
    let provider = Provider::preset("capsolver").unwrap();
    let config = EngineConfig::for_provider(&provider);
    let first_poll = config.polling.first_poll_ms.ms(captcha_dlq_core::TaskKind::RecaptchaV2);
    let mut engine = Engine::new(provider, Secret::new("k"), config);
    let now = Timestamp::from_unix_millis(1_700_000_000_000);
    let task =
        Task::from_json_value(json!({"type": "recaptcha_v2", "sitekey": "6Le-K", "page_url": "https://a.test/"}));
    submit(&mut engine, task.unwrap(), now);
    let rid = drain(&mut engine, now)
        .into_iter()
        .find_map(|a| match a {
            Action::Send { request_id, .. } => Some(request_id),
            _ => None,
        })
        .unwrap();
    engine.handle_response(rid, Ok(HttpResponse::new(200, r#"{"errorId":0,"taskId":"37223a89"}"#)), now);
    drain(&mut engine, now);
    assert_eq!(engine.poll_timeout(), Some(now.add(Duration::from_millis(first_poll))));
    let polls = drain(&mut engine, now.add(Duration::from_millis(first_poll)));
    assert!(polls.iter().any(|a| matches!(a, Action::Send { request, .. } if request.url.ends_with("/getTaskResult"))));
}
