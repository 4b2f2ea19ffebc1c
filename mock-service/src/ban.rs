//! The opt-in submit-rate ban: too many submissions from one API key within a window get the key
//! refused for a while, as 2captcha does on `in.php`.
//!
//! 2captcha's error table for `in.php` (the table of <https://2captcha.com/api-docs/limits>; the copy
//! of that page reachable while writing this shows its introduction, not the rows) describes
//! `MAX_USER_TURN` as "You made more than 60 requests to in.php within 3 seconds. Your account is
//! banned for 10 seconds. Ban will be lifted automatically." — the text of 2captcha's v1 API
//! description, quoted word for word by its clients, e.g. the `RateLimited` error of
//! <https://hackage.haskell.org/package/captcha-2captcha/docs/Captcha-TwoCaptcha.html>. The mock
//! models that, per key: the submission that makes more than `max_submits` within `window_ms` is
//! refused and starts a ban of `ban_ms`; every submission during the ban is refused; nothing
//! documented says requests made during a ban extend it, so they neither extend it nor count
//! towards the next window. The numbers are the rule's, so tests can use small ones.
//!
//! Without it a fleet bench could not see a key getting banned, which is what several processes on
//! one key do to each other when each keeps only its own submit rate.

use std::collections::{HashMap, VecDeque};

use tokio::time::{Duration, Instant};

use crate::config::BanRule;
use crate::counters::{Counters, OTHER_KEYS};

/// Distinct keys with their own window and ban; further keys share one (as in the counters), so
/// that a client sending random keys cannot grow the mock's memory without bound.
const MAX_TRACKED_KEYS: usize = 1000;

/// What the rule says of one submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Under the limit: the submission goes on to be checked and accepted as usual.
    Allowed,
    /// This submission crossed the limit: it is refused and a ban starts now.
    BanStarted,
    /// The key is banned: refused.
    Banned,
}

/// The window and ban of one key.
#[derive(Debug, Default)]
struct KeyState {
    /// When the submissions counted in the current window were made, oldest first; never more
    /// than `max_submits` (older ones cannot decide anything any more).
    recent: VecDeque<Instant>,
    /// The end of the current ban, if one is running.
    banned_until: Option<Instant>,
}

/// Every key's window and ban.
#[derive(Debug, Default)]
pub(crate) struct Bans {
    keys: HashMap<String, KeyState>,
}

impl Bans {
    /// Forgets every window and ban (a reset, or a new script whose rule may differ).
    pub fn clear(&mut self) {
        self.keys.clear();
    }

    /// Applies `rule` to one submission by `key` at `now`, counting bans and refusals.
    pub fn check(&mut self, rule: &BanRule, key: &str, now: Instant, counters: &mut Counters) -> Verdict {
        let name = if self.keys.contains_key(key) || self.keys.len() < MAX_TRACKED_KEYS { key } else { OTHER_KEYS };
        let state = self.keys.entry(name.to_string()).or_default();
        if let Some(until) = state.banned_until {
            if now < until {
                counters.ban_refusal(key, false);
                return Verdict::Banned;
            }
            state.banned_until = None;
        }
        let window = Duration::from_millis(rule.window_ms);
        while state.recent.front().is_some_and(|at| now.saturating_duration_since(*at) >= window) {
            state.recent.pop_front();
        }
        if state.recent.len() >= rule.max_submits as usize {
            // This is submission max_submits + 1 within the window: the ban starts with it. The
            // window starts afresh once the ban is over, since refused requests are not counted.
            state.recent.clear();
            state.banned_until = Some(now + Duration::from_millis(rule.ban_ms));
            counters.ban_refusal(key, true);
            return Verdict::BanStarted;
        }
        state.recent.push_back(now);
        Verdict::Allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(max_submits: u32, window_ms: u64, ban_ms: u64) -> BanRule {
        BanRule { max_submits, window_ms, ban_ms, ..BanRule::default() }
    }

    #[test]
    fn the_submission_past_the_limit_starts_a_ban_that_ends_on_time() {
        let (mut bans, mut counters) = (Bans::default(), Counters::default());
        let rule = rule(3, 1000, 500);
        let t0 = Instant::now();
        for i in 0..3 {
            assert_eq!(bans.check(&rule, "k", t0 + Duration::from_millis(i), &mut counters), Verdict::Allowed);
        }
        assert_eq!(bans.check(&rule, "k", t0 + Duration::from_millis(10), &mut counters), Verdict::BanStarted);
        assert_eq!(bans.check(&rule, "k", t0 + Duration::from_millis(509), &mut counters), Verdict::Banned);
        // The ban ends 500 ms after it started, not after the last refused request.
        assert_eq!(bans.check(&rule, "k", t0 + Duration::from_millis(510), &mut counters), Verdict::Allowed);
        assert_eq!((counters.bans_started, counters.banned_submits), (1, 2));
        assert_eq!((counters.by_key["k"].bans_started, counters.by_key["k"].banned_submits), (1, 2));
    }

    #[test]
    fn submissions_spread_over_more_than_the_window_are_never_banned() {
        let (mut bans, mut counters) = (Bans::default(), Counters::default());
        let rule = rule(3, 1000, 500);
        let t0 = Instant::now();
        // Four submissions every 400 ms: any 1000 ms window holds at most three.
        for i in 0..20 {
            let verdict = bans.check(&rule, "k", t0 + Duration::from_millis(400 * i), &mut counters);
            assert_eq!(verdict, Verdict::Allowed, "submission {i}");
        }
        assert_eq!(counters.bans_started, 0);
    }

    #[test]
    fn keys_are_banned_separately() {
        let (mut bans, mut counters) = (Bans::default(), Counters::default());
        let rule = rule(1, 1000, 1000);
        let t0 = Instant::now();
        assert_eq!(bans.check(&rule, "a", t0, &mut counters), Verdict::Allowed);
        assert_eq!(bans.check(&rule, "a", t0, &mut counters), Verdict::BanStarted);
        assert_eq!(bans.check(&rule, "b", t0, &mut counters), Verdict::Allowed, "another key is not banned");
        assert_eq!((counters.bans_started, counters.by_key["a"].bans_started), (1, 1));
        assert!(!counters.by_key.contains_key("b"), "nothing was refused for b");
    }
}
