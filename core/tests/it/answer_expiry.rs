//! Answers expire (issue 43, item 3; docs/decisions/0060-answers-expire-task-ttl.md): each kind
//! declares its answer's life, every fresh answer carries `solved_at` and `expires_at`, an answer
//! past its life is never handed over as good (a dead letter `TTLExpired` keeping the answer and
//! its cost, or solved again when asked), and a task past its caller's `ttl_ms` is dead-lettered
//! without another paid submission. Virtual time throughout: the engine takes `now` as an argument.

use std::collections::BTreeMap;
use std::time::Duration;

use captcha_dlq_core::class::{reason, ErrorClass};
use captcha_dlq_core::dlq::record::Phase;
use captcha_dlq_core::dlq::testkit::sample_journal_entry;
use captcha_dlq_core::dlq::DeadLetterRecord;
use captcha_dlq_core::engine::{Action, EngineConfig, Expired};
use captcha_dlq_core::sim::{seed_task, Behavior, FakeService, Harness, T0};
use captcha_dlq_core::task::kinds::{decl, AnswerLife};
use captcha_dlq_core::{JobId, Solution, Task, TaskKind};

use crate::support;
use support::{drain, engine, secs};

fn solved(actions: &[Action]) -> Vec<(JobId, Solution)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Solved { job, solution, .. } => Some((*job, solution.clone())),
            _ => None,
        })
        .collect()
}

fn dead(actions: &[Action]) -> Vec<DeadLetterRecord> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::DeadLetter { record, .. } => Some(record.clone()),
            _ => None,
        })
        .collect()
}

fn image_task() -> captcha_dlq_core::ValidTask {
    Task::from_json_value(serde_json::json!({"type": "image", "body": "aGVsbG8gd29ybGQ="})).unwrap()
}

#[test]
fn every_kind_declares_its_answers_life_with_a_source() {
    let ms = |kind: TaskKind| decl(kind).life.ms();
    assert_eq!(ms(TaskKind::RecaptchaV2), Some(120_000), "reCAPTCHA: two minutes");
    assert_eq!(ms(TaskKind::RecaptchaV3), Some(120_000));
    assert_eq!(ms(TaskKind::Turnstile), Some(300_000), "Turnstile: 300 s");
    assert_eq!(ms(TaskKind::Image), None, "a recognised text does not expire");
    assert_eq!(ms(TaskKind::Text), None);
    for kind in TaskKind::ALL {
        match decl(kind).life {
            AnswerLife::Expires { ms, doc, .. } => {
                assert!(ms >= 1000 && doc.starts_with("https://"), "{kind:?}: {ms} ms, source {doc}")
            }
            AnswerLife::Never { why } => assert!(!why.is_empty(), "{kind:?} says why it does not expire"),
        }
    }
}

#[test]
fn a_fresh_answer_carries_when_it_was_solved_and_when_it_expires() {
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(|_| Behavior::SolveAfter(secs(20))));
    let token = h.submit(seed_task(0), &[]);
    let image = h.submit(image_task(), &[]);
    h.run();
    let of = |job: JobId| h.solved.iter().find(|(j, ..)| *j == job).map(|(_, _, s, at)| (s.clone(), *at)).unwrap();
    let (answer, at) = of(token);
    assert_eq!(answer.solved_at, Some(at.as_unix_millis()), "solved when the engine received it");
    assert_eq!(answer.expires_at, Some(at.as_unix_millis() + 120_000), "its kind's life after that");
    let (recognised, at) = of(image);
    assert_eq!((recognised.solved_at, recognised.expires_at), (Some(at.as_unix_millis()), None));
}

/// Issue 43's check: a recover three minutes after a kill hands over 0 reCAPTCHA tokens as good;
/// each is a dead letter `TTLExpired` with its cost and its answer.
#[test]
fn a_recover_three_minutes_after_a_kill_hands_over_no_recaptcha_token_as_good() {
    let mut e = engine();
    let solved_at = T0.add(secs(30));
    let entries: Vec<_> = (0..5)
        .map(|i| {
            let mut entry = sample_journal_entry(&format!("01JD7Z6Q8V3K9R2M4N5P6Q7R0{i}"), 1);
            let mut answer = Solution { cost: Some(0.00299), ..Solution::text(format!("03AGdBq2-token-{i}")) };
            answer.stamp(solved_at, decl(TaskKind::RecaptchaV2).life.ms());
            entry.solution = Some(answer);
            entry.updated_at = solved_at;
            entry
        })
        .collect();
    // The process was killed right after the answers were written; recover runs 3 minutes later.
    let now = solved_at.add(secs(180));
    for entry in entries.clone() {
        e.recover(entry, now);
    }
    let actions = drain(&mut e, now);
    assert!(solved(&actions).is_empty(), "no token handed over as good: {:?}", solved(&actions));
    assert!(!actions.iter().any(|a| matches!(a, Action::Send { .. })), "nothing asked of (or paid to) the provider");
    let records = dead(&actions);
    assert_eq!(records.len(), 5, "each token is a dead letter");
    for (record, entry) in records.iter().zip(&entries) {
        assert_eq!((record.reason.as_str(), record.class), (reason::TTL_EXPIRED, ErrorClass::TaskTerminal));
        assert_eq!(record.history.last().map(|h| h.phase), Some(Phase::Recover));
        let kept = record.solution.as_ref().expect("the answer is kept in the record");
        assert_eq!(Some(kept), entry.solution.as_ref(), "the answer as it was paid for");
        assert_eq!(kept.cost, Some(0.00299), "with its cost");
        assert!(record.description.contains("expired"), "{}", record.description);
    }
    // The same recover within the tokens' life hands them over.
    let mut e = engine();
    let early = solved_at.add(secs(119));
    for entry in entries.clone() {
        e.recover(entry, early);
    }
    assert_eq!(solved(&drain(&mut e, early)).len(), 5, "a token within its life is handed over");
}

#[test]
fn resolve_expired_submits_the_task_again_and_an_image_answer_never_expires() {
    let mut e = engine();
    let mut entry = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 1);
    let mut answer = Solution::text("03AGdBq2-old");
    answer.stamp(T0, decl(TaskKind::RecaptchaV2).life.ms());
    entry.solution = Some(answer);
    let now = T0.add(secs(600));
    let job = e.recover_with(entry.clone(), Expired::Resolve, now);
    let first = drain(&mut e, now);
    assert!(solved(&first).is_empty() && dead(&first).is_empty(), "neither handed over nor dead-lettered");
    let sent: Vec<_> = first
        .iter()
        .filter_map(|a| match a {
            Action::Send { request, .. } => Some(request.endpoint().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(sent, ["/in.php"], "a new submission (the provider's task holds only the expired answer)");
    assert_eq!(e.job_record_id(job), Some(entry.id.as_str()), "under the same record id");

    // An answer of a kind that does not expire is handed over however old (it was paid for).
    let mut e = engine();
    entry.task = image_task();
    let mut text = Solution::text("hello world");
    text.stamp(T0, decl(TaskKind::Image).life.ms());
    entry.solution = Some(text.clone());
    let late = T0.add(secs(24 * 3600));
    e.recover(entry, late);
    let got = solved(&drain(&mut e, late));
    assert_eq!(got.iter().map(|(_, s)| s.clone()).collect::<Vec<_>>(), [text]);
}

#[test]
fn an_answer_written_before_answers_carried_their_time_lives_from_its_entrys_last_write() {
    let mut e = engine();
    let mut entry = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 1);
    entry.solution = Some(Solution::text("03AGdBq2-unstamped"));
    let now = entry.updated_at.add(secs(121));
    e.recover(entry.clone(), now);
    let records = dead(&drain(&mut e, now));
    assert_eq!(records.len(), 1);
    let kept = records[0].solution.as_ref().unwrap();
    assert_eq!(kept.solved_at, Some(entry.updated_at.as_unix_millis()));
    assert_eq!(records[0].reason, reason::TTL_EXPIRED);
}

#[test]
fn a_task_past_its_callers_ttl_is_dead_lettered_and_never_submitted_again() {
    // Unsolvable after 5 s: without a ttl it would be submitted again (max_attempts 3).
    let unsolvable = Behavior::Unsolvable { after: secs(5) };
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(move |_| unsolvable.clone()));
    h.keep_logs = true;
    let job = h.engine.submit_wanted(seed_task(0), BTreeMap::new(), None, Some(secs(8)), h.now).unwrap();
    h.run();
    let (_, record) = h.dead.iter().find(|(j, _)| *j == job).expect("a dead letter");
    assert_eq!((record.reason.as_str(), record.class), (reason::TTL_EXPIRED, ErrorClass::TaskTerminal));
    assert!(record.description.contains("ttl_ms"), "{}", record.description);
    assert!(h.solved.is_empty());
    let submits = h.sends_to("/in.php").len();
    assert_eq!(submits as u32, record.attempts, "every paid submission is counted");
    assert!(h.sends_to("/in.php").iter().all(|(at, _)| *at < T0.add(secs(8))), "nothing is sent past the ttl");
}

#[test]
fn a_task_unsent_when_its_ttl_runs_out_goes_to_the_dlq_unpaid() {
    let mut e = engine();
    e.set_store_available(false);
    let job = e.submit_wanted(seed_task(0), BTreeMap::new(), None, Some(secs(30)), T0).unwrap();
    drain(&mut e, T0);
    e.journaled(job, T0);
    assert!(!drain(&mut e, T0.add(secs(29))).iter().any(|a| matches!(a, Action::Send { .. })));
    let at = e.poll_timeout().expect("the ttl is a deadline");
    assert_eq!(at, T0.add(secs(30)));
    let records = dead(&drain(&mut e, at));
    assert_eq!(records.len(), 1);
    assert_eq!((records[0].reason.as_str(), records[0].attempts), (reason::TTL_EXPIRED, 0));
    assert!(e.submit_wanted(seed_task(1), BTreeMap::new(), None, Some(Duration::ZERO), T0).is_err());
}

#[test]
fn a_journal_entry_found_past_its_callers_ttl_is_not_resumed() {
    let mut e = engine();
    let mut entry = sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 1);
    entry.wanted_until = Some(entry.updated_at.add(secs(10)));
    let now = entry.updated_at.add(secs(11));
    e.recover(entry, now);
    let actions = drain(&mut e, now);
    assert!(!actions.iter().any(|a| matches!(a, Action::Send { .. })), "not polled, not submitted");
    assert_eq!(dead(&actions).iter().map(|r| r.reason.clone()).collect::<Vec<_>>(), [reason::TTL_EXPIRED]);
}
