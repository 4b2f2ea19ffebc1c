//! The engine takes a [`ValidTask`] as checked: accepting, replaying, recovering and sending a task
//! check nothing again (the task module counts its checks per thread in tests).

use serde_json::json;

use crate::dlq::testkit::{sample_journal_entry, sample_record};
use crate::engine::{Action, Engine, EngineConfig};
use crate::http::Secret;
use crate::provider::Provider;
use crate::support::time::Timestamp;
use crate::task::{Task, ValidTask};

#[test]
fn the_engine_takes_a_valid_task_without_checking_it_again() {
    let now = Timestamp::from_unix_millis(1_700_000_000_000);
    // Read back from a store and a journal: checked once each, by this constructor.
    let record = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0);
    let entry = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R8T", 0);
    let before = ValidTask::checks_on_this_thread();
    let task = Task::from_json_value(json!({"type": "turnstile", "sitekey": "0x4AAA", "pageUrl": "https://a.test/"}))
        .expect("a valid task");
    assert_eq!(ValidTask::checks_on_this_thread(), before + 1, "read and checked in one go");

    let provider = Provider::preset("anti-captcha").expect("preset");
    let mut engine = Engine::new(provider, Secret::new("test-key-0123456789abcdef0123"), EngineConfig::default());
    let job = engine.submit(task, Default::default(), None, now).expect("accepted");
    engine.replay(record, 2, now).expect("replayed");
    engine.recover(entry, now);
    let mut sent = 0;
    while let Some(action) = engine.poll_action(now) {
        match action {
            Action::Journal { gates: Some(gated), .. } => {
                engine.journaled(gated, now);
            }
            Action::Send { .. } => sent += 1,
            _ => {}
        }
    }
    assert!(sent >= 1, "job {job:?} was sent");
    assert_eq!(
        ValidTask::checks_on_this_thread(),
        before + 1,
        "accepting, replaying, recovering and sending check nothing"
    );
}
