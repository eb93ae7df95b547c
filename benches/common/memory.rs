//! The bench process's own memory, read from `/proc/self/status`.

/// A `/proc/self/status` figure (`VmRSS`, resident now; `VmHWM`, the peak
/// since the last reset), in MB; 0 where there is no such file.
pub fn status_mb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}
