//! Wall-clock instants as plain numbers, because the core never reads a clock.
//!
//! Drivers pass `Timestamp`s in (from `SystemTime`, `Date.now()`, or a virtual
//! clock in tests); the core only adds, compares and formats them.

use core::fmt;
use core::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::quoted::Quoted;

/// Milliseconds since the Unix epoch. Serialized as an RFC 3339 string.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(u64);

impl Timestamp {
    pub const EPOCH: Timestamp = Timestamp(0);

    pub const fn from_unix_millis(ms: u64) -> Self {
        Timestamp(ms)
    }

    pub const fn as_unix_millis(self) -> u64 {
        self.0
    }

    /// `self + d`, saturating at the far future instead of overflowing.
    #[allow(clippy::should_implement_trait)] // saturating, unlike `Add` by convention
    pub fn add(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_add(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
    }

    /// How long after `earlier` this is; zero if it is not after it (clocks can step back).
    pub fn since(self, earlier: Timestamp) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }

    /// Hour bucket (`2026-11-21T10`), used by the DLQ analysis.
    pub fn hour_bucket(self) -> String {
        let s = self.to_rfc3339();
        s.get(..13).unwrap_or(&s).to_string()
    }

    /// `2026-11-21T10:00:06.5Z`: UTC, fraction only when there is one, without trailing zeros.
    pub fn to_rfc3339(self) -> String {
        let secs = self.0 / 1000;
        let millis = self.0 % 1000;
        let (year, month, day) = civil_from_days(secs / 86_400);
        if year > 9999 {
            return format!("@{}ms", self.0);
        }
        let rem = secs % 86_400;
        let mut out = format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}", rem / 3600, rem / 60 % 60, rem % 60);
        if millis != 0 {
            let fraction = format!(".{millis:03}");
            out.push_str(fraction.trim_end_matches('0'));
        }
        out.push('Z');
        out
    }

    /// Reads an RFC 3339 date-time (any offset, any number of fraction digits;
    /// digits beyond milliseconds are dropped). Instants before 1970 are refused.
    pub fn parse_rfc3339(s: &str) -> Result<Self, TimestampError> {
        let error = || TimestampError(s.chars().take(64).collect());
        let millis = rfc3339_millis(s.as_bytes()).ok_or_else(error)?;
        u64::try_from(millis).map(Timestamp).map_err(|_| error())
    }

    /// Unix seconds as a float, as the seeds' `timestamp` field was written by Python's `time.time()`.
    pub fn from_unix_seconds_f64(secs: f64) -> Option<Self> {
        (0.0..1.0e13).contains(&secs).then_some(Timestamp((secs * 1000.0) as u64))
    }
}

/// Milliseconds since the epoch of an RFC 3339 date-time, or `None` if `b` is not one.
fn rfc3339_millis(b: &[u8]) -> Option<i64> {
    let digits = |range: core::ops::Range<usize>| -> Option<i64> {
        let part = b.get(range)?;
        part.iter().try_fold(0i64, |n, &c| c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0')))
    };
    let separator = |i: usize, allowed: &[u8]| b.get(i).is_some_and(|c| allowed.contains(c));
    if b.len() < 20 || !separator(4, b"-") || !separator(7, b"-") || !separator(10, b"Tt") {
        return None;
    }
    if !separator(13, b":") || !separator(16, b":") {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, mut second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut millis = 0;
    let mut i = 19;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        let kept = &b[start..i.min(start + 3)];
        millis = kept.iter().fold(0, |n, &c| n * 10 + i64::from(c - b'0')) * 10i64.pow(3 - kept.len() as u32);
    }
    let offset_minutes = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hh = i64::from(h1.checked_sub(b'0').filter(|d| *d < 10)?) * 10
                + i64::from(h2.checked_sub(b'0').filter(|d| *d < 10)?);
            let mm = i64::from(m1.checked_sub(b'0').filter(|d| *d < 10)?) * 10
                + i64::from(m2.checked_sub(b'0').filter(|d| *d < 10)?);
            if hh > 23 || mm > 59 {
                return None;
            }
            if *sign == b'-' {
                -(hh * 60 + mm)
            } else {
                hh * 60 + mm
            }
        }
        _ => return None,
    };
    if second == 60 {
        // A leap second reads as the last instant of the minute before it.
        second = 59;
        millis = 999;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(secs * 1000 + millis)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` days after 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// A string that is not an RFC 3339 date-time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an RFC 3339 timestamp: {}", Quoted(.0))]
pub struct TimestampError(String);

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse_rfc3339(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_rfc3339() {
        let t = Timestamp::parse_rfc3339("2026-11-21T10:00:05Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-21T10:00:05Z");
        assert_eq!(t.hour_bucket(), "2026-11-21T10");
        let later = t.add(Duration::from_millis(1500));
        assert_eq!(later.to_rfc3339(), "2026-11-21T10:00:06.5Z");
        assert_eq!(later.since(t), Duration::from_millis(1500));
        assert_eq!(t.since(later), Duration::ZERO);
        assert!(Timestamp::parse_rfc3339("yesterday").is_err());
    }

    /// The hand-written conversion agrees with the `time` crate (which the
    /// core used before; it stays as a test oracle) across the whole range.
    #[test]
    fn agrees_with_the_time_crate() {
        use time::format_description::well_known::Rfc3339;
        use time::OffsetDateTime;
        let mut rng = fastrand::Rng::with_seed(7);
        let max_ms = 253_402_300_799_999u64; // 9999-12-31T23:59:59.999Z
        let mut samples: Vec<u64> = (0..20_000).map(|_| rng.u64(0..=max_ms)).collect();
        samples.extend([0, 1, 999, 1000, 951_782_400_000, 4_107_542_399_999, max_ms]);
        for ms in samples {
            let ours = Timestamp(ms).to_rfc3339();
            let theirs = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
                .unwrap()
                .format(&Rfc3339)
                .unwrap();
            assert_eq!(ours, theirs, "{ms}");
            assert_eq!(Timestamp::parse_rfc3339(&ours), Ok(Timestamp(ms)));
            // The same instant written with an offset and extra fraction digits.
            let offset = rng.i32(-23 * 60..=23 * 60);
            let shifted = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000 + 123_456)
                .unwrap()
                .checked_to_offset(time::UtcOffset::from_whole_seconds(offset * 60).unwrap());
            if let Some(Ok(text)) = shifted.map(|t| t.format(&Rfc3339)) {
                assert_eq!(Timestamp::parse_rfc3339(&text), Ok(Timestamp(ms)), "{text}");
            }
        }
        assert_eq!(Timestamp(max_ms + 1).to_rfc3339(), format!("@{}ms", max_ms + 1));
    }

    #[test]
    fn refuses_what_is_not_a_date_time() {
        for bad in [
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-11-21 10:00:00Z",
            "2026-11-21T24:00:00Z",
            "2026-11-21T10:00:00",
            "2026-11-21T10:00:00.Z",
            "2026-11-21T10:00:00+2:00",
            "2026-11-21T10:00:00+24:00",
            "1969-12-31T23:59:59Z",
            "２026-11-21T10:00:00Z",
            "",
        ] {
            assert!(Timestamp::parse_rfc3339(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Timestamp::parse_rfc3339("2024-02-29t12:00:00.5z").map(Timestamp::to_rfc3339),
            Ok("2024-02-29T12:00:00.5Z".to_string())
        );
        assert_eq!(
            Timestamp::parse_rfc3339("2016-12-31T23:59:60Z").map(Timestamp::to_rfc3339),
            Ok("2016-12-31T23:59:59.999Z".to_string())
        );
    }
}
