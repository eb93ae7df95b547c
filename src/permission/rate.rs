//! Rate limits: a token bucket per agent and verb, kept in the database
//! (table `rate_buckets`) so every process running the constellation's
//! actions draws from the same bucket. Taking a token is one statement, so
//! two processes cannot both take the last one.

use rusqlite::{Connection, params};

use super::policy::RateLimit;
use crate::clock::Millis;
use crate::memory::MemoryError;

/// Takes one token for `agent` doing `verb` at `now`. `Ok(Err(wait))`
/// carries how many milliseconds until a token is back (`Millis::MAX` when
/// the limit allows none at all).
pub fn take(
    conn: &Connection,
    agent: &str,
    verb: &str,
    limit: RateLimit,
    now: Millis,
) -> Result<Result<(), Millis>, MemoryError> {
    let capacity = f64::from(limit.burst.max(1));
    let per_ms = limit.per_minute.max(0.0) / 60_000.0;
    // A new bucket starts full; an existing one refills for the time since
    // it was last used (never backwards), up to its capacity.
    let taken = conn.execute(
        "INSERT INTO rate_buckets (agent, verb, tokens, last) VALUES (?1, ?2, ?3 - 1, ?5)
         ON CONFLICT (agent, verb) DO UPDATE SET
             tokens = min(?3, tokens + max(?5 - last, 0) * ?4) - 1,
             last = max(last, ?5)
         WHERE min(?3, tokens + max(?5 - last, 0) * ?4) >= 1",
        params![agent, verb, capacity, per_ms, now],
    )?;
    if taken > 0 {
        return Ok(Ok(()));
    }
    if per_ms <= 0.0 {
        return Ok(Err(Millis::MAX));
    }
    let (tokens, last): (f64, Millis) = conn.query_row(
        "SELECT tokens, last FROM rate_buckets WHERE agent = ?1 AND verb = ?2",
        params![agent, verb],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let now_tokens = (tokens + (now - last).max(0) as f64 * per_ms).min(capacity);
    Ok(Err(((1.0 - now_tokens) / per_ms).ceil().max(1.0) as Millis))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_empty_and_refill() {
        let store = crate::memory::MemoryStore::open_in_memory().unwrap();
        let conn = store.conn();
        let limit = RateLimit {
            burst: 2,
            per_minute: 1.0,
        };
        assert_eq!(take(&conn, "a", "post", limit, 0).unwrap(), Ok(()));
        assert_eq!(take(&conn, "a", "post", limit, 0).unwrap(), Ok(()));
        assert_eq!(take(&conn, "a", "post", limit, 0).unwrap(), Err(60_000));
        assert_eq!(
            take(&conn, "b", "post", limit, 0).unwrap(),
            Ok(()),
            "per agent"
        );
        assert_eq!(
            take(&conn, "a", "post", limit, 60_000).unwrap(),
            Ok(()),
            "refilled"
        );
        let none = RateLimit {
            burst: 0,
            per_minute: 0.0,
        };
        assert_eq!(take(&conn, "a", "x", none, 0).unwrap(), Ok(()));
        assert_eq!(take(&conn, "a", "x", none, 0).unwrap(), Err(Millis::MAX));
    }
}
