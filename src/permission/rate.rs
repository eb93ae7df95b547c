//! Rate limits: a token bucket per agent and verb.

use std::collections::HashMap;
use std::sync::Mutex;

use super::policy::RateLimit;
use crate::clock::Millis;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Millis,
}

/// Token buckets keyed by agent and verb.
#[derive(Debug, Default)]
pub struct RateLimiter {
    buckets: Mutex<HashMap<(String, String), Bucket>>,
}

impl RateLimiter {
    /// Takes one token for `agent` doing `verb` at `now`. `Err` carries how
    /// many milliseconds until a token is back.
    pub fn take(
        &self,
        agent: &str,
        verb: &str,
        limit: RateLimit,
        now: Millis,
    ) -> Result<(), Millis> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let capacity = f64::from(limit.burst.max(1));
        let per_ms = limit.per_minute.max(0.0) / 60_000.0;
        let bucket = buckets
            .entry((agent.to_string(), verb.to_string()))
            .or_insert(Bucket {
                tokens: capacity,
                last: now,
            });
        let elapsed = (now - bucket.last).max(0) as f64;
        bucket.tokens = (bucket.tokens + elapsed * per_ms).min(capacity);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else if per_ms <= 0.0 {
            Err(Millis::MAX)
        } else {
            Err(((1.0 - bucket.tokens) / per_ms).ceil() as Millis)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_empty_and_refill() {
        let limiter = RateLimiter::default();
        let limit = RateLimit {
            burst: 2,
            per_minute: 1.0,
        };
        assert!(limiter.take("a", "post", limit, 0).is_ok());
        assert!(limiter.take("a", "post", limit, 0).is_ok());
        assert_eq!(limiter.take("a", "post", limit, 0), Err(60_000));
        assert!(limiter.take("b", "post", limit, 0).is_ok(), "per agent");
        assert!(limiter.take("a", "post", limit, 60_000).is_ok(), "refilled");
    }
}
