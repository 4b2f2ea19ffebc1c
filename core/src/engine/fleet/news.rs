//! What a lane's fleet share has to tell the fleet at its next sync: [`News`].

use crate::class::Failure;
use crate::fleet::{FleetReport, RefusedKind, SharedAccountError, SharedPause};
use crate::support::time::Timestamp;
use crate::task::TaskKind;

/// What the provider told the lane since the last sync (pauses, "no free worker", accepted
/// submissions, account errors or their end, refused kinds), a probe turn asked for, and the
/// solved tasks' cost not yet reported.
///
/// Calling contract: each `report_*` method adds one piece of news; [`report`](Self::report)
/// moves all of it into the next sync's report, and [`restore`](Self::restore) takes back
/// that report's news when the sync failed, so nothing told is ever lost.
#[derive(Debug, Default)]
pub(in crate::engine) struct News {
    pause: Option<SharedPause>,
    no_slot: bool,
    accepted: u32,
    account_error: Option<SharedAccountError>,
    account_ok: bool,
    /// The lane holds for an account error and its balance check is due: ask the fleet for the
    /// probe turn, for this long (0: not asking).
    probe_ask_ms: u64,
    /// Kinds the service refused as a whole.
    refused_kinds: Vec<RefusedKind>,
    /// Solved tasks' cost, and since when some is unreported.
    spent: u64,
    spent_since: Option<Timestamp>,
}

impl News {
    /// Whether there is news besides spend (spend has its own timer: [`spent_since`](Self::spent_since)).
    pub(in crate::engine) fn any(&self) -> bool {
        self.pause.is_some()
            || self.no_slot
            || self.account_error.is_some()
            || self.account_ok
            || self.probe_ask_ms > 0
            || !self.refused_kinds.is_empty()
    }

    /// The cost solved since the last sync (nano-units).
    pub(in crate::engine) fn spent(&self) -> u64 {
        self.spent
    }

    /// Since when some spend is unreported.
    pub(in crate::engine) fn spent_since(&self) -> Option<Timestamp> {
        self.spent_since
    }

    pub(in crate::engine) fn report_spent(&mut self, nano: u64, now: Timestamp) {
        self.spent = self.spent.saturating_add(nano);
        self.spent_since.get_or_insert(now);
    }

    pub(in crate::engine) fn report_pause(&mut self, code: &str, ms: u64) {
        if self.pause.as_ref().is_none_or(|p| p.ms < ms) {
            self.pause = Some(SharedPause { ms, code: code.to_string() });
        }
    }

    pub(in crate::engine) fn report_no_slot(&mut self) {
        self.no_slot = true;
    }

    pub(in crate::engine) fn report_accepted(&mut self) {
        self.accepted = self.accepted.saturating_add(1);
    }

    pub(in crate::engine) fn report_account_error(&mut self, failure: &Failure, hold_ms: u64) {
        self.account_ok = false;
        self.account_error =
            Some(SharedAccountError { code: failure.code.clone(), description: failure.description.clone(), hold_ms });
    }

    pub(in crate::engine) fn report_account_ok(&mut self) {
        self.account_error = None;
        self.account_ok = true;
    }

    /// Asks for the probe turn, for `turn_ms` (at least 1).
    pub(in crate::engine) fn ask_probe(&mut self, turn_ms: u64) {
        self.probe_ask_ms = turn_ms.max(1);
    }

    pub(in crate::engine) fn report_refused_kind(&mut self, kind: TaskKind, ms: u64) {
        self.refused_kinds.retain(|r| r.kind != kind.as_str());
        self.refused_kinds.push(RefusedKind { kind: kind.as_str().to_string(), ms });
    }

    /// `base` (the lane's side of a report) with all the news moved into it.
    pub(in crate::engine) fn report(&mut self, base: FleetReport) -> FleetReport {
        self.spent_since = None;
        FleetReport {
            spent_nano: core::mem::take(&mut self.spent),
            pause: self.pause.take(),
            no_slot: core::mem::take(&mut self.no_slot),
            accepted: core::mem::take(&mut self.accepted),
            account_error: self.account_error.take(),
            account_ok: core::mem::take(&mut self.account_ok),
            probe_ms: core::mem::take(&mut self.probe_ask_ms),
            refused_kinds: core::mem::take(&mut self.refused_kinds),
            ..base
        }
    }

    /// A sync carrying `report` failed at `now`: its news is news again (newer news first).
    pub(in crate::engine) fn restore(&mut self, report: FleetReport, now: Timestamp) {
        self.pause = self.pause.take().or(report.pause);
        self.no_slot |= report.no_slot;
        self.accepted = self.accepted.saturating_add(report.accepted);
        self.account_error = self.account_error.take().or(report.account_error);
        self.account_ok |= report.account_ok;
        self.probe_ask_ms = self.probe_ask_ms.max(report.probe_ms);
        self.refused_kinds.extend(report.refused_kinds);
        self.spent = self.spent.saturating_add(report.spent_nano);
        if report.spent_nano > 0 {
            self.spent_since.get_or_insert(now);
        }
    }
}
