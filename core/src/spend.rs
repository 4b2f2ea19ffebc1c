//! Money: what a provider charges per solved task, and what a client spent.
//!
//! - [`Prices`] is a provider's configured price table (`price` in the client options):
//!   one number for every kind or one per kind, in whatever currency the user keeps all
//!   prices in. It is the fallback for providers that do not report a task's cost (the v1
//!   API, CapSolver, CapMonster) and the cost `cheapest` routing starts from.
//! - [`SpendLedger`] is what a client spent since it started: each solved task adds its
//!   cost (reported by the provider, else its configured price, else it counts as
//!   unpriced) under its provider, its task kind and each of its labels; each dead-lettered
//!   task is counted there too (providers charge solved tasks only, so it costs nothing).
//!   The engine keeps one and checks the budget cap against it; [`SpendReport`] is its
//!   serialisable form (`Client::spend()`, `captcha-dlq spend`), which
//!   [`SpendReport::from_entries`] also builds from saved results and DLQ records.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Nano-units per unit of money: budgets reserve and fleets report costs in whole nano-units,
/// so their sums are exact.
pub(crate) const NANO: f64 = 1e9;

/// `amount` in whole nano-units (a finite amount of at least 0; the cast saturates).
pub(crate) fn to_nano(amount: f64) -> u64 {
    (amount * NANO).round() as u64
}

use serde::Serialize;
use serde_json::Value;

use crate::support::float_text::float_text;
use crate::support::json_read::{FieldError, Fields, FromJson, ReadOver};
use crate::task::TaskKind;

/// Distinct `label=value` rows a ledger keeps; the rest are summed under [`OTHER_LABELS`]
/// (a label with one value per task, such as a batch's `line`, would grow without bound).
pub const MAX_LABEL_ROWS: usize = 1000;

/// The row that sums label values beyond [`MAX_LABEL_ROWS`].
pub const OTHER_LABELS: &str = "(other labels)";

/// The key of tasks whose provider or kind a saved result does not say.
pub const UNKNOWN: &str = "(unknown)";

/// A provider's price per solved task, per kind; a kind without a price is unknown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prices {
    per_kind: [Option<f64>; TaskKind::ALL.len()],
}

// Written out: `Default` is derived for arrays of at most 32 items, and there are more kinds.
impl Default for Prices {
    fn default() -> Self {
        Prices { per_kind: [None; TaskKind::ALL.len()] }
    }
}

impl Prices {
    /// The same price for every kind.
    pub fn uniform(price: f64) -> Prices {
        Prices { per_kind: [Some(price); TaskKind::ALL.len()] }
    }

    pub fn get(&self, kind: TaskKind) -> Option<f64> {
        self.per_kind[kind.index()]
    }

    pub fn set(&mut self, kind: TaskKind, price: Option<f64>) {
        self.per_kind[kind.index()] = price;
    }

    pub fn is_empty(&self) -> bool {
        self.per_kind.iter().all(Option::is_none)
    }
}

/// A price: a finite number, zero or more.
fn price(value: Value) -> Result<f64, FieldError> {
    let p = f64::from_json(value)?;
    if p.is_finite() && p >= 0.0 {
        Ok(p)
    } else {
        Err(FieldError::whole("a price must be a finite number of at least 0"))
    }
}

/// One number for every kind, or an object of kinds (the kinds left out keep the base's).
impl ReadOver for Prices {
    fn read_over(self, value: Value) -> Result<Self, FieldError> {
        if value.is_number() {
            return price(value).map(Prices::uniform);
        }
        if !value.is_object() {
            return Err(FieldError::expected("a number or an object of task kinds", &value));
        }
        let mut prices = self;
        let mut f = Fields::new(value)?;
        for kind in TaskKind::ALL {
            if let Some((spelled, v)) = f.kind_key(kind.as_str())? {
                prices.set(kind, Some(price(v).map_err(|e| e.in_field(&spelled))?));
            }
        }
        f.finish()?;
        Ok(prices)
    }
}

impl FromJson for Prices {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        Prices::default().read_over(value)
    }
}

/// The kinds with a price, as an object.
impl Serialize for Prices {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for kind in TaskKind::ALL {
            if let Some(p) = self.get(kind) {
                map.serialize_entry(kind.as_str(), &p)?;
            }
        }
        map.end()
    }
}

/// Tasks and their cost under one key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    pub solved: u64,
    /// Sum of the known costs.
    pub cost: f64,
    /// Solved tasks whose cost is unknown (no reported cost, no configured price).
    pub unpriced: u64,
    /// Tasks dead-lettered (at this provider, for the provider breakdown).
    pub dead_lettered: u64,
}

impl Totals {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Solved(Some(c)) => {
                self.solved += 1;
                self.cost += c;
            }
            Outcome::Solved(None) => {
                self.solved += 1;
                self.unpriced += 1;
            }
            Outcome::DeadLettered => self.dead_lettered += 1,
        }
    }
}

/// How a task ended, for the ledger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// Solved, at this cost if known.
    Solved(Option<f64>),
    DeadLettered,
}

/// One task for [`SpendReport::from_entries`]: a saved result or a DLQ record.
#[derive(Clone, Debug, PartialEq)]
pub struct SpendEntry {
    /// The provider that solved it (or failed it last); `None` when the result does not say.
    pub provider: Option<String>,
    pub kind: Option<TaskKind>,
    pub labels: BTreeMap<String, String>,
    pub outcome: Outcome,
}

/// Adds `outcome` to the row of `key`, made on first use (the key is copied only then: rows
/// are few, tasks many).
fn add_to(rows: &mut BTreeMap<String, Totals>, key: &str, outcome: Outcome) {
    match rows.get_mut(key) {
        Some(totals) => totals.add(outcome),
        None => rows.entry(key.to_string()).or_default().add(outcome),
    }
}

/// What a client spent since it started, by provider, kind and label.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpendLedger {
    total: Totals,
    by_provider: BTreeMap<String, Totals>,
    by_kind: BTreeMap<String, Totals>,
    by_label: BTreeMap<String, Totals>,
    /// Where a label's row key is written (`name=value`), kept so that recording a task
    /// allocates nothing once its rows exist. Empty between calls.
    label_key: String,
}

impl SpendLedger {
    /// Adds one solved task. `labels`: its `(name, value)` pairs (a `&BTreeMap<String, String>`
    /// will do).
    pub fn record<K: AsRef<str>, V: AsRef<str>>(
        &mut self,
        provider: &str,
        kind: TaskKind,
        labels: impl IntoIterator<Item = (K, V)>,
        cost: Option<f64>,
    ) {
        self.add(Some(provider), Some(kind), labels, Outcome::Solved(cost));
    }

    /// Adds one dead-lettered task (it cost nothing).
    pub fn record_dead_letter<K: AsRef<str>, V: AsRef<str>>(
        &mut self,
        provider: &str,
        kind: TaskKind,
        labels: impl IntoIterator<Item = (K, V)>,
    ) {
        self.add(Some(provider), Some(kind), labels, Outcome::DeadLettered);
    }

    fn add<K: AsRef<str>, V: AsRef<str>>(
        &mut self,
        provider: Option<&str>,
        kind: Option<TaskKind>,
        labels: impl IntoIterator<Item = (K, V)>,
        outcome: Outcome,
    ) {
        self.total.add(outcome);
        add_to(&mut self.by_provider, provider.unwrap_or(UNKNOWN), outcome);
        add_to(&mut self.by_kind, kind.map_or(UNKNOWN, TaskKind::as_str), outcome);
        let mut key = std::mem::take(&mut self.label_key);
        for (k, v) in labels {
            key.clear();
            key.push_str(k.as_ref());
            key.push('=');
            key.push_str(v.as_ref());
            let row_key = if self.by_label.contains_key(&key) || self.by_label.len() < MAX_LABEL_ROWS {
                key.as_str()
            } else {
                OTHER_LABELS
            };
            add_to(&mut self.by_label, row_key, outcome);
        }
        key.clear();
        self.label_key = key;
    }

    /// The known cost of everything solved so far.
    pub fn total_cost(&self) -> f64 {
        self.total.cost
    }

    pub fn solved(&self) -> u64 {
        self.total.solved
    }

    /// The ledger as a report, with the client's budget cap if it has one.
    pub fn report(&self, budget: Option<f64>) -> SpendReport {
        let rows = |m: &BTreeMap<String, Totals>| m.iter().map(|(k, t)| SpendRow::new(k, *t)).collect();
        let mut report = SpendReport {
            solved: self.total.solved,
            cost: self.total.cost,
            unpriced: self.total.unpriced,
            dead_lettered: self.total.dead_lettered,
            budget,
            by_provider: rows(&self.by_provider),
            by_kind: rows(&self.by_kind),
            by_label: rows(&self.by_label),
        };
        report.sort();
        report
    }
}

/// One row of a spend breakdown.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpendRow {
    pub key: String,
    pub solved: u64,
    pub cost: f64,
    pub unpriced: u64,
    pub dead_lettered: u64,
}

impl SpendRow {
    fn new(key: &str, t: Totals) -> SpendRow {
        SpendRow {
            key: key.to_string(),
            solved: t.solved,
            cost: t.cost,
            unpriced: t.unpriced,
            dead_lettered: t.dead_lettered,
        }
    }
}

/// What was spent, by provider, kind and `label=value`; each breakdown most expensive first
/// (ties by key), so the same input gives the same output.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SpendReport {
    pub solved: u64,
    pub cost: f64,
    pub unpriced: u64,
    pub dead_lettered: u64,
    /// The client's budget cap, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<f64>,
    pub by_provider: Vec<SpendRow>,
    pub by_kind: Vec<SpendRow>,
    pub by_label: Vec<SpendRow>,
}

impl SpendReport {
    /// The report of a set of ended tasks (saved results, several runs of a batch, DLQ
    /// records).
    pub fn from_entries<'a>(entries: impl IntoIterator<Item = &'a SpendEntry>) -> SpendReport {
        let mut ledger = SpendLedger::default();
        for e in entries {
            ledger.add(e.provider.as_deref(), e.kind, &e.labels, e.outcome);
        }
        ledger.report(None)
    }

    fn sort(&mut self) {
        for rows in [&mut self.by_provider, &mut self.by_kind, &mut self.by_label] {
            // Ties by key (keys are unique): a total order, so the unstable sort (less code in
            // the .wasm) gives the same output every time.
            crate::support::sort::sort_unstable_by(rows, |a, b| {
                b.cost.total_cmp(&a.cost).then(b.solved.cmp(&a.solved)).then_with(|| a.key.cmp(&b.key))
            });
        }
    }
}

/// A plain-text table for the CLI.
pub fn render_table(r: &SpendReport) -> String {
    let mut out = String::new();
    let budget = r.budget.map_or_else(String::new, |b| format!(" of a budget of {}", money(b)));
    // Writing to a String cannot fail.
    let _ = writeln!(
        out,
        "spent {}{budget} on {} solved task(s); {} dead-lettered",
        money(r.cost),
        r.solved,
        r.dead_lettered
    );
    if r.unpriced > 0 {
        let _ =
            writeln!(out, "{} solved task(s) have no known cost (no reported cost, no configured price)", r.unpriced);
    }
    for (title, rows) in [("provider", &r.by_provider), ("kind", &r.by_kind), ("label", &r.by_label)] {
        let _ = writeln!(out);
        let shown = &rows[..rows.len().min(TABLE_ROWS)];
        let width = shown.iter().map(|b| b.key.chars().count()).chain([title.len()]).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "{title:<width$}  {:>8}  {:>12}  {:>8}  {:>13}",
            "solved", "cost", "unpriced", "dead-lettered"
        );
        if rows.is_empty() {
            let _ = writeln!(out, "{:<width$}  {:>8}", "-", 0);
        }
        for row in shown {
            let _ = writeln!(
                out,
                "{:<width$}  {:>8}  {:>12}  {:>8}  {:>13}",
                row.key,
                row.solved,
                money(row.cost),
                row.unpriced,
                row.dead_lettered
            );
        }
        if rows.len() > shown.len() {
            let _ = writeln!(out, "… {} more (--json lists every row)", rows.len() - shown.len());
        }
    }
    out
}

/// Rows of each breakdown a table shows (the JSON report has them all).
const TABLE_ROWS: usize = 25;

/// A cost with up to six decimals (provider prices are quoted to the hundredth of a cent).
fn money(x: f64) -> String {
    float_text((x * 1e6).round() / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prices_read_one_number_or_kinds_and_refuse_the_rest() {
        assert_eq!(Prices::from_json(json!(0.002)).unwrap().get(TaskKind::Turnstile), Some(0.002));
        let some = Prices::from_json(json!({"recaptcha_v2": 0.00299, "image": 0.0007})).unwrap();
        assert_eq!((some.get(TaskKind::RecaptchaV2), some.get(TaskKind::Hcaptcha)), (Some(0.00299), None));
        assert_eq!(Prices::from_json(json!({"recaptcha": 1})).unwrap_err().field, "recaptcha");
        let e = Prices::from_json(json!({"image": -1})).unwrap_err();
        assert_eq!(e.field, "image");
        assert!(e.problem.contains("at least 0"), "{}", e.problem);
        assert!(Prices::from_json(json!("cheap")).is_err());
        assert_eq!(serde_json::to_value(some).unwrap(), json!({"image": 0.0007, "recaptcha_v2": 0.00299}));
    }

    #[test]
    fn the_ledger_sums_by_provider_kind_and_label_and_counts_unpriced_tasks() {
        let mut l = SpendLedger::default();
        let labels = |job: &str| BTreeMap::from([("job".to_string(), job.to_string())]);
        l.record("capsolver", TaskKind::RecaptchaV2, &labels("a"), Some(0.001));
        l.record("capsolver", TaskKind::RecaptchaV2, &labels("b"), Some(0.001));
        l.record("2captcha", TaskKind::Image, &labels("a"), Some(0.003));
        l.record("2captcha", TaskKind::Image, &labels("a"), None);
        let r = l.report(Some(1.0));
        assert_eq!((r.solved, r.unpriced), (4, 1));
        assert!((r.cost - 0.005).abs() < 1e-12);
        let keys = |rows: &[SpendRow]| rows.iter().map(|r| r.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&r.by_provider), ["2captcha", "capsolver"], "most expensive first");
        assert_eq!(r.by_provider[0].unpriced, 1);
        assert_eq!(keys(&r.by_kind), ["image", "recaptcha_v2"]);
        assert_eq!(keys(&r.by_label), ["job=a", "job=b"]);
        assert!(render_table(&r).contains("spent 0.005 of a budget of 1 on 4 solved task(s); 0 dead-lettered"));
        l.record_dead_letter("capsolver", TaskKind::Image, &labels("c"));
        let r = l.report(None);
        assert_eq!((r.solved, r.dead_lettered), (4, 1));
        assert_eq!(r.by_provider.iter().find(|row| row.key == "capsolver").map(|row| row.dead_lettered), Some(1));
    }

    #[test]
    fn saved_results_without_provider_or_kind_count_as_unknown() {
        let entries = [
            SpendEntry { provider: None, kind: None, labels: BTreeMap::new(), outcome: Outcome::Solved(Some(0.5)) },
            SpendEntry {
                provider: Some("a".into()),
                kind: Some(TaskKind::Turnstile),
                labels: BTreeMap::new(),
                outcome: Outcome::DeadLettered,
            },
        ];
        let r = SpendReport::from_entries(&entries);
        assert_eq!((r.solved, r.cost, r.dead_lettered), (1, 0.5, 1));
        assert_eq!(r.by_provider[0].key, UNKNOWN);
        assert!(r.by_kind.iter().any(|row| row.key == "turnstile" && row.dead_lettered == 1));
    }

    #[test]
    fn label_rows_are_bounded() {
        let mut l = SpendLedger::default();
        for i in 0..MAX_LABEL_ROWS + 5 {
            l.record("p", TaskKind::Image, &BTreeMap::from([("line".to_string(), i.to_string())]), Some(1.0));
        }
        let r = l.report(None);
        assert_eq!(r.by_label.len(), MAX_LABEL_ROWS + 1);
        assert_eq!(r.by_label[0].key, OTHER_LABELS);
        assert_eq!(r.by_label[0].solved, 5);
    }
}
