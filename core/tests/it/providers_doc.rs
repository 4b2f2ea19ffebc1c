//! `docs/providers.md` and `core/src/provider/limits.rs` state the same
//! figures: the engine's defaults are the documented table, so neither can
//! change without the other.

use std::collections::BTreeMap;
use std::path::PathBuf;

use captcha_dlq_core::engine::{EngineConfig, PollingConfig};
use captcha_dlq_core::provider::limits::{self, ServiceLimits};
use captcha_dlq_core::provider::{Provider, PRESETS};
use captcha_dlq_core::TaskKind;

fn document() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/providers.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The table after `<!-- table:{name} -->`: its header cells and its rows, by first cell.
fn table(doc: &str, name: &str) -> (Vec<String>, BTreeMap<String, Vec<String>>) {
    let marker = format!("<!-- table:{name} -->");
    let start = doc.find(&marker).unwrap_or_else(|| panic!("docs/providers.md has no {marker}"));
    let cells = |line: &str| -> Vec<String> {
        line.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
    };
    let mut lines = doc[start + marker.len()..].lines().skip_while(|l| l.trim().is_empty());
    let header = cells(lines.next().unwrap_or_else(|| panic!("{name}: no header")));
    let mut rows = BTreeMap::new();
    for line in lines.skip(1).take_while(|l| l.trim_start().starts_with('|')) {
        let mut row = cells(line);
        let service = row.remove(0);
        assert_eq!(row.len() + 1, header.len(), "{name}: row {service} has {} cells", row.len() + 1);
        assert!(rows.insert(service.clone(), row).is_none(), "{name}: {service} twice");
    }
    (header, rows)
}

fn number(table: &str, service: &str, cell: &str) -> Option<f64> {
    if cell == "—" {
        return None;
    }
    Some(cell.parse().unwrap_or_else(|_| panic!("{table}: {service}: {cell:?} is not a number")))
}

fn row<'a>(rows: &'a BTreeMap<String, Vec<String>>, table: &str, l: &ServiceLimits) -> &'a [String] {
    rows.get(l.service).unwrap_or_else(|| panic!("{table}: no row for {}", l.service))
}

#[test]
fn the_document_lists_every_service_of_the_code_and_no_other() {
    let doc = document();
    let services: Vec<&str> = limits::SERVICES.iter().map(|l| l.service).collect();
    let presets: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
    let mut sorted = services.clone();
    sorted.sort_unstable();
    let mut sorted_presets = presets.clone();
    sorted_presets.sort_unstable();
    assert_eq!(sorted, sorted_presets, "a preset without limits, or limits without a preset");
    for name in ["limits", "first_poll_ms", "give_up_ms", "interval_ms"] {
        let (_, rows) = table(&doc, name);
        let documented: Vec<&str> = rows.keys().map(String::as_str).collect();
        let mut expected = services.clone();
        expected.sort_unstable();
        assert_eq!(documented, expected, "table {name}");
    }
}

#[test]
fn limits_per_service_match() {
    let doc = document();
    let (header, rows) = table(&doc, "limits");
    assert_eq!(header.len(), 6, "{header:?}");
    for l in limits::SERVICES {
        let r = row(&rows, "limits", l);
        assert_eq!(number("limits", l.service, &r[0]), Some(l.submits_per_second), "{} submits per second", l.service);
        assert_eq!(number("limits", l.service, &r[1]), Some(l.min_poll_interval_ms as f64), "{} interval", l.service);
        assert_eq!(number("limits", l.service, &r[2]), l.poll_limit.map(f64::from), "{} poll limit", l.service);
        assert_eq!(number("limits", l.service, &r[3]), Some(f64::from(l.max_polls)), "{} polls", l.service);
        assert_eq!(number("limits", l.service, &r[4]), l.result_kept_ms.map(|v| v as f64), "{} kept", l.service);
    }
}

#[test]
fn schedules_per_kind_match() {
    let doc = document();
    for (name, figure) in [
        ("first_poll_ms", (|l: &ServiceLimits, k| l.first_poll_ms.ms(k)) as fn(&ServiceLimits, TaskKind) -> u64),
        ("give_up_ms", |l: &ServiceLimits, k| l.give_up_ms.ms(k)),
        ("interval_ms", |l: &ServiceLimits, k| {
            u64::try_from(PollingConfig::from_limits(l).planned_interval(k).as_millis()).unwrap()
        }),
    ] {
        let (header, rows) = table(&doc, name);
        let kinds: Vec<TaskKind> = header[1..]
            .iter()
            .map(|h| TaskKind::parse(h).unwrap_or_else(|| panic!("{name}: {h:?} is not a task kind")))
            .collect();
        // A column per schedule: the other kinds follow the kind they are solved like.
        let mut columns = kinds.clone();
        columns.sort_unstable();
        let schedules: Vec<TaskKind> = TaskKind::ALL.into_iter().filter(|k| k.schedule() == *k).collect();
        assert_eq!(columns, schedules, "{name}: not one column per schedule");
        for kind in TaskKind::ALL {
            for l in limits::SERVICES {
                assert_eq!(
                    figure(l, kind),
                    figure(l, kind.schedule()),
                    "{name}: {} {kind} is not its schedule's",
                    l.service
                );
            }
        }
        for l in limits::SERVICES {
            let r = row(&rows, name, l);
            for (cell, kind) in r.iter().zip(&kinds) {
                let documented = number(name, l.service, cell).map(|v| v as u64);
                assert_eq!(documented, Some(figure(l, *kind)), "{name}: {} {kind}", l.service);
            }
        }
    }
}

#[test]
fn for_provider_builds_the_documented_engine_config() {
    for (name, _, _) in PRESETS {
        let provider = Provider::preset(name).unwrap();
        let l = limits::for_provider(&provider);
        let config = EngineConfig::for_provider(&provider);
        config.validate().unwrap();
        assert_eq!(config.rate.submits_per_second, l.submits_per_second, "{name}");
        assert_eq!(config.polling, PollingConfig::from_limits(l), "{name}");
        // Everything else is the generic default.
        let default = EngineConfig::default();
        assert_eq!((config.retry, config.circuit, config.seed), (default.retry, default.circuit, default.seed));
    }
}
