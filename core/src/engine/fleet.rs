//! A lane's share of its account's fleet-wide limits (see [`crate::fleet`]).
//!
//! A lane whose store keeps a fleet ledger submits only with a *permit* leased from it, and
//! reports what the provider told it (pauses, "no free worker", account errors, accepted
//! submissions) at its next sync. Syncs are asked for with [`Action::FleetSync`], at most one
//! at a time per lane: when the permits on hand run low while tasks wait, when there is
//! something to report, and every [`HEARTBEAT_MS`] in any case. Until the first grant, and
//! while syncs fail, the lane submits nothing: a fleet that cannot agree holds back rather
//! than risk a ban.

mod news;
mod schedule;

use core::time::Duration;
use std::collections::VecDeque;

use self::news::News;
use self::schedule::SyncSchedule;
use super::lane_id::LaneId;
use super::{Action, Engine};
use crate::class::Failure;
use crate::fleet::{FleetGrant, FleetReport, HEARTBEAT_MS, MAX_PERMITS_PER_SYNC, PERMIT_GRACE_MS};
use crate::support::time::Timestamp;
use crate::task::TaskKind;

/// How long a lane waits before syncing again after a failed sync.
const RETRY_AFTER_FAILED_SYNC: Duration = Duration::from_secs(1);
/// How long a lane waits before asking again after a sync that granted no permit.
const EMPTY_GRANT_RETRY_MS: u64 = 100;
/// Spend is reported at most this long after it was made (ms).
const SPEND_REPORT_MS: u64 = 1000;

/// What the engine asks the driver to settle with the store's fleet ledger.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetSync {
    /// The lane (provider) index, to hand back with [`Engine::fleet_synced`].
    pub lane: usize,
    /// The account's id in the store (a keyed hash, never the key).
    pub account: String,
    pub report: FleetReport,
}

/// What a lane's share knows of its account, fed from the lane when a sync is due.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaneDemand {
    pub waiting: usize,
    pub in_flight: usize,
    pub rate: f64,
    pub window_max: u32,
    /// The client's budget, in nano-units (the share reports it when the fleet shares it).
    pub budget_nano: Option<u64>,
    /// The known cost of the lane's tasks in flight.
    pub reserved_nano: u64,
    /// The known cost of the next task waiting (0: unknown or none).
    pub next_cost_nano: u64,
}

/// A lane's share of its account's fleet-wide limits: its permits on hand and in-flight
/// allowance, its sync schedule ([`SyncSchedule`]), what it has to report ([`News`]) and what
/// the last grant said of the fleet (spend, reservations, the probe turn, an account hold).
///
/// Calling contract: the engine asks [`sync_due`](Self::sync_due) for a report when one is due
/// and hands back its answer ([`granted`](Self::granted) or [`failed`](Self::failed)); a
/// submission goes out only when [`allows`](Self::allows) says so, then [`take`](Self::take)s
/// its permit. Time is an argument everywhere.
#[derive(Debug)]
pub(crate) struct FleetShare {
    account: String,
    /// Whether the client's `budget` is the fleet's (the default) rather than its own.
    shares_budget: bool,
    /// Permits on hand: from when each may be used, and until when (ascending).
    permits: VecDeque<(Timestamp, Timestamp)>,
    /// The cost each permit on hand reserves (what it was asked at).
    permit_cost: u64,
    /// The in-flight share: the account's window less the others' tasks (None before a grant).
    allowance: Option<u32>,
    schedule: SyncSchedule,
    /// What the provider said since the last sync, for the next report.
    news: News,
    /// The fleet's spend at the account and the others' reservations, at the last grant.
    fleet_spent: u64,
    others_reserved: u64,
    /// The fleet gave this client the probe turn: it checks the balance for all.
    probe_turn: bool,
    /// The last grant said an account error holds the fleet.
    fleet_held: bool,
}

impl FleetShare {
    pub(crate) fn new(account: String, shares_budget: bool) -> Self {
        FleetShare {
            account,
            shares_budget,
            permits: VecDeque::new(),
            permit_cost: 0,
            allowance: None,
            schedule: SyncSchedule::default(),
            news: News::default(),
            fleet_spent: 0,
            others_reserved: 0,
            probe_turn: false,
            fleet_held: false,
        }
    }

    pub(crate) fn shares_budget(&self) -> bool {
        self.shares_budget
    }

    /// What the fleet spent at the account as far as this client knows (its own latest
    /// spending included) and what the others hold reserved there, in nano-units.
    pub(crate) fn fleet_budget_view(&self) -> (u64, u64) {
        (self.fleet_spent.saturating_add(self.news.spent()), self.others_reserved)
    }

    /// Whether a submission may go out now with `in_flight` tasks at the lane.
    pub(crate) fn allows(&mut self, in_flight: usize, now: Timestamp) -> bool {
        self.drop_lapsed(now);
        self.allowance.is_some_and(|a| in_flight < a as usize)
            && self.permits.front().is_some_and(|(from, _)| *from <= now)
    }

    /// Uses the permit [`allows`](Self::allows) found.
    pub(crate) fn take(&mut self) {
        self.permits.pop_front();
    }

    /// When the next permit on hand may be used (the sync timer covers a lane without one).
    pub(crate) fn next_permit_at(&self) -> Option<Timestamp> {
        self.permits.front().map(|(from, _)| *from)
    }

    /// When the lane next wants a sync, with `waiting` tasks waiting for a submission: soon when
    /// permits run short or there is news to report (after a failed or empty sync, not before
    /// its retry time), else at the heartbeat.
    pub(crate) fn next_sync_at(&self, waiting: usize) -> Timestamp {
        if self.schedule.syncing() {
            return Timestamp::from_unix_millis(u64::MAX);
        }
        let short = self.permits.len() < waiting.min(2);
        // Spend is reported within a second, not only at the heartbeat: a client that is killed
        // loses at most that much of the fleet's spend (its reservation covered it until then).
        let spend_due = self.news.spent_since().map(|since| since.add(Duration::from_millis(SPEND_REPORT_MS)));
        let heartbeat = self.schedule.next();
        if short || self.news.any() {
            self.schedule.retry_at().unwrap_or(Timestamp::EPOCH).min(heartbeat)
        } else {
            spend_due.map_or(heartbeat, |due| due.min(heartbeat))
        }
    }

    /// A sync to ask for now, if one is due; `waiting` tasks want permits.
    pub(crate) fn sync_due(&mut self, lane: LaneDemand, now: Timestamp) -> Option<FleetReport> {
        self.drop_lapsed(now);
        if self.schedule.syncing() || now < self.next_sync_at(lane.waiting) {
            return None;
        }
        self.schedule.start();
        // Ask for what waits, less what is on hand, and at most half a second's worth: permits
        // not used soon lapse, and the slots they held are lost to the whole fleet.
        let half_second = (lane.rate / 2.0).ceil().max(1.0) as u32;
        let want = (lane.waiting.saturating_sub(self.permits.len()) as u32).min(half_second).min(MAX_PERMITS_PER_SYNC);
        // Permits on hand stay reserved at what they were asked at; new ones at the next task's.
        let held = self.permit_cost.saturating_mul(self.permits.len() as u64);
        let permit_cost_nano = if want > 0 { lane.next_cost_nano } else { 0 };
        if want > 0 {
            let on_hand = if self.permits.is_empty() { 0 } else { self.permit_cost };
            self.permit_cost = on_hand.max(lane.next_cost_nano);
        }
        Some(self.news.report(FleetReport {
            in_flight: u32::try_from(lane.in_flight).unwrap_or(u32::MAX),
            want,
            rate: lane.rate,
            window_max: lane.window_max,
            budget_nano: lane.budget_nano.filter(|_| self.shares_budget),
            reserved_nano: lane.reserved_nano.saturating_add(held),
            permit_cost_nano,
            ..FleetReport::default()
        }))
    }

    pub(crate) fn account(&self) -> &str {
        &self.account
    }

    /// Takes a grant in: its permits, in this engine's clock (offsets from now), and the probe
    /// turn. Answers whether an account error that held the fleet has ended (another client's
    /// balance check found the account working, or the error lapsed).
    pub(crate) fn granted(&mut self, asked: u32, grant: &FleetGrant, now: Timestamp) -> bool {
        self.probe_turn |= grant.probe;
        let hold_ended = self.fleet_held && grant.account_error.is_none();
        self.fleet_held = grant.account_error.is_some();
        self.fleet_spent = grant.spent_nano;
        self.others_reserved = grant.others_reserved_nano;
        let retry_at = (asked > 0 && grant.permits.is_empty())
            .then(|| now.add(Duration::from_millis(grant.paused_ms.max(EMPTY_GRANT_RETRY_MS))));
        self.schedule.granted(now.add(Duration::from_millis(HEARTBEAT_MS)), retry_at);
        self.allowance = Some(grant.window.saturating_sub(grant.others_in_flight));
        for offset in &grant.permits {
            let from = now.add(Duration::from_millis(*offset));
            self.permits.push_back((from, from.add(Duration::from_millis(PERMIT_GRACE_MS))));
        }
        hold_ended
    }

    /// Asks the fleet for the probe turn at the next sync (soon: it is news to report).
    pub(crate) fn ask_probe(&mut self, turn_ms: u64) {
        self.news.ask_probe(turn_ms);
    }

    /// Whether this client has the fleet's probe turn; taking it uses it.
    pub(crate) fn take_probe_turn(&mut self) -> bool {
        core::mem::take(&mut self.probe_turn)
    }

    /// A sync failed: what it reported is reported again next time, after a pause.
    pub(crate) fn failed(&mut self, report: FleetReport, now: Timestamp) {
        self.schedule.failed(now.add(RETRY_AFTER_FAILED_SYNC));
        self.news.restore(report, now);
    }

    pub(crate) fn report_spent(&mut self, nano: u64, now: Timestamp) {
        self.news.report_spent(nano, now);
    }

    /// What is left to report when the client closes (spend, a pause, an account error…),
    /// whatever the timers say; `None` when nothing is.
    pub(crate) fn final_report(&mut self, lane: LaneDemand, now: Timestamp) -> Option<FleetReport> {
        if self.news.spent() == 0 && !self.news.any() {
            return None;
        }
        self.schedule.due_now(now);
        self.sync_due(LaneDemand { waiting: 0, ..lane }, now)
    }

    pub(crate) fn report_pause(&mut self, code: &str, ms: u64) {
        self.news.report_pause(code, ms);
    }

    pub(crate) fn report_no_slot(&mut self) {
        self.news.report_no_slot();
    }

    pub(crate) fn report_accepted(&mut self) {
        self.news.report_accepted();
    }

    pub(crate) fn report_account_error(&mut self, failure: &Failure, hold_ms: u64) {
        self.news.report_account_error(failure, hold_ms);
    }

    pub(crate) fn report_account_ok(&mut self) {
        self.news.report_account_ok();
    }

    /// The service refused `kind` as a whole: the fleet skips it there for `ms` too.
    pub(crate) fn report_refused_kind(&mut self, kind: TaskKind, ms: u64) {
        self.news.report_refused_kind(kind, ms);
    }

    fn drop_lapsed(&mut self, now: Timestamp) {
        while self.permits.front().is_some_and(|(_, until)| *until < now) {
            self.permits.pop_front();
        }
    }
}

impl Engine {
    /// Asks for the syncs that are due (see the module documentation).
    pub(super) fn ask_fleet_syncs(&mut self, now: Timestamp) {
        for l in self.lanes.ids() {
            let Some(demand) = self.lane_demand(l) else { continue };
            let Some(share) = self.lanes[l].fleet_mut() else { continue };
            if let Some(report) = share.sync_due(demand, now) {
                let account = share.account().to_string();
                self.actions.push_back(Action::FleetSync(FleetSync { lane: l.index(), account, report }));
            }
        }
    }

    /// The syncs a closing client still owes the fleet: what it spent, and any news, not yet
    /// reported (the driver sends them before it leaves the ledger; their answers do not
    /// matter any more). Without them a client that closes within a heartbeat of its last
    /// solve would take that spend with it.
    pub fn fleet_final_syncs(&mut self, now: Timestamp) -> Vec<FleetSync> {
        let mut syncs = Vec::new();
        for l in self.lanes.ids() {
            let Some(demand) = self.lane_demand(l) else { continue };
            let Some(share) = self.lanes[l].fleet_mut() else { continue };
            if let Some(report) = share.final_report(demand, now) {
                syncs.push(FleetSync { lane: l.index(), account: share.account().to_string(), report });
            }
        }
        syncs
    }

    /// What lane `l` tells its share when a sync is due (`None`: the lane is not in a fleet).
    fn lane_demand(&self, l: LaneId) -> Option<LaneDemand> {
        let lane = &self.lanes[l];
        lane.fleet()?;
        Some(LaneDemand {
            waiting: lane.waiting_count(),
            in_flight: lane.in_flight(),
            rate: lane.config().rate.submits_per_second,
            window_max: lane.config().rate.max_in_flight,
            budget_nano: self.routing.budget.map(crate::spend::to_nano),
            reserved_nano: lane.reserved(),
            next_cost_nano: lane.next_waiting().map_or(0, |(_, job)| self.expected_cost(l, job)),
        })
    }

    /// Feeds back the result of an [`Action::FleetSync`]: the grant, or (with the report that
    /// was sent) the failure, after which the lane syncs again shortly and reports it again.
    pub fn fleet_synced(&mut self, sync: FleetSync, result: Result<FleetGrant, String>, now: Timestamp) {
        let Some(l) = self.lanes.id(sync.lane) else { return };
        let Some(share) = self.lanes[l].fleet_mut() else { return };
        let grant = match result {
            Ok(grant) => grant,
            Err(_) => return share.failed(sync.report, now),
        };
        let fleet_hold_ended = share.granted(sync.report.want, &grant, now);
        if grant.probe {
            // This client checks the balance for the fleet: now, not at its own next turn.
            if let Some(hold) = self.lanes[l].hold_mut() {
                hold.next_probe = now;
            }
        }
        if fleet_hold_ended && self.lanes[l].hold().is_some() {
            self.end_hold(l);
        }
        // Kinds another client's service refused (this account's): routing skips them here too,
        // without a refused submission of this client's to learn it, and what waits here of such
        // a kind moves to another service now (with none, it stays and learns it itself).
        let mut newly = Vec::new();
        for refused in &grant.refused_kinds {
            if let Some(kind) = TaskKind::parse(&refused.kind) {
                if !self.lanes[l].refuses_kind(kind, now) {
                    self.lanes[l].refuse_kind(kind, now.add(Duration::from_millis(refused.ms)));
                    newly.push(kind);
                }
            }
        }
        if !newly.is_empty() {
            let why = Failure::new(
                "ERROR_TASK_NOT_SUPPORTED",
                crate::class::ErrorClass::FixInput,
                "the service refused this kind of task for another client of the fleet",
            );
            for job in self.lanes[l].waiting() {
                if self.jobs.get(&job).is_some_and(|j| newly.contains(&j.kind())) {
                    self.fail_over(job, &why, now);
                }
            }
        }
        // The fleet may have spent the budget meanwhile: what waits here is refused now.
        self.sweep_if_budget_spent(now);
        if grant.paused_ms > 0 {
            let code = grant.pause_code.clone().unwrap_or_else(|| "fleet pause".to_string());
            self.pause(l, super::PauseScope::Submits, &code, now.add(Duration::from_millis(grant.paused_ms)));
        }
        if let Some(error) = grant.account_error {
            if self.lanes[l].circuit().account_failure().is_none() {
                let failure = Failure::new(&error.code, crate::class::ErrorClass::AccountTerminal, error.description);
                self.account_failed_elsewhere(l, failure, now);
            }
        }
    }

    /// Whether lane `l`'s share (if it has one) lets a submission go out now.
    pub(super) fn fleet_allows(&mut self, l: LaneId, now: Timestamp) -> bool {
        let lane = &mut self.lanes[l];
        let in_flight = lane.in_flight();
        lane.fleet_mut().is_none_or(|share| share.allows(in_flight, now))
    }
}
