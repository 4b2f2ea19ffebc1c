//! A store's two limits, set as it is built: how many deliveries park a record, and how many
//! records it keeps. Every backend takes them through [`LimitedStore`], so the checks
//! (each at least 1), the defaults and the builder methods are written once; the backends only
//! say where they keep their [`StoreLimits`] and apply them (the rules in `dlq::rules`, Redis's
//! scripts with the numbers as arguments).

use crate::error::ConfigError;

/// Azure Service Bus's default `MaxDeliveryCount`, used by every backend unless configured.
pub const DEFAULT_MAX_DELIVERIES: u32 = 10;

/// The limits of one store: [`DEFAULT_MAX_DELIVERIES`] and no capacity unless set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreLimits {
    max_deliveries: u32,
    capacity: Option<u64>,
}

impl Default for StoreLimits {
    fn default() -> Self {
        StoreLimits { max_deliveries: DEFAULT_MAX_DELIVERIES, capacity: None }
    }
}

impl StoreLimits {
    /// A record is parked once it has been delivered this many times.
    pub fn max_deliveries(&self) -> u32 {
        self.max_deliveries
    }

    /// The most records the store keeps, if bounded.
    pub fn capacity(&self) -> Option<u64> {
        self.capacity
    }

    /// Sets [`max_deliveries`](Self::max_deliveries); 0 is refused, naming the field.
    pub fn set_max_deliveries(&mut self, max_deliveries: u32) -> Result<(), ConfigError> {
        if max_deliveries == 0 {
            return Err(ConfigError::new("max_deliveries", "must be at least 1"));
        }
        self.max_deliveries = max_deliveries;
        Ok(())
    }

    /// Sets [`capacity`](Self::capacity); 0 is refused, naming the field.
    pub fn set_capacity(&mut self, capacity: u64) -> Result<(), ConfigError> {
        if capacity == 0 {
            return Err(ConfigError::new("capacity", "must be at least 1"));
        }
        self.capacity = Some(capacity);
        Ok(())
    }
}

/// A store built with limits. Implementors say where their [`StoreLimits`] live; the builder
/// methods are these, the same for every backend.
pub trait LimitedStore: Sized {
    /// The store's limits, to set while it is built.
    fn limits_mut(&mut self) -> &mut StoreLimits;

    /// Park a record once it has been delivered this many times (default 10, as Service Bus).
    fn with_max_deliveries(mut self, max_deliveries: u32) -> Result<Self, ConfigError> {
        self.limits_mut().set_max_deliveries(max_deliveries)?;
        Ok(self)
    }

    /// Keep at most `capacity` records: a push that goes over evicts the oldest ready record,
    /// else the oldest parked one (never a leased one, so the store may briefly hold more), and
    /// counts it in `dropped`. Unbounded by default.
    fn with_capacity(mut self, capacity: u64) -> Result<Self, ConfigError> {
        self.limits_mut().set_capacity(capacity)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_zero_refused_by_name() {
        let mut limits = StoreLimits::default();
        assert_eq!((limits.max_deliveries(), limits.capacity()), (10, None));
        assert_eq!(limits.set_max_deliveries(0).unwrap_err().field, "max_deliveries");
        assert_eq!(limits.set_capacity(0).unwrap_err().field, "capacity");
        limits.set_max_deliveries(2).unwrap();
        limits.set_capacity(3).unwrap();
        assert_eq!((limits.max_deliveries(), limits.capacity()), (2, Some(3)));
    }
}
