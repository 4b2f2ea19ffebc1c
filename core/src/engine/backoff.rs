//! Retry delays: exponential with full jitter, decorrelated jitter, or fixed.

use core::time::Duration;

use super::config::Backoff;

/// The delay before retry `n` (0-based); `previous` is the last delay given (for decorrelated jitter).
pub(crate) fn delay(policy: &Backoff, n: u32, previous: Duration, rng: &mut fastrand::Rng) -> Duration {
    match *policy {
        Backoff::FullJitter { base_ms, cap_ms } => {
            let ceiling = base_ms.saturating_mul(1u64.checked_shl(n.min(40)).unwrap_or(u64::MAX)).min(cap_ms);
            Duration::from_millis(rng.u64(0..=ceiling))
        }
        Backoff::Decorrelated { base_ms, cap_ms } => {
            let prev = u64::try_from(previous.as_millis()).unwrap_or(u64::MAX).max(base_ms);
            let upper = prev.saturating_mul(3).max(base_ms);
            Duration::from_millis(rng.u64(base_ms..=upper).min(cap_ms))
        }
        Backoff::Fixed { delay_ms } => Duration::from_millis(delay_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_jitter_stays_under_the_exponential_ceiling_and_cap() {
        let mut rng = fastrand::Rng::with_seed(7);
        let policy = Backoff::FullJitter { base_ms: 100, cap_ms: 1000 };
        for n in 0..20 {
            for _ in 0..50 {
                let d = delay(&policy, n, Duration::ZERO, &mut rng).as_millis() as u64;
                assert!(d <= (100u64 << n.min(20)).min(1000), "retry {n} waited {d} ms");
            }
        }
    }

    #[test]
    fn decorrelated_grows_from_base_and_respects_cap() {
        let mut rng = fastrand::Rng::with_seed(3);
        let policy = Backoff::Decorrelated { base_ms: 100, cap_ms: 5000 };
        let mut prev = Duration::ZERO;
        let mut saw_growth = false;
        for n in 0..30 {
            let d = delay(&policy, n, prev, &mut rng);
            assert!(d >= Duration::from_millis(100) && d <= Duration::from_millis(5000), "{d:?}");
            saw_growth |= d > Duration::from_millis(300);
            prev = d;
        }
        assert!(saw_growth, "decorrelated jitter never grew past 3×base");
    }

    #[test]
    fn fixed_is_fixed() {
        let mut rng = fastrand::Rng::with_seed(1);
        assert_eq!(delay(&Backoff::Fixed { delay_ms: 42 }, 9, Duration::ZERO, &mut rng), Duration::from_millis(42));
    }
}
