//! Virtual-time scenarios with several simulated providers: where each task went, that
//! none was lost while a provider could solve it, and that no task was with two providers
//! at once (`Harness::concurrent_submissions`).

use std::collections::BTreeMap;
use std::time::Duration;

use captcha_dlq_core::class::{reason, ErrorClass};
use captcha_dlq_core::dlq::record::Phase;
use captcha_dlq_core::engine::{EngineConfig, Event, Health, Policy, RoutingConfig};
use captcha_dlq_core::sim::{seed_task, Behavior, FakeService, Fault, Harness, SimProvider, T0};
use captcha_dlq_core::spend::Prices;
use captcha_dlq_core::task::TaskKind;
use captcha_dlq_core::JobId;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn solving(after_s: u64) -> FakeService {
    FakeService::new(move |_| Behavior::SolveAfter(secs(after_s)))
}

/// A 2captcha-classed provider (its `ERROR_ZERO_BALANCE` is an account error), with zero balance
/// dead-lettering rather than holding (`circuit.account_hold_ms: 0`, the option these tests are
/// about; the default hold is `core/tests/it/fleet_hold.rs`'s and `reliability.rs`'s).
fn provider(name: &'static str, service: FakeService) -> SimProvider {
    provider_at(name, "2captcha", service)
}

/// A provider of preset `preset` (the hCaptcha tests need a service whose kind file still lists
/// hCaptcha: `core/kinds/hcaptcha.toml`).
fn provider_at(name: &'static str, preset: &'static str, service: FakeService) -> SimProvider {
    let mut config = EngineConfig::default();
    config.circuit.account_hold_ms = 0;
    SimProvider::new(name, preset, config, service)
}

fn ordered() -> RoutingConfig {
    RoutingConfig::default()
}

/// Which provider solved each job, by the name on its solution.
fn solved_at(h: &Harness) -> BTreeMap<JobId, String> {
    h.solved.iter().map(|(job, _, s, _)| (*job, s.provider.clone().unwrap_or_default())).collect()
}

fn count_at(h: &Harness, provider: &str) -> usize {
    h.solved.iter().filter(|(_, _, s, _)| s.provider.as_deref() == Some(provider)).count()
}

fn pages_taken(h: &Harness, i: usize) -> Vec<String> {
    h.service_of(i).taken.iter().map(|t| t.page.clone()).collect()
}

#[test]
fn an_account_error_moves_the_tasks_to_the_next_provider_without_a_dead_letter() {
    let mut broke = solving(20);
    broke.account_error_after = Some((5, "ERROR_ZERO_BALANCE"));
    let mut h = Harness::multi(vec![provider("a", broke), provider("b", solving(20))], ordered());
    let jobs: Vec<JobId> = (0..20).map(|i| h.submit(seed_task(i), &[])).collect();
    h.run();
    assert!(h.dead.is_empty(), "dead-lettered: {:?}", h.dead.iter().map(|(_, r)| &r.reason).collect::<Vec<_>>());
    assert_eq!(h.solved.len(), 20);
    assert_eq!((count_at(&h, "a"), count_at(&h, "b")), (5, 15), "a until its balance ran out, then b");
    assert_eq!(h.service_of(0).taken.len(), 5, "nothing more was sent to a after the account error");
    let by_job = solved_at(&h);
    assert!(jobs[..5].iter().all(|j| by_job[j] == "a"), "the first five went to a, in list order");
    assert!(h.concurrent_submissions(TaskKind::RecaptchaV2).is_empty());
    let opened: Vec<_> = h
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::CircuitOpened { cause, until: None, provider } => Some((cause.clone(), provider.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(opened, vec![("ERROR_ZERO_BALANCE".to_string(), Some("a".to_string()))], "one signal, naming a");
    let lanes = h.engine.lanes();
    assert_eq!((lanes[0].health, lanes[1].health), (Health::AccountOut, Health::Ready));
    assert!(h.engine.account_failure().is_none(), "submissions go on at b");
    assert!(h.events.iter().any(|(_, e)| matches!(e, Event::Rerouted { from, to, .. } if from == "a" && to == "b")));
}

#[test]
fn with_every_provider_out_of_money_the_tasks_are_dead_lettered_as_before() {
    let mut a = solving(20);
    a.account_error = Some("ERROR_ZERO_BALANCE");
    let mut b = solving(20);
    b.account_error = Some("ERROR_KEY_DOES_NOT_EXIST");
    let mut h = Harness::multi(vec![provider("a", a), provider("b", b)], ordered());
    for i in 0..6 {
        h.submit(seed_task(i), &[]);
    }
    h.run();
    assert_eq!(h.dead.len(), 6);
    assert!(h.dead.iter().all(|(_, r)| r.class == ErrorClass::AccountTerminal));
    assert_eq!(h.service_of(0).log.len() + h.service_of(1).log.len(), 2, "one refused submission at each");
    assert!(h.dead.iter().any(|(_, r)| r.reason == "ERROR_KEY_DOES_NOT_EXIST"), "b's own error");
    let moved = &h.dead.iter().find(|(_, r)| r.history.iter().any(|e| e.error == "ERROR_ZERO_BALANCE")).expect("a's").1;
    let providers: Vec<_> = moved.history.iter().map(|e| (e.error.as_str(), e.provider.as_deref())).collect();
    assert_eq!(
        providers,
        [("ERROR_ZERO_BALANCE", Some("a")), (reason::CIRCUIT_OPEN, Some("b"))],
        "each history entry names its provider"
    );
    assert_eq!(moved.provider, "b");
    assert!(h.engine.account_failure().is_some());
}

#[test]
fn an_outage_sends_new_tasks_elsewhere_and_the_recovered_provider_takes_them_again() {
    let mut flaky = solving(20);
    flaky.outages.push((T0.add(secs(10)), T0.add(secs(100))));
    let mut h = Harness::multi(vec![provider("a", flaky), provider("b", solving(20))], ordered());
    let before: Vec<JobId> = (0..5).map(|i| h.submit(seed_task(i), &[])).collect();
    h.run_until(Some(T0.add(secs(30))));
    let during: Vec<JobId> = (5..10).map(|i| h.submit(seed_task(i), &[])).collect();
    h.run_until(Some(T0.add(secs(200))));
    assert_eq!(h.engine.lanes()[0].health, Health::Ready, "a's circuit closed again after the outage");
    let after: Vec<JobId> = (10..15).map(|i| h.submit(seed_task(i), &[])).collect();
    h.run();
    assert!(h.dead.is_empty(), "dead-lettered: {:?}", h.dead.iter().map(|(_, r)| &r.reason).collect::<Vec<_>>());
    assert_eq!(h.solved.len(), 15);
    let at = solved_at(&h);
    assert!(during.iter().all(|j| at[j] == "b"), "submitted during the outage: {at:?}");
    assert!(after.iter().all(|j| at[j] == "a"), "submitted after it: back to the first provider: {at:?}");
    assert!(before.iter().all(|j| at.contains_key(j)));
    assert!(
        h.concurrent_submissions(TaskKind::RecaptchaV2).is_empty(),
        "{:?}",
        h.concurrent_submissions(TaskKind::RecaptchaV2)
    );
    // The tasks a had accepted before the outage were not sent to b before a's working time
    // for them was over (2captcha works up to 320 s on a reCAPTCHA v2).
    for t in &h.service_of(1).taken {
        if let Some(first) = h.service_of(0).taken.iter().find(|x| x.page == t.page) {
            assert!(
                t.at.since(first.at) >= secs(320),
                "{} went to b {:?} after a took it",
                t.page,
                t.at.since(first.at)
            );
        }
    }
    assert!(h.engine.unreachable_episodes() >= 1);
}

#[test]
fn fastest_sends_most_tasks_to_the_quicker_provider_and_still_measures_the_other() {
    let mut h = Harness::multi(
        vec![provider("slow", solving(90)), provider("quick", solving(12))],
        RoutingConfig { policy: Policy::Fastest, ..RoutingConfig::default() },
    );
    for i in 0..120 {
        h.submit(seed_task(i), &[]);
        h.run_until(Some(h.now.add(secs(3))));
    }
    h.run();
    assert!(h.dead.is_empty());
    let (slow, quick) = (count_at(&h, "slow"), count_at(&h, "quick"));
    assert_eq!(slow + quick, 120);
    assert!(quick >= 90, "quick took {quick}, slow {slow}");
    assert!(slow >= 1, "the slower provider is still tried now and then");
    // Once both were measured, new tasks went to the quicker one (bar exploration).
    let late: Vec<_> = h.solved.iter().filter(|(j, ..)| j.0 > 60).collect();
    let late_quick = late.iter().filter(|(_, _, s, _)| s.provider.as_deref() == Some("quick")).count();
    assert!(late_quick * 10 >= late.len() * 8, "{late_quick} of {} late tasks at quick", late.len());
    assert!(h.concurrent_submissions(TaskKind::RecaptchaV2).is_empty());
}

#[test]
fn three_providers_one_broke_one_down_for_a_while_one_slow() {
    let mut broke = solving(15);
    broke.account_error_after = Some((10, "ERROR_ZERO_BALANCE"));
    let mut flaky = solving(15);
    flaky.outages.push((T0.add(secs(40)), T0.add(secs(160))));
    let mut h = Harness::multi(
        vec![provider("broke", broke), provider("flaky", flaky), provider("slow", solving(150))],
        ordered(),
    );
    let mut jobs = Vec::new();
    for i in 0..60 {
        jobs.push(h.submit(seed_task(i), &[("batch", "three")]));
        h.run_until(Some(h.now.add(secs(4))));
    }
    h.run();
    assert!(
        h.dead.is_empty(),
        "dead-lettered: {:?}",
        h.dead.iter().map(|(_, r)| (&r.reason, &r.provider)).collect::<Vec<_>>()
    );
    assert_eq!(h.solved.len(), 60);
    let (broke_n, flaky_n, slow_n) = (count_at(&h, "broke"), count_at(&h, "flaky"), count_at(&h, "slow"));
    assert_eq!(broke_n, 10, "broke solved what it took before its balance ran out");
    assert!(flaky_n > 0 && slow_n > 0, "flaky {flaky_n}, slow {slow_n}");
    assert_eq!(broke_n + flaky_n + slow_n, 60);
    // The slow provider only took what arrived while the others could not.
    let slow_pages = pages_taken(&h, 2);
    for page in &slow_pages {
        let n: usize = page.rsplit('/').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        let submitted_at = T0.add(secs(4 * n as u64));
        assert!(
            submitted_at >= T0.add(secs(30)) && submitted_at < T0.add(secs(200)),
            "{page} (submitted at +{:?}) went to the slow provider",
            submitted_at.since(T0)
        );
    }
    assert!(
        h.concurrent_submissions(TaskKind::RecaptchaV2).is_empty(),
        "{:?}",
        h.concurrent_submissions(TaskKind::RecaptchaV2)
    );
    let spend = h.engine.spend();
    assert_eq!(spend.solved, 60);
    assert_eq!(spend.by_label.iter().find(|r| r.key == "batch=three").map(|r| r.solved), Some(60));
}

#[test]
fn a_submission_whose_answer_was_lost_goes_back_to_the_same_provider() {
    let mut a = solving(20);
    a.submit_faults.push_back(Fault::AcceptThenTimeout);
    let mut h = Harness::multi(vec![provider("a", a), provider("b", solving(20))], ordered());
    h.submit(seed_task(0), &[]);
    h.run();
    assert_eq!(h.solved.len(), 1);
    assert_eq!(pages_taken(&h, 0).len(), 2, "resubmitted to a, which may have it");
    assert!(pages_taken(&h, 1).is_empty(), "never to b");
    assert_eq!(h.solved[0].2.provider.as_deref(), Some("a"));
}

#[test]
fn a_task_a_provider_may_have_goes_elsewhere_only_after_its_working_time() {
    let mut a = solving(20);
    a.submit_faults.push_back(Fault::AcceptThenTimeout);
    // Down right after taking the task without answering, for longer than it would work on it.
    a.outages.push((T0.add(Duration::from_millis(100)), T0.add(secs(3600))));
    let mut config = EngineConfig::default();
    config.retry.task_deadline_ms = 20 * 60 * 1000;
    let mut h = Harness::multi(
        vec![
            SimProvider::new("a", "2captcha", config.clone(), a),
            SimProvider::new("b", "2captcha", config, solving(20)),
        ],
        ordered(),
    );
    h.submit(seed_task(0), &[]);
    h.run();
    assert_eq!(h.solved.len(), 1, "dead: {:?}", h.dead.iter().map(|(_, r)| &r.reason).collect::<Vec<_>>());
    let taken_a = h.service_of(0).taken[0].at;
    let taken_b = h.service_of(1).taken[0].at;
    let working = Duration::from_millis(EngineConfig::default().polling.give_up_ms.ms(TaskKind::RecaptchaV2));
    assert!(taken_b.since(taken_a) >= working, "b got it {:?} after a, before a's {working:?}", taken_b.since(taken_a));
    assert_eq!(h.solved[0].2.provider.as_deref(), Some("b"));
}

#[test]
fn an_unsolvable_task_is_tried_at_the_next_provider_or_not_as_configured() {
    let unsolvable = || FakeService::new(|_| Behavior::Unsolvable { after: secs(10) });
    let mut h = Harness::multi(vec![provider("a", unsolvable()), provider("b", solving(20))], ordered());
    h.submit(seed_task(7), &[]);
    h.run();
    assert_eq!(h.solved.len(), 1);
    assert_eq!(h.solved[0].2.provider.as_deref(), Some("b"));
    assert_eq!(pages_taken(&h, 0).len(), 1, "one attempt at a");

    let no_failover = RoutingConfig { failover_on_unsolvable: false, ..RoutingConfig::default() };
    let mut h = Harness::multi(vec![provider("a", unsolvable()), provider("b", solving(20))], no_failover);
    h.submit(seed_task(7), &[]);
    h.run();
    let record = &h.dead.first().expect("dead-lettered at a").1;
    assert_eq!((record.reason.as_str(), record.attempts), ("ERROR_CAPTCHA_UNSOLVABLE", 4));
    assert!(record.history.iter().all(|e| e.phase == Phase::Poll && e.provider.as_deref() == Some("a")));
    assert!(pages_taken(&h, 1).is_empty());
}

#[test]
fn cheapest_follows_prices_and_a_label_overrides_the_policy() {
    let priced = |name, price: f64, service| {
        let mut p = provider(name, service);
        p.prices = Prices::uniform(price);
        p
    };
    let mut h = Harness::multi(
        vec![priced("dear", 0.003, solving(15)), priced("cheap", 0.001, solving(15))],
        RoutingConfig { policy: Policy::Cheapest, ..RoutingConfig::default() },
    );
    for i in 0..8 {
        h.submit(seed_task(i), &[]);
    }
    let pinned = h.submit(seed_task(100), &[("routing", "dear")]);
    let ordered_one = h.submit(seed_task(101), &[("routing", "ordered")]);
    h.run();
    assert_eq!(h.solved.len(), 10);
    let at = solved_at(&h);
    assert_eq!((at[&pinned].as_str(), at[&ordered_one].as_str()), ("dear", "dear"));
    assert_eq!(count_at(&h, "cheap"), 8);
    let spend = h.engine.spend();
    let row = |key: &str| spend.by_provider.iter().find(|r| r.key == key).cloned().expect("a row");
    assert!((row("cheap").cost - 0.008).abs() < 1e-9 && (row("dear").cost - 0.006).abs() < 1e-9, "{spend:?}");
    assert!(h.solved.iter().all(|(_, _, s, _)| s.cost.is_some()), "each solution carries its cost");
    let refused = h.engine.submit(seed_task(1), BTreeMap::from([("routing".into(), "nobody".into())]), None, h.now);
    assert_eq!(refused.unwrap_err().field, "labels.routing");
}

#[test]
fn accepted_ranks_by_cost_per_token_sites_took() {
    let priced = |name, price: f64| {
        let mut p = provider(name, solving(15));
        p.prices = Prices::uniform(price);
        p
    };
    let mut h = Harness::multi(
        vec![priced("cheap", 0.001), priced("dear", 0.0015)],
        RoutingConfig { policy: Policy::Accepted, ..RoutingConfig::default() },
    );
    // No verdicts yet: the cost decides.
    let first = h.submit(seed_task(0), &[]);
    h.run();
    assert_eq!(solved_at(&h)[&first], "cheap");
    // Sites refuse most of cheap's tokens and take dear's: 0.001 / (1/8) > 0.0015 / (7/8).
    for _ in 0..6 {
        h.engine.page_verdict("cheap", TaskKind::RecaptchaV2, false, h.now);
        h.engine.page_verdict("dear", TaskKind::RecaptchaV2, true, h.now);
    }
    h.engine.page_verdict("nobody", TaskKind::RecaptchaV2, true, h.now);
    let later: Vec<JobId> = (1..5).map(|i| h.submit(seed_task(i), &[])).collect();
    let labelled = h.submit(seed_task(9), &[("routing", "cheapest")]);
    h.run();
    let at = solved_at(&h);
    assert!(later.iter().all(|j| at[j] == "dear"), "{at:?}");
    assert_eq!(at[&labelled], "cheap", "a task's label still picks its own policy");
    // Another kind has its own verdicts: none, so the cost decides there.
    let turnstile = h.submit(
        captcha_dlq_core::Task::from_json_str(
            r#"{"type":"turnstile","sitekey":"0x4AAA-k","page_url":"https://a.example/"}"#,
        )
        .expect("a task"),
        &[],
    );
    h.run();
    assert_eq!(solved_at(&h)[&turnstile], "cheap");
}

#[test]
fn a_budget_stops_submitting_once_spent_without_passing_it() {
    let mut config = EngineConfig::default();
    config.rate.submits_per_second = 100.0;
    let mut p = provider("only", solving(15));
    p.config = config;
    p.prices = Prices::uniform(0.001);
    let mut h = Harness::multi(vec![p], RoutingConfig { budget: Some(0.0045), ..RoutingConfig::default() });
    for i in 0..12 {
        h.submit(seed_task(i), &[]);
    }
    h.run();
    assert_eq!(h.service.taken.len(), 4, "4 × 0.001 fit a budget of 0.0045; a fifth could pass it");
    assert_eq!(h.solved.len(), 4);
    assert_eq!(h.dead.len(), 8);
    assert!(h.dead.iter().all(|(_, r)| r.reason == reason::BUDGET_EXHAUSTED && r.class == ErrorClass::AccountTerminal));
    assert!(h.dead[0].1.description.contains("budget of 0.0045"), "{}", h.dead[0].1.description);
    let spend = h.engine.spend();
    assert!(spend.cost <= 0.0045 && spend.budget == Some(0.0045));
    // New tasks are refused at once.
    h.submit(seed_task(50), &[]);
    h.run();
    assert_eq!(h.service.taken.len(), 4);
    assert_eq!(h.dead.last().unwrap().1.reason, reason::BUDGET_EXHAUSTED);
}

#[test]
fn recover_polls_the_provider_its_journal_entry_names() {
    let mut first = Harness::multi(vec![provider("a", solving(40)), provider("b", solving(40))], ordered());
    first.submit(seed_task(0), &[("routing", "b")]);
    first.run_until(Some(T0.add(secs(5))));
    let entry = first.journal.values().next().cloned().expect("journaled");
    assert_eq!((entry.provider.as_str(), entry.provider_task_id.is_some()), ("b", true));
    let services = (std::mem::replace(&mut first.service, solving(1)), first.others.remove(0));
    let mut second = Harness::multi(vec![provider("a", services.0), provider("b", services.1)], ordered());
    second.now = T0.add(secs(6));
    second.engine.recover(entry, second.now);
    second.run();
    assert_eq!(second.solved.len(), 1);
    assert_eq!(second.solved[0].2.provider.as_deref(), Some("b"));
    assert_eq!(second.service_of(0).log.len(), 0, "a was never asked");
    assert_eq!(second.service_of(1).taken.len(), 1, "not submitted again");
}

/// An hCaptcha task for `https://example.com/hc/{n}`.
fn hcaptcha_task(n: usize) -> captcha_dlq_core::ValidTask {
    captcha_dlq_core::task::Task::from_json_value(serde_json::json!({
        "type": "hcaptcha",
        "sitekey": "10000000-ffff-ffff-ffff-000000000001",
        "page_url": format!("https://example.com/hc/{n}"),
    }))
    .expect("an hCaptcha task is valid")
}

fn refusing(code: &'static str) -> FakeService {
    FakeService::new(move |_| Behavior::RejectSubmit(code))
}

#[test]
fn hcaptcha_at_a_service_that_answers_hcaptcha_not_supported_is_solved_by_the_next_one() {
    let mut h = Harness::multi(
        vec![
            provider_at("a", "captchaai", refusing("ERROR_HCAPTCHA_NOT_SUPPORTED")),
            provider_at("b", "captchaai", solving(20)),
        ],
        ordered(),
    );
    let jobs: Vec<JobId> = (0..5).map(|i| h.submit(hcaptcha_task(i), &[])).collect();
    h.run();
    assert!(h.dead.is_empty(), "dead-lettered: {:?}", h.dead.iter().map(|(_, r)| &r.reason).collect::<Vec<_>>());
    let by_job = solved_at(&h);
    assert!(jobs.iter().all(|j| by_job[j] == "b"), "every task solved at b: {by_job:?}");
    assert!(
        h.service_of(0).log.iter().filter(|s| s.endpoint == "in.php").count() < jobs.len(),
        "once a refused the kind, routing skips it for the kind: {:?}",
        h.service_of(0).log
    );
    assert!(h.events.iter().any(|(_, e)| matches!(e, Event::Rerouted { from, to, .. } if from == "a" && to == "b")));
}

#[test]
fn a_kind_no_configured_service_solves_is_dead_lettered_naming_each_service_and_its_answer() {
    let mut h = Harness::multi(
        vec![
            provider_at("a", "captchaai", refusing("ERROR_HCAPTCHA_NOT_SUPPORTED")),
            provider_at("b", "captchaai", refusing("ERROR_TASK_NOT_SUPPORTED")),
        ],
        ordered(),
    );
    h.submit(hcaptcha_task(1), &[]);
    h.run();
    assert_eq!(h.dead.len(), 1);
    let record = &h.dead[0].1;
    assert_eq!((record.reason.as_str(), record.class), (reason::NO_SERVICE_FOR_KIND, ErrorClass::FixInput));
    assert!(
        record.description.contains("a (ERROR_HCAPTCHA_NOT_SUPPORTED)")
            && record.description.contains("b (ERROR_TASK_NOT_SUPPORTED)"),
        "{}",
        record.description
    );
    assert_eq!(record.attempts, 0, "a refused kind is not a paid attempt");
}

#[test]
fn with_one_service_a_refused_kind_is_no_service_for_kind_rather_than_an_input_to_fix() {
    let mut h = Harness::multi(vec![provider_at("a", "captchaai", refusing("ERROR_TASK_NOT_SUPPORTED"))], ordered());
    h.submit(hcaptcha_task(1), &[]);
    h.run();
    assert_eq!(h.dead.len(), 1);
    assert_eq!(h.dead[0].1.reason, reason::NO_SERVICE_FOR_KIND);
    assert!(h.dead[0].1.description.contains("a (ERROR_TASK_NOT_SUPPORTED)"), "{}", h.dead[0].1.description);
}

/// Issue 43, item 4's table refresh: a service whose kind file lists it under `[dropped]`
/// (2captcha for hCaptcha, `core/kinds/hcaptcha.toml`) is never sent the kind; the task goes to a
/// service that still takes it, and with none left it is refused when submitted, naming the source.
#[test]
fn hcaptcha_is_never_sent_to_a_service_that_dropped_it() {
    let mut h = Harness::multi(vec![provider("a", solving(20)), provider_at("b", "captchaai", solving(20))], ordered());
    let jobs: Vec<JobId> = (0..3).map(|i| h.submit(hcaptcha_task(i), &[])).collect();
    h.run();
    assert!(h.dead.is_empty(), "dead-lettered: {:?}", h.dead.iter().map(|(_, r)| &r.reason).collect::<Vec<_>>());
    let by_job = solved_at(&h);
    assert!(jobs.iter().all(|j| by_job[j] == "b"), "every task solved at b: {by_job:?}");
    assert!(h.service_of(0).log.is_empty(), "2captcha was sent hCaptcha: {:?}", h.service_of(0).log);

    let mut only_dropped = Harness::multi(vec![provider("a", solving(20))], ordered());
    let refused = only_dropped.engine.submit(hcaptcha_task(9), BTreeMap::new(), None, only_dropped.now).unwrap_err();
    assert_eq!(refused.field, "type");
    assert!(
        refused.problem.contains("no longer solves") && refused.problem.contains("github.com/2captcha/2captcha-python"),
        "{}",
        refused.problem
    );
}
