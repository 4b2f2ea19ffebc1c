//! What the mock saw: request, submit, poll and fault counts, readable from Rust and over HTTP.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Distinct API keys tracked separately; further keys are summed under [`OTHER_KEYS`] so that a client
/// sending random keys cannot grow the mock's memory without bound.
const MAX_TRACKED_KEYS: usize = 1000;
/// Longest key name kept; longer keys are cut (at a character boundary) for the same reason.
const MAX_KEY_CHARS: usize = 128;
/// Bucket for keys beyond [`MAX_TRACKED_KEYS`].
pub const OTHER_KEYS: &str = "<other>";

/// A snapshot of the mock's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counters {
    /// Requests per endpoint (`/in.php`, `/res.php`, `/createTask`, `/getTaskResult`, `/getBalance`, `other`).
    pub requests: BTreeMap<String, u64>,
    /// Submit calls (`in.php`, `createTask`), accepted or not.
    pub submits: u64,
    /// Submits refused with an error code (those refused by the ban rule included).
    pub submit_errors: u64,
    /// Bans started by the ban rule (`MockConfig::ban`), all keys.
    pub bans_started: u64,
    /// Submits refused by the ban rule, all keys: the one that started each ban and every one
    /// made during a ban.
    pub banned_submits: u64,
    /// Single-task polls (`res.php?action=get&id=`, `getTaskResult`).
    pub polls_single: u64,
    /// Batch polls (`res.php?action=get&ids=`).
    pub polls_batch: u64,
    /// Task ids asked about by all polls.
    pub ids_polled: u64,
    /// Injected faults by kind (`http_5xx`, `html_502`, `truncated_json`, `connection_reset`, `slow`).
    pub faults: BTreeMap<String, u64>,
    /// Tasks accepted.
    pub tasks_created: u64,
    /// Tasks whose answer was delivered at least once.
    pub tasks_solved: u64,
    /// Tasks evicted to stay within `max_tasks`.
    pub tasks_evicted: u64,
    /// Balance checks.
    pub balance_checks: u64,
    /// `reportgood` calls.
    pub reports_good: u64,
    /// `reportbad` calls.
    pub reports_bad: u64,
    /// Per API key.
    pub by_key: BTreeMap<String, KeyCounters>,
}

/// Counters of one API key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct KeyCounters {
    /// Requests carrying this key.
    pub requests: u64,
    /// Submits carrying this key.
    pub submits: u64,
    /// Polls (single and batch) carrying this key.
    pub polls: u64,
    /// Tasks accepted for this key.
    pub tasks_created: u64,
    /// Tasks of this key whose answer was delivered.
    pub tasks_solved: u64,
    /// Bans of this key started by the ban rule.
    pub bans_started: u64,
    /// Submits of this key refused by the ban rule.
    pub banned_submits: u64,
}

impl Counters {
    pub(crate) fn request(&mut self, endpoint: &str) {
        *self.requests.entry(endpoint.to_string()).or_default() += 1;
    }

    pub(crate) fn fault(&mut self, kind: &str) {
        *self.faults.entry(kind.to_string()).or_default() += 1;
    }

    /// Counts a submit of `key` refused by the ban rule; `started`: it started the ban.
    pub(crate) fn ban_refusal(&mut self, key: &str, started: bool) {
        self.banned_submits += 1;
        self.bans_started += u64::from(started);
        let entry = self.key(key);
        entry.banned_submits += 1;
        entry.bans_started += u64::from(started);
    }

    /// The entry of a key, or the shared overflow entry once too many keys were seen.
    pub(crate) fn key(&mut self, key: &str) -> &mut KeyCounters {
        let key = key.char_indices().nth(MAX_KEY_CHARS).map_or(key, |(cut, _)| key.get(..cut).unwrap_or(key));
        let name = if self.by_key.contains_key(key) || self.by_key.len() < MAX_TRACKED_KEYS { key } else { OTHER_KEYS };
        self.by_key.entry(name.to_string()).or_default()
    }

    /// Requests counted for `endpoint`.
    pub fn requests_to(&self, endpoint: &str) -> u64 {
        self.requests.get(endpoint).copied().unwrap_or(0)
    }

    /// Faults injected of `kind`.
    pub fn faults_of(&self, kind: &str) -> u64 {
        self.faults.get(kind).copied().unwrap_or(0)
    }

    /// All injected faults.
    pub fn faults_total(&self) -> u64 {
        self.faults.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_beyond_the_limit_share_one_bucket() {
        let mut counters = Counters::default();
        for i in 0..MAX_TRACKED_KEYS + 5 {
            counters.key(&format!("key-{i}")).requests += 1;
        }
        counters.key("key-0").requests += 1;
        assert_eq!(counters.by_key.len(), MAX_TRACKED_KEYS + 1);
        assert_eq!(counters.by_key[OTHER_KEYS].requests, 5);
        assert_eq!(counters.by_key["key-0"].requests, 2, "known keys keep their own entry");
    }

    #[test]
    fn long_keys_are_cut_at_a_character_boundary() {
        let mut counters = Counters::default();
        let long = "é".repeat(MAX_KEY_CHARS * 3);
        counters.key(&long).submits += 1;
        counters.key(&long).submits += 1;
        let (name, entry) = counters.by_key.iter().next().unwrap_or_else(|| panic!("no entry"));
        assert_eq!(name.chars().count(), MAX_KEY_CHARS);
        assert_eq!(entry.submits, 2);
    }
}
