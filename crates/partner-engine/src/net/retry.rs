//! How long to wait before trying a server again.

use std::time::{Duration, SystemTime};

/// The wait before retry number `attempt` (from 0): `first`, doubled each
/// time, never above `max`, with jitter (between half of it and all of it)
/// so that many clients refused at once do not come back at once.
pub fn backoff(first: Duration, attempt: u32, max: Duration) -> Duration {
    let full = first
        .saturating_mul(2u32.saturating_pow(attempt.min(31)))
        .min(max);
    let half = full / 2;
    half + half.mul_f64(fastrand::f64())
}

/// What a `Retry-After` header asks for: a number of seconds, or an HTTP
/// date (the time until then, zero when it is past). `None` when it is
/// neither.
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        // The obsolete forms HTTP still allows.
        assert_eq!(
            retry_after("Sunday, 06-Nov-94 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(retry_after("-5", now), None);
    }

    #[test]
    fn backoff_grows_is_jittered_and_capped() {
        let first = Duration::from_millis(100);
        let max = Duration::from_secs(1);
        for attempt in 0..40 {
            let full = (first * 2u32.pow(attempt.min(20))).min(max);
            let wait = backoff(first, attempt, max);
            assert!(wait >= full / 2 && wait <= full, "{attempt}: {wait:?}");
        }
        let waits: std::collections::HashSet<_> = (0..20).map(|_| backoff(first, 3, max)).collect();
        assert!(waits.len() > 1, "the waits are jittered");
    }
}
