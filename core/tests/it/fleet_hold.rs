//! A fleet holding for an account error, in virtual time: several engines share one account
//! through one ledger (`AccountState::apply`, as every store applies it), and while the account
//! is out one of them at a time checks the balance for all (issue 32, item 3). Once the check
//! finds money, every engine resumes on the ledger's word, without checking again itself.

use std::time::Duration;

use captcha_dlq_core::engine::{LaneFleet, LaneSpec, RoutingConfig};
use captcha_dlq_core::fleet::{AccountState, Others};
use captcha_dlq_core::sim::{seed_task, Behavior, FakeService, KEY, T0};
use captcha_dlq_core::{
    Action, Engine, EngineConfig, HttpResponse, Provider, RequestId, Secret, Timestamp, TransportError,
};

const CLIENTS: usize = 4;
const PROBE_MS: u64 = 30_000;

/// `CLIENTS` engines on one account, one simulated service and one ledger.
struct Fleet {
    engines: Vec<Engine>,
    service: FakeService,
    ledger: AccountState,
    in_transit: Vec<(Timestamp, usize, RequestId, Result<HttpResponse, TransportError>)>,
    now: Timestamp,
    solved: usize,
}

impl Fleet {
    fn new(config: EngineConfig) -> Fleet {
        let engines = (0..CLIENTS)
            .map(|i| {
                let provider = Provider::preset("2captcha").unwrap().with_base_url("https://sim.invalid").unwrap();
                let mut spec = LaneSpec::new(provider, Secret::new(KEY), config.clone());
                spec.config.seed = i as u64 + 1;
                spec.fleet = Some(LaneFleet { account: "the-account".into(), shares_budget: false });
                Engine::with_lanes(vec![spec], RoutingConfig::default()).expect("valid lane")
            })
            .collect();
        let service = FakeService::new(|_| Behavior::SolveAfter(Duration::from_secs(20)));
        Fleet { engines, service, ledger: AccountState::default(), in_transit: Vec::new(), now: T0, solved: 0 }
    }

    fn drain(&mut self) {
        for i in 0..self.engines.len() {
            while let Some(action) = self.engines[i].poll_action(self.now) {
                match action {
                    Action::Send { request_id, request } => {
                        let answer = self.service.handle(&request, self.now);
                        self.in_transit.push((self.now.add(Duration::from_millis(50)), i, request_id, answer));
                    }
                    // The ledger answers at once; the others' in-flight counts do not matter here.
                    Action::FleetSync(sync) => {
                        let others = Others { in_flight: 0, reserved_nano: 0 };
                        let grant = self.ledger.apply(&sync.report, others, self.now.as_unix_millis());
                        self.engines[i].fleet_synced(sync, Ok(grant), self.now);
                    }
                    Action::Journal { gates: Some(job), .. } => {
                        self.engines[i].journaled(job, self.now);
                    }
                    Action::Solved { .. } => self.solved += 1,
                    Action::DeadLetter { record, .. } => panic!("held tasks wait, got a dead letter: {record:?}"),
                    _ => {}
                }
            }
        }
    }

    fn run_until(&mut self, until: Timestamp) {
        loop {
            self.drain();
            let timers = self.engines.iter().filter_map(Engine::poll_timeout);
            let answers = self.in_transit.iter().map(|(at, ..)| *at);
            let Some(next) = timers.chain(answers).min().filter(|next| *next <= until) else {
                self.now = until;
                return;
            };
            self.now = self.now.max(next);
            let now = self.now;
            let (due, later): (Vec<_>, Vec<_>) = self.in_transit.drain(..).partition(|(at, ..)| *at <= now);
            self.in_transit = later;
            for (_, i, rid, answer) in due {
                self.engines[i].handle_response(rid, answer, now);
            }
        }
    }

    fn balance_checks(&self) -> usize {
        self.service.log.iter().filter(|s| s.endpoint == "/res.php" && s.subject == [""]).count()
    }
}

#[test]
fn one_client_checks_the_balance_for_a_holding_fleet_and_all_resume_on_its_word() {
    let mut config = EngineConfig::default();
    config.circuit.account_hold_ms = 60 * 60 * 1000;
    config.circuit.account_probe_ms = PROBE_MS;
    let mut fleet = Fleet::new(config);
    fleet.service.account_error = Some("ERROR_ZERO_BALANCE");
    for (i, engine) in fleet.engines.iter_mut().enumerate() {
        engine.submit(seed_task(i), Default::default(), None, T0).expect("valid task");
    }

    // Ten probe periods of an empty account: one check per period for the whole fleet (each
    // client checking for itself would make forty).
    let periods = 10;
    fleet.run_until(T0.add(Duration::from_millis(periods * PROBE_MS + PROBE_MS / 2)));
    let checks = fleet.balance_checks();
    assert!(
        (periods as usize - 1..=periods as usize + 1).contains(&checks),
        "{checks} balance checks in {periods} periods"
    );
    let submits = fleet.service.count("/in.php");
    assert!(submits <= CLIENTS, "after the first account error, at most one submission per client: {submits}");
    assert_eq!(fleet.solved, 0);

    // The money arrives: the client whose turn comes finds it, and every client resumes on the
    // ledger's word, none checking again.
    fleet.service.account_error = None;
    let before = fleet.balance_checks();
    fleet.run_until(fleet.now.add(Duration::from_millis(PROBE_MS + 60_000)));
    assert_eq!(fleet.solved, CLIENTS, "every held task was sent and solved");
    assert_eq!(fleet.balance_checks() - before, 1, "one check ended the fleet's hold");
}

/// Issue 43, item 8: a zero balance holds by default (no `account_hold_ms` set), the fleet's one
/// balance probe resuming it; a key the service refuses still dead-letters at once by default.
#[test]
fn a_zero_balance_holds_by_default_and_a_refused_key_does_not() {
    let mut config = EngineConfig::default();
    config.circuit.account_probe_ms = PROBE_MS;
    let mut fleet = Fleet::new(config.clone());
    fleet.service.account_error = Some("ERROR_ZERO_BALANCE");
    for (i, engine) in fleet.engines.iter_mut().enumerate() {
        engine.submit(seed_task(i), Default::default(), None, T0).expect("valid task");
    }
    // Held, not dead-lettered (the fleet panics on a dead letter), for five minutes (a held task
    // still ends at its task deadline, `retry.task_deadline_ms`, ten minutes by default).
    fleet.run_until(T0.add(Duration::from_secs(300)));
    assert_eq!(fleet.solved, 0);
    assert!(fleet.engines.iter().all(|e| e.held_until().is_some()), "every client holds");
    fleet.service.account_error = None;
    fleet.run_until(fleet.now.add(Duration::from_millis(PROBE_MS + 60_000)));
    assert_eq!(fleet.solved, CLIENTS, "the top-up found by the fleet's probe resumed them all");

    let mut refused = FakeService::new(|_| Behavior::SolveAfter(Duration::from_secs(20)));
    refused.account_error = Some("ERROR_KEY_DOES_NOT_EXIST");
    let provider = Provider::preset("2captcha").unwrap().with_base_url("https://sim.invalid").unwrap();
    let mut h = captcha_dlq_core::sim::Harness::new(config, refused);
    h.engine = Engine::new(provider, Secret::new(KEY), h.engine.config().clone());
    h.submit(seed_task(0), &[]);
    h.run();
    assert_eq!(h.dead.len(), 1, "a refused key is not waited for");
    assert_eq!(h.dead[0].1.reason, "ERROR_KEY_DOES_NOT_EXIST");
}

/// An operator ends the fleet's hold at once (`captcha-dlq accounts resume`, the dashboard's Fleet
/// page): one client's `resume_accounts` reaches the ledger, every client resumes on its next
/// sync, without waiting for the next balance probe.
#[test]
fn an_operator_resume_ends_the_fleets_hold_without_waiting_for_the_probe() {
    let mut config = EngineConfig::default();
    config.circuit.account_probe_ms = PROBE_MS;
    let mut fleet = Fleet::new(config);
    fleet.service.account_error = Some("ERROR_ZERO_BALANCE");
    for (i, engine) in fleet.engines.iter_mut().enumerate() {
        engine.submit(seed_task(i), Default::default(), None, T0).expect("valid task");
    }
    fleet.run_until(T0.add(Duration::from_millis(PROBE_MS * 5 / 2)));
    assert_eq!(fleet.solved, 0);
    fleet.service.account_error = None; // topped up; the operator says so
    let (checks, submits) = (fleet.balance_checks(), fleet.service.count("/in.php"));
    assert!(fleet.engines[0].resume_accounts(Some("nope")).is_err(), "an unknown provider is named");
    let resumed = fleet.engines[0].resume_accounts(None).expect("resumed");
    assert_eq!(resumed.len(), 1, "the held provider: {resumed:?}");
    // Less than the rest of the probe period: only the operator's word can resume them.
    fleet.run_until(fleet.now.add(Duration::from_millis(PROBE_MS / 2 - 1000)));
    assert_eq!(fleet.service.count("/in.php") - submits, CLIENTS, "every client sent its held task");
    assert_eq!(fleet.balance_checks(), checks, "no balance check was needed");
    fleet.run_until(fleet.now.add(Duration::from_secs(60)));
    assert_eq!(fleet.solved, CLIENTS);
}
