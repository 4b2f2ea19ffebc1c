//! Reading a selection of records page by page without offsets.
//!
//! `peek` takes an offset, and every store walks (and decodes) the records it
//! skips, so page 1,000 of 100,000 records would cost a thousand pages. The
//! stores order records by `dead_lettered_at`, then id, and filter on
//! `dead_lettered_after` through their age index, so a page starts where the
//! last one ended instead: at the last record's time, skipping the records at
//! that very millisecond already seen (keyset pagination). A record pushed
//! meanwhile at an already-passed millisecond with a smaller id can shift
//! that count by one; a page read for display tolerates it, and full scans
//! drop repeats by id.

use std::collections::HashSet;

use captcha_dlq_client::{Dlq, Result};
use captcha_dlq_core::dlq::{DeadLetterRecord, Filter, Page};
use captcha_dlq_core::Timestamp;

/// Where the next page starts: records at `after` (ms) or later, minus the first `skip` at `after`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) after: Timestamp,
    pub(crate) skip: usize,
}

impl Cursor {
    /// `<unix ms>.<skip>`, as it travels in a URL.
    pub(crate) fn parse(text: &str) -> Option<Cursor> {
        let (ms, skip) = text.split_once('.')?;
        Some(Cursor { after: Timestamp::from_unix_millis(ms.parse().ok()?), skip: skip.parse().ok()? })
    }

    pub(crate) fn encode(&self) -> String {
        format!("{}.{}", self.after.as_unix_millis(), self.skip)
    }
}

/// One page of `filter`'s records from `cursor` (the start when `None`), and the cursor
/// of the page after it (`None` when this one is the last).
pub(crate) async fn page(
    dlq: &Dlq,
    filter: &Filter,
    cursor: Option<Cursor>,
    limit: usize,
) -> Result<(Vec<DeadLetterRecord>, Option<Cursor>)> {
    let mut windowed = filter.clone();
    let mut offset = 0;
    if let Some(c) = cursor {
        if windowed.dead_lettered_after.is_none_or(|t| t <= c.after) {
            windowed.dead_lettered_after = Some(c.after);
            offset = c.skip;
        }
    }
    let records = dlq.peek(&windowed, Page { offset, limit }).await?;
    let next = (records.len() == limit).then(|| next_cursor(&records, cursor)).flatten();
    Ok((records, next))
}

fn next_cursor(records: &[DeadLetterRecord], cursor: Option<Cursor>) -> Option<Cursor> {
    let last = records.last()?.dead_lettered_at;
    let at_last = records.iter().rev().take_while(|r| r.dead_lettered_at == last).count();
    let before = match cursor {
        Some(c) if c.after == last => c.skip,
        _ => 0,
    };
    Some(Cursor { after: last, skip: before + at_last })
}

/// Visits every record of `filter` once, oldest first, `batch` at a time; returns how many.
pub(crate) async fn for_each(
    dlq: &Dlq,
    filter: &Filter,
    batch: usize,
    mut visit: impl FnMut(&DeadLetterRecord),
) -> Result<u64> {
    let mut cursor = None;
    let mut seen: HashSet<String> = HashSet::new();
    let mut n = 0;
    loop {
        let (records, next) = page(dlq, filter, cursor, batch).await?;
        // Repeats (a shifted page) are only possible at the page's first millisecond.
        let first = records.first().map(|r| r.dead_lettered_at);
        for record in &records {
            if Some(record.dead_lettered_at) == first && !seen.insert(record.id.clone()) {
                continue;
            }
            n += 1;
            visit(record);
        }
        seen.clear();
        if let Some(last) = records.last() {
            // Remember the ids at the last millisecond: the next page starts there.
            seen.extend(records.iter().filter(|r| r.dead_lettered_at == last.dead_lettered_at).map(|r| r.id.clone()));
        }
        match next {
            Some(c) => cursor = Some(c),
            None => return Ok(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> DeadLetterRecord {
        let mut r = captcha_dlq_core::dlq::testkit::sample_record(&format!("r{ms}"), 0);
        r.dead_lettered_at = Timestamp::from_unix_millis(ms);
        r
    }

    #[test]
    fn cursors_count_the_records_already_seen_at_the_last_millisecond() {
        let page1 = [at(5), at(7), at(7)];
        let c = next_cursor(&page1, None).unwrap();
        assert_eq!(c, Cursor { after: Timestamp::from_unix_millis(7), skip: 2 });
        // A page entirely at the same millisecond adds to the count.
        let page2 = [at(7), at(7)];
        assert_eq!(next_cursor(&page2, Some(c)).unwrap().skip, 4);
        assert_eq!(Cursor::parse(&c.encode()), Some(c));
        assert_eq!(Cursor::parse("x.1"), None);
    }
}
