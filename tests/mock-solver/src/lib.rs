//! Mock solving service.
