//! Why a dashboard could not start: one error type for its options, its tokens and its
//! listening socket.

use std::net::SocketAddr;

/// Why a dashboard could not start.
#[derive(Debug)]
pub enum DashboardError {
    /// The options are unsafe or malformed; the message says which and what to do.
    Config(String),
    /// The address could not be bound.
    Bind { listen: SocketAddr, error: std::io::Error },
}

impl core::fmt::Display for DashboardError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DashboardError::Config(message) => f.write_str(message),
            DashboardError::Bind { listen, error } => write!(f, "cannot listen on {listen}: {error}"),
        }
    }
}

impl std::error::Error for DashboardError {}
