//! The answer a collect-all call (`replay`, `recover`) hands over: the results of both calls
//! (`replay::ReplayResult`, `recover::RecoverResult`) list them, and every binding returns
//! them in the same shape (`api_values::answer`, checked against `tests/shapes/results.json`).
//! Answers are included so that a caller never pays for a re-solved answer it does not see.

use std::collections::BTreeMap;

use captcha_dlq_core::Solution;
use serde::Serialize;

/// A task's answer as a collect-all call hands it over (acknowledged: its record or journal
/// entry is gone). `key` is the caller's key of a recovered task; replayed records have none.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Answer {
    pub id: String,
    pub key: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub solution: Solution,
}
