//! What every binding does with an item of a replay or a recovery as it hands it to its host:
//! take out the receipt of the answer the item carries, write the item as a host value, and
//! keep it for the collect-all result (`replay()`, `recover()`) when the caller asked for one.
//! Written once here so that Node, Python and the browser only hold the collector and call
//! [`CollectAll::hand_over`] and [`CollectAll::result`].

use serde_json::Value;

use captcha_dlq_core::dlq::replay::ReplayReport;
use captcha_dlq_core::support::json_read::Casing;

use crate::api_values;
use crate::driver::Receipt;
use crate::error::Error;
use crate::recover::{RecoverCollector, RecoverItem, RecoverStream, RecoverSummary};
use crate::replay::{ReplayCollector, ReplayItem, ReplayStream};

/// A collect-all call's collector: what its stream yields and what the call returns.
pub trait CollectAll: Default + 'static {
    /// What the stream yields.
    type Stream: futures::Stream<Item = Result<Self::Item, Error>> + Unpin + 'static;
    type Item;
    /// The stream's counts (a replay's report, a recovery's summary).
    type Counts: Copy + Default + serde::Serialize + 'static;

    /// The counts of `stream` so far (final once it ended).
    fn counts(stream: &Self::Stream) -> Self::Counts;

    /// `item` as the host receives it and the receipt of the answer it carries (to acknowledge
    /// once the value is the host's); the item is kept in `keep` when the caller collects.
    fn hand_over(item: Self::Item, casing: Casing, keep: Option<&mut Self>) -> (Value, Option<Receipt>);

    /// The collect-all result, with the stream's final counts.
    fn result(self, counts: Self::Counts, casing: Casing) -> Value;
}

impl CollectAll for ReplayCollector {
    type Stream = ReplayStream;
    type Item = ReplayItem;
    type Counts = ReplayReport;

    fn counts(stream: &ReplayStream) -> ReplayReport {
        stream.report()
    }

    fn hand_over(item: ReplayItem, casing: Casing, keep: Option<&mut Self>) -> (Value, Option<Receipt>) {
        let (item, receipt) = item.handed_over();
        let value = api_values::replay_item(&item, casing);
        if let Some(keep) = keep {
            keep.push(item);
        }
        (value, receipt)
    }

    fn result(self, counts: ReplayReport, casing: Casing) -> Value {
        api_values::replay_result(&self.finish(counts), casing)
    }
}

impl CollectAll for RecoverCollector {
    type Stream = RecoverStream;
    type Item = RecoverItem;
    type Counts = RecoverSummary;

    fn counts(stream: &RecoverStream) -> RecoverSummary {
        stream.summary()
    }

    fn hand_over(item: RecoverItem, casing: Casing, keep: Option<&mut Self>) -> (Value, Option<Receipt>) {
        let (item, receipt) = item.handed_over();
        let value = api_values::recover_item(&item, casing);
        if let Some(keep) = keep {
            keep.push(item);
        }
        (value, receipt)
    }

    fn result(self, counts: RecoverSummary, casing: Casing) -> Value {
        api_values::recover_result(&self.finish(counts), casing)
    }
}
