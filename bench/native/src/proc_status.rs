//! Process memory from `/proc/self` (Linux): peak resident set size (`VmHWM`)
//! and resetting that peak between runs of one process.

use std::fs;

/// A `kB` field of `/proc/self/status` (`VmHWM`, `VmRSS`), in KiB; `None` off Linux.
pub fn status_kib(field: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().strip_suffix("kB")?.trim().parse().ok()
    })
}

/// Peak resident set size so far, in KiB.
pub fn peak_rss_kib() -> Option<u64> {
    status_kib("VmHWM")
}

/// Resident set size now, in KiB.
pub fn rss_kib() -> Option<u64> {
    status_kib("VmRSS")
}

/// Resets `VmHWM` to the current RSS (`echo 5 > /proc/self/clear_refs`, Linux 4.0+),
/// so that the peak of one run is not the peak of an earlier one. `false` if refused.
pub fn reset_peak_rss() -> bool {
    fs::write("/proc/self/clear_refs", "5").is_ok()
}
