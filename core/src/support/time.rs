//! Wall-clock instants as plain numbers, because the core never reads a clock.
//!
//! Drivers pass `Timestamp`s in (from `SystemTime`, `Date.now()`, or a virtual
//! clock in tests); the core only adds, compares and formats them. The RFC 3339
//! text form is the `time` crate's (its clock features stay off: the browser
//! build must not import one).

use core::fmt;
use core::time::Duration;

use ::time::format_description::well_known::Rfc3339;
use ::time::OffsetDateTime;
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
    /// Instants past 9999-12-31 (which RFC 3339 cannot write) read `@<millis>ms`.
    pub fn to_rfc3339(self) -> String {
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(self.0) * 1_000_000)
            .ok()
            .and_then(|t| t.format(&Rfc3339).ok())
            .unwrap_or_else(|| format!("@{}ms", self.0))
    }

    /// Reads an RFC 3339 date-time (any offset, any number of fraction digits;
    /// digits beyond milliseconds are dropped; a leap second reads as the last
    /// millisecond before it). Instants before 1970 are refused.
    pub fn parse_rfc3339(s: &str) -> Result<Self, TimestampError> {
        let error = || TimestampError(s.chars().take(64).collect());
        // The `time` crate takes any byte between date and time (RFC 3339 lets
        // applications choose, say, a space); timestamps here are always
        // written with `T`, and a second spelling would only hide mistakes.
        if !matches!(s.as_bytes().get(10), Some(b'T' | b't')) {
            return Err(error());
        }
        let instant = OffsetDateTime::parse(s, &Rfc3339).map_err(|_| error())?;
        let millis = instant.unix_timestamp_nanos().div_euclid(1_000_000);
        u64::try_from(millis).map(Timestamp).map_err(|_| error())
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
