//! Wall-clock instants as plain numbers, because the core never reads a clock.
//!
//! Drivers pass `Timestamp`s in (from `SystemTime`, `Date.now()`, or a virtual
//! clock in tests); the core only adds, compares and formats them. The RFC 3339
//! text form is written and read here (civil dates by Howard Hinnant's algorithms): the
//! `time` crate took ~4 KB of the browser's gzipped `.wasm` for it, and stays the reference
//! the tests check this against (every instant of the range, written with any offset).

use core::fmt;
use core::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::support::quoted::Quoted;

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
    /// Instants past 9999-12-31 (which RFC 3339 cannot write) read `@<millis>ms`.
    pub fn to_rfc3339(self) -> String {
        const LAST_MS: u64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
        if self.0 > LAST_MS {
            return format!("@{}ms", self.0);
        }
        let (days, ms_of_day) = (self.0 / DAY_MS, self.0 % DAY_MS);
        let (year, month, day) = civil_from_days(days);
        let (secs, ms) = (ms_of_day / 1000, ms_of_day % 1000);
        let mut text =
            format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
        if ms > 0 {
            let fraction = format!(".{ms:03}");
            text.push_str(fraction.trim_end_matches('0'));
        }
        text.push('Z');
        text
    }

    /// Reads an RFC 3339 date-time (any offset, any number of fraction digits;
    /// digits beyond milliseconds are dropped; a leap second, 23:59:60 in UTC,
    /// reads as the last millisecond before it). Instants before 1970 are refused.
    pub fn parse_rfc3339(s: &str) -> Result<Self, TimestampError> {
        let error = || TimestampError(s.chars().take(64).collect());
        parse_rfc3339(s.as_bytes()).map(Timestamp).ok_or_else(error)
    }

    /// Unix seconds as a float, as the seeds' `timestamp` field was written by Python's `time.time()`.
    pub fn from_unix_seconds_f64(secs: f64) -> Option<Self> {
        (0.0..1.0e13).contains(&secs).then_some(Timestamp((secs * 1000.0) as u64))
    }
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

const DAY_MS: u64 = 86_400_000;

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
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

/// Days since 1970-01-01 of a proleptic Gregorian date (the inverse of `civil_from_days`),
/// negative before the epoch.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// RFC 3339's `date-time` (`T` or `t` between date and time, `Z`/`z` or `±hh:mm`), as
/// milliseconds since the epoch; `None` for anything else or an instant before 1970.
fn parse_rfc3339(b: &[u8]) -> Option<u64> {
    let digits = |from: usize, n: usize| -> Option<i64> {
        let part = b.get(from..from + n)?;
        part.iter().try_fold(0i64, |acc, c| c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0')))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(at(4, b'-') && at(7, b'-') && matches!(b.get(10), Some(b'T' | b't')) && at(13, b':') && at(16, b':')) {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 19;
    let mut ms = 0i64;
    if at(i, b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 3 {
                ms = ms * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..3 {
            ms *= 10;
        }
    }
    let offset_minutes = match b.get(i) {
        Some(b'Z' | b'z') => {
            i += 1;
            0
        }
        Some(sign @ (b'+' | b'-')) => {
            let (oh, om) = (digits(i + 1, 2)?, digits(i + 4, 2)?);
            if !at(i + 3, b':') || oh > 23 || om > 59 {
                return None;
            }
            i += 6;
            let minutes = oh * 60 + om;
            if *sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
        _ => return None,
    };
    if i != b.len() {
        return None;
    }
    let local_minutes = hour * 60 + minute;
    let utc_minutes = (local_minutes - offset_minutes).rem_euclid(24 * 60);
    // A leap second exists only at the end of a UTC day: it reads as the millisecond before it.
    let (second, ms) = match second {
        60 if utc_minutes == 23 * 60 + 59 => (59, 999),
        60 => return None,
        s => (s, ms),
    };
    let days = days_from_civil(year, month, day);
    let total = ((days * 24 + hour) * 60 + minute - offset_minutes) * 60_000 + second * 1000 + ms;
    u64::try_from(total).ok()
}

#[cfg(test)]
mod tests {
    use ::time::format_description::well_known::Rfc3339;
    use ::time::OffsetDateTime;

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

    /// Instants whose text was worked out independently (Python's `datetime`),
    /// around leap days, century rules and the ends of the range.
    #[test]
    fn writes_known_instants() {
        for (ms, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (1, "1970-01-01T00:00:00.001Z"),
            (999, "1970-01-01T00:00:00.999Z"),
            (1000, "1970-01-01T00:00:01Z"),
            (951_782_400_000, "2000-02-29T00:00:00Z"),
            (1_000_000_000_000, "2001-09-09T01:46:40Z"),
            (1_700_000_000_120, "2023-11-14T22:13:20.12Z"),
            (4_107_542_399_999, "2100-02-28T23:59:59.999Z"),
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        ] {
            assert_eq!(Timestamp(ms).to_rfc3339(), text, "{ms}");
            assert_eq!(Timestamp::parse_rfc3339(text), Ok(Timestamp(ms)), "{text}");
        }
        assert_eq!(Timestamp(253_402_300_800_000).to_rfc3339(), "@253402300800000ms");
        assert_eq!(Timestamp(u64::MAX).to_rfc3339(), format!("@{}ms", u64::MAX));
    }

    /// Every instant reads back as itself, also when written with an offset
    /// and more fraction digits than milliseconds.
    #[test]
    fn round_trips_across_the_range() {
        let mut rng = fastrand::Rng::with_seed(7);
        let max_ms = 253_402_300_799_999u64; // 9999-12-31T23:59:59.999Z
        for _ in 0..20_000 {
            let ms = rng.u64(0..=max_ms);
            let text = Timestamp(ms).to_rfc3339();
            assert_eq!(Timestamp::parse_rfc3339(&text), Ok(Timestamp(ms)), "{text}");
            let offset = ::time::UtcOffset::from_whole_seconds(rng.i32(-23 * 60..=23 * 60) * 60).unwrap();
            let shifted = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000 + 123_456)
                .unwrap()
                .checked_to_offset(offset);
            if let Some(Ok(text)) = shifted.map(|t| t.format(&Rfc3339)) {
                assert_eq!(Timestamp::parse_rfc3339(&text), Ok(Timestamp(ms)), "{text}");
            }
        }
    }

    /// A leap second is read as the `time` crate reads it: only at 23:59:60 UTC.
    #[test]
    fn reads_leap_seconds_as_the_reference_does() {
        for text in
            ["2016-12-31T23:59:60Z", "2017-01-01T00:59:60+01:00", "2016-12-31T23:59:60.5Z", "2016-12-31T22:59:60Z"]
        {
            let reference = OffsetDateTime::parse(text, &Rfc3339)
                .ok()
                .and_then(|t| u64::try_from(t.unix_timestamp_nanos().div_euclid(1_000_000)).ok());
            assert_eq!(Timestamp::parse_rfc3339(text).ok().map(Timestamp::as_unix_millis), reference, "{text}");
        }
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
            "1969-12-31T23:59:59.9995Z",
            "2026-11-21T10:00:60Z",
            "2026-11-21T10:00:00+01:60",
            "2026-11-21T10:00:00Zjunk",
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
        assert_eq!(
            Timestamp::parse_rfc3339("2026-11-21T11:30:00.123456789+01:30").map(Timestamp::to_rfc3339),
            Ok("2026-11-21T10:00:00.123Z".to_string())
        );
    }
}
