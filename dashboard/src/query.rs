//! The records selection as it travels in URLs and forms: which records
//! (reason, class, state, sitekey, host, labels, age, ids, search text) and
//! which page of them. Read once here into the core's [`Filter`]; unknown
//! parameters and bad values are errors naming the parameter, so a misspelt
//! `reasn=` never widens a purge to every record.

use core::time::Duration;

use captcha_dlq_core::dlq::{Filter, RecordState};
use captcha_dlq_core::{ErrorClass, Timestamp};

use crate::scan::Cursor;

/// Parameters that select records.
const FILTER_KEYS: [&str; 10] =
    ["reason", "class", "state", "sitekey", "host", "label", "older_than", "newer_than", "id", "q"];
/// Parameters that page through them.
const PAGE_KEYS: [&str; 4] = ["after", "trail", "page", "size"];
/// Pages remembered for "previous".
const TRAIL_LEN: usize = 20;
pub(crate) const DEFAULT_PAGE_SIZE: usize = 50;
const MAX_PAGE_SIZE: usize = 500;

/// A bad parameter: which, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QueryError {
    pub(crate) field: String,
    pub(crate) problem: String,
}

impl core::fmt::Display for QueryError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

fn bad(field: &str, problem: impl Into<String>) -> QueryError {
    QueryError { field: field.to_string(), problem: problem.into() }
}

/// Which records, as the operator wrote it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Selection {
    /// The parameters, in order, empty values dropped (to rebuild links and hidden fields).
    pub(crate) pairs: Vec<(String, String)>,
    pub(crate) filter: Filter,
    /// Free text matched against ids, reasons, descriptions, labels, sitekeys, URLs and
    /// provider task ids by scanning (the stores have no text index).
    pub(crate) text: Option<String>,
}

/// A selection and a page of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RecordsQuery {
    pub(crate) selection: Selection,
    pub(crate) cursor: Option<Cursor>,
    /// Cursors of the pages before this one (`""` for the first), most recent last.
    pub(crate) trail: Vec<String>,
    /// 1-based page number.
    pub(crate) page: usize,
    pub(crate) size: usize,
}

/// Reads `a=1&b=2` into pairs.
pub(crate) fn pairs_of(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

/// Writes pairs as a query string.
pub(crate) fn encode(pairs: &[(String, String)]) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        out.append_pair(k, v);
    }
    out.finish()
}

impl RecordsQuery {
    pub(crate) fn parse(query: &str, now: Timestamp) -> Result<RecordsQuery, QueryError> {
        let pairs = pairs_of(query);
        let (page_pairs, filter_pairs): (Vec<_>, Vec<_>) =
            pairs.into_iter().partition(|(k, _)| PAGE_KEYS.contains(&k.as_str()));
        let selection = Selection::from_pairs(filter_pairs, now)?;
        let mut q = RecordsQuery { selection, page: 1, size: DEFAULT_PAGE_SIZE, ..RecordsQuery::default() };
        for (key, value) in page_pairs.iter().filter(|(_, v)| !v.is_empty()) {
            match key.as_str() {
                "after" => {
                    q.cursor = Some(Cursor::parse(value).ok_or_else(|| bad("after", "not a page cursor"))?);
                }
                "trail" => q.trail = value.split(',').map(str::to_string).collect(),
                "page" => {
                    q.page = value.parse().ok().filter(|p| *p >= 1).ok_or_else(|| bad("page", "not a page number"))?
                }
                "size" => {
                    q.size = value
                        .parse()
                        .ok()
                        .filter(|s| (1..=MAX_PAGE_SIZE).contains(s))
                        .ok_or_else(|| bad("size", format!("must be a number from 1 to {MAX_PAGE_SIZE}")))?;
                }
                _ => {}
            }
        }
        Ok(q)
    }

    /// The query of the page after this one, which starts at `next`.
    pub(crate) fn next_page(&self, next: Cursor) -> String {
        let mut trail = self.trail.clone();
        trail.push(self.cursor.map(|c| c.encode()).unwrap_or_default());
        if trail.len() > TRAIL_LEN {
            trail.remove(0);
        }
        self.with_page(Some(next), &trail, self.page + 1)
    }

    /// The query of the page before this one, if any.
    pub(crate) fn previous_page(&self) -> Option<String> {
        if self.page <= 1 {
            return None;
        }
        let mut trail = self.trail.clone();
        let previous = trail.pop();
        let cursor = previous.as_deref().and_then(Cursor::parse);
        // A trail cut short (more than TRAIL_LEN pages deep) goes back to the first page.
        let page = if previous.is_none() || (cursor.is_none() && !trail.is_empty()) { 1 } else { self.page - 1 };
        Some(self.with_page(cursor, &trail, page))
    }

    fn with_page(&self, cursor: Option<Cursor>, trail: &[String], page: usize) -> String {
        let mut pairs = self.selection.pairs.clone();
        if let Some(c) = cursor {
            pairs.push(("after".into(), c.encode()));
        }
        if !trail.is_empty() && page > 1 {
            pairs.push(("trail".into(), trail.join(",")));
        }
        if page > 1 {
            pairs.push(("page".into(), page.to_string()));
        }
        if self.size != DEFAULT_PAGE_SIZE {
            pairs.push(("size".into(), self.size.to_string()));
        }
        encode(&pairs)
    }
}

impl Selection {
    /// A selection from a query string holding only selection parameters.
    pub(crate) fn parse(query: &str, now: Timestamp) -> Result<Selection, QueryError> {
        Selection::from_pairs(pairs_of(query), now)
    }

    pub(crate) fn from_pairs(pairs: Vec<(String, String)>, now: Timestamp) -> Result<Selection, QueryError> {
        let mut s = Selection::default();
        for (key, value) in pairs {
            let value = value.trim().to_string();
            // Hosts are compared lower-case, as the records store them.
            let value = if key == "host" { value.to_ascii_lowercase() } else { value };
            if value.is_empty() {
                continue;
            }
            let f = &mut s.filter;
            match key.as_str() {
                "reason" => f.reasons.push(value.clone()),
                "class" => f.classes.push(ErrorClass::parse(&value).ok_or_else(|| {
                    let known: Vec<_> = ErrorClass::ALL.iter().map(|c| c.as_str()).collect();
                    bad("class", format!("{value:?} is not an error class ({})", known.join(", ")))
                })?),
                "state" => {
                    f.states.push(RecordState::ALL.into_iter().find(|st| st.as_str() == value).ok_or_else(|| {
                        bad("state", format!("{value:?} is not a record state (ready, leased, parked)"))
                    })?)
                }
                "sitekey" => f.sitekey = Some(value.clone()),
                "host" => f.page_host = Some(value.clone()),
                "label" => {
                    let (k, v) = value
                        .split_once('=')
                        .filter(|(k, _)| !k.is_empty())
                        .ok_or_else(|| bad("label", format!("expected KEY=VALUE, got {value:?}")))?;
                    f.labels.insert(k.to_string(), v.to_string());
                }
                "older_than" => f.dead_lettered_before = Some(ago(now, "older_than", &value)?),
                "newer_than" => f.dead_lettered_after = Some(ago(now, "newer_than", &value)?),
                "id" => f.ids.push(value.clone()),
                "q" => s.text = Some(value.clone()),
                other => {
                    let known = FILTER_KEYS.iter().chain(PAGE_KEYS.iter()).copied().collect::<Vec<_>>().join(", ");
                    return Err(bad(other, format!("unknown parameter; known: {known}")));
                }
            }
            s.pairs.push((key, value));
        }
        Ok(s)
    }

    /// The selection as a query string (for links, forms and exports).
    pub(crate) fn query(&self) -> String {
        encode(&self.pairs)
    }

    /// A short human description (`reason = Timeout, older than 2h`).
    pub(crate) fn describe(&self) -> String {
        if self.pairs.is_empty() {
            return "every record".to_string();
        }
        let parts: Vec<String> = self
            .pairs
            .iter()
            .map(|(k, v)| match k.as_str() {
                "older_than" => format!("older than {v}"),
                "newer_than" => format!("newer than {v}"),
                "q" => format!("matching {v:?}"),
                _ => format!("{k} = {v}"),
            })
            .collect();
        parts.join(", ")
    }
}

/// `now` minus a duration written `90s`, `15m`, `2h` or `7d`.
fn ago(now: Timestamp, field: &str, text: &str) -> Result<Timestamp, QueryError> {
    let duration = parse_duration(text)
        .ok_or_else(|| bad(field, format!("{text:?} is not a duration like 90s, 15m, 2h or 7d")))?;
    Ok(Timestamp::from_unix_millis(
        now.as_unix_millis().saturating_sub(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)),
    ))
}

pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().ok()?;
    let seconds = match unit {
        "s" => n,
        "m" => n.checked_mul(60)?,
        "h" => n.checked_mul(3600)?,
        "d" => n.checked_mul(86_400)?,
        _ => return None,
    };
    Some(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    const NOW: Timestamp = Timestamp::from_unix_millis(10_000_000);

    #[test]
    fn a_query_becomes_the_cores_filter() {
        let q = RecordsQuery::parse(
            "reason=Timeout&reason=ERROR_X&class=task_terminal&state=ready&host=Example.com&label=job%3Ddemo&older_than=1h&sitekey=&size=20",
            NOW,
        )
        .unwrap();
        let f = &q.selection.filter;
        assert_eq!(f.reasons, ["Timeout", "ERROR_X"]);
        assert_eq!(f.classes, [ErrorClass::TaskTerminal]);
        assert_eq!(f.states, [RecordState::Ready]);
        assert_eq!(f.page_host.as_deref(), Some("example.com"));
        assert_eq!(f.labels, labels(&[("job", "demo")]));
        assert_eq!(f.dead_lettered_before, Some(Timestamp::from_unix_millis(10_000_000 - 3_600_000)));
        assert_eq!(f.sitekey, None, "empty form fields select nothing");
        assert_eq!(q.size, 20);
        assert_eq!(q.selection.describe(), "reason = Timeout, reason = ERROR_X, class = task_terminal, state = ready, host = example.com, label = job=demo, older than 1h");
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |q: &str| RecordsQuery::parse(q, NOW).unwrap_err().to_string();
        assert!(err("reasn=Timeout").starts_with("reasn: unknown parameter"));
        assert!(err("class=nope").starts_with("class: \"nope\" is not an error class"));
        assert!(err("older_than=3 weeks").starts_with("older_than:"));
        assert!(err("label=novalue").starts_with("label: expected KEY=VALUE"));
        assert!(err("size=0").starts_with("size:"));
        assert!(err("after=zzz").starts_with("after:"));
    }

    #[test]
    fn pages_link_forward_and_back_through_the_trail() {
        let first = RecordsQuery::parse("reason=Timeout", NOW).unwrap();
        let c1 = Cursor { after: Timestamp::from_unix_millis(5), skip: 1 };
        let second = RecordsQuery::parse(&first.next_page(c1), NOW).unwrap();
        assert_eq!((second.page, second.cursor), (2, Some(c1)));
        let c2 = Cursor { after: Timestamp::from_unix_millis(9), skip: 3 };
        let third = RecordsQuery::parse(&second.next_page(c2), NOW).unwrap();
        assert_eq!((third.page, third.cursor), (3, Some(c2)));
        let back = RecordsQuery::parse(&third.previous_page().unwrap(), NOW).unwrap();
        assert_eq!((back.page, back.cursor), (2, Some(c1)));
        let start = RecordsQuery::parse(&back.previous_page().unwrap(), NOW).unwrap();
        assert_eq!((start.page, start.cursor), (1, None));
        assert_eq!(start.selection, first.selection);
        assert!(start.previous_page().is_none());
    }
}
