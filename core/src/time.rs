//! Wall-clock instants as plain numbers, because the core never reads a clock.
//!
//! Drivers pass `Timestamp`s in (from `SystemTime`, `Date.now()`, or a virtual
//! clock in tests); the core only adds, compares and formats them.

use core::fmt;
use core::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

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

    pub fn to_rfc3339(self) -> String {
        let nanos = i128::from(self.0) * 1_000_000;
        OffsetDateTime::from_unix_timestamp_nanos(nanos)
            .ok()
            .and_then(|t| t.format(&Rfc3339).ok())
            .unwrap_or_else(|| format!("@{}ms", self.0))
    }

    pub fn parse_rfc3339(s: &str) -> Result<Self, TimestampError> {
        let t = OffsetDateTime::parse(s, &Rfc3339).map_err(|_| TimestampError(s.chars().take(64).collect()))?;
        let ms = t.unix_timestamp_nanos() / 1_000_000;
        u64::try_from(ms).map(Timestamp).map_err(|_| TimestampError(s.chars().take(64).collect()))
    }

    /// Unix seconds as a float, as the seeds' `timestamp` field was written by Python's `time.time()`.
    pub fn from_unix_seconds_f64(secs: f64) -> Option<Self> {
        (0.0..1.0e13).contains(&secs).then_some(Timestamp((secs * 1000.0) as u64))
    }
}

/// A string that is not an RFC 3339 date-time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an RFC 3339 timestamp: {0:?}")]
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
}
