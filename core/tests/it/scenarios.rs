//! Virtual-time scenarios: the engine against a simulated v1 service.
//! Minutes of polling and backoff run in microseconds, identically every run.

use std::time::Duration;

use captcha_dlq_core::class::{reason, ErrorClass};
use captcha_dlq_core::dlq::record::Phase;
use captcha_dlq_core::engine::{Backoff, Cancelled, EngineConfig, Event, PauseScope};
use captcha_dlq_core::sim::{seed_task, Behavior, FakeService, Fault, Harness, KEY, T0};

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// The seeds' service: page 2 is unsolvable, page 4 is never ready, the rest solve in 20 s.
fn seeds_service() -> FakeService {
    FakeService::new(|page| {
        if page.ends_with("/page/2") {
            Behavior::Unsolvable { after: secs(20) }
        } else if page.ends_with("/page/4") {
            Behavior::NeverReady
        } else {
            Behavior::SolveAfter(secs(20))
        }
    })
}

#[test]
fn seeds_batch_three_solved_two_dead_lettered_with_four_attempts_then_replayed() {
    // Four reCAPTCHA attempts of 320 s each (2captcha works up to 300 s on one) need more than
    // the default 10-minute task deadline.
    let mut config = EngineConfig::default();
    config.retry.task_deadline_ms = 30 * 60 * 1000;
    let mut h = Harness::new(config, seeds_service());
    let jobs: Vec<_> = (0..5).map(|i| h.submit(seed_task(i), &[("job", "scrape-42")])).collect();
    h.run();

    let solved_pages: Vec<_> = h.solved.iter().map(|(job, ..)| jobs.iter().position(|j| j == job).unwrap()).collect();
    let mut sorted = solved_pages.clone();
    sorted.sort();
    assert_eq!(sorted, vec![0, 1, 3]);
    for (_, _, solution, _) in &h.solved {
        assert!(solution.text.starts_with("03AGdBq2"), "token {:?}", solution.text);
        assert!(solution.provider_task_id.is_some());
    }

    assert_eq!(h.dead.len(), 2);
    let unsolvable = &h.dead.iter().find(|(j, _)| *j == jobs[2]).expect("page 2 dead-lettered").1;
    assert_eq!(unsolvable.reason, "ERROR_CAPTCHA_UNSOLVABLE");
    assert_eq!(unsolvable.class, ErrorClass::TaskTerminal);
    assert_eq!(unsolvable.attempts, 4);
    assert_eq!(unsolvable.history.len(), 4);
    assert!(unsolvable.history.iter().all(|e| e.phase == Phase::Poll && e.provider_task_id.is_some()));
    assert_eq!(unsolvable.labels.get("job").map(String::as_str), Some("scrape-42"));
    assert_eq!(unsolvable.task.page_url(), Some("https://example.com/page/2"));
    assert_eq!(unsolvable.first_failed_at, unsolvable.history[0].at);
    assert!(unsolvable.dead_lettered_at > unsolvable.first_failed_at);

    let never_ready = &h.dead.iter().find(|(j, _)| *j == jobs[4]).expect("page 4 dead-lettered").1;
    assert_eq!(never_ready.reason, reason::TIMEOUT);
    assert_eq!(never_ready.attempts, 4);
    assert!(never_ready.description.contains("timed out"), "{}", never_ready.description);
    // 20 polls per attempt, never more (2captcha bans clients that poll more).
    let pid = never_ready.history[0].provider_task_id.clone().unwrap();
    let polls_of_first = h.service.log.iter().filter(|s| s.endpoint == "/res.php" && s.subject.contains(&pid)).count();
    assert_eq!(polls_of_first, 20);

    // Nothing left in flight, nothing in the journal, the key nowhere in a record.
    assert_eq!(h.engine.job_count(), 0);
    assert!(h.journal.is_empty(), "journal left: {:?}", h.journal.keys());
    for (_, r) in &h.dead {
        assert!(!serde_json::to_string(r).unwrap().contains(KEY));
    }

    // Replay once the service behaves: both recover, keeping their history and counting the replay.
    h.service.behavior = Box::new(|_| Behavior::SolveAfter(secs(20)));
    let records: Vec<_> = h.dead.drain(..).map(|(_, r)| r).collect();
    let before = h.solved.len();
    let replayed: Vec<_> = records.iter().map(|r| h.engine.replay(r.clone(), 2, h.now).unwrap()).collect();
    h.run();
    assert_eq!(h.solved.len(), before + 2);
    assert!(h.dead.is_empty());
    for job in replayed {
        assert!(h.solved.iter().any(|(j, ..)| *j == job));
    }
}

#[test]
fn a_failed_replay_keeps_counting_attempts_and_replays() {
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(|_| Behavior::Unsolvable { after: secs(10) }));
    h.submit(seed_task(2), &[]);
    h.run();
    let record = h.dead.pop().unwrap().1;
    assert_eq!((record.attempts, record.replays), (4, 0));
    h.engine.replay(record, 2, h.now).unwrap();
    h.run();
    let again = h.dead.pop().unwrap().1;
    assert_eq!((again.attempts, again.replays), (6, 1), "two more attempts on replay, one replay");
    assert_eq!(again.history.len(), 6);
    assert!(h.journal.is_empty(), "replays are not journaled: their record stays leased in the DLQ");
}

#[test]
fn the_same_scenario_runs_the_same_way_twice() {
    let run = || {
        let mut h = Harness::new(EngineConfig::default(), seeds_service());
        for i in 0..5 {
            h.submit(seed_task(i), &[]);
        }
        h.run();
        (h.events, h.now)
    };
    assert_eq!(run(), run());
}

#[test]
fn no_slot_available_halves_concurrency_and_delays_that_task_at_least_five_seconds() {
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(15)));
    service.submit_faults.extend([Fault::Code("ERROR_NO_SLOT_AVAILABLE"), Fault::Code("ERROR_NO_SLOT_AVAILABLE")]);
    let mut config = EngineConfig::default();
    config.rate.max_in_flight = 8;
    let mut h = Harness::new(config, service);
    for i in 0..10 {
        h.submit(seed_task(i), &[]);
    }
    h.run();
    assert_eq!(h.solved.len(), 10, "dead: {:?}", h.dead);

    let limits: Vec<u32> = h
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::ConcurrencyChanged { limit, .. } => Some(*limit),
            _ => None,
        })
        .collect();
    assert_eq!(&limits[..2], &[4, 2], "halved twice: {limits:?}");
    assert!(limits.contains(&8), "grew back to the maximum: {limits:?}");

    // Each refused page is sent again only after at least the 5 s the code asks for.
    let submits = h.service.log.iter().filter(|s| s.endpoint == "/in.php").collect::<Vec<_>>();
    for refused in submits.iter().filter(|s| s.answered_with_fault) {
        let next = submits.iter().find(|s| s.at > refused.at && s.subject == refused.subject).expect("resubmitted");
        assert!(next.at.since(refused.at) >= secs(5), "resubmitted after {:?}", next.at.since(refused.at));
    }
    // Submissions are spaced by the rate limit (10/s by default).
    for pair in submits.windows(2) {
        assert!(pair[1].at.since(pair[0].at) >= Duration::from_millis(100));
    }
}

#[test]
fn max_user_turn_pauses_every_submission_for_ten_seconds() {
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(15)));
    service.submit_faults.push_back(Fault::Code("MAX_USER_TURN"));
    let mut h = Harness::new(EngineConfig::default(), service);
    for i in 0..3 {
        h.submit(seed_task(i), &[]);
    }
    h.run();
    assert_eq!(h.solved.len(), 3);
    let submits: Vec<_> = h.service.log.iter().filter(|s| s.endpoint == "/in.php").collect();
    assert!(submits[0].answered_with_fault);
    assert!(submits[1..].iter().all(|s| s.at.since(submits[0].at) >= secs(10)), "no submission during the pause");
    assert!(h.events.iter().any(|(_, e)| matches!(e, Event::Paused { scope: PauseScope::Submits, .. })));
}

#[test]
fn an_account_error_stops_all_sending_after_the_first_failing_request() {
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(15)));
    service.always = Some(Fault::Code("ERROR_WRONG_USER_KEY"));
    let mut h = Harness::new(EngineConfig::default(), service);
    for i in 0..20 {
        h.submit(seed_task(i), &[]);
    }
    h.run();
    assert_eq!(h.service.log.len(), 1, "exactly one request reached the service");
    assert_eq!(h.dead.len(), 20);
    assert_eq!(h.dead.iter().filter(|(_, r)| r.reason == "ERROR_WRONG_USER_KEY").count(), 1);
    assert_eq!(h.dead.iter().filter(|(_, r)| r.reason == reason::CIRCUIT_OPEN).count(), 19);
    assert!(h.dead.iter().all(|(_, r)| r.class == ErrorClass::AccountTerminal));
    assert_eq!(h.engine.account_failure().map(|f| f.code.as_str()), Some("ERROR_WRONG_USER_KEY"));
    let opened = h.events.iter().filter(|(_, e)| matches!(e, Event::CircuitOpened { .. })).count();
    assert_eq!(opened, 1, "one clear signal, not one per task");

    // Later submissions are dead-lettered without a request, until the application resets.
    h.submit(seed_task(99), &[]);
    h.run();
    assert_eq!(h.service.log.len(), 1);
    assert_eq!(h.dead.last().unwrap().1.reason, reason::CIRCUIT_OPEN);

    h.service.always = None;
    h.engine.reset_circuit();
    h.submit(seed_task(100), &[]);
    h.run();
    assert_eq!(h.solved.len(), 1);
}

#[test]
fn unparseable_answers_and_resets_are_retried_until_solved() {
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(15)));
    service.submit_faults.extend([Fault::Html502, Fault::TruncatedJson, Fault::Reset]);
    service.poll_faults.extend([Fault::Html502, Fault::TruncatedJson, Fault::Http503, Fault::Reset]);
    let mut h = Harness::new(EngineConfig::default(), service);
    for i in 0..3 {
        h.submit(seed_task(i), &[]);
    }
    h.run();
    assert_eq!(h.solved.len(), 3, "dead: {:?}", h.dead);
    assert_eq!(h.dead.len(), 0);
    // Every request answered with a fault was followed by a new request for the same page or ids.
    let log = &h.service.log;
    let faulted: Vec<_> = log.iter().enumerate().filter(|(_, s)| s.answered_with_fault).collect();
    assert_eq!(faulted.len(), 7);
    for (i, seen) in faulted {
        for subject in &seen.subject {
            assert!(
                log[i + 1..].iter().any(|later| later.endpoint == seen.endpoint && later.subject.contains(subject)),
                "{subject} was not asked for again after a fault"
            );
        }
    }
    assert!(
        !h.events.iter().any(|(_, e)| matches!(e, Event::BatchPollingDisabled { .. })),
        "one bad answer is not a pattern"
    );
}

#[test]
fn a_service_that_keeps_answering_garbage_dead_letters_with_the_precise_reason() {
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(15)));
    service.always = Some(Fault::TruncatedJson);
    let mut config = EngineConfig::default();
    config.circuit.min_calls = config.circuit.window; // keep the breaker out of this one
    config.circuit.failure_ratio = 1.0;
    config.circuit.break_ms = 1;
    let mut h = Harness::new(config, service);
    h.submit(seed_task(0), &[]);
    h.run();
    let record = &h.dead.first().expect("dead-lettered").1;
    assert_eq!(record.reason, reason::UNPARSEABLE);
    assert_eq!(record.class, ErrorClass::Transient);
    assert_eq!(record.attempts, 0, "no submission was ever accepted");
    assert_eq!(record.history.len(), 6, "the first try and five retries");
    assert!(record.history.iter().all(|e| e.phase == Phase::Submit && e.http_status == Some(200)));
}

#[test]
fn the_task_deadline_dead_letters_a_task_at_exactly_its_deadline() {
    let mut config = EngineConfig::default();
    config.retry.task_deadline_ms = 60_000;
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::NeverReady));
    h.submit(seed_task(4), &[]);
    h.run();
    let record = &h.dead.first().expect("dead-lettered").1;
    assert_eq!(record.reason, reason::TIMEOUT);
    assert_eq!(record.dead_lettered_at, T0.add(secs(60)));
    assert_eq!(record.history.last().unwrap().phase, Phase::Deadline);
    assert_eq!(record.attempts, 1);
    assert!(h.journal.is_empty());
}

#[test]
fn two_hundred_fifty_jobs_are_polled_in_batches_of_at_most_three_requests_per_round() {
    let mut config = EngineConfig::default();
    config.rate.submits_per_second = 1000.0;
    config.rate.max_in_flight = 500;
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::SolveAfter(secs(40))));
    for i in 0..250 {
        h.submit(seed_task(i), &[]);
    }
    h.run();
    assert_eq!(h.solved.len(), 250);

    let polls = h.sends_to("/res.php");
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    let mut last_at = None;
    for (at, req) in &polls {
        let ids = h.service.log.iter().find(|s| s.at == *at && s.endpoint == "/res.php").map_or(0, |_| 0);
        let _ = ids;
        let n = req.url.split("ids=").nth(1).map_or(1, |rest| rest.split('&').next().unwrap_or("").split(',').count());
        assert!(n <= 100, "a batch of {n} ids");
        match last_at {
            Some(prev) if at.since(prev) < secs(1) => rounds.last_mut().unwrap().push(n),
            _ => rounds.push(vec![n]),
        }
        last_at = Some(*at);
    }
    for round in &rounds {
        assert!(round.len() <= 3, "a round of {} poll requests: {round:?}", round.len());
    }
    // 40 s to solve, first poll at 15 s, then every ~16 s (20 polls spread over 2captcha's 320 s
    // give-up point): 3 rounds of polling.
    assert_eq!(rounds.len(), 3, "{rounds:?}");
    assert!(polls.len() <= 9, "{} poll requests for 250 tasks", polls.len());
}

#[test]
fn a_provider_that_garbles_batch_polls_is_polled_one_by_one() {
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(20)));
    service.garble_batches = true;
    let mut config = EngineConfig::default();
    config.rate.submits_per_second = 100.0;
    let mut h = Harness::new(config, service);
    for i in 0..5 {
        h.submit(seed_task(i), &[]);
    }
    h.run();
    assert_eq!(h.solved.len(), 5);
    let disabled_at = h
        .events
        .iter()
        .find_map(|(t, e)| matches!(e, Event::BatchPollingDisabled { .. }).then_some(*t))
        .expect("fell back to single polls");
    let batches: Vec<_> = h.sends_to("/res.php").into_iter().filter(|(_, r)| r.url.contains("ids=")).collect();
    assert_eq!(batches.len(), 3, "three garbled batch answers in a row before falling back");
    assert!(batches.iter().all(|(t, _)| *t < disabled_at), "no batch poll after the fallback");
    assert!(h.dead.is_empty());
}

#[test]
fn a_failure_storm_opens_the_circuit_and_only_one_probe_goes_out_while_half_open() {
    let mut service = FakeService::new(|_| Behavior::SolveAfter(secs(15)));
    service.always = Some(Fault::Http503);
    let mut config = EngineConfig::default();
    config.rate.submits_per_second = 100.0;
    config.retry.max_request_retries = 50;
    config.retry.backoff = Backoff::Fixed { delay_ms: 200 };
    let mut h = Harness::new(config, service);
    for i in 0..20 {
        h.submit(seed_task(i), &[]);
    }
    // Run through the break, then heal the service and let everything finish.
    h.run_until(Some(T0.add(secs(40))));
    let opened_at = h
        .events
        .iter()
        .find_map(|(t, e)| matches!(e, Event::CircuitOpened { until: Some(_), .. }).then_some(*t))
        .expect("circuit opened");
    let sends_during_break = h.sent.iter().filter(|(t, _)| *t > opened_at && *t < opened_at.add(secs(30))).count();
    assert_eq!(sends_during_break, 0, "nothing is sent while the circuit is open");
    let probes_at_reopen = h
        .sent
        .iter()
        .filter(|(t, _)| *t >= opened_at.add(secs(30)) && *t < opened_at.add(secs(30) + Duration::from_millis(50)))
        .count();
    assert_eq!(probes_at_reopen, 1, "half-open lets exactly one probe through");
    h.service.always = None;
    h.run();
    assert_eq!(h.solved.len(), 20, "dead: {:?}", h.dead.iter().map(|(_, r)| &r.reason).collect::<Vec<_>>());
    assert!(h.events.iter().any(|(_, e)| matches!(e, Event::CircuitClosed { .. })));
}

#[test]
fn journal_entries_are_resumed_by_polling_or_resubmitting_and_stale_ones_are_interrupted() {
    // First life: submit three tasks, stop the world after they were accepted.
    let mut first = Harness::new(EngineConfig::default(), FakeService::new(|_| Behavior::SolveAfter(secs(30))));
    first.engine = captcha_dlq_core::Engine::new(
        captcha_dlq_core::Provider::preset("captchaai").unwrap().with_base_url("https://sim.invalid").unwrap(),
        captcha_dlq_core::Secret::new(KEY),
        EngineConfig::default(),
    );
    for i in 0..3 {
        first.submit(seed_task(i), &[]);
    }
    first.run_until(Some(T0.add(secs(5))));
    assert_eq!(first.journal.len(), 3);
    assert!(first.journal.values().all(|e| e.provider_task_id.is_some()), "accepted before the crash");
    let mut entries: Vec<_> = first.journal.values().cloned().collect();
    // One entry from long ago, one never submitted.
    entries[1].updated_at = T0.add(secs(5)).add(Duration::ZERO);
    let mut never_submitted = entries[2].clone();
    never_submitted.provider_task_id = None;
    never_submitted.attempts = 0;
    entries[2] = never_submitted;
    let mut stale = entries[1].clone();
    stale.id = "01STALEENTRY0000000000000".into();
    stale.updated_at = T0.add(Duration::ZERO);
    entries.push(stale);

    // Second life, 2 minutes later for the stale check: the same service keeps the provider tasks.
    let mut second = Harness::new(
        EngineConfig::default(),
        std::mem::replace(&mut first.service, FakeService::new(|_| Behavior::NeverReady)),
    );
    second.now = T0.add(secs(12 * 60));
    for e in &entries {
        second.journal.insert(e.id.clone(), e.clone());
    }
    let submits_before = second.service.count("/in.php");
    for e in entries.iter().take(3) {
        let mut fresh = e.clone();
        fresh.updated_at = second.now;
        second.engine.recover(fresh, second.now);
    }
    second.engine.recover(entries[3].clone(), second.now);
    second.run();
    assert_eq!(second.solved.len(), 3);
    assert_eq!(second.service.count("/in.php") - submits_before, 1, "only the never-submitted one is sent again");
    assert_eq!(second.dead.len(), 1);
    assert_eq!(second.dead[0].1.reason, reason::INTERRUPTED);
    assert!(second.journal.is_empty(), "every entry settled: {:?}", second.journal.keys());
}

#[test]
fn cancel_before_sending_dead_letters_with_reason_cancelled_and_sends_nothing() {
    let mut config = EngineConfig::default();
    config.rate.submits_per_second = 1.0;
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::NeverReady));
    h.submit(seed_task(0), &[]);
    let queued = h.submit(seed_task(1), &[]);
    h.run_until(Some(T0.add(Duration::from_millis(10))));
    assert_eq!(h.sends_to("/in.php").len(), 1, "one submit per second: the second task still waits");
    assert_eq!(h.engine.cancel(queued, h.now), Cancelled::DeadLettered);
    assert_eq!(h.engine.cancel(queued, h.now), Cancelled::Unknown, "a job ends once");
    h.run_until(Some(T0.add(secs(5))));
    assert_eq!(h.sends_to("/in.php").len(), 1, "the cancelled task was never sent");
    let record = &h.dead[0].1;
    assert_eq!((record.reason.as_str(), record.class, record.attempts), (reason::CANCELLED, ErrorClass::Cancelled, 0));
}

#[test]
fn cancel_after_submission_spends_nothing_more_on_a_task_that_times_out() {
    let mut config = EngineConfig::default();
    config.polling.max_polls = 3;
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::NeverReady));
    let job = h.submit(seed_task(0), &[]);
    h.run_until(Some(T0.add(secs(16))));
    assert_eq!(h.engine.cancel(job, h.now), Cancelled::RunsOn);
    h.run();
    assert_eq!(h.sends_to("/in.php").len(), 1, "no resubmission after the attempt timed out");
    let record = &h.dead[0].1;
    assert_eq!((record.reason.as_str(), record.attempts), (reason::TIMEOUT, 1), "its own reason, not Cancelled");
}

#[test]
fn cancel_after_submission_runs_on_and_is_never_submitted_twice() {
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(|_| Behavior::SolveAfter(secs(40))));
    let job = h.submit(seed_task(0), &[]);
    h.run_until(Some(T0.add(secs(16))));
    assert_eq!(h.engine.cancel(job, h.now), Cancelled::RunsOn, "the provider is working on it");
    h.run();
    assert_eq!(h.sends_to("/in.php").len(), 1, "never resubmitted");
    assert_eq!(h.solved.len(), 1, "its answer comes in (the driver keeps it in the journal)");
    assert!(h.dead.is_empty());
}

#[test]
fn first_polls_follow_the_per_kind_schedule() {
    let mut config = EngineConfig::default();
    config.polling.first_poll_ms.set(captcha_dlq_core::TaskKind::RecaptchaV2, 17_000);
    config.polling.interval_ms = 5000;
    config.polling.coalesce_ms = 0;
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::SolveAfter(secs(30))));
    h.submit(seed_task(0), &[]);
    h.run();
    let submit_at = h.sends_to("/in.php")[0].0;
    let polls: Vec<_> = h.sends_to("/res.php").iter().map(|(t, _)| t.since(submit_at)).collect();
    let expected: Vec<Duration> =
        [17_050u64, 22_100, 27_150, 32_200].iter().map(|ms| Duration::from_millis(*ms)).collect();
    assert_eq!(polls, expected, "first poll after 17 s (+50 ms round trip), then every 5 s after each answer");
}

#[test]
fn answers_that_may_contain_a_pipe_are_never_batched() {
    let mut config = EngineConfig::default();
    config.rate.submits_per_second = 1000.0;
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::SolveAfter(secs(20))));
    let mut funcaptcha_pages = Vec::new();
    for i in 0..4 {
        h.submit(seed_task(i), &[]);
        let page = format!("https://example.com/arkose/{i}");
        let task = captcha_dlq_core::Task::from_json_value(serde_json::json!({
            "type": "funcaptcha", "publickey": "69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC", "page_url": page,
        }))
        .unwrap();
        h.engine.submit(task, Default::default(), None, h.now).unwrap();
        funcaptcha_pages.push(page);
    }
    h.run();
    assert_eq!(h.solved.len(), 8);
    // Provider ids of the FunCaptcha tasks, from what the service saw at submission.
    let submits: Vec<_> = h.service.log.iter().filter(|s| s.endpoint == "/in.php").collect();
    let mut next_id = 71_823_456u64;
    let mut funcaptcha_ids = Vec::new();
    for s in submits {
        next_id += 1;
        if funcaptcha_pages.contains(&s.subject[0]) {
            funcaptcha_ids.push(next_id.to_string());
        }
    }
    assert_eq!(funcaptcha_ids.len(), 4);
    let batches: Vec<_> = h.service.log.iter().filter(|s| s.endpoint == "/res.php" && s.subject.len() > 1).collect();
    assert!(!batches.is_empty(), "the reCAPTCHA tasks are still batched");
    for b in batches {
        assert!(b.subject.iter().all(|id| !funcaptcha_ids.contains(id)), "a FunCaptcha task rode in a batch: {b:?}");
    }
}

/// 2captcha keeps working on a reCAPTCHA v2 up to 300 s: a task it solves after 200 s is polled
/// until then (20 polls at most, the interval stretched) and never submitted (paid) twice.
#[test]
fn a_recaptcha_the_service_is_still_solving_is_not_submitted_again() {
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(|_| Behavior::SolveAfter(secs(200))));
    h.submit(seed_task(0), &[]);
    h.run();
    assert_eq!(h.solved.len(), 1);
    assert_eq!(h.sends_to("/in.php").len(), 1, "submitted once");
    let polls = h.sends_to("/res.php");
    assert!(polls.len() <= 20, "{} polls", polls.len());
    let submit_at = h.sends_to("/in.php")[0].0;
    assert!(polls.last().unwrap().0.since(submit_at) >= secs(200));
}

/// A task the service never answers is given up at the kind's give-up point (2captcha: 320 s for
/// reCAPTCHA v2) after exactly the per-task poll budget, then submitted again.
#[test]
fn an_attempt_is_given_up_at_the_services_working_time_within_the_poll_budget() {
    let mut config = EngineConfig::default();
    config.retry.max_attempts = 2;
    config.retry.task_deadline_ms = 30 * 60 * 1000;
    let give_up = config.polling.give_up_ms.ms(captcha_dlq_core::TaskKind::RecaptchaV2);
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::NeverReady));
    h.submit(seed_task(0), &[]);
    h.run();
    let submits: Vec<_> = h.sends_to("/in.php").iter().map(|(t, _)| *t).collect();
    assert_eq!(submits.len(), 2);
    let first_attempt: Vec<_> =
        h.sends_to("/res.php").iter().filter(|(t, _)| *t < submits[1]).map(|(t, _)| *t).collect();
    assert_eq!(first_attempt.len(), 20, "the 2captcha per-task poll budget");
    let last_poll = first_attempt.last().unwrap().since(submits[0]);
    assert!(last_poll >= Duration::from_millis(give_up), "last poll {last_poll:?} before the give-up point");
    assert!(last_poll < Duration::from_millis(give_up + 5_000), "last poll {last_poll:?} long after the give-up point");
    let record = &h.dead[0].1;
    assert_eq!((record.reason.as_str(), record.attempts), (reason::TIMEOUT, 2));
    assert!(record.description.contains("given up after 320 s"), "{}", record.description);
}

/// Tasks accepted one by one over ten seconds come due one by one: a round waits up to the
/// coalescing window for those due just after it, so they are polled in half as many rounds,
/// and none is polled more than that window after it was due.
#[test]
fn polls_of_tasks_coming_due_over_time_wait_for_riders_within_the_window() {
    let config = EngineConfig::default();
    let (first_poll, window) = (secs(15), Duration::from_millis(config.polling.coalesce_ms));
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::SolveAfter(secs(10))));
    for i in 0..100 {
        h.submit(seed_task(i), &[]);
        let next = h.now.add(Duration::from_millis(100));
        h.run_until(Some(next));
    }
    h.run();
    assert_eq!(h.solved.len(), 100);
    // Due from about 15 s to 25 s: rounds 2 windows apart (at 17.5 s and 22.6 s), where
    // rounds 1 window apart would take four.
    let polls = h.sends_to("/res.php");
    assert_eq!(polls.len(), 2, "{:?}", polls.iter().map(|(at, _)| at.since(T0)).collect::<Vec<_>>());
    let accepted: std::collections::BTreeMap<_, _> = h
        .events
        .iter()
        .filter_map(|(at, e)| match e {
            Event::Submitted { job, .. } => Some((*job, *at)),
            _ => None,
        })
        .collect();
    for (job, _, _, solved_at) in &h.solved {
        let due = accepted[job].add(first_poll);
        assert!(*solved_at <= due.add(window).add(h.latency), "{job} due at {due:?}, solved at {solved_at:?}");
    }
}

/// A task with nothing due soon after it is polled when due, not held for riders.
#[test]
fn a_lone_task_is_polled_when_due() {
    let mut h = Harness::new(EngineConfig::default(), FakeService::new(|_| Behavior::SolveAfter(secs(10))));
    h.submit(seed_task(0), &[]);
    h.run();
    let submitted = h.events.iter().find(|(_, e)| matches!(e, Event::Submitted { .. })).map(|(at, _)| *at);
    let polls = h.sends_to("/res.php");
    assert_eq!(polls.len(), 1);
    assert_eq!(Some(polls[0].0), submitted.map(|at| at.add(secs(15))));
}

/// A job that cannot ride a batch is polled on its own when due, even while a batched round
/// waits for riders.
#[test]
fn a_job_that_cannot_ride_is_not_held_with_a_waiting_round() {
    let config = EngineConfig::default();
    let first_poll = config.polling.first_poll_ms.for_kind(captcha_dlq_core::TaskKind::Funcaptcha);
    let mut h = Harness::new(config, FakeService::new(|_| Behavior::SolveAfter(secs(10))));
    let mut funcaptcha = None;
    for i in 0..100 {
        h.submit(seed_task(i), &[]);
        if i == 50 {
            let task = captcha_dlq_core::Task::from_json_value(serde_json::json!({
                "type": "funcaptcha", "publickey": "69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC",
                "page_url": "https://example.com/arkose/1",
            }))
            .unwrap();
            funcaptcha = Some(h.engine.submit(task, Default::default(), None, h.now).unwrap());
        }
        let next = h.now.add(Duration::from_millis(100));
        h.run_until(Some(next));
    }
    h.run();
    assert_eq!(h.solved.len(), 101);
    let submitted = h
        .events
        .iter()
        .find_map(|(at, e)| matches!(e, Event::Submitted { job, .. } if Some(*job) == funcaptcha).then_some(*at))
        .unwrap();
    let single_polls: Vec<_> =
        h.sends_to("/res.php").into_iter().filter(|(_, req)| !req.url.contains("ids=")).map(|(at, _)| *at).collect();
    assert_eq!(single_polls, vec![submitted.add(first_poll)], "polled alone, when due");
    assert!(h.sends_to("/res.php").len() <= 3, "the reCAPTCHA tasks still go in two rounds");
}

/// 2captcha answers a point-list kind polled with `json=1` as an array of points with string
/// values (issue 43): `{"status":1,"request":[{"x":"12","y":"34"},...]}`. Each such kind is
/// solved with its points in its typed answer, submitted (paid) once, never dead-lettered.
#[test]
fn a_json_list_of_points_solves_coordinates_canvas_and_temu_once() {
    use captcha_dlq_core::engine::RoutingConfig;
    use captcha_dlq_core::sim::SimProvider;
    const IMG: &str =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let tasks = [
        serde_json::json!({"type": "coordinates", "body": IMG}),
        serde_json::json!({"type": "canvas", "body": IMG, "textinstructions": "draw around the car"}),
        serde_json::json!({"type": "temu", "body": IMG, "part1": IMG, "part2": IMG, "part3": IMG}),
    ];
    for task in tasks {
        let points = serde_json::json!([{"x": "12", "y": "34"}, {"x": "56.5", "y": "78"}]);
        let service = FakeService::new(move |_| Behavior::AnswerAfter(secs(20), points.clone()));
        let mut h = Harness::multi(
            vec![SimProvider::new("2captcha", "2captcha", EngineConfig::default(), service)],
            RoutingConfig::default(),
        );
        let kind = task["type"].clone();
        h.submit(captcha_dlq_core::Task::from_json_value(task).unwrap(), &[]);
        h.run();
        assert!(h.dead.is_empty(), "{kind}: dead-lettered {:?}", h.dead.first().map(|(_, r)| &r.reason));
        assert_eq!(h.solved.len(), 1, "{kind}");
        let solution = &h.solved[0].2;
        assert_eq!(solution.text, "coordinates:x=12,y=34;x=56.5,y=78", "{kind}: as the plain answer reads");
        assert_eq!(
            serde_json::Value::Object(solution.answer.clone()),
            serde_json::json!({"points": [{"x": 12.0, "y": 34.0}, {"x": 56.5, "y": 78.0}]}),
            "{kind}"
        );
        assert_eq!(h.sends_to("/in.php").len(), 1, "{kind}: submitted (billed) once");
        assert_eq!(h.service.taken.len(), 1, "{kind}");
    }
}
