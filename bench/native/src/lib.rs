//! Shared pieces of the native runtime benchmarks (`dlq-throughput`, `e2e`):
//! the seeds'-style JSON file queue, a throwaway `redis-server`, the floors
//! the stores are measured against (raw SQLite, raw Redis), process
//! statistics from `/proc`, and the wall clock as a [`Timestamp`].
//!
//! These are programs that print tables, never tests; nothing here runs in CI.

pub mod json_file;
pub mod proc_status;
pub mod redis_floor;
pub mod sqlite_floor;

use captcha_dlq_core::Timestamp;

/// A lease handed out by a floor (`sqlite_floor`, `redis_floor`).
#[derive(Debug, Clone)]
pub struct FloorLease {
    pub id: String,
    pub nonce: String,
}

/// A program's end: a `run` that failed prints `program: error` and exits with status 1.
pub fn exit_on_error(program: &str, result: Result<(), String>) {
    if let Err(e) = result {
        eprintln!("{program}: {e}");
        std::process::exit(1);
    }
}

/// The wall clock now, as the stores take it.
pub fn now() -> Timestamp {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0);
    Timestamp::from_unix_millis(ms)
}

/// A byte count for a table cell (`12.3 MiB`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    match UNITS.get(unit) {
        Some(&"B") | None => format!("{bytes} B"),
        Some(u) => format!("{value:.1} {u}"),
    }
}
