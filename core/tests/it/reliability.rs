//! The engine's side of "nothing lost, nothing paid twice": the journal gates the first
//! submission, a store outage holds submissions, answers carry the entry that makes them
//! durable, replays are journaled, an unreachable provider fails fast, and a submission
//! whose answer was lost counts as an attempt. Virtual time throughout.

use std::collections::BTreeMap;
use std::time::Duration;

use captcha_dlq_core::class::{reason, ErrorClass};
use captcha_dlq_core::dlq::testkit::sample_record;
use captcha_dlq_core::engine::{Action, EngineConfig, Event};
use captcha_dlq_core::sim::{seed_task, Behavior, FakeService, Fault, Harness, T0};
use captcha_dlq_core::{Engine, JobId, JournalEntry, Solution, Timestamp};

use crate::support;
use support::{drain, engine, secs};

fn sends(actions: &[Action]) -> usize {
    actions.iter().filter(|a| matches!(a, Action::Send { .. })).count()
}

fn gate_of(actions: &[Action]) -> (JournalEntry, JobId) {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Journal { entry, gates: Some(job) } => Some((entry.clone(), *job)),
            _ => None,
        })
        .expect("a journal write gating the job")
}

/// Answers the request the engine sends at `now` with `body` (HTTP 200).
fn answer_the_request(engine: &mut Engine, body: &str, now: Timestamp) {
    let request_id = drain(engine, now)
        .iter()
        .find_map(|a| match a {
            Action::Send { request_id, .. } => Some(*request_id),
            _ => None,
        })
        .expect("a request to answer");
    engine.handle_response(request_id, Ok(captcha_dlq_core::HttpResponse::new(200, body)), now);
}

#[test]
fn nothing_is_sent_before_the_journal_entry_is_written() {
    let mut e = engine();
    let job = e.submit(seed_task(0), BTreeMap::new(), Some("batch:x/line:1".into()), T0).unwrap();
    let first = drain(&mut e, T0);
    let (entry, gated) = gate_of(&first);
    assert_eq!(gated, job);
    assert_eq!(entry.key.as_deref(), Some("batch:x/line:1"), "the caller's key travels in the entry");
    assert!(entry.provider_task_id.is_none() && entry.solution.is_none());
    assert_eq!(sends(&first), 0, "the submission waits for the entry");
    assert_eq!(sends(&drain(&mut e, T0.add(secs(60)))), 0, "however long the write takes");
    assert!(e.journaled(job, T0.add(secs(60))));
    assert_eq!(sends(&drain(&mut e, T0.add(secs(60)))), 1);
    assert!(!e.journaled(job, T0.add(secs(61))), "confirming twice changes nothing");
}

#[test]
fn a_job_whose_entry_cannot_be_written_is_withdrawn_without_a_trace() {
    let mut e = engine();
    let job = e.submit(seed_task(0), BTreeMap::new(), None, T0).unwrap();
    drain(&mut e, T0);
    assert!(e.withdraw(job));
    let after = drain(&mut e, T0.add(secs(700)));
    assert!(after.iter().all(|a| matches!(a, Action::Event(_))), "no send, no answer, no dead letter: {after:?}");
    assert_eq!(e.job_count(), 0);
    assert!(!e.withdraw(job), "once");
}

#[test]
fn a_store_outage_holds_submissions_but_not_polls() {
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(|_| Behavior::SolveAfter(secs(20))));
    h.submit(seed_task(0), &[]);
    h.run_until(Some(T0.add(secs(1))));
    assert_eq!(h.sends_to("/in.php").len(), 1);
    h.engine.set_store_available(false);
    h.submit(seed_task(1), &[]);
    h.run_until(Some(T0.add(secs(40))));
    assert_eq!(h.sends_to("/in.php").len(), 1, "no new submission while the store is down");
    assert_eq!(h.solved.len(), 1, "the task already submitted was polled and solved");
    h.engine.set_store_available(true);
    h.run();
    assert_eq!(h.sends_to("/in.php").len(), 2);
    assert_eq!(h.solved.len(), 2);
}

#[test]
fn tasks_waiting_for_a_store_that_stays_down_are_let_go_not_held_to_their_deadline() {
    let mut e = engine();
    let never_sent = e.submit(seed_task(0), BTreeMap::new(), None, T0).unwrap();
    drain(&mut e, T0);
    assert!(e.journaled(never_sent, T0));
    e.set_store_available(false);
    assert_eq!(sends(&drain(&mut e, T0.add(secs(1)))), 0, "held while the store is down");
    let released = e.release_unsent(secs(60), T0.add(secs(60)));
    assert_eq!(released, vec![never_sent], "never sent: let go, nothing to dead-letter");
    assert_eq!(e.job_count(), 0);
    let after = drain(&mut e, T0.add(secs(61)));
    assert!(after.iter().all(|a| matches!(a, Action::Event(_))), "no send, no dead letter: {after:?}");
}

#[test]
fn a_task_sent_before_that_waits_on_a_down_store_is_dead_lettered_as_store_unavailable() {
    let unsolvable = Behavior::Unsolvable { after: secs(5) };
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(move |_| unsolvable.clone()));
    h.submit(seed_task(0), &[]);
    h.run_until(Some(T0.add(secs(1))));
    assert_eq!(h.sends_to("/in.php").len(), 1, "sent once");
    h.engine.set_store_available(false);
    // The first poll finds it unsolvable; the retry waits for the store.
    h.run_until(Some(T0.add(secs(60))));
    assert_eq!(h.sends_to("/in.php").len(), 1, "not sent again while the store is down");
    assert!(h.dead.is_empty() && h.engine.job_count() == 1, "held, not ended");
    let now = T0.add(secs(60));
    assert!(h.engine.release_unsent(secs(29), now).is_empty(), "it was sent before: dead-lettered, not dropped");
    h.run_until(Some(now.add(secs(1))));
    let (_, record) = h.dead.first().expect("a dead letter");
    assert_eq!((record.reason.as_str(), record.class), (reason::STORE_UNAVAILABLE, ErrorClass::Transient));
    assert!(record.description.contains("did not answer for 29 s"), "{}", record.description);
}

#[test]
fn an_answer_comes_with_the_entry_that_makes_it_durable() {
    let mut e = engine();
    let mut labels = BTreeMap::new();
    labels.insert("job".to_string(), "scrape-42".to_string());
    let job = e.submit(seed_task(0), labels, Some("k1".into()), T0).unwrap();
    let (_, _) = gate_of(&drain(&mut e, T0));
    e.journaled(job, T0);
    answer_the_request(&mut e, r#"{"status":1,"request":"777"}"#, T0);
    drain(&mut e, T0);
    let at = T0.add(secs(16));
    answer_the_request(&mut e, r#"{"status":1,"request":"TOKEN"}"#, at);
    let done = drain(&mut e, at);
    let (solution, persist) = done
        .iter()
        .find_map(|a| match a {
            Action::Solved { job: j, solution, persist, .. } if *j == job => Some((solution.clone(), persist.clone())),
            _ => None,
        })
        .expect("solved");
    let entry = persist.expect("the entry to write before handing the answer over");
    assert_eq!(entry.solution.as_ref(), Some(&solution));
    assert_eq!(entry.provider_task_id.as_deref(), Some("777"));
    assert_eq!((entry.key.as_deref(), entry.labels.get("job")), (Some("k1"), Some("scrape-42")));
    assert!(
        !done.iter().any(|a| matches!(a, Action::Journal { .. })),
        "no other journal write: the driver forgets it after the hand-off"
    );
}

#[test]
fn a_recovered_entry_with_an_answer_is_handed_over_without_asking_the_provider() {
    let mut e = engine();
    let mut entry = captcha_dlq_core::dlq::testkit::sample_journal_entry("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 1);
    let mut solution = Solution::text("03AGdBq24-token");
    solution.provider_task_id = entry.provider_task_id.clone();
    solution.stamp(entry.updated_at, Some(120_000));
    entry.solution = Some(solution.clone());
    // Within the token's life (an answer past it is a dead letter: core/tests/it/answer_expiry.rs).
    let now = entry.updated_at.add(secs(100));
    for resume in [true, false] {
        let job = if resume { e.recover(entry.clone(), now) } else { e.interrupt(entry.clone(), now) };
        let actions = drain(&mut e, now);
        assert_eq!(sends(&actions), 0);
        let got = actions.iter().find_map(|a| match a {
            Action::Solved { job: j, id, solution, persist, .. } if *j == job => {
                Some((id.clone(), solution.clone(), persist.is_none()))
            }
            _ => None,
        });
        assert_eq!(
            got,
            Some((entry.id.clone(), solution.clone(), true)),
            "resume={resume}: same id, same answer, nothing to rewrite"
        );
    }
}

#[test]
fn a_replay_is_journaled_under_its_record_id_and_settles_its_lease() {
    let mut e = engine();
    let record = sample_record("01JD7Z6Q8V3K9R2M4N5P6Q7R8S", 0);
    let job = e.replay(record.clone(), 1, T0).unwrap();
    let (entry, gated) = gate_of(&drain(&mut e, T0));
    assert_eq!(
        (gated, entry.id.as_str(), entry.replay_of.as_deref()),
        (job, record.id.as_str(), Some(record.id.as_str()))
    );
    e.dead_letter(job, "MyReason", "given up by the application", T0);
    let pushed = drain(&mut e, T0).into_iter().find_map(|a| match a {
        Action::DeadLetter { push, .. } => Some(push),
        _ => None,
    });
    assert_eq!(pushed, Some(false), "the replayer settles its own lease");
    // Found in the journal after a restart, the lease is gone: the dead letter is pushed.
    let job = e.recover(entry, T0.add(secs(5)));
    e.dead_letter(job, "MyReason", "given up", T0.add(secs(5)));
    let pushed = drain(&mut e, T0.add(secs(5))).into_iter().find_map(|a| match a {
        Action::DeadLetter { push, .. } => Some(push),
        _ => None,
    });
    assert_eq!(pushed, Some(true));
}

#[test]
fn a_provider_that_never_answered_fails_fast_as_network() {
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(20)));
    service.always = Some(Fault::Refused);
    let mut h = Harness::new(EngineConfig::default(), service);
    for i in 0..20 {
        h.submit(seed_task(i), &[]);
    }
    h.run_until(Some(T0.add(secs(10))));
    assert_eq!(h.dead.len(), 20, "every task dead-lettered within seconds, not at the 10-minute deadline");
    for (_, r) in &h.dead {
        assert_eq!((r.reason.as_str(), r.class), (reason::NETWORK, ErrorClass::Transient), "{r:?}");
        assert!(
            r.description.contains("cannot be reached") || r.description.contains("connection refused"),
            "{}",
            r.description
        );
        assert_eq!(r.attempts, 0, "a refused connection never reached the service");
    }
    assert!(h.sends_to("/in.php").len() <= 5, "at most a few submissions were tried: {}", h.sends_to("/in.php").len());
    let opened: Vec<_> = h.events.iter().filter(|(_, e)| matches!(e, Event::CircuitOpened { .. })).collect();
    assert_eq!(opened.len(), 1, "one clear line when the circuit opens");
    match &opened[0].1 {
        Event::CircuitOpened { cause, until: Some(_), .. } => assert!(cause.contains("cannot be reached"), "{cause}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_circuit_probes_again_and_a_new_task_finds_the_provider_back() {
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(20)));
    service.always = Some(Fault::Refused);
    let mut h = Harness::new(EngineConfig::default(), service);
    h.submit(seed_task(0), &[]);
    h.run_until(Some(T0.add(secs(10))));
    assert_eq!(h.dead.len(), 1);
    h.service.always = None;
    h.now = T0.add(secs(45)); // past break_ms (30 s): half-open
    h.submit(seed_task(1), &[]);
    h.run();
    assert_eq!(h.solved.len(), 1, "the probe went through and the task was solved");
    assert!(h.events.iter().any(|(_, e)| matches!(e, Event::CircuitHalfOpen { .. })));
    assert!(h.events.iter().any(|(_, e)| matches!(e, Event::CircuitClosed { .. })));
}

#[test]
fn a_provider_that_answered_before_gets_the_longer_window() {
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(|_| Behavior::SolveAfter(secs(20))));
    h.submit(seed_task(0), &[]);
    h.run();
    assert_eq!(h.solved.len(), 1);
    h.service.submit_faults = std::iter::repeat_n(Fault::Refused, 3).collect();
    h.submit(seed_task(1), &[]);
    h.run();
    assert_eq!(h.solved.len(), 2, "three quick refusals from a service that answered before are retried");
    assert!(h.dead.is_empty());
}

#[test]
fn a_submission_whose_answer_was_lost_counts_as_an_attempt() {
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(|_| Behavior::SolveAfter(secs(20))));
    h.submit(seed_task(0), &[]);
    h.run();
    h.service.submit_faults = std::iter::repeat_n(Fault::Timeout, 10).collect();
    h.submit(seed_task(1), &[]);
    h.run();
    let record = &h.dead.last().expect("dead-lettered").1;
    assert_eq!(record.reason, reason::NETWORK);
    assert_eq!(record.attempts, 4, "every timed-out submission may have been paid: at most max_attempts of them");
    assert_eq!(h.sends_to("/in.php").len(), 1 + 4);
}

#[test]
fn deadline_description_reads_whole() {
    let mut config = EngineConfig::default();
    config.retry.task_deadline_ms = 30_000;
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::NeverReady));
    h.submit(seed_task(0), &[]);
    h.run();
    let d = &h.dead[0].1.description;
    assert!(d.contains("(1 submission(s); ") && d.contains(" poll(s) of the last one)"), "{d}");
}

/// Ten tasks submitted for an account the provider refuses (`ERROR_KEY_DOES_NOT_EXIST`) until
/// `service.account_error` is cleared; the tasks are held `hold_s` at most, the balance probed
/// every 60 s, two submissions a second.
fn ten_tasks_of_a_refused_account(hold_s: u64) -> Harness {
    let mut config = EngineConfig::default();
    config.circuit.account_hold_ms = hold_s * 1000;
    // A key error holds only when asked (a zero balance holds by default).
    config.circuit.hold_account_errors = true;
    config.circuit.account_probe_ms = 60_000;
    config.rate.submits_per_second = 2.0;
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(20)));
    service.account_error = Some("ERROR_KEY_DOES_NOT_EXIST");
    let mut h = Harness::new(config, service);
    for i in 0..10 {
        h.submit(seed_task(i), &[]);
    }
    h
}

#[test]
fn an_account_error_holds_the_tasks_and_a_top_up_resumes_them_without_a_storm() {
    let mut h = ten_tasks_of_a_refused_account(600);
    h.run_until(Some(T0.add(secs(150))));
    assert!(h.dead.is_empty(), "nothing dead-lettered while the hold lasts: {:?}", h.dead);
    assert_eq!(h.sends_to("/in.php").len(), 1, "one refused submission, the others wait");
    assert!(h.events.iter().any(|(_, e)| matches!(e, Event::AccountHold { .. })));
    let probes_while_broken = h.service.log.iter().filter(|s| s.endpoint == "/res.php" && s.subject == [""]).count();
    assert_eq!(probes_while_broken, 2, "the balance is checked every 60 s");
    h.service.account_error = None; // topped up
    h.run();
    assert_eq!(h.solved.len(), 10, "every task solved once the account works");
    assert!(h.dead.is_empty());
    let submits: Vec<Timestamp> = h.sends_to("/in.php").iter().map(|(t, _)| *t).collect();
    assert_eq!(submits.len(), 11);
    for pair in submits[1..].windows(2) {
        assert!(pair[1].since(pair[0]) >= Duration::from_millis(500), "resumed at the submit rate, not in a burst");
    }
    assert!(submits[1] >= T0.add(secs(180)), "resumed after the probe that saw the top-up");
}

#[test]
fn a_hold_that_runs_out_dead_letters_the_waiting_tasks_as_before() {
    let mut h = ten_tasks_of_a_refused_account(300);
    h.run();
    assert_eq!(h.dead.len(), 10);
    assert!(h.dead.iter().all(|(_, r)| r.reason == reason::CIRCUIT_OPEN && r.class == ErrorClass::AccountTerminal));
    let ended = h.dead.iter().map(|(_, r)| r.dead_lettered_at).max().unwrap();
    assert_eq!(ended, T0.add(secs(300)).max(ended), "at the end of the hold");
    assert!(ended >= T0.add(secs(300)));
    assert_eq!(h.sends_to("/in.php").len(), 1, "nothing more was sent to a broken account");
    // New tasks after the hold are dead-lettered at once, as without hold mode, until reset.
    h.submit(seed_task(99), &[]);
    h.run();
    assert_eq!(h.dead.len(), 11);
    h.engine.reset_circuit();
    h.service.account_error = None;
    h.submit(seed_task(100), &[]);
    h.run();
    assert_eq!(h.solved.len(), 1, "reset_circuit still works");
}
