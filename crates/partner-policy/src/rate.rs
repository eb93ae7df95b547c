//! Rate limits: a token bucket per agent and verb, kept in the database
//! (table `rate_buckets`) so every process running the constellation's
//! actions draws from the same bucket. The permission check only looks
//! ([`available`]); the token is taken ([`take`], one statement, so two
//! processes cannot both take the last one) by the transaction that
//! commits the action's outcome — its effect, or its request — so a rate
//! limit costs no commit of its own.

use rusqlite::{Connection, OptionalExtension, params};

use super::policy::RateLimit;
use partner_core::clock::Millis;
use partner_store::memory::MemoryError;

/// A token an action must take when its outcome commits: the check found
/// one available.
#[derive(Debug, Clone, PartialEq)]
pub struct RateCharge {
    /// The acting agent.
    pub agent: String,
    /// The verb.
    pub verb: String,
    /// The bucket's limit.
    pub limit: RateLimit,
}

impl RateCharge {
    /// Takes the token in the action's transaction at `now`;
    /// `Some(reason)` when another process took the last one since the
    /// check.
    pub fn take(&self, tx: &dyn Buckets, now: Millis) -> Result<Option<String>, MemoryError> {
        Ok(tx
            .take(&self.agent, &self.verb, self.limit, now)?
            .err()
            .map(|wait| refusal(&self.verb, &self.agent, wait)))
    }
}

/// Why an action was refused for its rate limit, `wait` ms before a token
/// is back.
pub fn refusal(verb: &str, agent: &str, wait: Millis) -> String {
    if wait == Millis::MAX {
        format!("/{verb} is not allowed for {agent} at all (rate limit 0)")
    } else {
        format!(
            "rate limit for /{verb}: try again in {}s",
            (wait.max(0) + 999) / 1000
        )
    }
}

/// Whether `agent` has a token for `verb` at `now`, without taking it:
/// `Ok(Err(wait))` as for [`take`].
pub fn available(
    conn: &Connection,
    agent: &str,
    verb: &str,
    limit: RateLimit,
    now: Millis,
) -> Result<Result<(), Millis>, MemoryError> {
    let stored: Option<(f64, Millis)> = conn
        .prepare_cached("SELECT tokens, last FROM rate_buckets WHERE agent = ?1 AND verb = ?2")?
        .query_row(params![agent, verb], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(match stored {
        Some((tokens, last)) => wait_for(tokens, last, limit, now),
        None => Ok(()),
    })
}

/// Whether a bucket holding `tokens` when last used at `last` has one at
/// `now`, refilled at `limit`'s rate up to its burst; else how many ms
/// until it has (`Millis::MAX` when the limit allows none at all). The one
/// reckoning of every back end.
pub fn wait_for(tokens: f64, last: Millis, limit: RateLimit, now: Millis) -> Result<(), Millis> {
    let capacity = f64::from(limit.burst.max(1));
    let per_ms = limit.per_minute.max(0.0) / 60_000.0;
    let now_tokens = (tokens + (now - last).max(0) as f64 * per_ms).min(capacity);
    if now_tokens >= 1.0 {
        return Ok(());
    }
    if per_ms <= 0.0 {
        return Err(Millis::MAX);
    }
    Err(((1.0 - now_tokens) / per_ms).ceil().max(1.0) as Millis)
}

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
    let taken = conn
        .prepare_cached(
            "INSERT INTO rate_buckets (agent, verb, tokens, last) VALUES (?1, ?2, ?3 - 1, ?5)
             ON CONFLICT (agent, verb) DO UPDATE SET
                 tokens = min(?3, tokens + max(?5 - last, 0) * ?4) - 1,
                 last = max(last, ?5)
             WHERE min(?3, tokens + max(?5 - last, 0) * ?4) >= 1",
        )?
        .execute(params![agent, verb, capacity, per_ms, now])?;
    if taken > 0 {
        return Ok(Ok(()));
    }
    let (tokens, last): (f64, Millis) = conn.query_row(
        "SELECT tokens, last FROM rate_buckets WHERE agent = ?1 AND verb = ?2",
        params![agent, verb],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(Err(wait_for(tokens, last, limit, now).err().unwrap_or(1)))
}

/// Rate buckets on whichever database holds them: the check looks, the
/// outcome's commit takes.
pub trait Buckets {
    /// Whether `agent` has a token for `verb` at `now` (nothing taken).
    fn available(
        &self,
        agent: &str,
        verb: &str,
        limit: RateLimit,
        now: Millis,
    ) -> Result<Result<(), Millis>, MemoryError>;
    /// Takes a token, committed; or how long until one is back.
    fn take(
        &self,
        agent: &str,
        verb: &str,
        limit: RateLimit,
        now: Millis,
    ) -> Result<Result<(), Millis>, MemoryError>;
}

/// In whatever transaction the connection is in.
impl Buckets for Connection {
    fn available(
        &self,
        agent: &str,
        verb: &str,
        limit: RateLimit,
        now: Millis,
    ) -> Result<Result<(), Millis>, MemoryError> {
        available(self, agent, verb, limit, now)
    }

    fn take(
        &self,
        agent: &str,
        verb: &str,
        limit: RateLimit,
        now: Millis,
    ) -> Result<Result<(), Millis>, MemoryError> {
        take(self, agent, verb, limit, now)
    }
}

impl Buckets for partner_store::memory::MemoryStore {
    fn available(
        &self,
        agent: &str,
        verb: &str,
        limit: RateLimit,
        now: Millis,
    ) -> Result<Result<(), Millis>, MemoryError> {
        available(&self.read(), agent, verb, limit, now)
    }

    fn take(
        &self,
        agent: &str,
        verb: &str,
        limit: RateLimit,
        now: Millis,
    ) -> Result<Result<(), Millis>, MemoryError> {
        self.transaction(|tx| take(tx, agent, verb, limit, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_empty_and_refill() {
        let store = partner_store::memory::MemoryStore::open_in_memory().unwrap();
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

    #[test]
    fn looking_takes_nothing_and_agrees_with_taking() {
        let store = partner_store::memory::MemoryStore::open_in_memory().unwrap();
        let conn = store.conn();
        let limit = RateLimit {
            burst: 1,
            per_minute: 1.0,
        };
        for _ in 0..3 {
            assert_eq!(available(&conn, "a", "post", limit, 0).unwrap(), Ok(()));
        }
        assert_eq!(take(&conn, "a", "post", limit, 0).unwrap(), Ok(()));
        assert_eq!(
            available(&conn, "a", "post", limit, 0).unwrap(),
            Err(60_000)
        );
        assert_eq!(
            available(&conn, "a", "post", limit, 60_000).unwrap(),
            Ok(())
        );
    }
}
